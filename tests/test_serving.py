"""`specfmt serving`: the verdict of each covered vLLM release group on a draft, from the
reader table (spec_format.facts.serving computes, spec_format.inspect.serving lays out)."""

from __future__ import annotations

import json

import pytest

from spec_format.facts import contract, serving
from spec_format.facts.readers import representatives
from spec_format.inspect.serving import WIDTH, render_text, serving_report
from spec_format.testing.builder import build_checkpoint, tiny_config
from tests.common import ROOT

EXAMPLES = ROOT / "examples"
#: the groups these expectations were read for (0.10.1 to 0.33.0); a newer release's group
#: is judged by the tests that add it
GROUPS = [
    v
    for r in representatives()
    if r.startswith("vllm==") and tuple(map(int, (v := r.split("==")[1]).split("."))) <= (0, 33, 0)
]
T, D, X = serving.AS_TRAINED, serving.DEGRADED, serving.REFUSES


def _verdicts(doc: dict) -> dict[str, str]:
    return {g["release"].split("==")[1]: g["verdict"] for g in doc["groups"]}


def _before(version: str) -> list[str]:
    return [
        g for g in GROUPS if tuple(map(int, g.split("."))) < tuple(map(int, version.split(".")))
    ]


@pytest.mark.parametrize(
    ("example", "first"),
    [
        ("qwen3-8b-eagle3", "0.10.1"),  # every group
        ("qwen3-8b-peagle", "0.22.0"),  # P-EAGLE is read from 0.22
        ("qwen3-8b-dflash", "0.20.0"),
        ("qwen3-8b-dspark", "0.25.0"),
        ("qwen3-32b-dflash2", "0.29.0"),
    ],
)
def test_examples_json_verdict_per_group(cli, example, first):
    result = cli("serving", EXAMPLES / example, "-f", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["first_as_trained"] == f"vllm=={first}"
    expected = {g: (X if g in _before(first) else T) for g in GROUPS}
    assert {g: v for g, v in _verdicts(doc).items() if g in GROUPS} == expected
    refused = next((g for g in doc["groups"] if g["verdict"] == X), None)
    if refused:  # the type: the field named, the release's own words kept
        assert refused["reasons"][0]["field"] == "/speculators_model_type"
        assert "is not a type it serves" in refused["reasons"][0]["message"]


def test_degraded_groups_name_what_they_ignore(cli):
    """The 0.9 Llama EAGLE-3 example: the groups from 0.18 to 0.24 serve it without a flag
    it was trained with (C016 on those releases), 0.25 on as trained."""
    doc = json.loads(cli("serving", EXAMPLES / "llama-3.1-8b-eagle3-0.9", "-f", "json").stdout)
    verdicts = _verdicts(doc)
    degraded = [g for g, v in verdicts.items() if v == D and g in GROUPS]
    assert degraded == ["0.18.0", "0.19.0", "0.20.0", "0.21.0", "0.22.0", "0.23.0", "0.24.0"]
    assert doc["first_as_trained"] == "vllm==0.25.0"
    reasons = next(g for g in doc["groups"] if g["verdict"] == D)["reasons"]
    assert reasons and all(r["field"] for r in reasons)


def test_two_aux_layers_every_group_refuses_fc(tmp_path):
    config = json.loads((EXAMPLES / "qwen3-8b-eagle3" / "config.json").read_text())
    config["eagle_aux_hidden_state_layer_ids"] = [2, 18]
    found = serving.serving(config)
    assert found.none_load and found.first_as_trained is None
    for g in found.groups:
        assert [(r.tensor, r.pointer) for r in g.reasons] == [
            ("fc.weight", "/eagle_aux_hidden_state_layer_ids")
        ]
        assert g.reasons[0].text == "sized for 3 aux hidden states, the draft has 2"


def test_checkpoint_tensors_decide(tmp_path):
    """A DFlash checkpoint without its q/k norms: the releases that build them serve it
    with the norms at their initial value (degraded), from the checkpoint's own tensors."""
    config = tiny_config("dflash", {"speculators_config.verifier.name_or_path": "Qwen/Qwen3-8B"})
    norms = [
        n for n in contract.expected_tensors(config).tensors if "_norm." in n and "self_attn" in n
    ]
    assert norms
    build_checkpoint(tmp_path / "ckpt", config, drop=norms)
    report = serving_report(str(tmp_path / "ckpt"), None)
    assert report.serving.tensors_from == "checkpoint"
    verdicts = {g.release.split("==")[1]: g.verdict for g in report.serving.groups}
    assert set(verdicts[g] for g in _before("0.20.0")) == {X}
    served = [v for g, v in verdicts.items() if g in GROUPS and g not in _before("0.20.0")]
    assert served and set(served) == {D}
    initial = {r.tensor for r in report.serving.groups[len(GROUPS) - 1].reasons if r.tensor}
    assert initial == set(norms)
    # the config alone implies the norms: as trained from 0.20 to 0.25; from 0.26 vLLM
    # applies sliding_window_non_causal to every layer, speculators to the sliding ones
    alone = serving_report(str(tmp_path / "ckpt" / "config.json"), None)
    assert alone.serving.tensors_from == "config"
    assert alone.serving.first_as_trained == "vllm==0.20.0"
    verdicts = {g.release.split("==")[1]: g.verdict for g in alone.serving.groups}
    assert {g for g, v in verdicts.items() if v == T and g in GROUPS} == set(
        _before("0.26.0")
    ) - set(_before("0.20.0"))
    last = alone.serving.groups[len(GROUPS) - 1]
    assert last.verdict == D
    assert [r.pointer for r in last.reasons] == ["/sliding_window_non_causal"]


def test_text_table_fits_80_columns_and_lists_every_group(cli):
    result = cli("serving", EXAMPLES / "qwen3-8b-dspark")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{EXAMPLES / 'qwen3-8b-dspark'}: dspark, format 0.7")
    assert "first release that serves it as trained: vllm==0.25.0" in lines
    rows = [line for line in lines if line.startswith("vllm ")]
    assert len(rows) == len(serving.covered_groups())
    assert rows[0].split()[:3] == ["vllm", "0.10.1-0.10.1.1", "refuses"]
    assert "speculators_model_type: does not serve dspark" in rows[0]
    assert rows[len(GROUPS) - 1].split()[2:4] == ["as", "trained"]
    report = serving_report(str(EXAMPLES / "gpt-oss-20b-eagle3"), None)
    assert max(len(line) for line in render_text(report).splitlines()[2:]) <= WIDTH


def test_engine_ranges_and_newer_releases(cli):
    doc = json.loads(
        cli("serving", EXAMPLES / "qwen3-8b-peagle", "-e", "vllm>=0.20,<0.23", "-f", "json").stdout
    )
    assert _verdicts(doc) == {"0.20.0": X, "0.21.0": X, "0.22.0": T}
    newer = cli("serving", EXAMPLES / "qwen3-8b-peagle", "-e", "vllm==99.0", "-f", "json")
    doc = json.loads(newer.stdout)
    assert [g["release"] for g in doc["groups"]] == [serving.covered_groups()[-1].id]
    assert "vllm==99.0 is newer than the reader table" in doc["warnings"][0]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["-e", "vllm=="], 2),
        (["-e", "vllm>0.99"], 2),
        (["--format", "yaml"], 2),
    ],
)
def test_usage_errors(cli, args, code):
    result = cli("serving", EXAMPLES / "qwen3-8b-eagle3", *args)
    assert result.exit_code == code and "Traceback" not in result.output


def test_unreadable_inputs_exit_3(cli, tmp_path):
    assert cli("serving", tmp_path / "absent").exit_code == 3
    (tmp_path / "config.json").write_text("{not json")
    assert cli("serving", tmp_path / "config.json").exit_code == 3
    (tmp_path / "config.json").write_text("{}")
    assert cli("serving", tmp_path / "config.json").exit_code == 3


@pytest.mark.parametrize(
    "example", ["qwen3-8b-eagle3", "qwen3-8b-peagle", "qwen3-8b-dflash", "qwen3-8b-dspark"]
)
def test_the_config_only_refusals_c022_asks_agree_with_the_full_prediction(example):
    """C022 reads the config alone (no tensor contract); over every field of the newest
    release's rows set true, false, null or left out, it refuses exactly where the full
    prediction on the tensors the config implies does."""
    import copy

    from spec_format.facts import readers

    base = json.loads((EXAMPLES / example / "config.json").read_text())
    model_type = base["speculators_model_type"]
    differ = []
    for name in readers.newest("vllm").fields(model_type):
        for value in (True, False, None, "absent"):
            config = copy.deepcopy(base)
            if value == "absent":
                config.pop(name, None)
            else:
                config[name] = value
            for group in serving.covered_groups():
                full = bool(serving.refusals(config, model_type, group))
                cheap = bool(serving.config_refusals(config, model_type, group))
                if full != cheap:
                    differ.append((name, value, group.id, full))
    assert differ == []
