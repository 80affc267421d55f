"""Tensor lists held by column, for headers of a few entries or a million.

A header entry as a frozen dataclass in a dict costs ~300 bytes; a million-tensor header
(which the library's 100 MB header cap allows) then needs 1.3 GB before any rule runs.
:class:`TensorTable` keeps one row per tensor in columns (the name, a one-byte dtype code,
one shared tuple per distinct shape, two 8-byte offsets): ~150 bytes a tensor with its
name. It is a read-only ``Mapping`` from name to a record built when asked for, so callers
read it like the dict it replaces.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from spec_format.facts.safetensors_dtypes import DTYPE_BITS

_DTYPES = list(DTYPE_BITS)
_CODE = {name: code for code, name in enumerate(_DTYPES)}


@dataclass(frozen=True, slots=True)
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


class TensorTable(Mapping[str, TensorInfo]):
    """Tensor name -> :class:`TensorInfo`, in the order the rows were added."""

    def __init__(self) -> None:
        self._row: dict[str, int] = {}
        self._names: list[str | None] = []  # None: a row taken back by discard
        self._dtypes = bytearray()
        self._shapes: list[tuple[int, ...]] = []
        self._begin = array("Q")
        self._end = array("Q")
        self._pool: dict[tuple[int, ...], tuple[int, ...]] = {}

    def add(self, name: str, dtype: str, shape: tuple[int, ...], begin: int, end: int) -> None:
        """Append a row (a name already present is replaced; its row is dropped)."""
        self.discard(name)
        self._row[name] = len(self._names)
        self._names.append(name)
        self._dtypes.append(_CODE[dtype])
        self._shapes.append(self._pool.setdefault(shape, shape))
        self._begin.append(begin)
        self._end.append(end)

    def discard(self, name: str) -> None:
        row = self._row.pop(name, None)
        if row is not None:
            self._names[row] = None

    def rows(self) -> Iterator[tuple[str, str, tuple[int, ...], int, int]]:
        """``(name, dtype, shape, begin, end)`` of every row, in order."""
        dtypes, shapes, begin, end = self._dtypes, self._shapes, self._begin, self._end
        for i, name in enumerate(self._names):
            if name is not None:
                yield name, _DTYPES[dtypes[i]], shapes[i], begin[i], end[i]

    def by_offsets(self) -> Iterator[tuple[str, str, tuple[int, ...], int, int]]:
        """:meth:`rows` sorted by ``(begin, end)``, rows of equal offsets in order. Rows
        written in offset order (every writer's) are streamed; others are sorted by index."""
        live = (i for i, name in enumerate(self._names) if name is not None)
        begin, end = self._begin, self._end
        last = (-1, -1)
        for i in live:
            if (begin[i], end[i]) < last:
                break
            last = (begin[i], end[i])
        else:
            yield from self.rows()
            return
        order = sorted(
            (i for i, name in enumerate(self._names) if name is not None),
            key=lambda i: (begin[i] << 64) | end[i],
        )
        dtypes, shapes, names = self._dtypes, self._shapes, self._names
        for i in order:
            name = names[i]
            if name is not None:  # (a caller may discard rows while reading)
                yield name, _DTYPES[dtypes[i]], shapes[i], begin[i], end[i]

    def row(self, name: str) -> tuple[str, tuple[int, ...], int, int]:
        """``(dtype, shape, begin, end)`` of one tensor (``KeyError`` when absent)."""
        i = self._row[name]
        return _DTYPES[self._dtypes[i]], self._shapes[i], self._begin[i], self._end[i]

    def __getitem__(self, name: str) -> TensorInfo:
        dtype, shape, begin, end = self.row(name)
        return TensorInfo(name, dtype, shape, (begin, end))

    def __contains__(self, name: object) -> bool:
        return name in self._row

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)

    def __repr__(self) -> str:
        return f"<TensorTable of {len(self):,} tensors>"
