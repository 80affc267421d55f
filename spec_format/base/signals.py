"""SIGTERM and SIGHUP end a command the way Ctrl-C does: with its clean-up.

``timeout``, docker, CI runners and a closed terminal send SIGTERM or SIGHUP, whose default
action kills the process on the spot: a temporary output (``convert``'s
``.DEST.specfmt-PID-*.tmp`` directory, a writer's ``.specfmt-PID-*.tmp`` file) would stay.
While :func:`terminate_like_interrupt` is active they raise :class:`Terminated` in the main
thread instead, a ``BaseException`` like ``KeyboardInterrupt``, so every ``finally`` and
``except BaseException`` that removes a temporary output runs; the command then exits with
128 + the signal number, as a process killed by it reports in a shell. A signal the
caller ignores (``nohup`` ignores SIGHUP) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(BaseException):  # noqa: N818 - named like KeyboardInterrupt
    """A SIGTERM or SIGHUP arrived; ``signum`` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _raise(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def terminate_like_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM/SIGHUP raise :class:`Terminated` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for sig in SIGNALS:
        current = signal.getsignal(sig)
        if current in (signal.SIG_IGN, None):  # ignored by the caller (nohup), or not ours
            continue
        previous[sig] = signal.signal(sig, _raise)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
