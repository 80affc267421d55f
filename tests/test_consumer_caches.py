"""The per-config answers the consumer rules keep (disputes, unread flags) are keyed by exactly
the values they read: configs that differ only in a value's type (``1``, ``1.0``, ``true``),
in null against absent, or in the items of a list never share an answer, and every cached
answer is the one worked out afresh. The misspelling walk finds the objects the pointers name,
however odd the shapes around them."""

from __future__ import annotations

import copy

import pytest

from spec_format.facts import disputes, misspell, readers, unread
from spec_format.testing.builder import tiny_config

VLLM = readers.release("vllm", "0.33.0")
OLD_VLLM = readers.release("vllm", "0.20.0")


def _variants(base: dict, field: str, values: list) -> list[dict]:
    out = []
    for value in values:
        config = copy.deepcopy(base)
        if value is _ABSENT:
            config.pop(field, None)
        else:
            config[field] = value
        out.append(config)
    return out


_ABSENT = object()
#: values equal under ``==`` (or alike in shape) that a reader may read differently
LOOK_ALIKES = [True, 1, 1.0, False, 0, 0.0, -0.0, None, _ABSENT, "true", [], [1], [True], [1.0], {}]


def test_values_key_tells_apart_what_equality_does_not():
    key = disputes.ValuesKey(("a", "b"))
    configs = _variants({"b": 2}, "a", LOOK_ALIKES)
    keys = [key(c) for c in configs]
    assert None not in keys
    assert len(set(keys)) == len(configs)  # no two of them share a key
    assert [key(copy.deepcopy(c)) for c in configs] == keys  # equal configs: equal keys
    assert key({"a": [1, 2, {"x": [True]}]}) != key({"a": [1, 2, {"x": [1]}]})
    # values marshal does not write (a Python caller's objects) are keyed another way
    odd = [{"a": object()}, {"a": [object()]}, {"a": (1,)}, {"a": [1, (True,)]}]
    assert len({key(c) for c in odd} | set(keys)) == len(odd) + len(keys)


def test_values_key_refuses_values_too_many_to_key_by():
    key = disputes.ValuesKey(("a",))
    assert key({"a": list(range(10_000))}) is None
    assert key({"a": [[i] for i in range(600)]}) is None
    assert key({"a": list(range(100))}) is not None


@pytest.mark.parametrize(
    ("model_type", "line", "field"),
    [
        ("eagle3", "0.9", "norm_before_residual"),
        ("eagle3", "0.9", "eagle_aux_hidden_state_layer_ids"),
        ("dflash", "0.9", "sliding_window_non_causal"),
        ("dspark", "0.7", "sample_from_anchor"),
    ],
)
def test_cached_disputes_and_unread_flags_are_the_fresh_answers(model_type, line, field):
    base = tiny_config(model_type)
    writer = disputes.writer_of(line)
    values = [*LOOK_ALIKES, [2, 3, 4], [2, 3], ["2", 3, 4]]
    for engines in ((VLLM,), (OLD_VLLM, VLLM), [VLLM]):
        # each config twice, so the second asks the cache of the first
        for config in _variants(base, field, values) * 2:
            got = disputes.disputes(config, model_type, writer, engines)
            contested = disputes._plan_for(writer, engines, model_type)[1]
            assert got == list(disputes._disputes(config, model_type, writer, contested))
            flags = unread.trained_flags_unread(config, model_type, writer, engines)
            ignored = disputes.ignored_fields(model_type, tuple(engines))
            assert flags == unread._unread(config, model_type, writer, ignored)


def test_the_layer_kinds_are_part_of_a_scoped_fields_key():
    """DFlash causality applies per layer: same value, other layers, another answer."""
    writer = disputes.writer_of("0.9")
    answers = set()
    for kinds in (["full_attention"] * 2, ["sliding_attention", "full_attention"]):
        config = tiny_config("dflash")
        config["sliding_window_non_causal"] = False
        config["transformer_layer_config"].update(
            layer_types=kinds, num_hidden_layers=2, use_sliding_window=True, sliding_window=4
        )
        found = disputes.disputes(config, "dflash", writer, (VLLM,))
        answers.add(tuple((d.field, d.describe()) for d in found))
    assert len(answers) == 2


def test_misspellings_are_found_in_odd_shapes_of_the_objects():
    config = tiny_config("eagle3")
    spec = config["speculators_config"]
    spec["verifier"]["name_or_pat"] = "x"
    spec["proposal_methods"] = [{"proposal_typ": "greedy"}, 3, {"speculative_token": 2}]
    found = {m.pointer for m in misspell.find(config, "eagle3", "0.9")}
    assert found == {
        "/speculators_config/verifier/name_or_pat",
        "/speculators_config/proposal_methods/0/proposal_typ",
        "/speculators_config/proposal_methods/2/speculative_token",
    }
    spec["proposal_methods"] = {"*": {"proposal_typ": "greedy"}}  # an object, not a list
    spec["verifier"] = ["name_or_pat"]
    assert [m.pointer for m in misspell.find(config, "eagle3", "0.9")] == [
        "/speculators_config/proposal_methods/*/proposal_typ"
    ]
    config["speculators_config"] = None
    config["fc_nrom"] = True
    assert [m.pointer for m in misspell.find(config, "eagle3", "0.9")] == ["/fc_nrom"]


def test_per_table_answers_are_the_uncached_ones():
    """The facts rules ask per config that depend only on the table and a type or a release
    (readers.per_table) are what working them out afresh gives, for every type and engine."""
    from spec_format.facts import catalog
    from spec_format.rules import engines

    types = [*catalog.known_types(), "no-such-type"]
    assert disputes.assumed_engines() == disputes.assumed_engines.uncached()
    assert disputes.assumed_engines() is disputes.assumed_engines()  # one tuple per table
    for model_type in types:
        assert unread._layer_field_names(model_type) == unread._layer_field_names.uncached(
            model_type
        )
        for name in ("vllm", "sglang", "speculators"):
            assert readers.serving(name, model_type) == readers.serving.uncached(name, model_type)
        for engine in disputes.assumed_engines():
            args = (engine.name, engine.representative, model_type)
            assert engines._last_serving_before(*args) == engines._last_serving_before.uncached(
                *args
            )
    for name in ("vllm", "speculators", "none"):
        assert readers.covered_range(name) == readers.covered_range.uncached(name)


def test_per_table_starts_afresh_with_a_reloaded_table(monkeypatch):
    calls = []

    @readers.per_table
    def asked(x):
        calls.append(x)
        return [x]

    assert asked("a") == ["a"] and asked("a") == ["a"] and calls == ["a"]
    assert asked(["unhashable"]) == [["unhashable"]] and asked(["unhashable"])
    assert calls == ["a", ["unhashable"], ["unhashable"]]  # asked each time, not kept
    ids = readers.releases()
    reloaded = dict(readers._load())  # a reloaded table: its own answers and its own order
    monkeypatch.setattr(readers, "_load", lambda: reloaded)
    assert asked("a") == ["a"] and calls[-1] == "a" and len(calls) == 4
    assert readers.releases() == ids
    assert readers.releases() is not readers.releases()  # a caller's list to change
