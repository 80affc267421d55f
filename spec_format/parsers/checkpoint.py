"""Find what a checkpoint holds: config.json, one model.safetensors, or an index + shards.

:func:`load_checkpoint` reads only the safetensors headers (of every shard) and returns a
:class:`Checkpoint`: every tensor's dtype, shape, file and byte range, the ``__metadata__``,
and the problems found on the way as :class:`CheckpointIssue` values named after the H rule
that reports them. It never raises for a broken checkpoint; the H rules turn the issues
into findings.

What counts as the weights (and what is stray), following the readers that matter:

* ``model.safetensors.index.json`` present: the shards it names (vLLM filters ``*.safetensors``
  by the index). Every shard must exist, every mapped tensor must be in its shard, and no
  tensor may appear twice. A ``model.safetensors`` next to an index is reported: transformers
  and speculators load it, vLLM loads the shards.
* else ``model.safetensors``.
* any other ``*.safetensors`` file is stray and reported, never read as weights: vLLM loads
  every ``*.safetensors`` of a directory without an index, so a stray file breaks serving.

Two storages share this logic: a local directory and, with the ``remote`` extra, a Hugging
Face Hub repository (``hf://ORG/NAME[@REV]``), read through HTTP range requests so that only
``config.json``, the index and the headers are transferred, never the weights.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec_format.base import progress
from spec_format.base.errors import InputError
from spec_format.facts import header_messages
from spec_format.parsers.safetensors import (
    INDEX_NAME,
    MAX_INDEX_SIZE,
    SINGLE_NAME,
    ByteSource,
    FileSource,
    Header,
    HeaderError,
    HeaderErrorKind,
    HeaderScan,
    ShardIndex,
    ShardIndexError,
    parse_index,
    scan_header,
)
from spec_format.parsers.storage import Storage, parse_hf_url  # noqa: F401 - parse_hf_url re-exported
from spec_format.parsers.tensor_table import TensorTable

CONFIG_NAME = "config.json"
#: A config.json is small; refuse to read more than this.
MAX_CONFIG_SIZE = 16 * 1024 * 1024
#: Issue names that are not header error kinds (each is the name of an H rule).
HEADER_PADDING = "header-padding"
INVALID_SHARD_INDEX = "invalid-shard-index"
MISSING_SHARD = "missing-shard"
TENSOR_NOT_IN_SHARD = "tensor-not-in-shard"
DUPLICATE_ACROSS_SHARDS = "duplicate-tensor-across-shards"
UNINDEXED_TENSOR = "unindexed-tensor"
STRAY_SAFETENSORS = "stray-safetensors-file"
#: Per-issue-name cap, so a hostile index with a million entries stays a short report.
MAX_ISSUES_PER_KIND = 20
#: a scan of a local file maps it this many bytes at a time (iter_chunks)
MAP_WINDOW = 16 * 1024 * 1024


@dataclass(frozen=True)
class CheckpointIssue:
    """One problem with the checkpoint's files; ``rule`` is the name of the H rule."""

    rule: str
    message: str
    file: str
    tensor: str | None = None


@dataclass(frozen=True, slots=True)
class TensorRecord:
    """Where one tensor lives: file name (relative to the checkpoint), absolute byte range."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


class CheckpointTensors(Mapping[str, TensorRecord]):
    """Every tensor of the checkpoint, read through the header tables of its files (no
    copy): name -> :class:`TensorRecord` built when asked for. A name in several files
    belongs to the first that has it (the shard checks report the others)."""

    def __init__(self) -> None:
        self._files: list[tuple[str, int, TensorTable]] = []  # (file, data start, table)
        self._owner: dict[str, int] | None = None  # with several files: name -> file

    def add_file(self, file: str, data_start: int, table: TensorTable) -> None:
        self._files.append((file, data_start, table))
        if len(self._files) == 1:
            return
        if self._owner is None:
            self._owner = dict.fromkeys(self._files[0][2], 0)
        owner, at = self._owner, len(self._files) - 1
        for name in table:
            owner.setdefault(name, at)

    def file_of(self, name: str) -> str | None:
        """The file that holds ``name`` (``None`` when no file does)."""
        if self._owner is not None:
            at = self._owner.get(name)
            return None if at is None else self._files[at][0]
        if self._files and name in self._files[0][2]:
            return self._files[0][0]
        return None

    def __getitem__(self, name: str) -> TensorRecord:
        if self._owner is not None:
            file, start, table = self._files[self._owner[name]]
        elif self._files:
            file, start, table = self._files[0]
        else:
            raise KeyError(name)
        dtype, shape, begin, end = table.row(name)
        return TensorRecord(name, dtype, shape, file, start + begin, start + end)

    def records(self) -> Iterator[TensorRecord]:
        """Every record, in order, read straight from the tables."""
        owner = self._owner
        for at, (file, start, table) in enumerate(self._files):
            for name, dtype, shape, begin, end in table.rows():
                if owner is None or owner.get(name) == at:
                    yield TensorRecord(name, dtype, shape, file, start + begin, start + end)
            if owner is None:
                return

    def values(self) -> ValuesView[TensorRecord]:
        return _Records(self)

    def items(self) -> ItemsView[str, TensorRecord]:
        return _NamedRecords(self)

    def __contains__(self, name: object) -> bool:
        if self._owner is not None:
            return name in self._owner
        return bool(self._files) and name in self._files[0][2]

    def __iter__(self) -> Iterator[str]:
        if self._owner is not None:
            return iter(self._owner)
        return iter(self._files[0][2]) if self._files else iter(())

    def __len__(self) -> int:
        if self._owner is not None:
            return len(self._owner)
        return len(self._files[0][2]) if self._files else 0

    def __repr__(self) -> str:
        return f"<CheckpointTensors: {len(self):,} in {len(self._files)} files>"


class _Records(ValuesView):
    _mapping: CheckpointTensors

    def __iter__(self) -> Iterator[TensorRecord]:
        return self._mapping.records()


class _NamedRecords(ItemsView):
    _mapping: CheckpointTensors

    def __iter__(self) -> Iterator[tuple[str, TensorRecord]]:
        return ((r.name, r) for r in self._mapping.records())


@dataclass
class WeightFile:
    name: str  # relative to the checkpoint
    display: str  # what findings name (a local path or an hf:// URL)
    header: Header | None = None
    readable: bool = False  # the header parsed without a fatal error
    malformed: set[str] = field(default_factory=set)  # entries named but not understood


@dataclass
class Checkpoint:
    """What :func:`load_checkpoint` found. ``tensors`` holds every tensor whose header entry
    could be understood; ``complete`` is false when some weights could not be read at all
    (then "missing tensor" findings would be guesses, and the W rules stay quiet)."""

    location: str
    storage: Storage
    layout: str = "none"  # "single", "sharded" or "none"
    files: list[WeightFile] = field(default_factory=list)
    tensors: CheckpointTensors = field(default_factory=CheckpointTensors)
    metadata: dict[str, str] | None = None
    index: ShardIndex | None = None
    issues: list[CheckpointIssue] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    #: tensors named in a header whose entry was malformed (not in ``tensors``)
    malformed: set[str] = field(default_factory=set)
    complete: bool = True
    #: issues recorded per rule (``issue`` appends; the cap reads this)
    _kinds: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    # -- reading ----------------------------------------------------------------------
    @property
    def has_weights(self) -> bool:
        return self.layout != "none"

    @property
    def bytes_read(self) -> int:
        return self.storage.bytes_read

    def display(self, file: str) -> str:
        return self.storage.display(file)

    def read_config(self) -> bytes | None:
        """The bytes of ``config.json`` (``None`` when there is none)."""
        return self.storage.read_small(CONFIG_NAME, MAX_CONFIG_SIZE)

    def read_tensor(self, name: str, max_bytes: int) -> bytes:
        """The raw bytes of one (small) tensor; refuses tensors over ``max_bytes``."""
        record = self.tensors[name]
        if record.nbytes > max_bytes:
            raise ValueError(
                f"{name} is {record.nbytes:,} bytes, over the {max_bytes:,}-byte limit"
            )
        data = self.storage.source(record.file).read(record.begin, record.nbytes)
        if len(data) != record.nbytes:
            raise HeaderError(
                HeaderErrorKind.BUFFER_SIZE_MISMATCH,
                "short-read",
                tensor=name,
                name=name,
                got=len(data),
                want=record.nbytes,
                file=self.display(record.file),
            )
        return data

    def iter_chunks(self, name: str, buffer: bytearray) -> Iterator[memoryview]:
        """Stream one tensor in chunks of ``len(buffer)`` bytes: yields read-only views of
        whole elements, valid until the next iteration. A local file is read in place
        through a map of one :data:`MAP_WINDOW` at a time (no copy of the page cache: the
        scan runs at memory speed); other sources are read into ``buffer`` (memory stays
        ``len(buffer)``)."""
        from spec_format.parsers.safetensors import DTYPE_BITS

        record = self.tensors[name]
        item = max(1, DTYPE_BITS[record.dtype] // 8)
        if len(buffer) < item:
            buffer = bytearray(item)
        step = len(buffer) - len(buffer) % item
        source = self.storage.source(record.file)
        mapped = getattr(source, "mapped", None)  # a local file: its page cache, in place
        if mapped is not None and (record.end - record.begin) % item == 0:
            yield from self._mapped_chunks(name, record, mapped, step)
            return
        view = memoryview(buffer)
        position = record.begin
        ahead = 8 * step  # read-ahead window: the kernel fetches it while we test this chunk
        prefetched = position
        while position < record.end:
            if prefetched < min(position + ahead, record.end):
                window = min(position + 2 * ahead, record.end) - prefetched
                source.prefetch(prefetched, window)
                prefetched += window
            n = source.read_into(position, view[: min(step, record.end - position)])
            if n <= 0:
                raise self._cut_short(name, record, "inside-tensor")
            usable = n - n % item
            if usable == 0:  # a partial element at the end of a short file
                raise self._cut_short(name, record, "inside-element")
            yield view[:usable]
            position += usable
            progress.advance(usable)

    def _cut_short(self, name: str, record, variant: str) -> HeaderError:
        """The file ended inside tensor ``name`` (it shrank since its header was read)."""
        return HeaderError(
            HeaderErrorKind.BUFFER_SIZE_MISMATCH,
            variant,
            tensor=name,
            name=name,
            file=self.display(record.file),
        )

    def _mapped_chunks(self, name: str, record, mapped, step: int) -> Iterator[memoryview]:
        """iter_chunks over read-only maps of the file, one window of :data:`MAP_WINDOW`
        bytes at a time (address space and resident pages stay about one window). A window
        that cannot be mapped (the file shrank since its header was read) is the short
        file the read path reports."""
        position = record.begin
        while position < record.end:
            length = min(max(step, MAP_WINDOW - MAP_WINDOW % step), record.end - position)
            got = mapped(position, length)
            if got is None:
                raise self._cut_short(name, record, "inside-tensor")
            window, start = got
            view = memoryview(window)
            try:
                for at in range(start, start + length, step):
                    end = min(at + step, start + length)
                    yield view[at:end]
                    progress.advance(end - at)
            finally:
                # a chunk the caller still holds keeps the map until it is dropped
                with contextlib.suppress(BufferError):
                    view.release()
                    window.close()
            position += length

    def close(self) -> None:
        self.storage.close()

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def room(self, rule: str) -> bool:
        """Whether an issue of ``rule`` would still be recorded (under its cap): a caller
        with many entries skips wording the rest. Counted as recorded, so each check
        costs the same however many issues came before."""
        return self._kinds.get(rule, 0) < MAX_ISSUES_PER_KIND

    def issue(
        self,
        rule: str,
        file: str,
        tensor: str | None = None,
        *,
        variant: str | None = None,
        message: str | None = None,
        **params: object,
    ) -> None:
        """Record an issue of H rule ``rule`` (its name), worded by the rule from
        ``variant`` and ``params`` (``message``: already worded, by a HeaderError)."""
        if self.room(rule):
            if message is None:
                message = header_messages.message(rule, variant, **params)
            self.issues.append(CheckpointIssue(rule, message, file, tensor))
            self._kinds[rule] = self._kinds.get(rule, 0) + 1


# ---------------------------------------------------------------------------------------
# Storages


def _weights_name(name: str) -> bool:
    return name.endswith(".safetensors") or name == INDEX_NAME


class LocalStorage(Storage):
    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self._small_bytes = 0

    def list_files(self) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        try:
            entries = list(os.scandir(self.directory))
        except OSError as e:
            raise InputError(
                f"{self.directory}: cannot list the directory ({e.strerror or e})"
            ) from None
        for entry in entries:
            try:
                # a directory named like a weights file is kept: opening it says what it is
                if entry.is_dir() and not _weights_name(entry.name):
                    continue
            except OSError:
                pass  # a symlink loop: keep it, opening it reports the problem
            out[entry.name] = None
        return out

    def display(self, name: str) -> str:
        return str(self.directory / name)

    def open(self, name: str) -> ByteSource:
        return FileSource(self.directory / name)

    def read_small(self, name: str, limit: int) -> bytes | None:
        from spec_format.base.bounded import ReadRefused, read_file

        try:  # the bounded reader: a FIFO or device refused, nothing past the limit read
            data = read_file(self.directory / name, limit=limit, what="a JSON file")
        except ReadRefused as refused:
            if refused.kind == "not-found":
                return None
            raise InputError(refused.message) from None
        self._small_bytes += len(data)
        return data

    @property
    def bytes_read(self) -> int:
        return super().bytes_read + self._small_bytes


# ---------------------------------------------------------------------------------------
# Loading


def load_checkpoint(location: str | os.PathLike[str]) -> Checkpoint:
    """Read every header of the checkpoint at ``location``.

    ``location`` is a checkpoint directory, a file inside one (``config.json`` or
    ``model.safetensors``), or ``hf://ORG/NAME[@REV]``. Raises :class:`InputError` only when
    the location itself cannot be listed (no such directory, unknown repository).
    """
    text = os.fspath(location)
    if text.startswith("hf://"):
        from spec_format.parsers.remote import HubStorage

        storage: Storage = HubStorage.from_url(text)
        shown = text
    else:
        path = Path(text)
        directory = path if path.is_dir() else path.parent
        if not directory.is_dir():
            raise InputError(f"{text}: no such checkpoint directory")
        storage = LocalStorage(directory)
        shown = str(directory)
    checkpoint = Checkpoint(location=shown, storage=storage)
    _populate(checkpoint)
    return checkpoint


def _populate(ckpt: Checkpoint) -> None:
    names = ckpt.storage.list_files()
    safetensors_files = sorted(n for n in names if n.endswith(".safetensors"))
    used: set[str] = set()

    if INDEX_NAME in names:
        used |= _load_sharded(ckpt, names)
        if SINGLE_NAME in names and ckpt.layout == "sharded":
            ckpt.issue(
                STRAY_SAFETENSORS,
                ckpt.display(SINGLE_NAME),
                variant="beside-index",
                single=SINGLE_NAME,
                index=INDEX_NAME,
            )
            used.add(SINGLE_NAME)
            ckpt.stray.append(SINGLE_NAME)
    if ckpt.layout == "none" and SINGLE_NAME in names:
        ckpt.layout = "single"
        ckpt.files.append(_read_file(ckpt, SINGLE_NAME))
        used.add(SINGLE_NAME)
    for w in ckpt.files:
        if w.header is not None and w.header.metadata is not None and ckpt.metadata is None:
            ckpt.metadata = dict(w.header.metadata)
    ckpt.complete = ckpt.complete and all(w.readable for w in ckpt.files)

    for name in safetensors_files:
        if name in used or (ckpt.layout == "sharded" and ckpt.index is None):
            continue  # (with an unreadable index, the shards are not stray)
        ckpt.stray.append(name)
        variant = {"none": "no-weights", "single": "beside-single"}.get(ckpt.layout, "unindexed")
        ckpt.issue(
            STRAY_SAFETENSORS,
            ckpt.display(name),
            variant=variant,
            name=name,
            single=SINGLE_NAME,
            index=INDEX_NAME,
        )


def _read_file(ckpt: Checkpoint, name: str) -> WeightFile:
    wf = WeightFile(name, ckpt.display(name))
    try:
        source = ckpt.storage.source(name)
    except HeaderError as e:
        ckpt.issue(e.kind.value, wf.display, message=e.message)
        return wf
    scan = scan_header(source)
    for issue in issues_from_scan(scan, wf.display):
        ckpt.issue(issue.rule, issue.file, issue.tensor, message=issue.message)
    for err in scan.errors:
        if err.tensor and (scan.header is None or err.tensor not in scan.header.tensors):
            wf.malformed.add(err.tensor)
            ckpt.malformed.add(err.tensor)
    wf.header = scan.header
    wf.readable = scan.header is not None
    if scan.header is None:
        return wf
    ckpt.tensors.add_file(name, scan.header.data_start, scan.header.tensors)
    return wf


def issues_from_scan(scan: HeaderScan, display: str) -> list[CheckpointIssue]:
    """The issues of one header scan (errors, then the leading-whitespace note)."""
    out = [CheckpointIssue(e.kind.value, e.message, display, e.tensor) for e in scan.errors]
    if scan.header is not None and scan.header.leading_whitespace:
        out.append(
            CheckpointIssue(HEADER_PADDING, header_messages.message(HEADER_PADDING), display)
        )
    return out


def _load_sharded(ckpt: Checkpoint, names: dict[str, int | None]) -> set[str]:
    index_display = ckpt.display(INDEX_NAME)
    try:
        # no name for the bytes here: parse_index drops them once decoded
        index = parse_index(ckpt.storage.read_small(INDEX_NAME, MAX_INDEX_SIZE) or b"")
    except (InputError, HeaderError) as e:
        if isinstance(e, ShardIndexError):  # worded by the rule already
            ckpt.issue(INVALID_SHARD_INDEX, index_display, message=e.message)
        else:
            detail = e.message if isinstance(e, HeaderError) else str(e)
            ckpt.issue(
                INVALID_SHARD_INDEX,
                index_display,
                variant="unreadable",
                index=INDEX_NAME,
                detail=detail,
            )
        if SINGLE_NAME not in names:
            ckpt.layout = "sharded"
            ckpt.complete = False
        return {INDEX_NAME}
    ckpt.layout = "sharded"
    ckpt.index = index
    for problem in index.problems:
        ckpt.issue(INVALID_SHARD_INDEX, index_display, problem.tensor, message=problem.message)
        ckpt.complete = False
    used = {INDEX_NAME}
    shards = index.shards()
    headers: dict[str, WeightFile] = {}  # shard -> its readable header
    for shard in sorted(shards):
        used.add(shard)
        if shard not in names:
            count, example = shards[shard]
            if ckpt.room(MISSING_SHARD):  # the rest are counted, not worded
                ckpt.issue(
                    MISSING_SHARD,
                    ckpt.display(shard),
                    index=INDEX_NAME,
                    count=count,
                    s="s" if count != 1 else "",
                    example=example,
                    shard=shard,
                )
            ckpt.complete = False
            continue
        wf = _read_file(ckpt, shard)
        ckpt.files.append(wf)
        if wf.header is not None:
            headers[shard] = wf
    seen: dict[str, str] = {}  # malformed entries: the first shard naming each
    for shard, wf in headers.items():
        assert wf.header is not None
        for tensor in sorted([*wf.header.tensors, *wf.malformed]):
            first = ckpt.tensors.file_of(tensor) or seen.setdefault(tensor, shard)
            if first != shard and tensor not in ckpt.malformed:
                ckpt.issue(
                    DUPLICATE_ACROSS_SHARDS,
                    ckpt.display(shard),
                    tensor,
                    name=tensor,
                    first=first,
                    shard=shard,
                )
            if tensor not in index.weight_map and tensor not in ckpt.malformed:
                ckpt.issue(
                    UNINDEXED_TENSOR,
                    ckpt.display(shard),
                    tensor,
                    name=tensor,
                    shard=shard,
                    index=INDEX_NAME,
                )
    for tensor, shard in index.weight_map.items():
        wf = headers.get(shard)
        if wf is None or wf.header is None:
            continue
        if tensor not in wf.header.tensors and tensor not in wf.malformed:
            holder = ckpt.tensors.file_of(tensor) or seen.get(tensor)
            where = f" (it is in {holder})" if holder else ""
            ckpt.issue(
                TENSOR_NOT_IN_SHARD,
                index_display,
                tensor,
                index=INDEX_NAME,
                name=tensor,
                shard=shard,
                where=where,
            )
            if holder is None:
                ckpt.complete = False
    return used


class RemoteName:
    """Stands in for a ``Path`` where a remote file is named (``hf://ORG/NAME/config.json``):
    ``pathlib`` would collapse the ``//``."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __str__(self) -> str:
        return self.url

    def __fspath__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"RemoteName({self.url!r})"

    @property
    def name(self) -> str:
        return self.url.rsplit("/", 1)[-1]


def describe(ckpt: Checkpoint) -> dict[str, Any]:
    """A JSON-able summary (for ``--format json`` extras and debugging)."""
    return {
        "location": ckpt.location,
        "layout": ckpt.layout,
        "files": [w.name for w in ckpt.files],
        "tensors": len(ckpt.tensors),
        "stray": list(ckpt.stray),
        "bytes_read": ckpt.bytes_read,
    }
