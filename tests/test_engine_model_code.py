"""Flags a named engine never reads although the draft was trained with them (C015/C016):
an error or a warning naming the release, never only a note, in validate and in fix. The
facts are the reader table's ``ignored`` rows (executed in tests/readers)."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import ROOT

from spec_format.facts import disputes, readers
from spec_format.facts.unread import trained_flags_unread
from spec_format.rewrites.fixing import FixOptions, fix

VLLM = "vllm==0.33.0"
EXAMPLES = ROOT / "examples"


def _example(name: str, **fields) -> dict:
    config = json.loads((EXAMPLES / name / "config.json").read_text())
    config.update(fields)
    return config


def _sliding(config: dict) -> dict:
    """The DSpark example with four sliding-window layers out of five."""
    config = copy.deepcopy(config)
    tlc = config["transformer_layer_config"]
    tlc["layer_types"] = ["sliding_attention"] * 4 + ["full_attention"]
    tlc.update(use_sliding_window=True, sliding_window=2048)
    return config


def _rules(cli, path, *args) -> tuple[int, dict[str, str]]:
    result = cli("validate", path, "-f", "json", *args)
    findings = json.loads(result.stdout)["files"][0]["findings"]
    return result.exit_code, {f["rule"]: f["message"] for f in findings}


def test_a_named_engine_that_drops_a_trained_flag_is_an_error(cli, write_config):
    path = write_config(_example("qwen3-8b-peagle", fc_norm=True))
    code, found = _rules(cli, path, "--engine", VLLM)
    assert code == 1 and "C015" in found and "C016" not in found
    assert f"{VLLM} never reads it" in found["C015"] and "fc_norm is true" in found["C015"]
    assert "C005" not in found  # retired: the releases a draft meets are C015/C016's
    # the newest release, only assumed, refuses peagle (C011, a warning); since no covered
    # release builds fc_norm from the config, the draft is an error by default (C022)
    code, found = _rules(cli, path)
    assert code == 1 and "C011" in found and not {"C015", "C016"} & set(found)
    assert "fc_norm.{i}.weight: builds it only under fc_norm" in found["C022"]
    # a flag the newest release never reads for a type it serves (DSpark's
    # sliding_window_non_causal) is a warning
    sliding = _sliding(_example("qwen3-8b-dspark", sliding_window_non_causal=True))
    code, found = _rules(cli, write_config(sliding, "dspark"))
    assert code == 0 and "C016" in found and "C015" not in found


@pytest.mark.parametrize(
    "config",
    [
        _example("qwen3-8b-peagle"),  # fc_norm false: the default, what vLLM runs
        _example("qwen3-8b-dspark", sliding_window_non_causal=True),  # no sliding layer
        _sliding(_example("qwen3-8b-dspark", sliding_window_non_causal=False)),
    ],
    ids=["peagle-default", "dspark-full-layers", "dspark-causal-sliding"],
)
def test_a_flag_that_changes_nothing_the_writer_computes_is_not_reported(cli, write_config, config):
    _, found = _rules(cli, write_config(config), "--engine", VLLM)
    assert not {"C015", "C016"} & set(found), found


def test_dspark_non_causal_sliding_layers_are_unread_by_vllm():
    config = _sliding(_example("qwen3-8b-dspark", sliding_window_non_causal=True))
    writer = disputes.writer_of("0.7")
    got = trained_flags_unread(config, "dspark", writer, [readers.release("vllm", "0.33.0")])
    assert [(u.field, u.engines) for u in got] == [("sliding_window_non_causal", (VLLM,))]


def test_fix_names_what_no_value_removes_and_check_fails(cli, tmp_path):
    config = _example("qwen3-8b-peagle", fc_norm=True)
    result = fix(copy.deepcopy(config), FixOptions(engines=(VLLM,)))
    assert [(p.rule, p.severity, p.pointer) for p in result.problems] == [
        ("C015", "error", "/fc_norm")
    ]
    assert result.document["fc_norm"] is True  # the trained value is never rewritten
    path = tmp_path / "config.json"
    # written as save_pretrained writes it, so only the disagreement can fail --check
    path.write_text(json.dumps(result.document, indent=2, sort_keys=True) + "\n")
    checked = cli("fix", path, "--engine", VLLM, "--check")
    assert checked.exit_code == 1 and "C015" in checked.output
    assert "is up to date" in checked.output  # nothing to write, yet it fails
    assert "1 input up to date; 1 with a disagreement no value removes" in checked.output
    # without --engine the assumed newest release refuses peagle outright (C011, a note):
    # no disagreement to fail on, --check passes
    checked = cli("fix", path, "--check")
    assert checked.exit_code == 0 and "C015" not in checked.output


def test_fix_check_fails_on_an_empty_aux_list_a_named_engine_reads_as_unset(cli, tmp_path):
    config = _example("qwen3-8b-peagle", eagle_aux_hidden_state_layer_ids=[])
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    checked = cli("fix", path, "--engine", VLLM, "--check")
    assert checked.exit_code == 1
    assert "C001" in checked.output and f"{VLLM} reads null (unset)" in checked.output


@pytest.mark.parametrize("engine", [(), ("--engine", VLLM)], ids=["assumed", "named"])
def test_no_example_is_flagged(cli, engine):
    """The examples are real drafts: none holds a flag vLLM 0.33 drops (DFlash2's ignored
    block_size is a size vLLM takes from speculative_tokens, not a flag)."""
    result = cli("validate", *sorted(EXAMPLES.iterdir()), "-f", "json", *engine)
    found = [
        (f["path"], x["rule"])
        for f in json.loads(result.stdout)["files"]
        for x in f["findings"]
        if x["rule"] in ("C015", "C016")
    ]
    assert not found, found
