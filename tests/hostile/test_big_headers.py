"""The largest headers and shard indexes the format's limits allow, under resource limits.

The safetensors library caps a header at 100 MB, which holds about a million tensor
entries; an index file has the same cap. Both were read as whole Python documents (1.3 GB
and 100 s of CPU for the header, 470 MB for the index). Each case runs the real CLI in a
child under RLIMIT_AS and RLIMIT_CPU: going over either kills it and fails the test.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from spec_format.testing.builder import build_checkpoint, tiny_config

from .limits import run_limited

pytestmark = pytest.mark.slow  # each builds a file of ~80 MB and reads it in a child

MILLION = 1_000_000


def clean(run) -> None:
    assert "Traceback" not in run.output and "internal error" not in run.output, run.output[-3000:]


@pytest.fixture(scope="module")
def million_tensors(tmp_path_factory) -> Path:
    """A valid eagle3 draft whose header also lists a million 4-byte tensors (~81 MB)."""
    path = build_checkpoint(
        tmp_path_factory.mktemp("header") / "d", tiny_config("eagle3"), data="zeros"
    ).path
    weights = path / "model.safetensors"
    blob = weights.read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    data = blob[8 + n :]
    position = len(data)
    parts = [json.dumps(json.loads(blob[8 : 8 + n]))[:-1]]
    for i in range(MILLION):
        entry = f',"junk.{i}.weight":{{"dtype":"F32","shape":[1],"data_offsets":[{position},'
        parts.append(f"{entry}{position + 4}]}}")
        position += 4
    parts.append("}")
    body = "".join(parts).encode()
    body += b" " * (-len(body) % 8)
    with weights.open("wb") as f:
        f.write(struct.pack("<Q", len(body)) + body + data)
        f.truncate(8 + len(body) + position)
    return path


@pytest.mark.parametrize("command", ["validate", "inspect"])
def test_a_million_tensor_header_is_read_in_bounded_time_and_memory(million_tensors, command):
    run = run_limited(command, million_tensors, memory_mb=450, cpu_s=40, timeout_s=400)
    clean(run)
    if command == "validate":  # every junk tensor is W002, capped with a count
        assert run.returncode == 1 and "W002" in run.output and "more" in run.output
    else:
        assert run.returncode == 0 and "1000000 tensor(s) are not in" in run.output


def test_a_million_entry_shard_index_is_read_in_bounded_memory(tmp_path):
    path = build_checkpoint(tmp_path / "d", tiny_config("eagle3"), data="zeros").path
    shard = "model-00001-of-00001.safetensors"
    (path / "model.safetensors").rename(path / shard)
    weight_map = {f"model.layers.{i}.mlp.junk.weight": shard for i in range(MILLION)}
    index = {"metadata": {"total_size": 1}, "weight_map": weight_map}
    (path / "model.safetensors.index.json").write_text(json.dumps(index))
    run = run_limited("validate", path, memory_mb=350, cpu_s=30, timeout_s=300)
    clean(run)
    # the map's tensors are not in the shard (H019), the shard's not in the map (H021)
    assert run.returncode == 1 and "H019" in run.output and "H021" in run.output, run.output
