"""The dtypes a safetensors file may declare: each one's size in bits and, where numpy has
the same type, its numpy spelling (facts of the format, read by the header reader, the weight
scans and the test-checkpoint builder)."""

from __future__ import annotations

from collections.abc import Iterator

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


def iter_dtypes() -> Iterator[str]:
    return iter(DTYPE_BITS)
