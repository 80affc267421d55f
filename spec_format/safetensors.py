"""Header-only reader for safetensors files, with the safetensors library's own limits.

A safetensors file is an 8-byte little-endian header length ``N``, ``N`` bytes of UTF-8
JSON (``{name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}``), then the
tensor bytes. Everything specfmt checks about weights without ``--deep`` comes from that
header, so this module reads exactly ``8 + N`` bytes and nothing else.

Why our own reader instead of ``safetensors.safe_open``:

* **Header only.** ``safe_open`` maps the whole file and needs a local path; we read
  ``8 + N`` bytes from any :class:`ByteSource` and count them, so the audit of a 16 GB
  checkpoint reads a few kilobytes.
* **Remote byte ranges.** The same code reads the header of a file on the Hugging Face Hub
  through two HTTP range requests (see :mod:`spec_format.checkpoint`).
* **Precise findings.** The library stops at the first problem with one message
  ("Error while deserializing header: ..."). We run the same checks in the same order but
  report each problem with its own kind (which is a rule id), the tensor it concerns and a
  fix, and we keep going through the per-tensor checks so one bad entry does not hide the
  next. We also enforce what the format's README requires but the library does not (no
  duplicate tensor names).
* **No torch, no numpy.** Config-only validation must stay cheap to import.

The checks, in the library's order (``safetensors/src/tensor.rs`` ``read_metadata`` and
``Metadata::validate``): file shorter than 8 bytes; ``N`` over 100 MB; ``8 + N`` past the
end of the file; header not UTF-8; not JSON; not an object (plus duplicate names and
``__metadata__`` not a string map, which serde rejects while deserializing); per tensor:
known dtype, non-negative integer shape, two integer offsets; then, sorted by offsets,
offsets contiguous from 0, element count without overflow, sub-byte dtypes filling whole
bytes, byte length equal to ``shape x dtype size``; finally the data must end exactly at the
end of the file.
"""

from __future__ import annotations

import contextlib
import enum
import json
import math
import mmap
import os
import re
import stat
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from spec_format import header_messages
from spec_format.errors import InputError
from spec_format.pathkind import kind_of

#: The library's cap on the header length (``MAX_HEADER_SIZE``).
MAX_HEADER_SIZE = 100_000_000
#: Python ints never overflow; the library computes sizes in u64 and fails past this.
_U64_MAX = 2**64 - 1
#: Stop collecting per-tensor problems after this many (a hostile header can have millions).
MAX_REPORTED_ERRORS = 50

#: Every dtype the library knows, with its size in bits (``Dtype::bitsize``).
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}

#: numpy dtype strings (little-endian, as the format stores them) of the dtypes numpy can
#: represent directly; BF16 and the 8-bit floats need a conversion of their own.
NUMPY_DTYPES: dict[str, str] = {
    "BOOL": "?",
    "U8": "u1",
    "I8": "i1",
    "I16": "<i2",
    "U16": "<u2",
    "F16": "<f2",
    "I32": "<i4",
    "U32": "<u4",
    "F32": "<f4",
    "I64": "<i8",
    "U64": "<u8",
    "F64": "<f8",
}


class HeaderErrorKind(str, enum.Enum):
    """What went wrong. Each value is the name of the H rule that reports it."""

    HEADER_TOO_SMALL = "header-too-small"
    HEADER_TOO_LARGE = "header-too-large"
    HEADER_LENGTH_OUT_OF_BOUNDS = "header-length-out-of-bounds"
    HEADER_NOT_UTF8 = "header-not-utf8"
    HEADER_NOT_JSON = "header-not-json"
    HEADER_NOT_OBJECT = "header-not-object"
    DUPLICATE_TENSOR_NAME = "duplicate-tensor-name"
    INVALID_METADATA = "invalid-metadata"
    INVALID_TENSOR_ENTRY = "invalid-tensor-entry"
    UNKNOWN_DTYPE = "unknown-dtype"
    INVALID_SHAPE = "invalid-shape"
    INVALID_DATA_OFFSETS = "invalid-data-offsets"
    TENSOR_SIZE_MISMATCH = "tensor-size-mismatch"
    BUFFER_SIZE_MISMATCH = "buffer-size-mismatch"
    FILE_UNREADABLE = "weights-file-unreadable"


#: Kinds after which nothing in the header can be trusted (no tensor list at all).
FATAL_KINDS = frozenset(
    {
        HeaderErrorKind.HEADER_TOO_SMALL,
        HeaderErrorKind.HEADER_TOO_LARGE,
        HeaderErrorKind.HEADER_LENGTH_OUT_OF_BOUNDS,
        HeaderErrorKind.HEADER_NOT_UTF8,
        HeaderErrorKind.HEADER_NOT_JSON,
        HeaderErrorKind.HEADER_NOT_OBJECT,
        HeaderErrorKind.FILE_UNREADABLE,
    }
)


class HeaderError(InputError):
    """A safetensors file that the library would refuse (or that we refuse to read).

    ``kind`` names the H rule; its template (:mod:`spec_format.header_messages`) words the
    message from ``variant`` and ``params``.
    ``tensor`` names the entry when the problem is about one tensor. ``str(error)`` is a
    complete, user-facing sentence.
    """

    def __init__(
        self,
        kind: HeaderErrorKind,
        variant: str | None = None,
        *,
        tensor: str | None = None,
        file: str | None = None,
        **params: object,
    ) -> None:
        message = header_messages.message(kind.value, variant, **params)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.tensor = tensor
        self.file = file

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL_KINDS

    def __repr__(self) -> str:
        return f"HeaderError({self.kind.value!r}, {self.message!r}, tensor={self.tensor!r})"


# ---------------------------------------------------------------------------------------
# Byte sources: where the bytes come from (a local file, an HTTP server), with a counter.


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
    import errno

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


# ---------------------------------------------------------------------------------------
# The parsed header


@dataclass(frozen=True)
class TensorInfo:
    """One header entry. ``data_offsets`` are relative to the start of the data buffer."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    data_offsets: tuple[int, int]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.data_offsets[1] - self.data_offsets[0]


@dataclass
class Header:
    """What a header says. ``tensors`` keeps file order; entries whose dtype or shape could
    not be understood are left out (their problems are in the scan's errors)."""

    header_size: int
    file_size: int
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    metadata: dict[str, str] | None = None
    leading_whitespace: bool = False

    @property
    def data_start(self) -> int:
        return 8 + self.header_size

    def absolute_offsets(self, name: str) -> tuple[int, int]:
        begin, end = self.tensors[name].data_offsets
        return self.data_start + begin, self.data_start + end


@dataclass
class HeaderScan:
    """The result of reading one header: what could be understood, and every problem."""

    header: Header | None
    errors: list[HeaderError] = field(default_factory=list)
    bytes_read: int = 0

    @property
    def ok(self) -> bool:
        return self.header is not None and not self.errors


# ---------------------------------------------------------------------------------------
# Reading


def read_header(path: str | os.PathLike[str] | ByteSource) -> Header:
    """Read and validate a header; raise the first :class:`HeaderError` (library order)."""
    scan = scan_header(path)
    if scan.errors:
        raise scan.errors[0]
    assert scan.header is not None
    return scan.header


def scan_header(path: str | os.PathLike[str] | ByteSource) -> HeaderScan:
    """Read a header and collect every problem instead of stopping at the first one.

    Never raises for a bad file (only for programming errors). Reads ``8 + N`` bytes at most,
    and not even that when ``N`` is out of bounds.
    """
    if isinstance(path, ByteSource):
        return _scan(path)
    try:
        source = FileSource(path)
    except HeaderError as e:
        return HeaderScan(None, [e])
    with source:
        return _scan(source)


def _scan(source: ByteSource) -> HeaderScan:
    name = source.name
    before = source.bytes_read

    def fail(kind: HeaderErrorKind, variant: str | None = None, **params: object) -> HeaderScan:
        err = HeaderError(kind, variant, file=name, **params)
        return HeaderScan(None, [err], source.bytes_read - before)

    size = source.size
    if size < 8:
        return fail(HeaderErrorKind.HEADER_TOO_SMALL, size=size, s="s" if size != 1 else "")
    (n,) = struct.unpack("<Q", source.read(0, 8))
    if n > MAX_HEADER_SIZE:
        return fail(HeaderErrorKind.HEADER_TOO_LARGE, length=n)
    if 8 + n > size:
        return fail(HeaderErrorKind.HEADER_LENGTH_OUT_OF_BOUNDS, length=n, rest=size - 8)
    raw = source.read(8, n)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return fail(HeaderErrorKind.HEADER_NOT_UTF8, position=e.start)
    try:
        doc = json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_reject_constant, parse_int=_parse_int
        )
    except (ValueError, RecursionError) as e:
        detail = str(e) if isinstance(e, ValueError) else "nested too deeply"
        return fail(HeaderErrorKind.HEADER_NOT_JSON, "parse", detail=_short(detail))
    problem = _json_limits(doc, surrogates=_SURROGATE_ESCAPE.search(text) is not None)
    if problem:
        return fail(HeaderErrorKind.HEADER_NOT_JSON, "strict", detail=problem)
    if not isinstance(doc, _Pairs):
        return fail(HeaderErrorKind.HEADER_NOT_OBJECT, found=_json_type(doc))
    header = Header(header_size=n, file_size=size)
    header.leading_whitespace = text[:1].isspace()
    errors = _validate(doc, header, name)
    return HeaderScan(header, errors, source.bytes_read - before)


#: serde_json's default recursion limit; the library refuses deeper headers.
MAX_JSON_DEPTH = 128


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _json_limits(doc: object, *, surrogates: bool = True) -> str | None:
    """What Python's json accepts but the library's parser (serde_json) refuses: nesting
    deeper than 128 and strings with lone surrogates (``"\\ud800"``), which are not UTF-8.
    ``surrogates=False``: the text has no surrogate escape, so strings need no check."""
    stack: list[tuple[object, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if surrogates and not _utf8_encodable(node):
                return "a string holds a lone UTF-16 surrogate escape"
        elif isinstance(node, list):
            if depth >= MAX_JSON_DEPTH:
                return f"nested more than {MAX_JSON_DEPTH} levels deep"
            if isinstance(node, _Pairs):
                for key, value in node:
                    stack.append((key, depth))
                    stack.append((value, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in node)
    return None


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class _Pairs(list):
    """A JSON object kept as its list of (key, value) pairs, so duplicates stay visible."""


def _pairs(pairs: list) -> _Pairs:
    return _Pairs(pairs)


class _NegativeZero(int):
    """``-0`` in JSON: Python reads 0, the library's parser refuses it as a size."""


def _parse_int(text: str) -> int:
    return _NegativeZero(0) if text == "-0" else int(text)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _json_type(value: object) -> str:
    if isinstance(value, _Pairs):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_array(value: object) -> bool:
    """A JSON array (objects are kept as pair lists, so ``list`` alone is not enough)."""
    return isinstance(value, list) and not isinstance(value, _Pairs)


def _is_uint(value: object) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, (bool, _NegativeZero))
        and 0 <= value <= _U64_MAX
    )


def _validate(doc: _Pairs, header: Header, file: str) -> list[HeaderError]:
    errors: list[HeaderError] = []

    def err(
        kind: HeaderErrorKind, variant: str | None = None, tensor: str | None = None, **params
    ) -> None:
        if len(errors) < MAX_REPORTED_ERRORS:
            errors.append(HeaderError(kind, variant, tensor=tensor, file=file, **params))

    # Duplicates first: with them, later checks would talk about an entry the reader drops.
    entries: dict[str, object] = {}
    for key, value in doc:
        if key in entries:
            meta = key == "__metadata__"
            err(
                HeaderErrorKind.DUPLICATE_TENSOR_NAME,
                "metadata" if meta else "tensor",
                tensor=None if meta else key,
                name=key,
            )
        entries[key] = value

    if "__metadata__" in entries:
        meta = entries.pop("__metadata__")
        if meta is None:
            header.metadata = None
        elif not isinstance(meta, _Pairs) or not all(isinstance(v, str) for _, v in meta):
            bad = (
                _json_type(meta)
                if not isinstance(meta, _Pairs)
                else next(f"{k!r} is a {_json_type(v)}" for k, v in meta if not isinstance(v, str))
            )
            err(HeaderErrorKind.INVALID_METADATA, found=bad)
        else:
            header.metadata = dict(meta)

    # Per-entry structure (serde's deserialization errors, one kind each).
    parsed: list[tuple[str, str, tuple[int, ...], tuple[int, int]]] = []
    for name, entry in entries.items():
        info = _parse_entry(name, entry, err)
        if info is not None:
            parsed.append(info)
            dtype, shape, offsets = info[1], info[2], info[3]
            header.tensors[name] = TensorInfo(name, dtype, shape, offsets)

    # Metadata::validate: sorted by offsets, contiguous from 0, sizes agree.
    position = 0
    offset_problem = False
    for name, dtype, shape, (begin, end) in sorted(parsed, key=lambda p: p[3]):
        if begin != position or end < begin:
            offset_problem = True
            err(
                HeaderErrorKind.INVALID_DATA_OFFSETS,
                "reversed" if end < begin else "overlap" if begin < position else "gap",
                tensor=name,
                name=name,
                begin=begin,
                end=end,
                position=position,
            )
        position = max(position, end)
        bits = DTYPE_BITS[dtype]
        # the library multiplies in u64: first the element count (checked at every step),
        # then the bit count
        numel = 1
        overflow = False
        for d in shape:
            numel *= d
            if numel > _U64_MAX:
                overflow = True
                break
        if overflow or numel * bits > _U64_MAX:
            err(
                HeaderErrorKind.INVALID_SHAPE,
                "overflow",
                tensor=name,
                name=name,
                shape=list(shape),
                dtype=dtype,
            )
            header.tensors.pop(name, None)
            continue
        total_bits = numel * bits
        if total_bits % 8:
            err(
                HeaderErrorKind.TENSOR_SIZE_MISMATCH,
                "sub-byte",
                tensor=name,
                name=name,
                numel=numel,
                dtype=dtype,
                bits=bits,
            )
            continue
        if end >= begin and total_bits // 8 != end - begin:
            err(
                HeaderErrorKind.TENSOR_SIZE_MISMATCH,
                "span",
                tensor=name,
                name=name,
                shape=list(shape),
                dtype=dtype,
                need=total_bits // 8,
                begin=begin,
                end=end,
                span=end - begin,
            )

    # MetadataIncompleteBuffer: the data must end exactly at the end of the file.
    if not offset_problem:
        expected = header.data_start + position
        if expected != header.file_size:
            if expected > header.file_size:
                err(
                    HeaderErrorKind.BUFFER_SIZE_MISMATCH,
                    "truncated",
                    need=position,
                    have=header.file_size - header.data_start,
                )
            else:
                extra = header.file_size - expected
                err(
                    HeaderErrorKind.BUFFER_SIZE_MISMATCH,
                    "trailing",
                    extra=extra,
                    s="s" if extra != 1 else "",
                )
    return errors


def _parse_entry(name: str, entry: object, err) -> tuple | None:
    if not isinstance(entry, _Pairs):
        err(
            HeaderErrorKind.INVALID_TENSOR_ENTRY,
            "not-object",
            tensor=name,
            name=name,
            found=_json_type(entry),
        )
        return None
    fields = dict(entry)
    if len(fields) != len(entry):
        repeated = sorted({k for k, _ in entry if sum(1 for k2, _ in entry if k2 == k) > 1})
        err(
            HeaderErrorKind.INVALID_TENSOR_ENTRY,
            "repeated",
            tensor=name,
            name=name,
            fields=", ".join(repeated),
        )
        return None
    missing = [k for k in ("dtype", "shape", "data_offsets") if k not in fields]
    if missing:
        err(
            HeaderErrorKind.INVALID_TENSOR_ENTRY,
            "missing",
            tensor=name,
            name=name,
            fields=" or ".join(missing),
        )
        return None
    dtype, shape, offsets = fields["dtype"], fields["shape"], fields["data_offsets"]
    ok = True
    if not isinstance(dtype, str):
        err(
            HeaderErrorKind.INVALID_TENSOR_ENTRY,
            "dtype",
            tensor=name,
            name=name,
            found=_json_type(dtype),
        )
        ok = False
    elif dtype not in DTYPE_BITS:
        hint = f" (did you mean {dtype.upper()!r}?)" if dtype.upper() in DTYPE_BITS else ""
        err(
            HeaderErrorKind.UNKNOWN_DTYPE,
            tensor=name,
            name=name,
            dtype=_short(dtype, 40),
            hint=hint,
            known=", ".join(DTYPE_BITS),
        )
        ok = False
    if not _is_array(shape) or not all(_is_uint(d) for d in shape):
        if _is_array(shape):
            bad = next(d for d in shape if not _is_uint(d))
            shown = "-0" if isinstance(bad, _NegativeZero) else _short(json.dumps(bad), 40)
            err(HeaderErrorKind.INVALID_SHAPE, "dimension", tensor=name, name=name, found=shown)
        else:
            err(
                HeaderErrorKind.INVALID_SHAPE,
                "not-a-list",
                tensor=name,
                name=name,
                found=_json_type(shape),
            )
        ok = False
    if not (_is_array(offsets) and len(offsets) == 2 and all(_is_uint(o) for o in offsets)):
        err(
            HeaderErrorKind.INVALID_TENSOR_ENTRY,
            "offsets",
            tensor=name,
            name=name,
            found=_short(json.dumps(offsets, default=str), 60),
        )
        ok = False
    if not ok:
        return None
    return name, dtype, tuple(shape), (offsets[0], offsets[1])


# ---------------------------------------------------------------------------------------
# Sharded checkpoints: model.safetensors.index.json

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
#: An index file is JSON the size of a header at most.
MAX_INDEX_SIZE = MAX_HEADER_SIZE


class ShardIndexError(InputError):
    """A shard index that cannot be used (not JSON, no ``weight_map``, unsafe shard names);
    worded by the ``invalid-shard-index`` rule (H017) from ``variant`` and ``params``."""

    def __init__(self, variant: str, *, tensor: str | None = None, **params: object) -> None:
        message = header_messages.message(
            "invalid-shard-index", variant, index=INDEX_NAME, **params
        )
        super().__init__(message)
        self.message = message
        self.tensor = tensor


@dataclass
class ShardIndex:
    """``weight_map`` (tensor name -> shard file name) and ``metadata`` of an index file.

    ``problems`` lists entries that were skipped (wrong type, unsafe shard name) as
    :class:`ShardIndexError`; the index is still usable for the rest.
    """

    weight_map: dict[str, str]
    metadata: dict | None = None
    problems: list[ShardIndexError] = field(default_factory=list)

    @property
    def shards(self) -> list[str]:
        return sorted(set(self.weight_map.values()))

    def tensors_by_shard(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for tensor, shard in self.weight_map.items():
            out.setdefault(shard, []).append(tensor)
        return out


def parse_index(data: bytes) -> ShardIndex:
    """Parse the bytes of ``model.safetensors.index.json``; raise :class:`ShardIndexError`."""
    if len(data) > MAX_INDEX_SIZE:
        raise ShardIndexError("too-large", size=len(data), limit=MAX_INDEX_SIZE)
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        obj = dict(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            duplicates.extend(k for k, _ in items if k in seen or seen.add(k))
        return obj

    try:
        doc = json.loads(
            data.decode("utf-8"), parse_constant=_reject_constant, object_pairs_hook=pairs
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        detail = str(e) if not isinstance(e, RecursionError) else "nested too deeply"
        raise ShardIndexError("not-json", detail=_short(detail)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("weight_map"), dict):
        raise ShardIndexError("no-weight-map")
    index = ShardIndex({}, doc.get("metadata") if isinstance(doc.get("metadata"), dict) else None)
    for key in dict.fromkeys(duplicates):  # each repeated key once, in order
        index.problems.append(
            ShardIndexError(
                "duplicate-key",
                tensor=key if key in doc["weight_map"] else None,
                key=_short(json.dumps(key), 60),
            )
        )
    for tensor, shard in doc["weight_map"].items():
        if not isinstance(shard, str) or not safe_shard_name(shard):
            index.problems.append(
                ShardIndexError(
                    "bad-entry",
                    tensor=tensor,
                    name=tensor,
                    found=_short(json.dumps(shard), 60),
                )
            )
            continue
        index.weight_map[tensor] = shard
    return index


def safe_shard_name(name: str) -> bool:
    """A shard is a plain file name in the checkpoint directory (no traversal, no paths)."""
    return (
        name.endswith(".safetensors")
        and "/" not in name
        and "\\" not in name
        and name not in (".", "..")
        and not name.startswith(".")
        and "\x00" not in name
    )


def iter_dtypes() -> Iterator[str]:
    return iter(DTYPE_BITS)
