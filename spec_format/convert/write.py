"""Execute a :class:`~spec_format.convert.plan.Plan`: write the converted checkpoint.

* Tensor bytes are copied by the kernel (``copy_file_range``, else a 16 MiB ``pread`` /
  ``write`` loop) from the source byte ranges the headers give: nothing is loaded whole, and
  memory stays a few MiB however large the checkpoint. "stack"/"cat" join source ranges
  (interleaved for an axis other than 0); only ``--dtype`` re-casts, chunk by chunk, with
  numpy (imported then).
* ``config.json`` and ``model.safetensors.index.json`` are written like ``save_pretrained``
  (sorted keys, indent 2, newline); weights go to ``model.safetensors``, or to
  ``model-00001-of-0000N.safetensors`` shards when they exceed the shard size (the default
  of the transformers major the target format's writer used), each file in the canonical
  safetensors layout with ``{"format": "pt"}`` metadata.
* Everything goes into the temporary directory of the one writer's directory output
  (:func:`spec_format.parsers.outfile.directory_output`, next to DEST); the caller
  re-validates it, and it is renamed to DEST. On any failure the temporary directory is
  removed: nothing partial remains.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from spec_format.base import extras
from spec_format.base.errors import InputError, UsageError
from spec_format.convert.plan import ConvertRefused, Plan
from spec_format.parsers.checkpoint import TensorRecord
from spec_format.parsers.outfile import fsync_dir
from spec_format.parsers.safetensors import DTYPE_BITS, INDEX_NAME, SINGLE_NAME
from spec_format.rewrites.migration.output import dumps

#: save_pretrained's default max_shard_size per transformers major (decimal units, as
#: huggingface_hub parses "5GB" / "50GB")
SHARD_SIZE = {"4": 5 * 10**9, "5": 50 * 10**9}
_T = TypeVar("_T")
CHUNK = 16 << 20
FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")
#: --dtype spellings: safetensors names and torch names
DTYPE_NAMES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16"}
TORCH_NAMES = {v: k for k, v in DTYPE_NAMES.items()}


class WriteError(InputError):
    """A source range could not be read or the output could not be written (exit 3);
    nothing was left behind."""


class Segment(NamedTuple):
    file: str  # source file, relative to the source checkpoint
    begin: int  # absolute byte offset in that file
    length: int


class OutTensor(NamedTuple):
    name: str
    dtype: str  # as written
    shape: tuple[int, ...]
    segments: tuple[Segment, ...]  # in output order
    source_dtype: str  # != dtype: re-cast (--dtype)
    derive: str = ""  # computed by this deriver (spec_format.convert.derive) from ``inputs``
    inputs: tuple[TensorRecord, ...] = ()

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * DTYPE_BITS[self.dtype] // 8


#: no shard is larger (a safetensors file's offsets are 64-bit; this is far below)
MAX_SHARD_BYTES = 10**18


def parse_size(text: str | None) -> int | None:
    """``--max-shard-size 5GB`` (huggingface_hub's decimal units) or a byte count."""
    if text is None:
        return None

    units = {"TB": 10**12, "GB": 10**9, "MB": 10**6, "KB": 10**3}
    s = text.strip().upper()
    wrong = UsageError(f"--max-shard-size {text!r}: a size like 5GB, 500MB or 1000000")
    try:
        number = float(s[:-2]) * units[s[-2:]] if s[-2:] in units else int(s)
    except ValueError:
        raise wrong from None
    if not (math.isfinite(number) and 1 <= number <= MAX_SHARD_BYTES):  # infGB, 1e400KB
        raise UsageError(
            f"--max-shard-size {text!r}: a size from 1 byte to {MAX_SHARD_BYTES // 10**12:,}TB"
        )
    return int(number)


def parse_dtype(text: str) -> str:
    """``--dtype``: ``bfloat16`` or ``BF16`` ... -> the safetensors name."""
    name = DTYPE_NAMES.get(text.lower(), text.upper())
    if name not in FLOAT_DTYPES:
        raise UsageError(
            f"--dtype {text!r}: choose one of {', '.join(DTYPE_NAMES)} (or "
            f"{', '.join(FLOAT_DTYPES)})"
        )
    return name


def output_tensors(
    plan: Plan, tensors: Mapping[str, TensorRecord], dtype: str | None = None
) -> list[OutTensor]:
    """The tensors the plan writes, in plan order, with their source byte ranges."""
    from spec_format.convert.derive import DERIVERS

    out = []
    for move in plan.moves:
        if move.op == "drop" or move.target is None:
            continue
        records = [tensors[s] for s in move.sources]
        if move.op == "derive":
            kind, shape = DERIVERS[move.derive].header(plan.config, tensors)
            out.append(OutTensor(move.target, kind, shape, (), kind, move.derive, tuple(records)))
            continue
        first = records[0]
        if move.op == "copy":
            shape, segments = first.shape, (Segment(first.file, first.begin, first.nbytes),)
        else:
            shape, segments = _joined(move.target, move.op, move.axis, records)
        if move.shape is not None:  # the same bytes read as another shape (fused experts)
            if math.prod(move.shape) != math.prod(shape):
                raise ConvertRefused(f"{move.target}: {list(shape)} is not {list(move.shape)}")
            shape = tuple(move.shape)
        target_dtype = first.dtype
        if dtype is not None and first.dtype in FLOAT_DTYPES:
            target_dtype = dtype
        out.append(OutTensor(move.target, target_dtype, shape, segments, first.dtype))
    return out


def _joined(target: str, op: str, axis: int, records: list[TensorRecord]):
    first = records[0]
    for r in records[1:]:
        if r.dtype != first.dtype:
            raise ConvertRefused(
                f"{target}: cannot {op} {first.name} ({first.dtype}) with {r.name} ({r.dtype})"
            )
    base = first.shape if op == "cat" else (*first.shape[:axis], 1, *first.shape[axis:])
    if not 0 <= axis < len(base):
        raise ConvertRefused(f"{target}: axis {axis} is out of range for {list(first.shape)}")
    parts = []
    for r in records:
        shape = r.shape if op == "cat" else (*r.shape[:axis], 1, *r.shape[axis:])
        if len(shape) != len(base) or any(
            a != b for i, (a, b) in enumerate(zip(shape, base, strict=True)) if i != axis
        ):
            raise ConvertRefused(
                f"{target}: cannot {op} {first.name} {list(first.shape)} with {r.name} "
                f"{list(r.shape)} along axis {axis}"
            )
        parts.append((r, shape))
    out_shape = (*base[:axis], sum(s[axis] for _, s in parts), *base[axis + 1 :])
    item = DTYPE_BITS[first.dtype] // 8
    outer = math.prod(base[:axis])
    segments: list[Segment] = []
    for i in range(outer):
        for r, shape in parts:
            size = math.prod(shape[axis:]) * item
            _append(segments, Segment(r.file, r.begin + i * size, size))
    return out_shape, tuple(segments)


def _append(segments: list[Segment], seg: Segment) -> None:
    last = segments[-1] if segments else None
    if last and last.file == seg.file and last.begin + last.length == seg.begin:
        segments[-1] = Segment(last.file, last.begin, last.length + seg.length)
    else:
        segments.append(seg)


def shard(tensors: list[OutTensor], max_shard_size: int) -> list[list[OutTensor]]:
    """Split in order like huggingface_hub's ``split_state_dict_into_shards_factory``: a
    tensor over the limit gets its own shard, otherwise a new shard starts when the next
    tensor would tip the current one over."""
    shards: list[list[OutTensor]] = []
    current: list[OutTensor] = []
    size = 0
    for t in tensors:
        if t.nbytes > max_shard_size:
            shards.append([t])
            continue
        if current and size + t.nbytes > max_shard_size:
            shards.append(current)
            current, size = [], 0
        current.append(t)
        size += t.nbytes
    if current or not shards:
        shards.append(current)
    return shards


def shard_names(count: int) -> list[str]:
    if count == 1:
        return [SINGLE_NAME]
    return [f"model-{i + 1:05d}-of-{count:05d}.safetensors" for i in range(count)]


def write_checkpoint(
    directory: Path,
    source_dir: Path,
    config: Mapping,
    tensors: list[OutTensor],
    *,
    max_shard_size: int,
) -> list[tuple[str, int]]:
    """Write ``config.json`` and the weights into ``directory`` (empty, temporary).
    Returns (file name, size) of every file written."""
    written = [("config.json", _write_file(directory / "config.json", dumps(dict(config))))]
    shards = shard(tensors, max_shard_size)
    names = shard_names(len(shards))
    with _Sources(source_dir, config) as sources:
        for name, members in zip(names, shards, strict=True):
            written.append((name, _write_safetensors(directory / name, members, sources)))
    if len(shards) > 1:
        index = {
            "metadata": {
                "total_parameters": sum(math.prod(t.shape) for t in tensors),
                "total_size": sum(t.nbytes for t in tensors),
            },
            "weight_map": {t.name: n for n, ts in zip(names, shards, strict=True) for t in ts},
        }
        text = json.dumps(index, indent=2, sort_keys=True) + "\n"
        written.append((INDEX_NAME, _write_file(directory / INDEX_NAME, text)))
    fsync_dir(directory)
    return written


# -- files -----------------------------------------------------------------------------------
def _write_file(path: Path, text: str) -> int:
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(data)


def canonical_header(
    tensors: Iterable[tuple[str, _T]], metadata: Mapping[str, str] | None
) -> tuple[bytes, list[tuple[str, _T]]]:
    """The canonical safetensors header of ``(name, tensor)`` pairs, each tensor having
    ``dtype``, ``shape`` and ``nbytes``: the 8-byte length, then the JSON (``__metadata__``
    first when given; tensors by dtype alignment descending, then name; padded with spaces
    to a multiple of 8). Returns it and the pairs in data order."""
    order = sorted(tensors, key=lambda pair: (-DTYPE_BITS[pair[1].dtype], pair[0]))
    header: dict[str, Any] = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, t in order:
        header[name] = {
            "dtype": t.dtype,
            "shape": list(t.shape),
            "data_offsets": [offset, offset + t.nbytes],
        }
        offset += t.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw, order


def _write_safetensors(path: Path, members: list[OutTensor], sources: _Sources) -> int:
    head, pairs = canonical_header(((t.name, t) for t in members), {"format": "pt"})
    order = [t for _, t in pairs]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        os.write(fd, head)
        position = len(head)
        for t in order:
            if t.derive:
                data = sources.derived(t)
                os.pwrite(fd, data, position)
                position += len(data)
            elif t.dtype == t.source_dtype:
                for seg in t.segments:
                    sources.copy(seg, fd, position, t.name)
                    position += seg.length
            else:
                position = _cast(t, sources, fd, position)
        os.fsync(fd)
    finally:
        os.close(fd)
    return position


class _Sources:
    """Open source files (one descriptor each) and copy byte ranges out of them."""

    def __init__(self, directory: Path, config: Mapping) -> None:
        self.directory = directory
        self.config = config
        self.fds: dict[str, int] = {}
        self.kernel_copy = hasattr(os, "copy_file_range")
        self.buffer: bytearray | None = None

    def fd(self, name: str) -> int:
        if name not in self.fds:
            path = self.directory / name
            try:
                self.fds[name] = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError as exc:
                raise WriteError(
                    f"{path}: cannot open the source weights ({exc.strerror})"
                ) from None
        return self.fds[name]

    def copy(self, seg: Segment, dst: int, at: int, tensor: str) -> None:
        src = self.fd(seg.file)
        done = 0
        while done < seg.length:
            n = self._copy_some(src, seg.begin + done, dst, at + done, seg.length - done)
            if n <= 0:
                raise WriteError(
                    f"{self.directory / seg.file}: tensor {tensor} ends at byte "
                    f"{seg.begin + seg.length:,} but the file ends at "
                    f"{seg.begin + done:,} (truncated?); nothing was written"
                )
            done += n

    def _copy_some(self, src: int, src_at: int, dst: int, dst_at: int, count: int) -> int:
        count = min(count, 1 << 30)
        if self.kernel_copy:
            try:
                return os.copy_file_range(src, dst, count, src_at, dst_at)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
                self.kernel_copy = False  # e.g. across filesystems on old kernels
        data = self.read(src, src_at, min(count, CHUNK))
        if not data:
            return 0
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.pwrite(dst, view[written:], dst_at + written)
        return len(data)

    def read(self, src: int, at: int, count: int) -> bytes:
        return os.pread(src, count, at)

    def derived(self, t: OutTensor) -> bytes:
        """The bytes of a derived tensor, computed from its (small) source tensors."""
        from spec_format.convert.derive import DERIVERS, MAX_INPUT_BYTES

        values = {}
        for r in t.inputs:
            if r.nbytes > MAX_INPUT_BYTES:
                raise ConvertRefused(
                    f"{t.name} would be rebuilt from {r.name}, but {r.name} is {r.nbytes:,} "
                    f"bytes (over {MAX_INPUT_BYTES:,}); nothing was written"
                )
            data = self.read(self.fd(r.file), r.begin, r.nbytes)
            if len(data) != r.nbytes:
                raise WriteError(
                    f"{self.directory / r.file}: tensor {r.name} is cut short (truncated?); "
                    "nothing was written"
                )
            values[r.name] = data
        data = DERIVERS[t.derive].compute(self.config, values)
        if len(data) != t.nbytes:  # pragma: no cover - a deriver that breaks its header
            raise AssertionError(f"{t.derive} made {len(data)} bytes for {t.nbytes}")
        return data

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()

    def __enter__(self) -> _Sources:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cast(t: OutTensor, sources: _Sources, fd: int, position: int) -> int:
    """Re-cast a float tensor chunk by chunk (``--dtype``); returns the new position."""
    np = _numpy()
    item = DTYPE_BITS[t.source_dtype] // 8
    for seg in t.segments:
        src = sources.fd(seg.file)
        done = 0
        while done < seg.length:
            want = min(CHUNK - CHUNK % item, seg.length - done)
            data = sources.read(src, seg.begin + done, want)
            if len(data) != want:
                raise WriteError(
                    f"{sources.directory / seg.file}: tensor {t.name} is cut short at byte "
                    f"{seg.begin + done + len(data):,} (truncated?); nothing was written"
                )
            out = _to_dtype(np, _from_dtype(np, data, t.source_dtype), t.dtype)
            os.pwrite(fd, out, position)
            position += len(out)
            done += want
    return position


def _numpy():
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is in the deep and forward extras
        raise UsageError(
            extras.missing(
                "--dtype", "deep", alternative=", or drop --dtype to copy the tensors unchanged"
            )
        ) from None
    return numpy


def _from_dtype(np, data: bytes, dtype: str):
    if dtype == "BF16":
        return (np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    return np.frombuffer(data, dtype={"F64": "<f8", "F32": "<f4", "F16": "<f2"}[dtype])


def _to_dtype(np, values, dtype: str) -> bytes:
    if dtype == "BF16":  # round to nearest even, NaN kept a NaN
        f = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
        rounded = (f + np.uint32(0x7FFF) + ((f >> np.uint32(16)) & np.uint32(1))) >> 16
        out = rounded.astype("<u2")
        out[np.isnan(values)] = 0x7FC0
        return out.tobytes()
    return values.astype({"F64": "<f8", "F32": "<f4", "F16": "<f2"}[dtype]).tobytes()
