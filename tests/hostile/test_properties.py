"""Property tests: generated hostile configs, verifier configs and checkpoints never make
specfmt hit an internal error. Every case must end in findings (or a clean refusal), never
in I012 / exit 70 or an exception; migrate and fix must never write a non-JSON number or a
string no UTF-8 file can hold. 8,500 cases here (plus the 11,000 header-reader cases of tests/safetensors); fuzz/fuzz_config.py
runs the same checks for as long as one likes."""

from __future__ import annotations

import json
import math
import os
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec_format.base.errors import SpecfmtError
from spec_format.parsers import documents
from spec_format.rewrites.fixing import FixOptions, fix
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.rewrites.migration.output import dumps
from spec_format.runner.validation import ValidateOptions, validate
from tests.hostile.config_gen import config_text, verifier_text
from tests.safetensors.header_gen import generated, mutated

#: each example runs a batch of consecutive seeds: hypothesis's per-example bookkeeping
#: costs as much as a case, and shrinking a seed means nothing (replay one with
#: ``python fuzz/fuzz_config.py --seed N --count 1``)
BATCH = 10
SEEDS = st.integers(0, 2**32)


def seeds(base: int) -> range:
    return range(base, base + BATCH)


def many(cases: int):
    return settings(
        max_examples=cases // BATCH,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("hostile")


def put(path, text: str) -> None:
    """Write a case (without O_TRUNC, which makes ext4 flush on every rewrite)."""
    data = text.encode("utf-8", "surrogatepass")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def assert_no_internal_error(report, seed: int) -> None:
    bugs = [f for fr in report.files for f in fr.findings if f.rule == "I012"]
    assert not bugs, f"seed {seed}: {bugs[0].message}"
    assert report.exit_code in (0, 1, 3), seed
    json.dumps(report.to_dict())  # every report renders


@pytest.mark.slow  # thousands of generated inputs: 10-30 s
@many(4_000)
@given(SEEDS)
def test_hostile_configs_validate_without_internal_error(workdir, base):
    path = workdir / "config.json"
    for seed in seeds(base):
        put(path, config_text(seed))
        assert_no_internal_error(validate([path]), seed)


@pytest.mark.slow  # thousands of generated inputs: 10-30 s
@many(1_500)
@given(SEEDS)
def test_hostile_configs_against_a_hostile_verifier(workdir, base):
    path, verifier = workdir / "config.json", workdir / "verifier.json"
    for seed in seeds(base):
        put(path, config_text(seed))
        put(verifier, verifier_text(seed))
        try:
            report = validate([path], ValidateOptions(verifier=str(verifier)))
        except SpecfmtError as exc:  # an unusable verifier is a usage error (exit 2)
            assert exc.exit_code == 2, seed
            continue
        assert_no_internal_error(report, seed)


def _strict(text: str, seed: int) -> object:
    def refuse(name):
        raise AssertionError(f"seed {seed}: {name} written into the output")

    doc = json.loads(text, parse_constant=refuse)
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, float):
            assert math.isfinite(node), seed
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return doc


@pytest.mark.slow  # thousands of generated inputs: 10-30 s
@many(2_000)
@given(SEEDS)
def test_migrate_and_fix_refuse_or_write_strict_json(workdir, base):
    path = workdir / "config.json"
    for seed in seeds(base):
        put(path, config_text(seed))
        check_rewrite(path, seed)


def check_rewrite(path, seed: int) -> None:
    try:
        cfg = documents.read_config(path)
    except SpecfmtError as exc:
        assert exc.exit_code == 3, seed
        return
    for run in (lambda: migrate(cfg.data, MigrateOptions()), lambda: fix(cfg.data, FixOptions())):
        try:
            result = run()
        except SpecfmtError:
            continue
        text = dumps(result.document)
        text.encode("utf-8")  # no lone surrogate survives
        _strict(text, seed)


def _damaged_real_header(real: bytes, r: random.Random) -> bytes:
    n = struct.unpack("<Q", real[:8])[0]
    header = json.loads(real[8 : 8 + n])
    name = r.choice([k for k in header if k != "__metadata__"])
    header[name][r.choice(["shape", "data_offsets", "dtype"])] = r.choice(
        [[10**12], [2**64 - 8, 2**64], [0, 10**15], "F64", [-1], [2**40, 2**40], None]
    )
    body = json.dumps(header).encode()
    body += b" " * (-len(body) % 8)
    return struct.pack("<Q", len(body)) + body + real[8 + n :]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from spec_format.testing.builder import build_checkpoint, tiny_config

    root = tmp_path_factory.mktemp("ckpt")
    real = build_checkpoint(root / "real", tiny_config("eagle3"), data="zeros").path
    verifier = root / "verifier.json"
    verifier.write_text(
        json.dumps(
            {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 8}
        )
    )
    return real, (real / "model.safetensors").read_bytes(), verifier


@pytest.mark.slow  # thousands of generated inputs: 10-30 s
@many(1_000)
@given(SEEDS)
def test_hostile_headers_under_every_weights_rule(checkpoint, base):
    """Generated, mutated and damaged safetensors headers under a real or hostile config,
    with --deep, --scan-weights and --verifier: findings, never an internal error."""
    folder, real, verifier = checkpoint
    options = ValidateOptions(deep=True, scan_weights=True, verifier=str(verifier))
    for seed in seeds(base):
        check_checkpoint(folder, real, options, seed)


def check_checkpoint(folder, real: bytes, options: ValidateOptions, seed: int) -> None:
    """One checkpoint case: a hostile or real config, a generated, mutated or damaged
    header in ``folder``; validated with ``options``."""
    from spec_format.testing.builder import tiny_config

    r = random.Random(seed)
    config = config_text(seed) if r.random() < 0.3 else json.dumps(tiny_config("eagle3"))
    roll = r.random()
    blob = (
        generated(seed)
        if roll < 0.3
        else mutated(seed)
        if roll < 0.5
        else _damaged_real_header(real, r)
    )
    put(folder / "config.json", config)
    (folder / "model.safetensors").unlink(missing_ok=True)
    (folder / "model.safetensors").write_bytes(blob)
    assert_no_internal_error(validate([folder], options), seed)
