"""What a path is, in words, for messages about a file that is not a readable regular file.

One place for "a directory", "a FIFO", "a dangling symbolic link", ... so that every reader
(config.json, the shard index, safetensors files, --recursive) describes a path the same way
and none of them raises on a path it cannot stat.
"""

from __future__ import annotations

import errno
import os
import stat

REGULAR = "a regular file"
MISSING = "missing"
DIRECTORY = "a directory"


def kind_of(path: str | os.PathLike[str]) -> str:
    """:data:`REGULAR` for a regular file (or a symlink to one), :data:`MISSING` when nothing
    is there, else a description such as ``"a directory"``. Never raises."""
    try:
        st = os.stat(path)
    except ValueError:  # an embedded NUL byte
        return "not a valid path (it holds a NUL byte)"
    except FileNotFoundError:
        return _link_kind(path) or MISSING
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return "not accessible (a directory on its path lacks search permission)"
        return f"not accessible ({exc.strerror or exc})"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return REGULAR
    if stat.S_ISDIR(mode):
        return DIRECTORY
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"  # pragma: no cover - doors, whiteouts


def _link_kind(path: str | os.PathLike[str]) -> str | None:
    try:
        target = os.readlink(path)
    except (OSError, ValueError):
        return None
    return f"a dangling symbolic link (to {target}, which does not exist)"
