"""--deep and --scan-weights on the bytes: NaN/Inf detection per dtype, chunk boundaries,
vocabulary maps in any dtype."""

from __future__ import annotations

import numpy as np
import pytest

from spec_format.parsers import checkpoint
from spec_format.parsers.checkpoint import load_checkpoint
from spec_format.parsers.safetensors import FileSource
from spec_format.rules.vocab import _IEEE, _NAN_ONLY, _clean_test, _nonzero_mask, scan_tensor
from spec_format.testing.builder import TensorData, to_bytes, write_safetensors


def one_tensor(tmp_path, dtype: str, data: bytes, shape):
    write_safetensors(tmp_path / "model.safetensors", {"w": TensorData(dtype, shape, data)})
    (tmp_path / "config.json").write_text("{}")
    return load_checkpoint(tmp_path)


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16", "F64"])
@pytest.mark.parametrize("buffer", [6, 64, 1 << 20])
@pytest.mark.parametrize("path", ["mapped", "small-windows", "read"])
def test_scan_counts_nan_and_inf_across_chunk_boundaries(
    tmp_path, dtype, buffer, path, monkeypatch
):
    """The same counts whether the file is mapped (in windows of any size) or read."""
    if path == "read":  # a source without maps (the Hub's) reads through the buffer
        monkeypatch.setattr(FileSource, "mapped", None)
    elif path == "small-windows":  # windows end inside a chunk's worth of the tensor
        monkeypatch.setattr(checkpoint, "MAP_WINDOW", 48)
    values = np.zeros(1000, dtype=np.float64)
    values[[3, 500, 999]] = np.nan
    values[[7, 8]] = np.inf
    values[9] = -np.inf
    values[10] = 65504.0  # the largest finite fp16: not an infinity
    data = to_bytes(values, dtype) if dtype != "F16" else values.astype("<f2").tobytes()
    with one_tensor(tmp_path, dtype, data, (1000,)) as ckpt:
        nan, inf, first = scan_tensor(ckpt, "w", bytearray(buffer))
    assert (nan, inf, first) == (3, 3, 3)


def test_scan_handles_nan_only_fp8_and_skips_integers(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    data = bytes([0x00, 0x7F, 0xFF, 0x7E, 0x80])  # F8_E4M3: 0x7F and 0xFF are NaN, no inf
    with one_tensor(tmp_path / "a", "F8_E4M3", data, (5,)) as ckpt:
        assert scan_tensor(ckpt, "w", bytearray(64)) == (2, 0, 1)
    with one_tensor(tmp_path / "b", "I64", bytes(16), (2,)) as ckpt:
        assert scan_tensor(ckpt, "w", bytearray(64)) == (0, 0, None)


def _nonfinite(values, dtype):
    """The plain definition: every exponent bit set (or the format's NaN pattern)."""
    if dtype in _IEEE:
        return (values & _IEEE[dtype][1]) == _IEEE[dtype][1]
    mask, pattern = _NAN_ONLY[dtype]
    return (values & mask) == pattern


@pytest.mark.parametrize("dtype", sorted({**_IEEE, **_NAN_ONLY}))
def test_the_fast_clean_test_never_passes_a_non_finite_value(dtype):
    """The two-reduction test that lets a chunk skip the exact count says "clean" exactly
    when no value is NaN or Inf: every 8- and 16-bit pattern one by one, then random
    32- and 64-bit ones around the exponent boundary in chunks."""
    view = _IEEE[dtype][0] if dtype in _IEEE else "u1"
    udtype = np.dtype(view)
    clean = _clean_test(dtype, udtype)
    if udtype.itemsize <= 2:
        every = np.arange(1 << (8 * udtype.itemsize), dtype=np.uint64).astype(udtype)
        for value in every:
            one = np.array([value], dtype=udtype)
            assert clean(one) == (not _nonfinite(one, dtype)[0]), hex(int(value))
        return
    rng = np.random.default_rng(0)
    mask = _IEEE[dtype][1]
    bits = 8 * udtype.itemsize
    for _ in range(300):
        chunk = rng.integers(0, 1 << bits, size=8, dtype=np.uint64).astype(udtype)
        near = rng.integers(0, 4)
        chunk[:near] |= udtype.type(mask)  # some values with every exponent bit set
        chunk[:near] ^= udtype.type(int(rng.integers(0, 2)) << (bits - 1))  # either sign
        assert clean(chunk) == (not _nonfinite(chunk, dtype).any())


@pytest.mark.parametrize("dtype", ["BOOL", "U8", "I64", "F32", "BF16", "F16"])
def test_a_vocabulary_mask_is_read_in_any_dtype(dtype):
    mask = np.array([0, 1, 0, 1, 1], dtype=np.float32)
    raw = (
        to_bytes(mask.astype(bool) if dtype == "BOOL" else mask, dtype)
        if dtype != "F16"
        else mask.astype("<f2").tobytes()
    )
    assert list(_nonzero_mask(raw, dtype)) == [False, True, False, True, True]
    negative_zero = to_bytes(np.array([-0.0], dtype=np.float32), "F32")
    assert not _nonzero_mask(negative_zero, "F32")[0]
