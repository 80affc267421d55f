"""The shard index of a sharded checkpoint, ``model.safetensors.index.json``: which shard
file holds each tensor (``weight_map``).

The ``weight_map`` is read one member at a time (:class:`~spec_format.base.json_cursor.
JsonCursor`) straight into the one dict the checkpoint keeps, each shard name stored once:
a million-entry index costs its text and ~100 bytes an entry, not a parsed document plus
copies of it.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

from spec_format.base.errors import InputError
from spec_format.base.json_cursor import JsonCursor
from spec_format.facts import header_messages
from spec_format.parsers.header_reader import MAX_HEADER_SIZE

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
#: An index file is JSON the size of a header at most.
MAX_INDEX_SIZE = MAX_HEADER_SIZE
#: Skipped entries worded one by one (the checkpoint reports 20 of a kind at most).
MAX_WORDED_PROBLEMS = 50


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

    def shards(self) -> dict[str, tuple[int, str]]:
        """Each shard the index names -> (how many tensors it maps there, the first of
        them), in one pass over the map: a per-shard question costs nothing more."""
        out: dict[str, tuple[int, str]] = {}
        for tensor, shard in self.weight_map.items():
            known = out.get(shard)
            out[shard] = (1, tensor) if known is None else (known[0] + 1, known[1])
        return out


def parse_index(data: bytes) -> ShardIndex:
    """Parse the bytes of ``model.safetensors.index.json``; raise :class:`ShardIndexError`."""
    if len(data) > MAX_INDEX_SIZE:
        raise ShardIndexError("too-large", size=len(data), limit=MAX_INDEX_SIZE)
    reader = _IndexReader()
    try:
        text = data.decode("utf-8")
        del data  # the caller passes the bytes without keeping them: text + map at most
        reader.read(JsonCursor(text))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        detail = str(e) if not isinstance(e, RecursionError) else "nested too deeply"
        raise ShardIndexError("not-json", detail=_short(detail)) from None
    del text
    if reader.weight_map is None:
        raise ShardIndexError("no-weight-map")
    index = ShardIndex(reader.weight_map, reader.metadata)
    # each repeated key once, in order; worded for the first few only, as skipped entries
    for key in itertools.islice(reader.duplicates, MAX_WORDED_PROBLEMS):
        index.problems.append(
            ShardIndexError(
                "duplicate-key",
                tensor=key if key in reader.weight_map or key in reader.bad else None,
                key=_short(json.dumps(key), 60),
            )
        )
    index.problems.extend(e for e in reader.bad.values() if e is not None)
    return index


class _IndexReader:
    """The members of an index document as they are read."""

    def __init__(self) -> None:
        self.weight_map: dict[str, str] | None = None
        self.metadata: dict | None = None
        #: tensor -> why its entry is skipped (worded for the first few only: bounded)
        self.bad: dict[str, ShardIndexError | None] = {}
        self.worded = 0
        self.duplicates: dict[str, None] = {}  # repeated keys, in order

    def read(self, cursor: JsonCursor) -> None:
        if not cursor.enter_object():
            cursor.value()
            cursor.finish()
            return
        seen: set[str] = set()
        while (key := cursor.next_key()) is not None:
            if key in seen:
                self.duplicates[key] = None
            seen.add(key)
            if key == "weight_map":
                self.weight_map = None  # the last one counts
                self.bad.clear()
                self.worded = 0
                if cursor.enter_object():
                    self.read_weight_map(cursor)
                else:
                    cursor.value()
            elif key == "metadata":
                value = self.as_dict(cursor.value())
                self.metadata = value if isinstance(value, dict) else None
            else:
                self.as_dict(cursor.value())  # only for its repeated keys
        cursor.finish()

    def read_weight_map(self, cursor: JsonCursor) -> None:
        weight_map: dict[str, str] = {}
        shards: dict[str, str] = {}  # one string per shard name
        bad = self.bad
        while (tensor := cursor.next_key()) is not None:
            shard = cursor.value()
            if tensor in weight_map or tensor in bad:
                self.duplicates[tensor] = None
                weight_map.pop(tensor, None)
                self.worded -= bad.pop(tensor, None) is not None
            if isinstance(shard, str):
                known = shards.get(shard)
                if known is None and safe_shard_name(shard):
                    known = shards.setdefault(shard, shard)
                if known is not None:
                    weight_map[tensor] = known
                    continue
            if self.worded >= MAX_WORDED_PROBLEMS:
                bad[tensor] = None
                continue
            self.worded += 1
            shown = json.dumps(self.as_dict(shard))
            bad[tensor] = ShardIndexError(
                "bad-entry", tensor=tensor, name=tensor, found=_short(shown, 60)
            )
        self.weight_map = weight_map

    def as_dict(self, value: object) -> object:
        """A value read with objects as pair tuples, with objects as dicts (the last of a
        repeated key counts; the key is remembered as repeated)."""
        if isinstance(value, list):
            return [self.as_dict(v) for v in value]
        if not isinstance(value, tuple):
            return value
        out: dict = {}
        for k, v in value:
            if k in out:
                self.duplicates[k] = None
            out[k] = self.as_dict(v)
        return out


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
