"""`validate --engine vllm==X` on an EAGLE-3 checkpoint vLLM reads as it is (SafeAILab /
SpecForge layout, no speculators config): whether the release's Eagle3LlamaForCausalLM builds
``fc`` for as many hidden states as the checkpoint's ``fc.weight`` takes, from the facts
executed from every release's own ``__init__`` (schema/readers/native/vllm.json). The windows'
edges are the releases where what vLLM reads changed: 0.12.0 reads
``eagle_config.use_aux_hidden_state`` (no fc, ``fc.*`` skipped), 0.22.0 sizes fc from the ids
under ``eagle_config``."""

from __future__ import annotations

import json

import pytest

from spec_format.facts import vllm_native
from tests.failures import corpus


def _native_c020(cli, draft, verifier, engine):
    result = cli("validate", draft, "--verifier", verifier, "--engine", engine, "-f", "json")
    assert "Traceback" not in result.output
    found = json.loads(result.stdout)["files"][0]["findings"]
    return [
        f
        for f in found
        if f["rule"] == "C020"
        and f.get("tensor") == "fc.weight"
        and not f["message"].startswith("as converted")
    ]


def _build(tmp_path, aux: int, eagle_config: dict):
    return corpus.build_report(
        "12-vllm-27688", tmp_path, aux=aux, set={"eagle_config": eagle_config}
    )


@pytest.mark.parametrize(
    ("engine", "fails"),
    [("vllm==0.11.0", True), ("vllm==0.11.2", True), ("vllm==0.12.0", False)],
)
def test_a_head_without_aux_states_before_vllm_read_the_flag(cli, tmp_path, engine, fails):
    """vllm-project/vllm#27688: nvidia/gpt-oss-120b-Eagle3-v2 (use_aux_hidden_state false,
    fc.weight for one state) cannot load before 0.12.0, which builds no fc and skips it."""
    draft, verifier = _build(tmp_path, 1, {"use_aux_hidden_state": False})
    said = _native_c020(cli, draft, verifier, engine)
    if not fails:
        assert said == []
        return
    (hit,) = said
    assert hit["severity"] == "error"
    assert hit["message"] == (
        f"{engine}'s LlamaForCausalLMEagle3 builds fc for 3 hidden states of 2880 (8640 "
        "inputs), but fc.weight [2880, 2880] takes 2880 (eagle_config.use_aux_hidden_state is "
        "false: the head reads the verifier's last hidden state, not aux states; this release "
        "does not read the flag; vLLM reads it from 0.12.0, builds no fc and skips fc.weight): "
        f"load_weights fails on its shape ({_shape_error(engine)}); the first covered vLLM "
        "release that loads it for this config is vllm==0.12.0"
    )


def _shape_error(engine: str) -> str:
    """How the release's load fails on a shape: the reader table's words (executed there)."""
    from spec_format.facts import disputes

    (release,) = disputes.parse_engines([engine])
    return release.data["models"]["eagle3"]["weights"]["shape_error"]


@pytest.mark.parametrize(
    ("engine", "fails"),
    [("vllm==0.15.0", True), ("vllm==0.21.0", True), ("vllm==0.22.0", False)],
)
def test_four_aux_ids_under_eagle_config_from_the_release_that_reads_them(
    cli, tmp_path, engine, fails
):
    draft, verifier = _build(tmp_path, 4, {"eagle_aux_hidden_state_layer_ids": [1, 9, 17, 33]})
    said = _native_c020(cli, draft, verifier, engine)
    if not fails:
        assert said == []
        return
    (hit,) = said
    assert "fc.weight [2880, 11520] takes 11520" in hit["message"]
    assert "use_aux_hidden_state" not in hit["message"]
    assert hit["message"].endswith("loads it for this config is vllm==0.22.0")


def test_a_three_state_head_loads_on_every_release(cli, tmp_path):
    """No false alarm: three aux ids and an fc for three states, on every covered release."""
    draft, verifier = _build(tmp_path, 3, {"eagle_aux_hidden_state_layer_ids": [1, 17, 33]})
    engines = [f"vllm=={v}" for v in vllm_native.versions()]
    result = cli(
        "validate",
        draft,
        "--verifier",
        verifier,
        *(x for e in engines for x in ("--engine", e)),
        "-f",
        "json",
    )
    found = json.loads(result.stdout)["files"][0]["findings"]
    assert [f for f in found if f["rule"] == "C020"] == []


def test_the_native_table_covers_the_reader_table():
    """Every vLLM release of the reader table is in the native table (add-release writes both)."""
    from spec_format.facts import readers

    named = [r.split("==", 1)[1] for r in readers.releases() if r.startswith("vllm==")]
    assert list(vllm_native.versions()) == named


@pytest.mark.parametrize(
    "eagle_config",
    [
        {"eagle_aux_hidden_state_layer_ids": "1,2,3"},
        {"eagle_aux_hidden_state_layer_ids": []},
        {"eagle_aux_hidden_state_layer_ids": None, "use_aux_hidden_state": "no"},
        ["use_aux_hidden_state"],
        None,
    ],
)
@pytest.mark.parametrize(
    "top", [{}, {"num_aux_hidden_states": True}, {"num_aux_hidden_states": -2}]
)
def test_odd_values_get_findings_not_a_traceback(cli, tmp_path, eagle_config, top):
    """What the engines size fc from, spelled wrong: the default count is assumed, no crash."""
    draft, _ = corpus.build_report(
        "12-vllm-27688", tmp_path, aux=3, set={**top, "eagle_config": eagle_config}
    )
    from spec_format.facts import sglang

    newest = (f"vllm=={vllm_native.versions()[-1]}", f"sglang=={sglang.versions()[-1]}")
    result = cli("validate", draft, "--engine", newest[0], "--engine", newest[1])
    assert result.exit_code in (0, 1) and "Traceback" not in result.output
    assert "C020" not in result.output  # three states, as every release builds by default
