"""D011 at real sizes: the Qwen3-8B EAGLE-3 draft's shapes (2 GB of holes, read as zeros,
so the scan costs no disk I/O) and what a converter that wrote nothing leaves behind."""

from __future__ import annotations

import numpy as np

from spec_format.testing.builder import build_checkpoint, qwen3_8b_eagle3_config, tiny_config

from .conftest import check, findings


def test_a_checkpoint_of_zeros_is_one_finding(tmp_path):
    # without the optional verifier-copied embedding: 0.8 of the 2 GB, still real shapes
    config = qwen3_8b_eagle3_config()
    path = build_checkpoint(tmp_path / "c", config, data="sparse", include_optional=False).path
    report = check(path, scan_weights=True)
    (hit,) = findings(report, "D011")
    assert "every float tensor (13, " in hit.message and "holds only zeros" in hit.message
    assert report.exit_code == 0  # a warning: the draft loads, it proposes garbage


def test_norms_at_one_are_named_with_the_statistic(tmp_path):
    norms = ("norm.weight", "layers.0.input_layernorm.weight")
    path = build_checkpoint(
        tmp_path / "c",
        tiny_config("eagle3"),
        values={n: np.ones(64, dtype=np.float32) for n in norms},
        mutate={"fc.weight": lambda a: a * 0},
    ).path
    messages = {f.tensor: f.message for f in findings(check(path, scan_weights=True), "D011")}
    assert set(messages) == {*norms, "fc.weight"}
    for n in norms:
        assert "all 64 values are 1.0, the initial weight of RMSNorm" in messages[n]
    assert "all 12,288 values are 0" in messages["fc.weight"]


def test_trained_like_values_of_every_scan_dtype_pass(tmp_path):
    for dtype in ("BF16", "F16", "F32"):
        path = build_checkpoint(tmp_path / dtype, tiny_config("dflash"), dtype=dtype).path
        assert not findings(check(path, scan_weights=True), "D011"), dtype


def test_select_d011_alone_runs_its_own_pass(tmp_path):
    path = build_checkpoint(
        tmp_path / "c", tiny_config("eagle3"), mutate={"norm.weight": lambda a: a * 0 + 1}
    ).path
    report = check(path, scan_weights=True, select=frozenset({"D011"}))
    assert [f.tensor for f in findings(report, "D011")] == ["norm.weight"]


def test_a_pair_cut_short_by_the_file_is_no_copy(tmp_path):
    # two tensors of the same bytes, the file shrunk after its header was read: the
    # comparison cannot finish, and an unread tensor is never called a copy of the other
    from spec_format.parsers.checkpoint import load_checkpoint
    from spec_format.rules.untrained import _same_bytes
    from spec_format.testing.builder import TensorData, write_safetensors

    weights = tmp_path / "model.safetensors"
    same = bytes(range(256))
    write_safetensors(weights, {n: TensorData("F32", (64,), same) for n in ("a", "b")})
    ckpt = load_checkpoint(tmp_path)
    assert _same_bytes(ckpt, "a", "b")
    with open(weights, "r+b") as f:
        f.truncate(weights.stat().st_size - 100)
    assert not _same_bytes(ckpt, "a", "b")
