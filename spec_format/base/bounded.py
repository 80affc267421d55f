"""One bounded reader for every small file specfmt opens as input: config.json files, the
verifier's config, ``specfmt.toml``/``pyproject.toml``, token-count files and standard input.

* Only a regular file (or a symlink to one) is read. A FIFO, a device, a socket or a
  directory is refused with what it is (``--config /dev/zero`` would never end, a FIFO
  would block forever). The file is opened with ``O_NONBLOCK`` and checked again with
  ``fstat``, so a FIFO swapped in after the first look cannot block the open either.
* At most ``limit`` bytes are read (:data:`MAX_BYTES` unless the caller says otherwise);
  one more byte, or a size over the limit, is a ``too-large`` refusal. A file that grows
  while it is read is cut off at the same limit.
* Standard input gets the same limit, and a closed standard input (``<&-``) is refused
  with a message instead of an AttributeError.

A refusal is a :class:`ReadRefused` with a ``kind`` (the jsonload problem kinds
``not-found``, ``unreadable``, ``too-large``) and a message naming the file, worded by rules
I001 and I002 (:mod:`spec_format.base.input_messages`); each caller
turns it into its own finding or error (a usage error for ``--config``, an input error for
an input).
"""

from __future__ import annotations

import os
import stat
import sys

from spec_format.base.input_messages import message
from spec_format.base.pathkind import MISSING, REGULAR, kind_of

#: configs are a few KB; indexes of huge models ~1 MB; a pyproject.toml a few KB
MAX_BYTES = 16 * 1024 * 1024
STDIN_NAME = "<stdin>"
_CHUNK = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class ReadRefused(Exception):
    """A file that was not read (``kind``: not-found, unreadable, too-large)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _unreadable(variant: str, **params: object) -> ReadRefused:
    """A refusal of kind ``unreadable`` or ``too-large``, worded by rule I002."""
    kind = "too-large" if variant.endswith("too-large") else "unreadable"
    return ReadRefused(kind, message("file-unreadable", variant, **params))


def too_large(name: object, size: int | None, limit: int, what: str) -> ReadRefused:
    if size is None:  # it grew while it was read
        return _unreadable("grew-too-large", path=name, limit=limit, what=what)
    return _unreadable("too-large", path=name, size=size, limit=limit, what=what)


def read_file(path: str | os.PathLike[str], *, limit: int = MAX_BYTES, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them. ``what`` names
    what the file should be, for messages ("a JSON file", "a TOML configuration file").

    The common case costs one open, one fstat and (usually) one read; only a refusal looks
    at what the path is, for its message."""
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError) as exc:
        raise _refusal(path, what, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refusal(path, what, None)
        if st.st_size > limit:
            raise too_large(path, st.st_size, limit, what)
        want = min(st.st_size, limit) + 1  # one byte more: a file that grew shows
        data = os.read(fd, want)
        if len(data) == want:  # it did grow: read on, to the limit
            data = _read_all(fd, data, limit)
    except OSError as exc:
        raise _unreadable("os", path=path, reason=exc.strerror or exc) from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while we read it
        raise too_large(path, None, limit, what)
    return data


def _refusal(path: str | os.PathLike[str], what: str, exc: BaseException | None) -> ReadRefused:
    """Why ``path`` was not read, saying what it is (a FIFO, a directory, missing ...)."""
    kind = kind_of(path)
    if kind == MISSING:
        return ReadRefused("not-found", message("path-not-found", "file", path=path))
    if kind.startswith("not "):  # not accessible, not a valid path
        return _unreadable("inaccessible", path=path, kind=kind)
    if kind == REGULAR:  # the file itself refused (EACCES on the file, EMFILE ...)
        detail = getattr(exc, "strerror", None) or exc or "cannot be opened"
        return _unreadable("os", path=path, reason=detail)
    return _unreadable("not-a-file", path=path, kind=kind, what=what)


def _read_all(fd: int, first: bytes, limit: int) -> bytes:
    """``first`` and what follows it, up to ``limit + 1`` bytes in all (a file that grew
    after fstat gave its size)."""
    chunks = [first]
    total = len(first)
    want = len(first)
    while len(chunks[-1]) == want and total <= limit:
        want = min(_CHUNK, limit + 1 - total)
        chunks.append(os.read(fd, want))
        total += len(chunks[-1])
    return b"".join(chunks)


def read_stdin(*, limit: int = MAX_BYTES, what: str = "a config.json") -> bytes:
    """Everything on standard input, at most ``limit`` bytes."""
    stream = sys.stdin
    if stream is None:  # started with standard input closed (`<&-`)
        raise _unreadable("stdin-closed", path=STDIN_NAME)
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            data = buffer.read(limit + 1)
        else:  # a text-only stdin replaced by the caller
            data = stream.read(limit + 1).encode("utf-8", "surrogateescape")
    except (OSError, ValueError) as exc:  # EBADF, EISDIR (`< dir`), a closed file object
        detail = getattr(exc, "strerror", None) or exc
        raise _unreadable("stdin-os", path=STDIN_NAME, reason=detail) from None
    if len(data) > limit:
        raise _unreadable("stdin-too-large", path=STDIN_NAME, limit=limit, what=what)
    return data
