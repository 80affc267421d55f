"""The writer's joins ("stack"/"cat" along any axis) and shards, against numpy."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from spec_format.convert import write
from spec_format.convert.plan import ConvertRefused, Plan, TensorMove
from spec_format.parsers.checkpoint import load_checkpoint
from spec_format.testing.builder import TensorData, write_safetensors


@pytest.fixture
def source(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {f"e{i}": rng.standard_normal((2, 3, 4)).astype("<f4") for i in range(3)}
    src = tmp_path / "src"
    src.mkdir()
    write_safetensors(
        src / "model.safetensors",
        {n: TensorData("F32", a.shape, a.tobytes()) for n, a in arrays.items()},
    )
    with load_checkpoint(src) as ckpt:
        records = dict(ckpt.tensors)
    return src, arrays, records


@pytest.mark.parametrize("op", ["stack", "cat"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_joins_match_numpy(tmp_path, source, op, axis):
    src, arrays, records = source
    names = ("e0", "e1", "e2")
    plan = Plan("test", {}, (TensorMove(names, "joined", op, "test", axis),), ())
    [tensor] = write.output_tensors(plan, records)
    out = tmp_path / "out"
    out.mkdir()
    write.write_checkpoint(out, src, {}, [tensor], max_shard_size=10**9)
    join = np.stack if op == "stack" else np.concatenate
    expected = join([arrays[n] for n in names], axis=axis)
    with load_checkpoint(out) as ckpt:
        got = ckpt.read_tensor("joined", 1 << 20)
        assert ckpt.tensors["joined"].shape == expected.shape
    assert got == expected.tobytes()


def test_joining_mismatched_shapes_is_refused(source):
    src, arrays, records = source
    bad = dataclasses.replace(records["e1"], shape=(2, 3, 2))
    plan = Plan("test", {}, (TensorMove(("e0", "e1"), "joined", "cat", "test", 0),), ())
    with pytest.raises(ConvertRefused, match="cannot cat e0 \\[2, 3, 4\\] with e1 \\[2, 3, 2\\]"):
        write.output_tensors(plan, {**records, "e1": bad})


def test_shards_follow_save_pretrained(tmp_path, source):
    src, arrays, records = source
    moves = tuple(TensorMove((n,), n, "copy", "test") for n in arrays)
    tensors = write.output_tensors(Plan("test", {}, moves, ()), records)
    out = tmp_path / "out"
    out.mkdir()
    files = write.write_checkpoint(out, src, {"a": 1}, tensors, max_shard_size=200)  # 96 B each
    assert [n for n, _ in files] == [
        "config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
    ]
    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert index["weight_map"] == {
        "e0": "model-00001-of-00002.safetensors",
        "e1": "model-00001-of-00002.safetensors",
        "e2": "model-00002-of-00002.safetensors",
    }
    assert index["metadata"] == {"total_parameters": 72, "total_size": 288}
    with load_checkpoint(out) as ckpt:
        assert not ckpt.issues and ckpt.metadata == {"format": "pt"}
        for name, array in arrays.items():
            assert ckpt.read_tensor(name, 1 << 20) == array.tobytes()
