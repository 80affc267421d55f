"""Generated hostile cases for the surfaces added after the first round (issue 23): convert's
source configs, inspect's draft and verifier configs, and configuration files. The same
hostile values as tests/hostile/config_gen.py (numbers past every limit, NaN, lone
surrogates, wrong types, huge strings, deep nesting); every case ends in a result or a
specfmt error with a documented exit code, never another exception, and every JSON
document it produces is strict JSON. 1,900 cases."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given

from spec_format.base.errors import SpecfmtError
from spec_format.base.jsonout import dumps
from spec_format.testing import builder, safeailab
from spec_format.testing.builder import build_checkpoint, tiny_config

from .config_gen import VERIFIER_FIELDS, _pick, _set, config_text
from .config_gen import dumps as raw_dumps
from .test_properties import SEEDS, _strict, many, put, seeds

SOURCE_FIELDS = [
    "hidden_size",
    "vocab_size",
    "draft_vocab_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "num_hidden_layers",
    "rope_theta",
    "rms_norm_eps",
    "max_position_embeddings",
    "architectures",
    "model_type",
    "torch_dtype",
    "eagle_aux_hidden_state_layer_ids",
    "eagle_config",
    "eagle_config.eagle_aux_hidden_state_layer_ids",
    "rope_scaling",
    "tie_word_embeddings",
]
MOE_FIELDS = ["num_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step"]
DENSE = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 8,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "vocab_size": 256,
    "rope_theta": 10000.0,
    "max_position_embeddings": 256,
}
MOE = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
    "decoder_sparse_step": 1,
}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("surfaces-props")
    verifier = root / "verifier"
    builder.build_verifier(verifier, safeailab.verifier_config())
    config = safeailab.safeailab_config(overrides={"eagle_aux_hidden_state_layer_ids": [1, 4, 5]})
    source = safeailab.build_safeailab(root / "src", config, dict(safeailab.safeailab_shapes()))
    draft = build_checkpoint(root / "draft", tiny_config("eagle3"), data="zeros").path
    return {"root": root, "verifier": verifier, "source": source, "config": config, "draft": draft}


def expect_documented(exc: SpecfmtError, seed: int) -> None:
    assert exc.exit_code in (1, 2, 3), (seed, exc)


@many(600)
@given(SEEDS)
def test_hostile_convert_sources_plan_or_refuse(made, base):
    from spec_format.convert.plan import Request
    from spec_format.convert.run import ConvertResult, load_source, make_plan
    from spec_format.facts import catalog
    from spec_format.parsers.verifier import load_verifier

    request = Request(
        verifier=load_verifier(str(made["verifier"])),
        verifier_ref=str(made["verifier"]),
        aux_layer_ids=None,
        format_version=catalog.latest_version(),
    )
    for seed in seeds(base):
        r = random.Random(seed)
        doc = json.loads(json.dumps(made["config"]))
        for _ in range(r.randint(1, 3)):
            _set(doc, r.choice(SOURCE_FIELDS), _pick(r))
        put(made["source"] / "config.json", raw_dumps(doc))
        try:
            source = load_source(made["source"])
            plan = make_plan(source, request)
        except SpecfmtError as exc:
            expect_documented(exc, seed)
            continue
        result = ConvertResult(str(made["source"]), "", plan, request.format_version)
        _strict(dumps(result.to_dict()), seed)


def _inspect(draft, verifier, seed: int) -> None:
    from spec_format.inspect.run import InspectOptions, check_options, run_inspect

    options = InspectOptions(checkpoint=str(draft), verifier=verifier, cost_ratio=None)
    try:
        check_options(options)
        report = run_inspect(options)
    except SpecfmtError as exc:
        expect_documented(exc, seed)
        return
    _strict(dumps(report.to_dict()), seed)


@many(500)
@given(SEEDS)
def test_hostile_draft_configs_under_inspect(made, base):
    for seed in seeds(base):
        put(made["draft"] / "config.json", config_text(seed))
        _inspect(made["draft"], None, seed)


@many(500)
@given(SEEDS)
def test_hostile_verifiers_under_inspect(made, base):
    put(made["draft"] / "config.json", json.dumps(tiny_config("eagle3")))
    verifier = made["root"] / "hostile-verifier.json"
    for seed in seeds(base):
        r = random.Random(seed)
        doc = dict(DENSE) if r.random() < 0.5 else {**DENSE, **MOE}
        for _ in range(r.randint(0, 3)):
            _set(doc, r.choice([*VERIFIER_FIELDS, *MOE_FIELDS]), _pick(r))
        put(verifier, raw_dumps(doc))
        _inspect(made["draft"], str(verifier), seed)


TOML_VALUES = [
    "1",
    "1e400",
    "nan",
    "inf",
    '"S"',
    "['S', 1]",
    "[[[[[]]]]]",
    "{ a = 1 }",
    '"\\ud800"',
    "true",
    "'strict'",
    "'STRICT'",
    "['C001']",
    "['vllm==0.32.0']",
    "['vllm==x']",
    "1979-05-27",
]
TOML_KEYS = ["select", "ignore", "profile", "engine", "per-file-ignores", "selec", "tool", "x"]


def toml_text(seed: int, pyproject: bool) -> str:
    r = random.Random(seed)
    head = "[tool.specfmt]\n" if pyproject and r.random() < 0.9 else ""
    lines = [f"{r.choice(TOML_KEYS)} = {r.choice(TOML_VALUES)}" for _ in range(r.randint(0, 4))]
    if r.random() < 0.2:
        lines.append("[per-file-ignores]" if not pyproject else "[tool.specfmt.per-file-ignores]")
        lines.append(f'"a/*" = {r.choice(TOML_VALUES)}')
    if r.random() < 0.05:
        depth = r.choice([50, 500, 5000])
        lines.append("deep = " + "[" * depth + "]" * depth)
    if r.random() < 0.05:
        lines.append(r.choice(["= broken", "[", "x = 'unterminated", "\x00"]))
    return head + "\n".join(lines) + "\n"


@many(300)
@given(SEEDS)
def test_hostile_configuration_files_are_usage_errors(tmp_path_factory, base):
    from spec_format.runner import settings

    root = tmp_path_factory.mktemp("toml")
    for seed in seeds(base):
        for name in ("specfmt.toml", "pyproject.toml"):
            path = root / name
            path.write_text(toml_text(seed, name == "pyproject.toml"), encoding="utf-8")
            try:
                settings.read(path)
            except SpecfmtError as exc:
                assert exc.exit_code == 2, (seed, exc)


@many(200)
@given(SEEDS)
def test_hostile_configs_on_standard_input(base):
    """The generated configs piped into ``validate -``, ``migrate -`` and ``fix -``: a
    documented exit code, and a written document is strict JSON."""
    from typer.testing import CliRunner

    from spec_format.cli.app import app

    runner = CliRunner()
    for seed in seeds(base):
        data = config_text(seed).encode("utf-8", "surrogatepass")
        for command in ("validate", "migrate", "fix"):
            result = runner.invoke(app, [command, "-"], input=data)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                seed,
                command,
                result.exception,
            )
            assert result.exit_code in (0, 1, 2, 3), (seed, command, result.output)
            if command != "validate" and result.exit_code == 0:
                _strict(result.stdout, seed)
