"""The one place that turns a problem of the environment (a full disk, a full or closed
standard output, a permission, a read-only file system) into specfmt's documented exit code.

Such an ``OSError`` is not a bug in specfmt: every command reports it as one line naming
the file and the cause and exits 3 (an input could not be read or an output could not be
written), never 70. Writers that know more (``outfile``, ``convert``) say more themselves;
this is the net under every command (:func:`spec_format.cli.common.handle_errors`).
"""

from __future__ import annotations

import errno
import os

from spec_format.base.errors import InputError

#: errno -> what to do about it (the strerror says what happened)
_ADVICE = {
    errno.ENOSPC: "free some space and run again",
    errno.EDQUOT: "free some space within your quota and run again",
    errno.EROFS: "write to a writable location",
    errno.EACCES: "check the permissions",
    errno.EPERM: "check the permissions",
    errno.EMFILE: "raise the open-file limit (ulimit -n)",
    errno.ENFILE: "close other programs' files and run again",
    errno.EIO: "check the disk or the network file system",
}


class EnvironmentFailure(InputError):
    """An input could not be read or an output could not be written because of the
    environment (exit 3)."""


class StreamFailure(EnvironmentFailure):
    """Standard output or standard input failed (full, closed, a device error)."""


def describe(exc: OSError, what: str | None = None) -> str:
    """One line: the file (``what`` or the exception's filename), the cause, the advice."""
    name = what or exc.filename
    cause = exc.strerror or (errno.errorcode.get(exc.errno or 0) if exc.errno else None) or exc
    head = f"{os.fsdecode(name)}: " if name is not None else ""
    return f"{head}{cause}{advice(exc)}"


def advice(exc: OSError) -> str:
    """The advice for an errno (after a semicolon), or an empty string."""
    what = _ADVICE.get(exc.errno or 0)
    return f"; {what}" if what else ""


def as_error(exc: BaseException) -> EnvironmentFailure | None:
    """The exit-3 error for an ``OSError`` of the environment; None for anything else
    (which stays a bug)."""
    if not isinstance(exc, OSError) or exc.errno is None:
        return None
    return EnvironmentFailure(describe(exc) + " (specfmt leaves no partial file behind)")


def stdout_failure(exc: OSError) -> StreamFailure:
    return StreamFailure(
        describe(exc, "standard output")
        + "; the report is incomplete (files written with -o/--in-place are complete)"
    )
