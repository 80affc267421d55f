"""Hostile configs, options and output paths for ``specfmt forward``: each gets a clear error
(exit 1, 2 or 3) or runs; never an internal error (exit 70), a hang or unbounded memory.

Memory and time bounds are asserted with ``resource`` limits in a subprocess (address
space, CPU seconds, file size), not with wall-clock timing.
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from forward_helpers import build, tiny_config
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spec_format.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
TLC = "transformer_layer_config"
TYPES = ("eagle3", "peagle", "dflash", "dspark", "dflash2", "xpress", "mtp")


def forward(*args):
    result = CliRunner().invoke(app, ["forward", *map(str, args)], catch_exceptions=False)
    assert result.exit_code in (0, 1, 2, 3), result.output
    assert "Traceback" not in result.output and "bug in specfmt" not in result.output
    return result


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    return {t: build(root / t, tiny_config(t)) for t in TYPES}


def _with_config(checkpoint: Path, config: dict | str) -> Path:
    text = config if isinstance(config, str) else json.dumps(config)
    (checkpoint / "config.json").write_text(text)
    return checkpoint


def _proposal(tokens):
    return [{"proposal_type": "greedy", "speculative_tokens": tokens}]


# (type, config overrides, options, exit code, part of the message)
CASES = [
    ("eagle3", {f"{TLC}.hidden_size": 3e7}, [], 1, "hidden_size is 30000000.0"),
    ("eagle3", {f"{TLC}.hidden_size": 30_000_000}, [], 1, "expected [H=30000000]"),
    ("eagle3", {f"{TLC}.hidden_size": 10**9}, [], 1, "do not match the eagle3 contract"),
    ("eagle3", {f"{TLC}.num_hidden_layers": 10**7}, [], 1, "l < 10000000: the checkpoint holds 0"),
    ("eagle3", {f"{TLC}.num_hidden_layers": 5000}, [], 1, "l < 5000: the checkpoint holds 0"),
    ("eagle3", {f"{TLC}.num_hidden_layers": 40}, [], 1, "missing"),
    ("xpress", {"num_jacobi_passes": 10**9}, [], 2, "at most 64 refinement passes"),
    ("eagle3", {}, ["--steps", 10**9], 2, "chains at most 64 steps"),
    ("eagle3", {"speculators_config.proposal_methods": _proposal(10**9)}, [], 0, "chained 64"),
    ("eagle3", {}, ["--tokens", 10**9], 2, "use --tokens"),
    ("dflash", {"block_size": 10**9}, [], 2, "no number of tokens fits"),
    ("mtp", {f"{TLC}.vocab_size": 10**9}, [], 2, "logits"),
    ("eagle3", {}, ["--seed", 2**70], 2, "--seed must be between 0 and 2**64 - 1"),
    ("eagle3", {}, ["--seed", -1], 2, "--seed must be"),
    ("eagle3", {}, ["--tokens", 0], 2, "--tokens must be at least 1"),
    ("eagle3", {f"{TLC}.rope_scaling": {"rope_type": "linear", "factor": "x"}}, [], 1, "S1"),
    (
        "eagle3",
        {
            f"{TLC}.rope_parameters": {
                "rope_type": "llama3",
                "factor": 2.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 1.0,
                "rope_theta": 1e4,
            }
        },
        [],
        1,
        "high_freq_factor must be larger",
    ),
    ("eagle3", {f"{TLC}.rope_parameters": {"sliding_attention": 3}}, [], 1, "not an object"),
    (
        "eagle3",
        {f"{TLC}.model_type": "qwen3", f"{TLC}.max_window_layers": "x"},
        [],
        1,
        "max_window_layers is 'x'",
    ),
    ("eagle3", {f"{TLC}.num_attention_heads": "4"}, [], 1, "S102"),
    ("eagle3", {f"{TLC}.intermediate_size": -5}, [], 1, "S103"),
    ("eagle3", {"eagle_aux_hidden_state_layer_ids": {"a": 1}}, [], 1, "S102"),
    ("dflash2", {"conv_group_size": 0}, [], 1, "S103"),
    ("dflash", {"mask_token_id": 10**30}, [], 1, "I010"),
]


@pytest.mark.parametrize("model_type,overrides,options,code,message", CASES)
def test_hostile_input_gets_a_clear_error(
    checkpoints, model_type, overrides, options, code, message
):
    path = _with_config(checkpoints[model_type], tiny_config(model_type, overrides))
    result = forward(path, *options)
    assert result.exit_code == code, result.output
    assert message in result.output


def test_fifo_inputs_and_compare_are_refused_without_blocking(checkpoints, tmp_path):
    path = _with_config(checkpoints["eagle3"], tiny_config("eagle3"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for option in ("--inputs", "--compare"):
        result = forward(path, option, fifo)
        assert result.exit_code == 3 and "not a regular file" in result.output


def test_a_config_fifo_is_refused_without_blocking(tmp_path):
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "d" / "config.json")
    result = forward(tmp_path / "d")
    assert result.exit_code == 3 and "not a regular file" in result.output


# ----------------------------------------------------------------------------- --dump


def test_dump_writes_through_dev_null(checkpoints):
    path = _with_config(checkpoints["eagle3"], tiny_config("eagle3"))
    assert forward(path, "--tokens", 3, "--dump", "/dev/null").exit_code == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dump_onto_a_full_device_is_an_error(checkpoints):
    path = _with_config(checkpoints["eagle3"], tiny_config("eagle3"))
    result = forward(path, "--tokens", 3, "--dump", "/dev/full")
    assert result.exit_code == 3 and "No space left on device" in result.output


def test_dump_into_a_missing_directory_creates_it_and_a_file_in_the_way_is_a_usage_error(
    checkpoints, tmp_path
):
    """Like every -o: missing directories are made (mkdir -p); a file where a directory
    should be is a usage error naming it."""
    path = _with_config(checkpoints["eagle3"], tiny_config("eagle3"))
    dump = tmp_path / "missing" / "deeper" / "out.safetensors"
    assert forward(path, "--tokens", 3, "--dump", dump).exit_code == 0
    assert dump.read_bytes()[:8] != b""
    (tmp_path / "plain").write_text("x")
    result = forward(path, "--tokens", 3, "--dump", tmp_path / "plain" / "out.safetensors")
    assert result.exit_code == 2 and "plain" in result.output, result.output


def test_dump_replaces_a_file_atomically_keeping_its_mode_and_links(checkpoints, tmp_path):
    path = _with_config(checkpoints["eagle3"], tiny_config("eagle3"))
    target = tmp_path / "real.safetensors"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.safetensors"
    link.symlink_to(target)
    assert forward(path, "--tokens", 3, "--dump", link).exit_code == 0
    assert link.is_symlink() and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.read_bytes()[:8] != b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.safetensors", "real.safetensors"]
    assert forward(path, "--tokens", 3, "--compare", link).exit_code == 0


def test_dump_is_a_directory(checkpoints, tmp_path):
    path = _with_config(checkpoints["eagle3"], tiny_config("eagle3"))
    result = forward(path, "--tokens", 3, "--dump", tmp_path)
    assert result.exit_code == 2 and "is a directory" in result.output


# ----------------------------------------------------------------------------- resource limits

_DRIVER = r"""
import json, resource, sys
limits = json.loads(sys.argv[1])
for name, value in limits.items():
    resource.setrlimit(getattr(resource, name), (value, value))
from typer.testing import CliRunner
from spec_format.cli.app import app
codes = []
for args in json.loads(sys.argv[2]):
    result = CliRunner().invoke(app, ["forward", *args])
    codes.append([result.exit_code, result.output[-300:]])
print(json.dumps(codes))
"""


def _limited(limits: dict[str, int], cases: list[list[str]]) -> list:
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(limits), json.dumps(cases)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,  # a safety net only: the bounds are the resource limits
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
def test_hostile_sizes_stay_within_memory_and_cpu_limits(tmp_path):
    """Each of these allocated gigabytes or looped for minutes before the tensor contract
    and the limits were checked first; under a 3 GiB address space and 120 CPU seconds
    (torch alone maps ~0.8 GiB), all end with a clear error."""
    cases = []
    for i, (model_type, overrides, options) in enumerate(
        [
            ("eagle3", {f"{TLC}.hidden_size": 30_000_000}, []),
            ("eagle3", {f"{TLC}.hidden_size": 10**9}, []),
            ("eagle3", {f"{TLC}.num_hidden_layers": 10**7}, []),
            ("eagle3", {f"{TLC}.num_hidden_layers": 4000}, []),
            ("xpress", {"num_jacobi_passes": 10**9}, []),
            ("eagle3", {}, ["--steps", "1000000000"]),
            ("eagle3", {}, ["--tokens", "1000000000"]),
            ("mtp", {f"{TLC}.vocab_size": 10**9}, ["--tokens", "1"]),
            ("dflash", {"block_size": 10**9}, []),
            ("eagle3", {f"{TLC}.vocab_size": 10**8, "draft_vocab_size": 10**8}, ["--tokens", "1"]),
        ]
    ):
        path = build(tmp_path / str(i), tiny_config(model_type))
        _with_config(path, tiny_config(model_type, overrides))
        cases.append([str(path), *options])
    limits = {"RLIMIT_AS": 3 << 30, "RLIMIT_CPU": 120}
    for (code, output), args in zip(_limited(limits, cases), cases, strict=True):
        assert code in (1, 2), (args, output)


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
def test_dump_onto_a_full_disk_leaves_the_old_file(tmp_path):
    """A file-size limit makes the write fail part-way, as a full disk does."""
    path = build(tmp_path / "e", tiny_config("eagle3"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "dump.safetensors").write_bytes(b"old")
    case = [str(path), "--tokens", "16", "--dump", str(out / "dump.safetensors")]
    ((code, output),) = _limited({"RLIMIT_FSIZE": 2048}, [case])
    assert code == 3 and "the original is unchanged" in output, output
    assert (out / "dump.safetensors").read_bytes() == b"old"
    assert [p.name for p in out.iterdir()] == ["dump.safetensors"]  # no temporary file left


# ----------------------------------------------------------------------------- property test

_HOSTILE = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2, 3e7, 1e9, 10**7, 5000, 2**63, 1e308, -0.0, 0.5, 8.0, "x", ""]),
    st.floats(allow_nan=True, allow_infinity=False, width=64),
    st.text(max_size=4),
    st.booleans(),
    st.none(),
    st.lists(st.one_of(st.integers(-3, 300), st.text(max_size=2)), max_size=4),
    st.dictionaries(
        st.sampled_from(["rope_type", "factor", "type", "x"]), st.integers(), max_size=2
    ),
    st.sampled_from([65, 1000, 100_000]).map(lambda n: f"__DEEP_{n}__"),  # nested n deep
)
_TLC_KEYS = [
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "hidden_act",
    "rms_norm_eps",
    "rope_theta",
    "max_position_embeddings",
    "attention_bias",
    "mlp_bias",
    "model_type",
    "layer_types",
    "sliding_window",
    "use_sliding_window",
    "max_window_layers",
    "partial_rotary_factor",
    "rope_scaling",
    "rope_parameters",
    "rope_parameters.rope_type",
    "rope_parameters.factor",
    "rope_parameters.original_max_position_embeddings",
    "rope_parameters.low_freq_factor",
    "rope_parameters.high_freq_factor",
]
_TOP_KEYS = [
    "draft_vocab_size",
    "target_hidden_size",
    "eagle_aux_hidden_state_layer_ids",
    "aux_hidden_state_layer_ids",
    "norm_before_residual",
    "norm_before_fc",
    "fc_norm",
    "norm_output",
    "mask_token_id",
    "block_size",
    "sliding_window_non_causal",
    "sample_from_anchor",
    "conv_kernel_size",
    "conv_group_size",
    "selector_rank",
    "selector_top_k",
    "markov_rank",
    "markov_head_type",
    "enable_confidence_head",
    "confidence_head_with_markov",
    "xpress_rank",
    "xpress_mlp_ratio",
    "num_jacobi_passes",
    "num_nextn_predict_layers",
    "speculators_version",
    "speculators_model_type",
    "speculators_config.proposal_methods.0.speculative_tokens",
    "transformer_layer_config",
]
_PATHS = _TOP_KEYS + [f"{TLC}.{k}" for k in _TLC_KEYS]
_DELETE = object()


def _set(config, path: str, value) -> None:
    """Set a dotted path (list indices allowed); a node in the way of another type is
    replaced by an object, as a hand edit would."""
    parts = path.split(".")
    node = config
    for part in parts[:-1]:
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            if not isinstance(node[int(part)], dict):
                node[int(part)] = {}
            node = node[int(part)]
            continue
        if not isinstance(node, dict):
            return
        if not isinstance(node.get(part), (dict, list)):
            node[part] = {}
        node = node[part]
    if isinstance(node, dict):
        if value is _DELETE:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value


_OPTION = st.one_of(
    st.tuples(st.just("--tokens"), st.integers(-3, 10**10)),
    st.tuples(st.just("--steps"), st.integers(-3, 10**10)),
    st.tuples(st.just("--seed"), st.integers(-(2**70), 2**70)),
    st.tuples(st.just("--anchor"), st.integers(-(10**12), 10**12)),
    st.tuples(st.just("--top-k"), st.integers(-3, 10**20)),
)


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
@settings(
    max_examples=int(os.environ.get("SPECFMT_FORWARD_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    model_type=st.sampled_from(TYPES),
    edits=st.lists(
        st.tuples(st.sampled_from(_PATHS), st.one_of(_HOSTILE, st.just(_DELETE))),
        min_size=1,
        max_size=3,
    ),
    options=st.lists(_OPTION, max_size=2, unique_by=lambda o: o[0]),
)
def test_no_hostile_config_or_option_is_an_internal_error(checkpoints, model_type, edits, options):
    config = copy.deepcopy(tiny_config(model_type))
    for path, value in edits:
        _set(config, path, value)
    text = re.sub(
        r'"__DEEP_(\d+)__"', lambda m: "[" * int(m[1]) + "]" * int(m[1]), json.dumps(config)
    )
    path = _with_config(checkpoints[model_type], text)
    result = forward(path, *[str(x) for option in options for x in option])
    event(f"exit {result.exit_code}")
