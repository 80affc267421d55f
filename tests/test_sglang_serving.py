"""`validate --engine sglang==X` on the layouts SGLang serves (seen through) and on a
speculators draft: the registry refuses a draft class it does not have (C012, with the first
release that has it), the verifier's class is asked for the capture method (V017), and C023
(SGLang reads no speculators config) is about the speculators format only, never said of a
seen-through layout."""

from __future__ import annotations

import json

import pytest

from tests.failures import corpus

REPORTS = {r.id: r for r in corpus.reports()}


def _findings(cli, folder, *args):
    result = cli("validate", folder, *args, "-f", "json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)["files"][0]["findings"]


@pytest.fixture(scope="module")
def dflash(tmp_path_factory):
    """z-lab's DFlash layout (architectures DFlashDraftModel), from the corpus."""
    return corpus.build_draft(
        REPORTS["22-omlx-886"].data["draft"], tmp_path_factory.mktemp("d") / "x"
    )


@pytest.mark.parametrize(
    ("engine", "refused"),
    [("sglang==0.5.10.post1", True), ("sglang==0.5.11", False), ("sglang", False)],
)
def test_a_draft_class_the_registry_lacks_is_refused(cli, dflash, engine, refused):
    code, found = _findings(cli, dflash, "--engine", engine)
    c012 = [f for f in found if f["rule"] == "C012"]
    assert not any(f["rule"] == "C023" for f in found)
    if not refused:
        assert c012 == []
        return
    assert code == 1 and len(c012) == 1
    assert c012[0]["severity"] == "error" and c012[0]["pointer"] == "/architectures"
    assert c012[0]["message"].startswith(
        f"{engine} refuses this config: its model registry has no DFlashDraftModel"
    )
    assert "the first covered SGLang release that has it is sglang==0.5.11" in c012[0]["message"]


def test_the_verifier_class_is_asked_on_the_converted_view(cli, tmp_path):
    report = REPORTS["24-sglang-17935"]
    draft = corpus.build_draft(report.data["draft"], tmp_path / "draft")
    verifier = corpus.build_verifier(report.data["verifier"], tmp_path / "verifier")
    code, found = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.7")
    rules = {f["rule"] for f in found}
    assert code == 1 and "V017" in rules and not rules & {"C023", "C012"}
    v017 = next(f for f in found if f["rule"] == "V017")
    assert (
        "Qwen3VLMoeForConditionalGeneration has no set_eagle3_layers_to_capture"
        in (v017["message"])
    )
    _, later = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.11")
    assert "V017" not in {f["rule"] for f in later}


@pytest.fixture
def headless(tmp_path):
    """sgl-project/sglang#27908's draft: no lm_head.weight, draft_vocab_size == vocab_size."""
    return corpus.build_report("11-sglang-27908", tmp_path)


def _w025(found):
    return [f for f in found if f["rule"] == "W025"]


def test_an_unfilled_head_is_reported_and_the_advice_proven(cli, headless):
    draft, verifier = headless
    code, found = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.7")
    (hit,) = _w025(found)
    assert code == 1 and hit["severity"] == "error" and hit["pointer"] == "/draft_vocab_size"
    assert hit["message"].startswith("sglang==0.5.7 builds this draft a fresh lm_head")
    assert "remove draft_vocab_size from config.json" in hit["message"]
    # the advice, applied: the finding goes and no new error comes
    config = json.loads((draft / "config.json").read_text())
    before = {(f["rule"], f["severity"]) for f in found}
    del config["draft_vocab_size"]
    (draft / "config.json").write_text(json.dumps(config))
    _, after = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.7")
    assert _w025(after) == []
    assert {
        (r, s) for r, s in ((f["rule"], f["severity"]) for f in after) if s == "error"
    } <= before


def test_before_the_release_that_takes_the_verifier_head(cli, headless):
    """0.5.1.post3's class builds a fresh head even without draft_vocab_size; 0.5.2 is the
    first that asks for the verifier's (both ends of the window)."""
    draft, verifier = headless
    config = json.loads((draft / "config.json").read_text())
    del config["draft_vocab_size"]
    (draft / "config.json").write_text(json.dumps(config))
    _, old = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.1.post3")
    (hit,) = _w025(old)
    assert hit["pointer"] == "/architectures"
    assert "serve it with sglang==0.5.2 or later" in hit["message"]
    _, new = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.2")
    assert _w025(new) == []


def test_a_reduced_vocabulary_needs_its_own_head(cli, headless):
    draft, verifier = headless
    config = json.loads((draft / "config.json").read_text())
    config["draft_vocab_size"] = 32000
    (draft / "config.json").write_text(json.dumps(config))
    _, found = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.7")
    assert any("needs its trained lm_head.weight" in f["message"] for f in _w025(found))


def test_no_sglang_named_no_head_finding(cli, headless):
    draft, verifier = headless
    _, found = _findings(cli, draft, "--verifier", verifier)
    assert _w025(found) == []


@pytest.mark.parametrize(
    ("engine", "refused"),
    [("sglang==0.4.10.post2", True), ("sglang==0.5.11", True), ("sglang==0.5.12", False)],
)
def test_a_two_layer_eagle3_draft_before_sglang_built_several(cli, tmp_path, engine, refused):
    """sgl-project/SpecForge#129: LlamaForCausalLMEagle3 raised for more than one layer up
    to 0.5.11 (executed from its __init__); 0.5.12 builds them."""
    draft = corpus.build_draft(REPORTS["10-specforge-129"].data["draft"], tmp_path / "d")
    _, found = _findings(cli, draft, "--engine", engine)
    said = [f for f in found if f["rule"] == "C012" and f["pointer"] == "/num_hidden_layers"]
    if not refused:
        assert said == []
        return
    (hit,) = said
    assert hit["severity"] == "error"
    assert hit["message"] == (
        f"{engine} refuses this config: its LlamaForCausalLMEagle3 raises 'EAGLE3 currently "
        "only supports 1 layer' for num_hidden_layers 2; the first covered SGLang release that "
        "builds 2 layers is sglang==0.5.12"
    )


def _c020(found):
    return [f for f in found if f["rule"] == "C020" and f.get("tensor") == "fc.weight"]


@pytest.fixture
def one_state(tmp_path):
    """sgl-project/sglang#14920's head (nvidia/gpt-oss-120b-Eagle3-v2): eagle_config says it
    reads no aux hidden state, and its fc.weight takes one 2880-wide state."""
    return corpus.build_report("49-sglang-14920", tmp_path)


def test_an_fc_sglang_builds_wider_is_a_load_error_and_the_advice_proven(cli, one_state):
    draft, verifier = one_state
    code, found = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.6.post1")
    (hit,) = _c020(found)
    assert code == 1 and hit["severity"] == "error"
    assert hit["message"].startswith(
        "sglang==0.5.6.post1's LlamaForCausalLMEagle3 builds fc for 3 hidden states of 2880 "
        "(8640 inputs), but fc.weight [2880, 2880] takes 2880 (eagle_config.use_aux_hidden_state"
        " is false: the head reads the verifier's last hidden state, not aux states; its model "
        "runner does not read the flag (SGLang reads it from 0.5.8))"
    )
    advice = "add num_aux_hidden_states: 1 to config.json and serve it with sglang==0.5.12 or later"
    assert hit["message"].endswith(advice)
    # the advice, applied: the finding goes on that release and no new error comes
    before = {(f["rule"], f["severity"]) for f in found}
    config = json.loads((draft / "config.json").read_text())
    config["num_aux_hidden_states"] = 1
    (draft / "config.json").write_text(json.dumps(config))
    _, after = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.12")
    assert _c020(after) == []
    assert {(f["rule"], f["severity"]) for f in after if f["severity"] == "error"} <= before
    # the window's edge: 0.5.11 does not read num_aux_hidden_states yet
    _, older = _findings(cli, draft, "--verifier", verifier, "--engine", "sglang==0.5.11")
    (old,) = _c020(older)
    assert "its model runner reads the flag and captures no aux state" in old["message"]


@pytest.mark.parametrize(
    ("engine", "refused"),
    [("sglang==0.5.11", True), ("sglang==0.5.12", False), ("sglang==0.5.23", False)],
)
def test_four_aux_layers_under_eagle_config_from_the_release_that_reads_them(
    cli, tmp_path, engine, refused
):
    """An fc for four aux states, the ids under eagle_config: LlamaForCausalLMEagle3 builds
    three up to 0.5.11 and sizes fc from the ids from 0.5.12 (both ends of the window)."""
    ids = {"eagle_aux_hidden_state_layer_ids": [1, 9, 17, 33]}
    draft, _ = corpus.build_report("49-sglang-14920", tmp_path, aux=4, set={"eagle_config": ids})
    _, found = _findings(cli, draft, "--engine", engine)
    said = _c020(found)
    if not refused:
        assert said == []
        return
    (hit,) = said
    assert "fc.weight [2880, 11520] takes 11520" in hit["message"]
    assert "use_aux_hidden_state" not in hit["message"]
    assert hit["message"].endswith(
        "the first covered SGLang release that loads it for this config is sglang==0.5.12"
    )


def test_three_aux_states_load_on_every_release(cli, tmp_path):
    """No false alarm: a three-state fc with its ids loads on every covered release."""
    ids = {"eagle_aux_hidden_state_layer_ids": [1, 17, 33]}
    draft, _ = corpus.build_report("49-sglang-14920", tmp_path, aux=3, set={"eagle_config": ids})
    from spec_format.facts import sglang

    for version in sglang.versions():
        _, found = _findings(cli, draft, "--engine", f"sglang=={version}")
        assert _c020(found) == [], version
