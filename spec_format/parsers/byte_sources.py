"""Byte sources: random access to the bytes of one file (a local file, bytes in memory, an
HTTP server in :mod:`spec_format.parsers.remote`), counting what was transferred."""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import stat
from pathlib import Path

from spec_format.base.pathkind import kind_of
from spec_format.parsers.header_errors import HeaderError, HeaderErrorKind


class ByteSource:
    """Random access to the bytes of one file. Subclasses set ``size`` and ``_read``.

    ``bytes_read`` counts what was actually transferred, so benchmarks and tests can prove
    that a header audit never touches tensor data.
    """

    name: str = "<bytes>"
    size: int = 0
    bytes_read: int = 0

    def read(self, offset: int, length: int) -> bytes:
        """Return up to ``length`` bytes at ``offset`` (fewer only at end of file)."""
        if offset < 0 or length < 0:
            raise ValueError("negative offset or length")
        length = max(0, min(length, self.size - offset))
        if length == 0:
            return b""
        return self._read(offset, length)

    def read_into(self, offset: int, buffer: memoryview) -> int:
        """Fill ``buffer`` from ``offset``; return the number of bytes written."""
        data = self.read(offset, len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _read(self, offset: int, length: int) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    def prefetch(self, offset: int, length: int) -> None:
        """Hint that ``[offset, offset + length)`` will be read soon (may do nothing)."""

    def close(self) -> None:
        pass

    def __enter__(self) -> ByteSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BytesSource(ByteSource):
    """An in-memory file (tests, fuzzing)."""

    def __init__(self, data: bytes, name: str = "<bytes>") -> None:
        self._data = bytes(data)
        self.size = len(self._data)
        self.name = name
        self.bytes_read = 0

    def _read(self, offset: int, length: int) -> bytes:
        self.bytes_read += length
        return self._data[offset : offset + length]


class FileSource(ByteSource):
    """A local regular file, read with ``pread`` (size from ``fstat``, never from reading).

    Opening refuses anything that is not a regular file: a FIFO would block ``open`` and a
    device could be endless. Symlinks are followed (the Hub cache is made of them); a
    symlink loop becomes a :class:`HeaderError` of kind ``weights-file-unreadable``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.bytes_read = 0
        self._fd: int | None = None
        try:
            st = os.stat(self.path)
        except OSError as e:
            raise _os_error(self.path, e) from None
        if not stat.S_ISREG(st.st_mode):
            raise HeaderError(
                HeaderErrorKind.FILE_UNREADABLE,
                "not-a-file",
                file=self.name,
                name=self.path.name,
                what=kind_of(self.path),
            )
        try:
            self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            st = os.fstat(self._fd)
            if not stat.S_ISREG(st.st_mode):  # swapped between stat and open
                raise OSError(f"{self.path.name} is not a regular file")
            self.size = st.st_size
        except OSError as e:
            self.close()
            raise _os_error(self.path, e) from None

    def _read(self, offset: int, length: int) -> bytes:
        assert self._fd is not None
        chunks = []
        while length > 0:
            chunk = os.pread(self._fd, length, offset)
            if not chunk:  # the file shrank under us
                break
            chunks.append(chunk)
            self.bytes_read += len(chunk)
            offset += len(chunk)
            length -= len(chunk)
        return b"".join(chunks)

    def read_into(self, offset: int, buffer: memoryview) -> int:
        assert self._fd is not None
        want = max(0, min(len(buffer), self.size - offset))
        done = 0
        while done < want:
            n = os.preadv(self._fd, [buffer[done:want]], offset + done)
            if n <= 0:
                break
            done += n
        self.bytes_read += done
        return done

    def mapped(self, offset: int, length: int) -> tuple[mmap.mmap, int] | None:
        """``[offset, offset + length)`` mapped read-only, as (map, where the range starts in
        it), or None when it cannot be (past the end of the file as it is now, no mmap on
        this platform): a scan then reads the page cache in place instead of copying it.
        The caller closes the map. A file cut short while mapped faults (SIGBUS) when the
        missing pages are touched: the size is checked here, before each window."""
        if self._fd is None or offset < 0 or length <= 0:
            return None
        try:
            if offset + length > os.fstat(self._fd).st_size:
                return None  # shrunk: the read path reports the short file
            start = offset - offset % mmap.ALLOCATIONGRANULARITY
            window = mmap.mmap(
                self._fd, offset + length - start, offset=start, access=mmap.ACCESS_READ
            )
        except (OSError, ValueError, OverflowError):
            return None
        self.bytes_read += length
        return window, offset - start

    def prefetch(self, offset: int, length: int) -> None:
        # lets the kernel read ahead while the caller is busy with the previous chunk, so a
        # streaming scan overlaps disk I/O and computation
        # offsets come from a header: clamp them to the file before they reach the syscall
        # (an offset near 2**64 would overflow off_t)
        if not 0 <= offset < self.size or length <= 0:
            return
        length = min(length, self.size - offset)
        if self._fd is not None and hasattr(os, "posix_fadvise"):
            with contextlib.suppress(OSError):  # advisory only
                os.posix_fadvise(self._fd, offset, length, os.POSIX_FADV_WILLNEED)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _os_error(path: Path, e: OSError) -> HeaderError:
    if e.errno == errno.ELOOP:
        variant = "loop"
    elif e.errno == errno.ENOENT:
        variant = "dangling" if path.is_symlink() else "missing"
    elif e.errno == errno.EACCES:
        variant = "permission"
    else:
        variant = "os"
    return HeaderError(
        HeaderErrorKind.FILE_UNREADABLE,
        variant,
        file=str(path),
        name=path.name,
        reason=e.strerror or e,
    )
