"""The header reader: one crafted byte string per error kind, checked against the library.

Every crafted file is also given to the real safetensors library: where it refuses a file,
we must refuse it too (with our own kind), and the files we accept it must load.
"""

from __future__ import annotations

import json
import os
import struct

import pytest
import safetensors

from spec_format.parsers.safetensors import (
    DTYPE_BITS,
    MAX_HEADER_SIZE,
    BytesSource,
    FileSource,
    HeaderError,
    HeaderErrorKind,
    read_header,
    scan_header,
)
from spec_format.rules.base import Layer
from spec_format.rules.registry import by_name
from spec_format.testing.builder import TensorData, write_safetensors
from tests.safetensors.header_gen import library_accepts

K = HeaderErrorKind


def raw(header: bytes | dict, data: bytes = b"") -> bytes:
    body = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(body)) + body + data


def entry(dtype="U8", shape=(1,), offsets=(0, 1)):
    return {
        "dtype": dtype,
        "shape": list(shape) if isinstance(shape, tuple) else shape,
        "data_offsets": list(offsets),
    }


# (case id, file bytes, expected kind of the first error)
CASES = [
    ("empty-file", b"", K.HEADER_TOO_SMALL),
    ("seven-bytes", b"\x02\x00\x00\x00\x00\x00\x00", K.HEADER_TOO_SMALL),
    ("length-over-100MB", struct.pack("<Q", MAX_HEADER_SIZE + 1) + b"{}", K.HEADER_TOO_LARGE),
    ("length-2**64-1", b"\xff" * 8 + b"{}", K.HEADER_TOO_LARGE),
    ("length-past-eof", struct.pack("<Q", 100) + b"{}", K.HEADER_LENGTH_OUT_OF_BOUNDS),
    ("not-utf8", raw(b'{"\xff": 1}'), K.HEADER_NOT_UTF8),
    ("not-json", raw(b"{not json}"), K.HEADER_NOT_JSON),
    ("nul-padding", raw(b"{}\x00\x00"), K.HEADER_NOT_JSON),
    ("nan-constant", raw(b'{"__metadata__": {"a": NaN}}'), K.HEADER_NOT_JSON),
    ("deep-nesting", raw(b"[" * 100_000 + b"]" * 100_000), K.HEADER_NOT_JSON),
    ("array", raw(b"[]"), K.HEADER_NOT_OBJECT),
    ("string", raw(b'"model"'), K.HEADER_NOT_OBJECT),
    (
        "duplicate-name",
        raw(
            b'{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, '
            b'"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}',
            b"\0",
        ),
        K.DUPLICATE_TENSOR_NAME,
    ),
    ("metadata-number", raw({"__metadata__": {"total_size": 12}}), K.INVALID_METADATA),
    ("metadata-list", raw({"__metadata__": ["pt"]}), K.INVALID_METADATA),
    ("entry-not-object", raw({"a": [1, 2]}), K.INVALID_TENSOR_ENTRY),
    (
        "entry-missing-offsets",
        raw({"a": {"dtype": "U8", "shape": [1]}}, b"\0"),
        K.INVALID_TENSOR_ENTRY,
    ),
    ("offsets-three-ints", raw({"a": entry(offsets=(0, 1, 2))}, b"\0"), K.INVALID_TENSOR_ENTRY),
    ("offsets-negative", raw({"a": entry(offsets=(-1, 0))}, b"\0"), K.INVALID_TENSOR_ENTRY),
    ("dtype-lowercase", raw({"a": entry("bf16", (1,), (0, 2))}, b"\0\0"), K.UNKNOWN_DTYPE),
    ("dtype-unknown", raw({"a": entry("C128", (1,), (0, 16))}, b"\0" * 16), K.UNKNOWN_DTYPE),
    ("shape-negative", raw({"a": entry(shape=(-1,))}, b"\0"), K.INVALID_SHAPE),
    ("shape-float", raw({"a": entry(shape=(1.0,))}, b"\0"), K.INVALID_SHAPE),
    ("shape-bool", raw({"a": entry(shape=(True,))}, b"\0"), K.INVALID_SHAPE),
    ("shape-not-list", raw({"a": entry(shape=7)}, b"\0"), K.INVALID_SHAPE),
    ("shape-overflow", raw({"a": entry(shape=(2**32, 2**32, 2))}, b"\0"), K.INVALID_SHAPE),
    ("shape-above-u64", raw({"a": entry(shape=(2**64,))}, b"\0"), K.INVALID_SHAPE),
    (
        "offsets-overlap",
        raw(
            {"a": entry(shape=(2,), offsets=(0, 2)), "b": entry(shape=(2,), offsets=(1, 3))},
            b"\0" * 3,
        ),
        K.INVALID_DATA_OFFSETS,
    ),
    ("offsets-gap", raw({"a": entry(offsets=(1, 2))}, b"\0\0"), K.INVALID_DATA_OFFSETS),
    (
        "offsets-reversed",
        raw({"a": entry(shape=(0,), offsets=(1, 0))}, b"\0"),
        K.INVALID_DATA_OFFSETS,
    ),
    ("size-mismatch", raw({"a": entry("F32", (2,), (0, 4))}, b"\0" * 4), K.TENSOR_SIZE_MISMATCH),
    ("sub-byte-misaligned", raw({"a": entry("F4", (3,), (0, 2))}, b"\0\0"), K.TENSOR_SIZE_MISMATCH),
    ("trailing-bytes", raw({"a": entry()}, b"\0\0"), K.BUFFER_SIZE_MISMATCH),
    ("truncated-data", raw({"a": entry("F32", (4,), (0, 16))}, b"\0" * 10), K.BUFFER_SIZE_MISMATCH),
]


@pytest.mark.parametrize(("blob", "kind"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_error_kind_has_a_crafted_file(blob, kind):
    scan = scan_header(BytesSource(blob, "model.safetensors"))
    assert scan.errors, "the reader accepted a broken file"
    first = scan.errors[0]
    assert first.kind is kind, first
    assert kind.value in by_name(Layer.HEADER)  # each kind names the H rule that reports it
    assert first.message and first.message[-1] in ".)" and len(first.message) < 400
    if kind is not K.DUPLICATE_TENSOR_NAME:  # the library keeps the last duplicate silently
        assert not library_accepts(blob), "we refuse a file the safetensors library loads"


def test_every_kind_is_covered_by_a_crafted_case():
    covered = {c[2] for c in CASES}
    assert covered == set(HeaderErrorKind) - {K.FILE_UNREADABLE}  # (OS errors: see below)


def test_a_valid_file_reads_and_matches_the_library(tmp_path):
    path = tmp_path / "model.safetensors"
    tensors = {
        "w": TensorData("BF16", (3, 4), bytes(24)),
        "ids": TensorData("I64", (5,), bytes(40)),
        "mask": TensorData("BOOL", (7,), bytes(7)),
        "scalar": TensorData("F32", (), bytes(4)),
        "empty": TensorData("F16", (0, 3), b""),
    }
    write_safetensors(path, tensors, {"format": "pt"})
    header = read_header(path)
    assert header.metadata == {"format": "pt"}
    assert {n: (t.dtype, t.shape) for n, t in header.tensors.items()} == {
        n: (t.dtype, t.shape) for n, t in tensors.items()
    }
    assert header.data_start % 8 == 0  # canonical padding
    with safetensors.safe_open(str(path), "np") as f:
        names = list(f.keys())
        assert set(names) == set(tensors)
        shapes = {k: f.get_slice(k).get_shape() for k in names if k != "w"}
    assert shapes["ids"] == [5]


def test_header_audit_reads_only_the_header(tmp_path):
    path = tmp_path / "model.safetensors"
    write_safetensors(path, {"big": TensorData("F32", (4096, 4096), None)})  # 64 MB hole
    with FileSource(path) as source:
        scan = scan_header(source)
        assert scan.ok
        assert source.bytes_read == 8 + scan.header.header_size
    assert os.path.getsize(path) > 64 * 1024 * 1024


def test_leading_whitespace_is_accepted_like_the_library_but_noted():
    blob = raw(b"  " + json.dumps({"a": entry()}).encode(), b"\0")
    scan = scan_header(BytesSource(blob))
    assert scan.ok and scan.header.leading_whitespace
    assert library_accepts(blob)


def test_all_library_dtypes_are_known():
    for dtype, bits in DTYPE_BITS.items():
        n = 8
        blob = raw({"t": entry(dtype, (n,), (0, n * bits // 8))}, b"\0" * (n * bits // 8))
        assert scan_header(BytesSource(blob)).ok, dtype
        assert library_accepts(blob), dtype


def test_read_header_raises_the_first_error_as_one_type():
    with pytest.raises(HeaderError) as info:
        read_header(BytesSource(raw(b"[]")))
    assert info.value.kind is K.HEADER_NOT_OBJECT
    assert info.value.exit_code == 3  # an InputError: the file cannot be read


def test_per_tensor_problems_are_all_reported_not_just_the_first():
    header = {
        "a": entry("XX"),
        "b": entry(shape=(-3,)),
        "c": {"dtype": "U8"},
        "d": entry(offsets=(0, 1)),
    }
    scan = scan_header(BytesSource(raw(header, b"\0")))
    kinds = {e.tensor: e.kind for e in scan.errors}
    assert kinds == {"a": K.UNKNOWN_DTYPE, "b": K.INVALID_SHAPE, "c": K.INVALID_TENSOR_ENTRY}
    assert list(scan.header.tensors) == ["d"]  # the good entry is still usable


@pytest.mark.parametrize("case", ["missing", "loop", "dangling", "fifo", "directory"])
def test_files_that_cannot_be_opened_are_a_finding_not_a_hang(tmp_path, case):
    path = tmp_path / "model.safetensors"
    if case == "loop":
        path.symlink_to(path)
    elif case == "dangling":
        path.symlink_to(tmp_path / "gone.safetensors")
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "directory":
        path.mkdir()
    scan = scan_header(path)  # a FIFO would block a plain open()
    assert scan.header is None
    (err,) = scan.errors
    assert err.kind is K.FILE_UNREADABLE
    expected = {
        "loop": "symlink loop",
        "dangling": "dangling symlink",
        "fifo": "not a regular file",
        "directory": "not a regular file",
        "missing": "does not exist",
    }[case]
    assert expected in err.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            b'{"t": {"dtype": "U8", "shape": [1], "dtype": "U8", "data_offsets": [0, 1], '
            b'"shape": [1]}}',
            "tensor 't' repeats the field dtype, shape; every field appears once.",
        ),
        (
            b'{"t": {"dtype": "U8", "shape": [1]}}',
            "tensor 't' has no data_offsets; every entry needs dtype, shape and data_offsets.",
        ),
    ],
)
def test_a_malformed_entry_names_the_fields_at_fault(text, message):
    scan = scan_header(BytesSource(raw(text, b"\0")))
    entries = [e for e in scan.errors if e.kind is K.INVALID_TENSOR_ENTRY]
    assert [(e.tensor, str(e)) for e in entries] == [("t", message)]


@pytest.mark.parametrize(
    "text",
    [
        b'{"a\\ud800": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}',  # in a name
        b'{"__metadata__": {"k": "\\udc00"}, '  # in a value
        b'"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}',
    ],
)
def test_a_lone_surrogate_anywhere_is_refused_as_serde_refuses_it(text):
    scan = scan_header(BytesSource(raw(text, b"\0")))
    assert [(e.kind, str(e)) for e in scan.errors] == [
        (
            K.HEADER_NOT_JSON,
            "header is not valid JSON for strict parsers (a string holds a lone UTF-16 "
            "surrogate escape); the file is corrupt or was not written by a safetensors writer.",
        )
    ]
