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


# -- arrays: every editor operation with an array as the parent or on the way ----------------
def _methods() -> dict:
    return {"m": [{"k": 0}, {"k": 1}, {"k": 2}], "s": 5}


@pytest.mark.parametrize("i", [0, 1, 2])
def test_remove_takes_an_element_out_of_an_array(i):
    doc = _methods()
    ed = Editor(doc, "t")
    ed.remove(f"/m/{i}", "why", lossy=True)
    assert [e["k"] for e in ed.doc["m"]] == [k for k in (0, 1, 2) if k != i]
    (change,) = ed.changes
    assert (change.pointer, change.before, change.after, change.op, change.lossy) == (
        f"/m/{i}",
        {"k": i},
        ABSENT,
        "remove",
        True,
    )
    assert doc == _methods() and ed.doc["m"] is not doc["m"]  # copied, the input intact


def test_removing_several_elements_last_first_keeps_each_record_right():
    ed = Editor(_methods(), "t")
    for i in (2, 0):
        ed.remove(f"/m/{i}", "why")
    assert ed.doc["m"] == [{"k": 1}]
    assert [(c.pointer, c.before) for c in ed.changes] == [("/m/2", {"k": 2}), ("/m/0", {"k": 0})]


@pytest.mark.parametrize("ptr", ["/m/3", "/m/-", "/m/01", "/m/x", "/m/\u00b2", "/m/3/k", "/s/0"])
def test_removing_what_an_array_does_not_hold_changes_nothing(ptr):
    doc = _methods()
    ed = Editor(doc, "t")
    ed.remove(ptr, "why")
    assert ed.changes == [] and ed.doc["m"] is doc["m"]


@pytest.mark.parametrize(
    ("ptr", "found"),
    [("/m/0/k", 0), ("/m/2", {"k": 2}), ("/m/3", ABSENT), ("/m/01", ABSENT), ("/m/\u00b2", ABSENT)],
)
def test_get_reads_array_elements_by_their_rfc6901_index_only(ptr, found):
    assert Editor(_methods(), "t").get(ptr) == found


def test_remove_inside_an_array_element():
    doc = _methods()
    ed = Editor(doc, "t")
    ed.remove("/m/1/k", "why")
    assert ed.doc["m"] == [{"k": 0}, {}, {"k": 2}] and doc == _methods()
    assert ed.doc["m"][0] is doc["m"][0]  # the elements no edit went into are shared


def test_set_replaces_an_array_element():
    doc = _methods()
    ed = Editor(doc, "t")
    ed.set("/m/1", {"k": 9}, "why")
    assert ed.doc["m"] == [{"k": 0}, {"k": 9}, {"k": 2}] and doc == _methods()
    assert (ed.changes[0].before, ed.changes[0].after, ed.changes[0].op) == (
        {"k": 1},
        {"k": 9},
        "replace",
    )


@pytest.mark.parametrize("ptr", ["/m/3", "/m/-", "/m/01", "/m/x", "/m/3/k", "/m/x/k", "/s/k"])
def test_set_where_no_element_or_object_is_refuses_loudly(ptr):
    """Never a write into a throwaway container recorded as a change."""
    doc = _methods()
    ed = Editor(doc, "t")
    with pytest.raises(ValueError, match="no element|not an object"):
        ed.set(ptr, 1, "why")
    assert ed.changes == [] and doc == _methods()


def test_add_default_into_an_array_element():
    ed = Editor(_methods(), "t")
    ed.add_default("/m/2/new", True, "why")
    ed.add_default("/m/2/k", 7, "present: left alone")
    assert ed.doc["m"][2] == {"k": 2, "new": True} and len(ed.changes) == 1


def test_the_root_cannot_be_edited():
    ed = Editor(_methods(), "t")
    with pytest.raises(ValueError, match="^cannot edit the document root$"):
        ed.set("", {}, "why")


def test_a_problem_keeps_the_severity_and_words_it_is_given():
    ed = Editor({}, "0.1->0.2")
    ed.problem("R002", "own words", pointer="/x", severity="error", lossy=True)
    ed.problem("R002", pointer="/y")  # the rule's template and severity
    given, default = ed.problems
    assert (given.rule, given.message, given.pointer, given.severity, given.step, given.lossy) == (
        "R002",
        "own words",
        "/x",
        "error",
        "0.1->0.2",
        True,
    )
    assert (default.severity, default.lossy, default.pointer) == ("warning", False, "/y")
    assert default.message.startswith("speculators 0.2-0.4 cannot build mlp configs")


def test_set_creates_the_objects_on_its_way_and_copies_each_container_once():
    doc = {"a": {"x": 1}}
    ed = Editor(doc, "t")
    ed.set("/n/m/k", 1, "why", lossy=True)
    assert ed.doc["n"] == {"m": {"k": 1}} and ed.changes[0].lossy is True
    ed.set("/a/y", 2, "why")
    first = ed.doc["a"]
    ed.set("/a/z", 3, "why")
    assert ed.doc["a"] is first and first == {"x": 1, "y": 2, "z": 3} and doc == {"a": {"x": 1}}


def test_get_hands_back_the_default_asked_for():
    ed = Editor({"a": None}, "t")
    assert ed.get("/b", 5) == 5 and ed.get("/a", 5) is None and not ed.has("/b")


@pytest.mark.parametrize(
    ("parts", "ptr"), [(("a/b", "c~d"), "/a~1b/c~0d"), (("~1",), "/~01"), ((0, "x"), "/0/x")]
)
def test_pointers_escape_and_split_back(parts, ptr):
    from spec_format.rewrites.migration.records import pointer, split_pointer

    assert pointer(*parts) == ptr
    assert split_pointer(ptr) == [str(p) for p in parts]


def test_a_pointer_without_its_slash_is_refused():
    from spec_format.rewrites.migration.records import split_pointer

    with pytest.raises(ValueError, match="^not a JSON pointer: 'a/b'$"):
        split_pointer("a/b")


def test_absent_is_falsy_and_says_so():
    assert not ABSENT and repr(ABSENT) == "<absent>"


def test_a_refused_write_is_blamed_on_the_change_at_around_or_inside_the_findings_value():
    from spec_format.rewrites.migration.records import Change
    from spec_format.rewrites.rewrite import _change_at

    removed = Change("fix", "/a", 1, ABSENT, "gone")
    inner = Change("fix", "/b/c", 1, 2, "inner")
    outer = Change("fix", "/d", 1, {"e": 2}, "outer")
    changes = [removed, inner, outer]
    assert _change_at(changes, None) is None
    assert _change_at(changes, "/a") is None  # a removal wrote no value
    assert _change_at(changes, "/b/c") is inner
    assert _change_at(changes, "/b") is inner  # the finding's value holds the change
    assert _change_at(changes, "/d/e") is outer  # the change wrote the value around it
    assert _change_at(changes, "/bb") is None and _change_at(changes, "/b/cc") is None


def test_a_file_results_repr_says_whether_it_changed_and_where_it_went():
    from spec_format.api import fix_files, migrate_files

    (kept,) = fix_files(["examples/llama-3.1-8b-eagle3-0.9"], check=True)
    assert repr(kept) == (
        "<FileResult examples/llama-3.1-8b-eagle3-0.9/config.json: unchanged, not written; "
        "exit code 0>"
    )
    (changed,) = migrate_files(["examples/qwen3-8b-eagle3"], check=True)
    assert repr(changed) == (
        "<FileResult examples/qwen3-8b-eagle3/config.json: changed, not written; exit code 1>"
    )
