"""The step editor copies only what it writes: the input is never changed, the parts no edit
went into are shared, and each change record keeps the value it wrote."""

from __future__ import annotations

import copy

import pytest

from spec_format.base.jsoncopy import same_json
from spec_format.rewrites.fixing import fix
from spec_format.rewrites.migration import migrate
from spec_format.rewrites.migration.records import ABSENT, Editor
from spec_format.rewrites.rewrite import Outcome
from spec_format.testing.builder import tiny_config


def _doc() -> dict:
    return {
        "a": {"b": {"c": 1}, "big": list(range(1000))},
        "methods": [{"k": 1}, {"k": 2}],
        "other": {"x": [1, 2]},
    }


def test_an_edit_copies_its_path_and_shares_the_rest():
    doc = _doc()
    before = copy.deepcopy(doc)
    ed = Editor(doc, "t")
    ed.set("/a/b/c", 2, "why")
    ed.set("/methods/1/k", 3, "why")
    ed.remove("/other/x", "why")
    assert doc == before  # the input as it was
    assert ed.doc["a"]["b"]["c"] == 2 and ed.doc["methods"][1]["k"] == 3
    assert "x" not in ed.doc["other"]
    assert ed.doc["a"]["big"] is doc["a"]["big"]  # untouched: shared, not copied
    assert ed.doc["methods"][0] is doc["methods"][0]
    assert ed.doc["a"] is not doc["a"] and ed.doc["methods"] is not doc["methods"]


def test_edits_that_change_nothing_copy_nothing():
    doc = _doc()
    ed = Editor(doc, "t")
    ed.set("/a/b/c", 1, "same value")
    ed.remove("/a/b/missing", "absent")
    ed.remove("/nowhere/at/all", "absent")
    assert ed.changes == [] and ed.doc["a"] is doc["a"] and "nowhere" not in ed.doc


def test_a_type_change_is_an_edit():
    ed = Editor({"flag": True}, "t")
    ed.set("/flag", 1, "int, not bool")
    assert type(ed.doc["flag"]) is int and ed.changes[0].before is True


def test_a_record_keeps_the_value_it_wrote_when_a_later_step_edits_into_it():
    first = Editor({"a": 1}, "one")
    given = {"inner": {"v": 1}}
    first.set("/obj", given, "added")
    given["inner"]["v"] = 99  # the caller's value changes after: the document does not
    second = Editor(first.doc, "two")
    second.set("/obj/inner/v", 2, "edited")
    assert first.changes[0].after == {"inner": {"v": 1}} and first.doc["obj"]["inner"]["v"] == 1
    assert second.doc["obj"]["inner"]["v"] == 2


@pytest.mark.parametrize("rewrite", [migrate, fix])
def test_a_handed_over_input_is_left_as_it_was_and_shared(rewrite):
    doc = tiny_config("eagle3")
    doc["speculators_config"]["proposal_methods"] *= 50
    doc["eagle_aux_hidden_state_layer_ids"] = list(range(5000))
    before = copy.deepcopy(doc)
    result = rewrite(doc, share_input=True)
    assert same_json(doc, before)
    aux = "eagle_aux_hidden_state_layer_ids"
    assert result.document[aux] is doc[aux]  # not copied: no edit went into it
    assert (
        result.document["speculators_config"]["proposal_methods"][0]
        is (doc["speculators_config"]["proposal_methods"][0])
    )


@pytest.mark.parametrize("rewrite", [migrate, fix])
def test_by_default_the_result_shares_nothing_with_the_callers_dict(rewrite):
    doc = tiny_config("eagle3")
    result = rewrite(doc)
    result.document["transformer_layer_config"]["hidden_size"] = -1
    assert doc["transformer_layer_config"]["hidden_size"] != -1


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (1, 1.0, False),
        (1, True, False),
        (0.0, -0.0, False),
        ({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, True),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),  # key order is not content
        ({"a": [1]}, {"a": [1.0]}, False),
        ({"a": 1}, {"a": 1, "b": ABSENT}, False),
    ],
)
def test_same_json_compares_as_the_written_text_does(a, b, same):
    assert same_json(a, b) is same


def test_a_changed_type_is_a_change_of_the_file(tmp_path):
    text = '{"a": true}\n'
    unchanged = Outcome(
        tmp_path / "c.json", text, '{\n  "a": true\n}\n', documents=({"a": True}, {"a": True})
    )
    changed = Outcome(
        tmp_path / "c.json", text, '{\n  "a": 1\n}\n', documents=({"a": True}, {"a": 1})
    )
    assert (unchanged.changed, unchanged.formatting_only) == (False, True)
    assert (changed.changed, changed.formatting_only) == (True, False)
