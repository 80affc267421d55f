"""fix and migrate never turn a question only the training run can answer into a silent
config (issue 20, class 5): validate before and after, on every example and fixture, and
every question asked before is still asked after, at least as loudly."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import EXAMPLES, INVALID, RELEASES, ROOT, VALID, load_case

from spec_format.base.errors import SpecfmtError
from spec_format.facts import catalog, questions
from spec_format.rewrites.fixing import FixOptions, fix
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.runner.validation import ValidateOptions, validate_config

CASES = [p / "config.json" for p in EXAMPLES] + VALID + INVALID + RELEASES
ASKED: list[str] = []  # cases that asked a question (a guard that the loop is not vacuous)


def _verifier(config: dict) -> dict:
    """A verifier as the draft names it, with a layer count that fits its aux ids (36, as
    Qwen3-8B, when it has none): enough for fix to know the readers' default layers."""
    tlc = config.get("transformer_layer_config")
    tlc = tlc if isinstance(tlc, dict) else {}
    aux = config.get(catalog.aux_key(str(config.get("speculators_model_type"))) or "")
    ids = [i for i in aux if isinstance(i, int)] if isinstance(aux, list) else []
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": tlc.get("hidden_size", 4096),
        "num_hidden_layers": max([36, *(i + 4 for i in ids)]),
        "vocab_size": tlc.get("vocab_size", 151936),
    }


def _asked(config: dict, options: dict) -> dict:
    report = validate_config(copy.deepcopy(config), ValidateOptions(**options))
    return questions.asked(report.findings, config.get("speculators_model_type"))


def _rewrites(config: dict):
    verifier = _verifier(config)
    yield "fix", lambda d: fix(d, FixOptions())
    yield "fix --verifier", lambda d: fix(d, FixOptions(verifier=verifier))
    yield "migrate", lambda d: migrate(d, MigrateOptions(allow_lossy=True))
    yield (
        "migrate --verifier",
        lambda d: migrate(d, MigrateOptions(allow_lossy=True, verifier=verifier)),
    )


@pytest.mark.parametrize("case", CASES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fix_and_migrate_keep_every_training_question(case):
    config, options = load_case(case), {}
    if case in INVALID:
        config, options = config["config"], config.get("options", {})
    if not isinstance(config, dict) or not isinstance(config.get("speculators_model_type"), str):
        pytest.skip("not a speculators config: nothing to rewrite")
    before = _asked(config, options)
    if before:
        ASKED.append(case.name)
    for name, run in _rewrites(config):
        try:
            after = run(copy.deepcopy(config)).document
        except SpecfmtError:
            continue  # refused: nothing written
        lost = questions.unanswered(before, _asked(after, options))
        assert not lost, f"{name} silenced {lost}: {json.dumps(after)[:200]}"


def test_the_loop_met_questions():
    """Runs after the cases: the releases and fixtures ask training questions (the 0.2
    converter's absent aux ids among them), so the check above is not vacuous."""
    if not ASKED:
        pytest.skip("run with the parametrized cases")
    assert "llama-3.1-8b-converter-0.2.0.json" in ASKED and len(ASKED) >= 5, ASKED


def test_the_question_of_the_aux_layers_survives_fix_with_a_verifier():
    case = ROOT / "tests/fixtures/releases/0.2/eagle3/llama-3.1-8b-converter-0.2.0.json"
    config = load_case(case)
    before = _asked(config, {})
    assert ("C001", "/eagle_aux_hidden_state_layer_ids") in before
    result = fix(copy.deepcopy(config), FixOptions(verifier=_verifier(config)))
    assert [p.rule for p in result.problems if p.pointer == "/eagle_aux_hidden_state_layer_ids"]
    assert ("C001", "/eagle_aux_hidden_state_layer_ids") in _asked(result.document, {})
    # the user's answer is written, and then the question is answered
    answered = fix(copy.deepcopy(config), FixOptions(aux_layer_ids=(2, 16, 29)))
    assert answered.document["eagle_aux_hidden_state_layer_ids"] == [2, 16, 29]
    assert not _asked(answered.document, {})
