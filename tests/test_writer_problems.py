"""facts/writers.py: the known writer problems of a config are the same whether they come
from the memo (one computation per combination of the values read) or are worked out
directly, for every shape of those values."""

from __future__ import annotations

import copy
import itertools

from spec_format.facts import writers
from spec_format.testing.builder import tiny_config

VERSIONS = [None, "0.3.0", "0.3.0.dev40", "0.2.0.dev25", "0.5.0.dev5", "0.5.0.dev20", "bad", 3]
ARCHS = [
    None,
    ["Eagle3Speculator"],
    ["Eagle3DraftModel"],
    ["Eagle3DraftModel", 1],
    "x",
    [],
    ["Eagle3Speculator"] * 9,  # longer than the memo keeps
    ["Eagle3DraftModel", "x" * 200],
]
VERIFIER = [None, [], ["LlamaForCausalLM"], ["Qwen3ForCausalLM"], [None], {"a": 1}]
AUX = [None, [2, 4, 5], "absent"]


def _docs():
    for model_type in ("eagle3", "dflash"):
        base = tiny_config(model_type)
        for version, archs, verifier, aux in itertools.product(VERSIONS, ARCHS, VERIFIER, AUX):
            doc = copy.deepcopy(base)
            doc["speculators_version"] = version
            doc["architectures"] = archs
            doc["speculators_config"]["verifier"]["architectures"] = verifier
            if aux == "absent":
                doc.pop("eagle_aux_hidden_state_layer_ids", None)
            else:
                doc["eagle_aux_hidden_state_layer_ids"] = aux
            yield doc
    yield {"speculators_model_type": "eagle3", "speculators_config": "not an object"}
    yield {"speculators_model_type": ["eagle3"], "speculators_version": "0.3.0.dev40"}
    yield {"speculators_model_type": "eagle3", "speculators_version": "0.3.0.dev40" + "0" * 200}


def test_the_memo_keeps_no_long_text():
    doc = tiny_config("eagle3")
    doc["architectures"] = ["Eagle3DraftModel", "y" * 10_000]
    writers._known_problems_of.cache_clear()
    writers.known_problems(doc)
    assert writers._known_problems_of.cache_info().currsize == 0


def test_the_memo_gives_what_the_direct_computation_gives():
    rules = set()
    for doc in _docs():
        before = copy.deepcopy(doc)
        found = writers.known_problems(doc)
        assert found == writers._known_problems(doc), doc
        assert doc == before  # nothing written into the config
        found.append("a caller's own")  # a fresh list: the memo keeps its own
        assert writers.known_problems(doc) == writers._known_problems(doc)
        rules.update(p.rule for p in writers._known_problems(doc))
    assert rules == {"C006", "R001", "M007", "M008"}  # every problem kind was reached
