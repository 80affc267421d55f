"""--deep and --scan-weights on the bytes: NaN/Inf detection per dtype, chunk boundaries,
vocabulary maps in any dtype."""

from __future__ import annotations

import numpy as np
import pytest

from spec_format.checkpoint import load_checkpoint
from spec_format.rules.vocab import _nonzero_mask, scan_tensor
from spec_format.testing.builder import TensorData, to_bytes, write_safetensors


def one_tensor(tmp_path, dtype: str, data: bytes, shape):
    write_safetensors(tmp_path / "model.safetensors", {"w": TensorData(dtype, shape, data)})
    (tmp_path / "config.json").write_text("{}")
    return load_checkpoint(tmp_path)


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16", "F64"])
@pytest.mark.parametrize("buffer", [6, 64, 1 << 20])
def test_scan_counts_nan_and_inf_across_chunk_boundaries(tmp_path, dtype, buffer):
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
