"""Read one safetensors header and find every problem the safetensors library would refuse.

A safetensors file is an 8-byte little-endian header length ``N``, ``N`` bytes of UTF-8
JSON (``{name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}``), then the
tensor bytes. This module reads exactly ``8 + N`` bytes and nothing else.

The checks, in the library's order (``safetensors/src/tensor.rs`` ``read_metadata`` and
``Metadata::validate``): file shorter than 8 bytes; ``N`` over 100 MB; ``8 + N`` past the
end of the file; header not UTF-8; not JSON; not an object (plus duplicate names and
``__metadata__`` not a string map, which serde rejects while deserializing); per tensor:
known dtype, non-negative integer shape, two integer offsets; then, sorted by offsets,
offsets contiguous from 0, element count without overflow, sub-byte dtypes filling whole
bytes, byte length equal to ``shape x dtype size``; finally the data must end exactly at the
end of the file.

One pass, bounded: the entries are read one at a time (:class:`~spec_format.base.json_cursor.
JsonCursor`) into a :class:`~spec_format.parsers.tensor_table.TensorTable`, so a header of a
million tensors (what the 100 MB cap allows) costs ~150 bytes a tensor beyond its text,
never a dict per entry. There is no cap on the tensor count beyond the library's own on
the header size: the library reads such files, so refusing them would be a false finding.
Per-tensor problems stop being collected after :data:`MAX_REPORTED_ERRORS`.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field

from spec_format.base.json_cursor import JsonCursor, NegativeZero, json_type, limit_problem
from spec_format.facts.safetensors_dtypes import DTYPE_BITS
from spec_format.parsers.byte_sources import ByteSource, FileSource
from spec_format.parsers.header_errors import HeaderError, HeaderErrorKind
from spec_format.parsers.tensor_table import TensorTable

#: The library's cap on the header length (``MAX_HEADER_SIZE``).
MAX_HEADER_SIZE = 100_000_000
#: Python ints never overflow; the library computes sizes in u64 and fails past this.
_U64_MAX = 2**64 - 1
#: Stop collecting per-tensor problems after this many (a hostile header can have millions).
MAX_REPORTED_ERRORS = 50
_FIELDS = ("dtype", "shape", "data_offsets")


@dataclass
class Header:
    """What a header says. ``tensors`` keeps file order; entries whose dtype or shape could
    not be understood are left out (their problems are in the scan's errors)."""

    header_size: int
    file_size: int
    tensors: TensorTable = field(default_factory=TensorTable)
    metadata: dict[str, str] | None = None
    leading_whitespace: bool = False

    @property
    def data_start(self) -> int:
        return 8 + self.header_size

    def absolute_offsets(self, name: str) -> tuple[int, int]:
        _, _, begin, end = self.tensors.row(name)
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
    try:
        text = source.read(8, n).decode("utf-8")
    except UnicodeDecodeError as e:
        return fail(HeaderErrorKind.HEADER_NOT_UTF8, position=e.start)
    header = Header(header_size=n, file_size=size)
    header.leading_whitespace = text[:1].isspace()
    entries = _Entries(header, name)
    try:
        kind, detail = entries.read(JsonCursor(text))
    except (ValueError, RecursionError) as e:
        detail = str(e) if isinstance(e, ValueError) else "nested too deeply"
        return fail(HeaderErrorKind.HEADER_NOT_JSON, "parse", detail=_short(detail))
    del text
    if kind == "strict":
        return fail(HeaderErrorKind.HEADER_NOT_JSON, "strict", detail=detail)
    if kind == "not-object":
        return fail(HeaderErrorKind.HEADER_NOT_OBJECT, found=detail)
    return HeaderScan(header, entries.finish(), source.bytes_read - before)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_uint(value: object) -> bool:
    """A size the library reads as u64 (``type`` leaves out bool and ``-0``)."""
    return type(value) is int and 0 <= value <= _U64_MAX


class _Entries:
    """The entries of one header as they are read, and the problems of each; at the end,
    the library's ``Metadata::validate`` over the rows sorted by offsets."""

    def __init__(self, header: Header, file: str) -> None:
        self.header = header
        self.file = file
        self.table = header.tensors
        self.duplicates: list[HeaderError] = []
        self.metadata: tuple[object] | None = None  # the last __metadata__ value read
        #: per-entry problems by tensor (the first problem-free of a repeated name clears)
        self.problems: dict[str, list[HeaderError]] = {}
        self.stored = 0
        self.invalid: set[str] = set()  # names whose (last) entry was not understood

    def error(self, kind: HeaderErrorKind, variant: str | None = None, **params) -> HeaderError:
        return HeaderError(kind, variant, file=self.file, **params)

    def read(self, cursor: JsonCursor) -> tuple[str, str]:
        """Read every entry; ``("ok", "")``, or ``("strict"|"not-object", detail)``. A
        syntax error anywhere wins over a strict-JSON problem found before it, as in a
        parser that reads the whole document first."""
        if not cursor.enter_object():
            doc = cursor.value()
            cursor.finish()
            problem = limit_problem(doc, 1, surrogates=cursor.surrogates)
            return ("strict", problem) if problem else ("not-object", json_type(doc))
        strict = ""
        seen_metadata = False
        fast = not cursor.surrogates and self.fast_entry
        while (key := cursor.next_key()) is not None:
            value = cursor.value()
            if strict:
                continue  # only the syntax of the rest matters now
            if fast and key not in self.table and fast(key, value):
                continue
            problem = limit_problem(value, 2, surrogates=cursor.surrogates)
            if not problem and cursor.surrogates:
                problem = limit_problem(key, 1, surrogates=True)
            if problem:
                strict = problem
                continue
            if key == "__metadata__":
                if seen_metadata:
                    self.duplicate(key)
                seen_metadata = True
                self.metadata = (value,)
                continue
            if key in self.table or key in self.invalid:
                self.duplicate(key)
            self.entry(key, value)
        cursor.finish()
        return ("strict", strict) if strict else ("ok", "")

    def fast_entry(self, name: str, entry: object) -> bool:
        """Take an entry written as every writer writes it (``dtype``, ``shape``,
        ``data_offsets`` in that order, all valid, nothing nested deeper); false for anything
        else, which :meth:`entry` then reads with every check."""
        if type(entry) is not tuple or len(entry) != 3 or name in self.invalid:
            return False
        (k1, dtype), (k2, shape), (k3, offsets) = entry
        if (
            k1 != "dtype"
            or k2 != "shape"
            or k3 != "data_offsets"
            or type(dtype) is not str
            or dtype not in DTYPE_BITS
            or type(shape) is not list
            or type(offsets) is not list
            or len(offsets) != 2
            or not all(map(_is_uint, offsets))
            or not all(map(_is_uint, shape))
            or name == "__metadata__"
        ):
            return False
        self.table.add(name, dtype, tuple(shape), offsets[0], offsets[1])
        return True

    def duplicate(self, key: str) -> None:
        meta = key == "__metadata__"
        if len(self.duplicates) < MAX_REPORTED_ERRORS:
            self.duplicates.append(
                self.error(
                    HeaderErrorKind.DUPLICATE_TENSOR_NAME,
                    "metadata" if meta else "tensor",
                    tensor=None if meta else key,
                    name=key,
                )
            )
        if not meta:  # the library keeps the last entry of a name: forget the earlier one
            self.table.discard(key)
            self.invalid.discard(key)
            self.stored -= len(self.problems.pop(key, ()))

    def problem(self, name: str, kind: HeaderErrorKind, variant: str | None = None, **params):
        self.invalid.add(name)
        if self.stored < MAX_REPORTED_ERRORS:
            self.stored += 1
            found = self.error(kind, variant, tensor=name, name=name, **params)
            self.problems.setdefault(name, []).append(found)

    def entry(self, name: str, entry: object) -> None:
        """serde's deserialization of one entry: each problem of its own kind."""
        if not isinstance(entry, tuple):
            self.problem(
                name, HeaderErrorKind.INVALID_TENSOR_ENTRY, "not-object", found=json_type(entry)
            )
            return
        fields = dict(entry)
        if len(fields) != len(entry):
            keys = [k for k, _ in entry]
            repeated = sorted({k for k in keys if keys.count(k) > 1})
            self.problem(
                name, HeaderErrorKind.INVALID_TENSOR_ENTRY, "repeated", fields=", ".join(repeated)
            )
            return
        missing = [k for k in _FIELDS if k not in fields]
        if missing:
            self.problem(
                name, HeaderErrorKind.INVALID_TENSOR_ENTRY, "missing", fields=" or ".join(missing)
            )
            return
        dtype, shape, offsets = fields["dtype"], fields["shape"], fields["data_offsets"]
        ok = True
        if type(dtype) is not str:
            self.problem(
                name, HeaderErrorKind.INVALID_TENSOR_ENTRY, "dtype", found=json_type(dtype)
            )
            ok = False
        elif dtype not in DTYPE_BITS:
            hint = f" (did you mean {dtype.upper()!r}?)" if dtype.upper() in DTYPE_BITS else ""
            self.problem(
                name,
                HeaderErrorKind.UNKNOWN_DTYPE,
                dtype=_short(dtype, 40),
                hint=hint,
                known=", ".join(DTYPE_BITS),
            )
            ok = False
        if type(shape) is not list:
            self.problem(name, HeaderErrorKind.INVALID_SHAPE, "not-a-list", found=json_type(shape))
            ok = False
        elif not all(map(_is_uint, shape)):
            bad = next(d for d in shape if not _is_uint(d))
            shown = "-0" if isinstance(bad, NegativeZero) else _short(json.dumps(bad), 40)
            self.problem(name, HeaderErrorKind.INVALID_SHAPE, "dimension", found=shown)
            ok = False
        if not (
            type(offsets) is list
            and len(offsets) == 2
            and _is_uint(offsets[0])
            and _is_uint(offsets[1])
        ):
            shown = _short(json.dumps(offsets, default=str), 60)
            self.problem(name, HeaderErrorKind.INVALID_TENSOR_ENTRY, "offsets", found=shown)
            ok = False
        if ok:
            self.table.add(name, dtype, tuple(shape), offsets[0], offsets[1])

    def finish(self) -> list[HeaderError]:
        errors = list(self.duplicates)
        meta = self.metadata_problem()
        if meta is not None:
            errors.append(meta)
        for found in self.problems.values():
            errors.extend(found)
        errors.extend(self.validate())
        return errors[:MAX_REPORTED_ERRORS]

    def metadata_problem(self) -> HeaderError | None:
        if self.metadata is None:
            return None
        (meta,) = self.metadata
        if meta is None:
            self.header.metadata = None
        elif not isinstance(meta, tuple) or not all(isinstance(v, str) for _, v in meta):
            bad = (
                json_type(meta)
                if not isinstance(meta, tuple)
                else next(f"{k!r} is a {json_type(v)}" for k, v in meta if not isinstance(v, str))
            )
            return self.error(HeaderErrorKind.INVALID_METADATA, found=bad)
        else:
            self.header.metadata = dict(meta)
        return None

    def validate(self) -> list[HeaderError]:
        """``Metadata::validate``: sorted by offsets, contiguous from 0, sizes agree; then
        the data must end exactly at the end of the file (``MetadataIncompleteBuffer``)."""
        errors: list[HeaderError] = []
        table, header = self.table, self.header

        def err(kind: HeaderErrorKind, variant: str | None = None, **params) -> None:
            if len(errors) < MAX_REPORTED_ERRORS:
                errors.append(self.error(kind, variant, **params))

        position = 0
        offset_problem = False
        for name, dtype, shape, begin, end in table.by_offsets():
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
            numel = math.prod(shape)
            # the library multiplies in u64, checking the element count at every step
            if numel > _U64_MAX or (numel == 0 and _overflows(shape)) or numel * bits > _U64_MAX:
                err(
                    HeaderErrorKind.INVALID_SHAPE,
                    "overflow",
                    tensor=name,
                    name=name,
                    shape=list(shape),
                    dtype=dtype,
                )
                table.discard(name)
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
        if not offset_problem:
            expected = header.data_start + position
            if expected > header.file_size:
                err(
                    HeaderErrorKind.BUFFER_SIZE_MISMATCH,
                    "truncated",
                    need=position,
                    have=header.file_size - header.data_start,
                )
            elif expected < header.file_size:
                extra = header.file_size - expected
                err(
                    HeaderErrorKind.BUFFER_SIZE_MISMATCH,
                    "trailing",
                    extra=extra,
                    s="s" if extra != 1 else "",
                )
        return errors


def _overflows(shape: tuple[int, ...]) -> bool:
    """A running product past u64 before a zero dimension brings it back to 0."""
    numel = 1
    for d in shape:
        numel *= d
        if numel > _U64_MAX:
            return True
    return False
