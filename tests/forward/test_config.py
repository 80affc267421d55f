"""How ``specfmt forward`` reads config.json: through validate's strict loader and checks,
with the defaults of the detected format version's schema, and the same layer class as
``migrate`` when ``transformer_layer_config.model_type`` is absent."""

from __future__ import annotations

import copy
import json

import pytest
from forward_helpers import build, tiny_config
from typer.testing import CliRunner

from spec_format.base.errors import InputError
from spec_format.cli.app import app
from spec_format.facts import catalog, schemas
from spec_format.forward import CheckpointError, ForwardOptions, UnsupportedError, run_forward
from spec_format.forward.config import (
    FORWARD_CLASSES,
    LAYER_CLASS_DEFAULTS,
    TLC,
    read_config,
    resolve,
)
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.testing.builder import DELETE


def cli(*args):
    return CliRunner().invoke(app, [*map(str, args)], catch_exceptions=False)


def _write(directory, config):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    return directory


# ----------------------------------------------------------------------------- validate's reader


@pytest.mark.parametrize(
    "overrides",
    [
        {"norm_before_fc": True, "fc_norm": True},  # X002
        {"transformer_layer_config.num_key_value_heads": 3},  # X016
        {"transformer_layer_config.rms_norm_eps": "x"},  # schema type
        {"draft_vocab_size": 0},  # schema minimum
    ],
)
def test_forward_refuses_a_config_with_validates_findings(tmp_path, overrides):
    path = build(tmp_path / "e", tiny_config("eagle3"))
    config = tiny_config("eagle3", overrides)
    (path / "config.json").write_text(json.dumps(config, indent=1))
    validated = cli("validate", path / "config.json")
    assert validated.exit_code == 1
    findings = [line.strip() for line in validated.output.splitlines() if ": error " in line]
    assert findings
    forwarded = cli("forward", path)
    assert forwarded.exit_code == 1
    assert "specfmt validate` finds errors in this config" in forwarded.output
    for finding in findings:
        assert finding in forwarded.output
    assert "Traceback" not in forwarded.output


def test_validate_warnings_are_reported_and_the_forward_runs(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"))
    text = (path / "config.json").read_text()
    (path / "config.json").write_text(text.replace("{", '{"draft_vocab_size": 64, ', 1))
    result = cli("forward", path, "--tokens", "4", "--format", "json")
    assert result.exit_code == 0, result.output
    findings = json.loads(result.output)["findings"]
    assert any(f.startswith("I009 key 'draft_vocab_size' appears more than once") for f in findings)


def test_non_finite_literal_is_refused(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"))
    text = (path / "config.json").read_text()
    (path / "config.json").write_text(text.replace('"rope_theta": 10000.0', '"rope_theta": NaN'))
    with pytest.raises(CheckpointError, match="NaN is not valid JSON"):
        run_forward(ForwardOptions(checkpoint=path, tokens=4))


def test_a_huge_config_is_not_read(tmp_path):
    path = tmp_path / "big"
    path.mkdir()
    with (path / "config.json").open("wb") as f:
        f.truncate(300 << 20)  # sparse: 300 MB by size, nothing on disk
    with pytest.raises(InputError, match="larger than the 16,777,216-byte limit"):
        run_forward(ForwardOptions(checkpoint=path))


def test_deep_nesting_is_refused(tmp_path):
    config = tiny_config("eagle3")
    text = json.dumps(config)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path = tmp_path / "deep"
    path.mkdir()
    (path / "config.json").write_text(text)
    result = cli("forward", path)
    assert result.exit_code == 3
    assert "nested too deeply" in result.output or "levels deep" in result.output


def test_a_type_without_a_forward_is_unsupported(tmp_path):
    config = migrate(tiny_config("eagle3"), MigrateOptions(to="0.4")).document
    config["speculators_model_type"] = "eagle"
    config["transformer_layer_config"]["model_type"] = "llama"
    config["architectures"] = ["EagleSpeculator"]
    with pytest.raises((UnsupportedError, CheckpointError)) as info:
        read_config(_write(tmp_path / "eagle", config))
    assert "'eagle'" in str(info.value)


# ----------------------------------------------------------------------------- defaults


def _forward_types_by_version():
    return [
        (version, model_type)
        for version, entry in catalog.versions().items()
        for model_type in entry.types
        if model_type in FORWARD_CLASSES
    ]


def _config_of(version: str, model_type: str) -> dict:
    """The shared tiny config in format ``version`` (migrated down from 0.9)."""
    config = tiny_config(model_type)
    if version != "0.9":
        config = migrate(config, MigrateOptions(to=version, allow_lossy=True)).document
    return config


@pytest.mark.parametrize("version,model_type", _forward_types_by_version())
def test_forward_defaults_are_the_schema_defaults(tmp_path, version, model_type):
    """Guard: every top-level field the config leaves out resolves to the default of the
    detected version's schema (or, for a field that version does not have, of the version
    that introduced it), never to a default of the forward's own."""
    base = _config_of(version, model_type)
    # a vocabulary the default draft_vocab_size (32000) fits; nothing is built here
    base[TLC]["vocab_size"] = base["draft_vocab_size"] = 32000
    declared = {}
    for v in [v for v in catalog.versions() if model_type in catalog.versions()[v].types]:
        if tuple(map(int, v.split("."))) < tuple(map(int, version.split("."))):
            continue
        for key in schemas.resolve(v, model_type, ()).get("properties", {}):
            declared.setdefault(key, schemas.resolve(v, model_type, (key,)))
    checked = 0
    for key, schema in declared.items():
        if "default" not in schema or key in ("speculators_version", "speculators_model_type"):
            continue
        config = copy.deepcopy(base)
        config.pop(key, None)
        try:
            read = read_config(_write(tmp_path / key, config))
        except CheckpointError:
            continue  # the field is required by a rule (mask_token_id, aux ids): no default
        assert read.format_version == version
        assert resolve(read).flag(key) == schema["default"], key
        checked += 1
    assert checked >= 5


# ----------------------------------------------------------------------------- layer class


@pytest.mark.parametrize("version,model_type", _forward_types_by_version())
def test_absent_layer_model_type_forward_and_migrate_agree(tmp_path, version, model_type):
    """Which layer class a release builds when transformer_layer_config.model_type is
    absent: the forward uses the class ``migrate`` writes in (speculators 0.5 builds Llama
    for EAGLE-3, 0.7 and later Qwen3)."""
    config = _config_of(version, model_type)
    del config[TLC]["model_type"]
    migrated = migrate(copy.deepcopy(config), MigrateOptions(to="0.9")).document
    written = migrated[TLC]["model_type"]
    directory = _write(tmp_path / "c", config)
    if written not in LAYER_CLASS_DEFAULTS or (model_type == "mtp" and written != "qwen3"):
        with pytest.raises(UnsupportedError, match=repr(written)):
            resolve(read_config(directory))
        return
    spec = resolve(read_config(directory))
    assert spec.effective[TLC]["model_type"] == written
    assert any(f"speculators {version} builds {written} layers" in n for n in spec.notes)


def test_a_05_eagle3_draft_without_layer_model_type_runs_llama_layers(tmp_path):
    config = _config_of("0.5", "eagle3")
    del config[TLC]["model_type"]
    path = build(tmp_path / "e05", config)
    result = run_forward(ForwardOptions(checkpoint=path, tokens=5))
    assert result.ok and result.layer_type == "llama"
    # the same checkpoint declared 0.9: speculators 0.9 builds Qwen3 layers, which need
    # q_norm/k_norm the checkpoint does not have
    config["speculators_version"] = "0.9.0"
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="q_norm"):
        run_forward(ForwardOptions(checkpoint=path, tokens=5))


def test_layer_defaults_come_from_the_layer_class(tmp_path):
    config = tiny_config(
        "eagle3",
        {
            f"{TLC}.intermediate_size": DELETE,
            f"{TLC}.rms_norm_eps": DELETE,
            f"{TLC}.model_type": "qwen3",
        },
    )
    spec = resolve(read_config(_write(tmp_path / "q", config)))
    assert (spec.layer.I, spec.layer.eps) == (22016, 1e-6)  # transformers' Qwen3Config()
    assert spec.effective[TLC]["intermediate_size"] == 22016  # what the contract is checked on
