"""SGLang's serving facts (schema/readers/sglang/sglang.json) against every covered release's
wheel: scripts/sglang-facts.py --check rebuilds each release's registry and classes from the
wheel's own source and compares with the table, and the facts the rules state are spot
checked against the sources they come from."""

from __future__ import annotations

import zipfile

import pytest

from spec_format.facts import sglang
from tests.common import ROOT, load_script

pytestmark = pytest.mark.readers

script = load_script(ROOT / "scripts" / "sglang-facts.py")


def test_table_matches_every_release_wheel():
    assert script.main(["--check"]) == 0


@pytest.mark.parametrize("version", [sglang.versions()[0], "0.5.7", sglang.versions()[-1]])
def test_runner_calls_the_capture_method_the_table_asks_about(version):
    """The model runner of the release calls the method the table records per class."""
    with zipfile.ZipFile(script.wheel(version)) as zf:
        runner = "\n".join(
            zf.read(n).decode()
            for n in zf.namelist()
            if n.startswith("sglang/srt/model_executor/") and n.endswith(".py")
        )
    assert ".set_eagle3_layers_to_capture(" in runner


def test_reported_gap_is_in_the_table():
    """sgl-project/sglang#17935: Qwen3VLMoeForConditionalGeneration has no EAGLE-3 capture in
    0.5.7; Qwen3MoeForCausalLM has it."""
    assert sglang.captures("0.5.7", "Qwen3VLMoeForConditionalGeneration", "eagle3") is False
    assert sglang.captures("0.5.7", "Qwen3MoeForCausalLM", "eagle3") is True
    assert not any(sglang.reads_speculators(v) for v in sglang.versions())


def test_reported_head_gap_is_in_the_table():
    """sgl-project/sglang#27908: a draft declaring draft_vocab_size, untied, gets a fresh head
    (the fix was closed unmerged); without draft_vocab_size it gets the verifier's from 0.5.2
    (sgl-project/sglang#9739, nvidia/gpt-oss-120b-Eagle3)."""
    cls = "LlamaForCausalLMEagle3"
    newest = sglang.versions()[-1]
    assert sglang.eagle3_head(newest, cls, False, True) == "fresh"
    assert sglang.eagle3_head("0.5.1.post3", cls, False, False) == "fresh"
    assert sglang.eagle3_head("0.5.2", cls, False, False) == "target"
    assert sglang.eagle3_head(newest, cls, True, True) == "embed"
