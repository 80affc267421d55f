"""The standard streams of the ``specfmt`` program: a reader that leaves a pipe early, a
full or closed stdout (exit 3, not a crash), a program started without stdout or stderr."""

from __future__ import annotations

import sys
from typing import Any


def stdout() -> Any:
    return sys.stdout


def flush_stdout() -> None:
    """Flush standard output; a failure (``> /dev/full``, a closed stdout) is a
    :class:`~spec_format.base.oserror.StreamFailure` (exit 3), and the rest of the output is
    discarded so that the interpreter's own flush at exit does not fail again."""
    from spec_format.base.oserror import stdout_failure

    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except BrokenPipeError:  # the reader left (`| head`): not an error
        _discard_fd(stream)
    except OSError as exc:
        _discard_fd(stream)
        raise stdout_failure(exc) from None
    except ValueError:  # a closed file object
        pass


def _discard_fd(stream: Any) -> None:
    import os

    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)  # later writes and the final flush go nowhere
    os.close(devnull)


class PipeSafeStdout:
    """``sys.stdout`` for the ``specfmt`` program: when the reader of a pipe goes away
    (``specfmt explain C001 | head -1``) the rest of the output is discarded instead of
    raising, so the command finishes its work (``--in-place`` rewrites every file) and
    exits with the status it would have had, whether or not the reader left early."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        #: the failure, kept for the exit code even when a library swallows the exception
        #: (click's --help writes from inside its parser)
        self.failure: Exception | None = None

    def _failed(self, exc: OSError) -> Exception:
        from spec_format.base.oserror import stdout_failure

        _discard_fd(self._stream)
        self.failure = self.failure or stdout_failure(exc)
        return self.failure

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            _discard_fd(self._stream)
            return len(text)
        except OSError as exc:  # ENOSPC (`> /dev/full`), EIO ...: exit 3, not a bug
            raise self._failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            _discard_fd(self._stream)
        except OSError as exc:
            raise self._failed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _ClosedStream:
    """A standard stream the program started without: not a terminal, no descriptor."""

    which = "a standard stream"

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        import io

        raise io.UnsupportedOperation(f"{self.which} is closed")


class ClosedStderr(_ClosedStream):
    """``sys.stderr`` when the program started with standard error closed (``2>&-``):
    messages have nowhere to go and are dropped; the exit code still says what happened."""

    which = "standard error"

    def write(self, text: str) -> int:
        return len(text)


class ClosedStdout(_ClosedStream):
    """``sys.stdout`` when the program started with standard output closed (``>&-``):
    every write fails as a write to a closed descriptor does (exit 3, not a crash)."""

    which = "standard output"

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "closed (the program was started without one)")


def guard_standard_streams() -> None:
    """The program's standard streams made safe to write: a closed one replaced (stdout:
    exit 3 on the first write; stderr: messages dropped), an odd character written escaped
    instead of failing, and stdout wrapped in :class:`PipeSafeStdout` (``specfmt ... |
    head`` is not an error)."""
    if sys.stdout is None:  # started with standard output closed (`>&-`)
        sys.stdout = ClosedStdout()
    if sys.stderr is None:  # standard error closed (`2>&-`): messages are dropped
        sys.stderr = ClosedStderr()
    for stream in (sys.stdout, sys.stderr):  # a message never fails on an odd character
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    sys.stdout = PipeSafeStdout(sys.stdout)
