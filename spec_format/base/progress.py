"""Progress of long work (the NaN/Inf scan of every tensor, loading a checkpoint for
``forward``), reported by the library and shown by whoever installed a display.

The library calls :func:`task` around the work and :func:`advance` as it goes; both cost
one check of a global when nothing is shown, which is the default (the Python API, tests,
piped output). The CLI installs a display with :func:`showing` only when stderr is a
terminal and the output format is text (``spec_format.cli.common.progress_display``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol


class Handle(Protocol):
    def advance(self, amount: int) -> None: ...

    def close(self) -> None: ...


Display = Callable[[str, int, str], Handle]  # (label, total, unit) -> a running bar

_display: Display | None = None
_current: Handle | None = None


@contextlib.contextmanager
def showing(display: Display | None) -> Iterator[None]:
    """Show the tasks started inside the block with ``display`` (None: show nothing)."""
    global _display
    previous, _display = _display, display
    try:
        yield
    finally:
        _display = previous


@contextlib.contextmanager
def task(label: str, total: int, unit: str = "bytes") -> Iterator[None]:
    """One piece of long work of ``total`` units; :func:`advance` inside moves it on."""
    global _current
    if _display is None or total <= 0:
        yield
        return
    handle, previous = _display(label, total, unit), _current
    _current = handle
    try:
        yield
    finally:
        _current = previous
        handle.close()


def advance(amount: int) -> None:
    if _current is not None:
        _current.advance(amount)
