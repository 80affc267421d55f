"""A shard index's cost per entry is bounded: indexes of 10,000 and 100,000 entries, each
naming its own missing shard (or repeating every key, or naming unsafe shards), run the real
CLI in a child under RLIMIT_AS and RLIMIT_CPU, and the larger costs about ten times the
smaller's work on top of the same start-up, not a hundred (one lookup over the whole map per
missing shard took 69 s of CPU at 100,000 against 1 s at 10,000)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec_format.parsers.checkpoint import MAX_ISSUES_PER_KIND
from spec_format.testing.builder import build_checkpoint, tiny_config
from tests.hostile.limits import run_limited

SMALL, LARGE = 10_000, 100_000


def sharded(directory: Path, entries: str) -> Path:
    """A valid eagle3 config whose weights are only an index with ``entries`` as its map."""
    path = build_checkpoint(directory, tiny_config("eagle3"), data="zeros").path
    (path / "model.safetensors").unlink()
    (path / "model.safetensors.index.json").write_text('{"weight_map": {' + entries + "}}")
    return path


def missing_shards(n: int) -> str:
    return ",".join(f'"t.{i}": "model-{i:06d}-of-{n:06d}.safetensors"' for i in range(n))


def repeated_keys(n: int) -> str:
    return ",".join(f'"t.{i}": "a.safetensors", "t.{i}": "b.safetensors"' for i in range(n // 2))


def unsafe_shards(n: int) -> str:
    return ",".join(f'"t.{i}": "../w{i}.safetensors"' for i in range(n))


@pytest.mark.parametrize(
    ("entries", "rule"),
    [(missing_shards, "H018"), (repeated_keys, "H017"), (unsafe_shards, "H017")],
    ids=["missing-shards", "repeated-keys", "unsafe-shards"],
)
def test_a_shard_index_costs_the_same_per_entry_at_ten_times_the_size(tmp_path, entries, rule):
    runs = {}
    for n in (SMALL, LARGE):
        path = sharded(tmp_path / str(n), entries(n))
        run = run_limited("validate", path, memory_mb=400, cpu_s=10, timeout_s=120)
        assert "Traceback" not in run.output and "internal error" not in run.output, run.output
        assert run.returncode == 1, run.output[-2000:]
        # capped per rule: the report stays short however large the index
        assert run.stdout.count(f" {rule} ") == MAX_ISSUES_PER_KIND, run.stdout[-2000:]
        runs[n] = run.cpu_s
    # ten times the entries: the start-up once plus ten times the per-entry work is under
    # 10x the small run (the small run's CPU includes the start-up); quadratic work is 100x
    assert runs[LARGE] < 8 * runs[SMALL], runs
