"""Clean checkpoints of every type produce no weights finding at all, and a config alone
skips the weights checks. What each H/W/D/V rule must flag and leave alone is its cases
file, tests/rules/cases/<ID>.json (a tiny checkpoint described as data)."""

from __future__ import annotations

import json

import pytest

from spec_format.base.report import Severity
from spec_format.facts import catalog
from spec_format.testing.builder import build_checkpoint, tiny_config, tiny_verifier
from tests.weights.conftest import check, findings, rule_ids

TYPES = list(catalog.current_types())


@pytest.mark.parametrize("model_type", TYPES)
def test_clean_checkpoints_have_no_weights_findings(tmp_path, model_type):
    config = tiny_config(model_type)
    path = build_checkpoint(tmp_path / "ckpt", config).path
    archs = config["speculators_config"]["verifier"]["architectures"]
    verifier = dict(tiny_verifier(), architectures=archs)
    (tmp_path / "verifier.json").write_text(json.dumps(verifier))
    report = check(path, deep=True, scan_weights=True, verifier=str(tmp_path / "verifier.json"))
    assert not findings(report, "H") and not findings(report, "W") and not findings(report, "D")
    assert not [f for f in findings(report, "V") if f.severity is Severity.ERROR]
    assert report.exit_code == 0, report.to_dict()
    assert not [n for n in report.notes if "--verifier" in n]  # the verifier was given


def test_a_config_only_input_skips_weights_and_says_so(tmp_path):
    built = build_checkpoint(tmp_path / "ckpt", tiny_config("eagle3"), drop=["d2t"])
    report = check(built.config_path)
    assert not rule_ids(report)
    assert any("pass the checkpoint directory" in s for s in report.files[0].skipped)


def test_one_layer_too_many_is_one_finding_not_one_per_tensor(tmp_path):
    config = tiny_config("dflash", {"transformer_layer_config.num_hidden_layers": 3})
    built = build_checkpoint(tmp_path / "ckpt", config)
    config["transformer_layer_config"]["num_hidden_layers"] = 2
    built.config_path.write_text(json.dumps(config))
    assert rule_ids(check(built.path), "W") == {"W010"}
