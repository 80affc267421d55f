"""Each migration step's edits, off the happy path the release fixtures walk: inputs built
for the branches a step's code takes, with the exact document and change records asserted."""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from spec_format.base.errors import MigrationRefused
from spec_format.cli.app import app
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.rewrites.migration.records import ABSENT
from spec_format.rewrites.migration.steps import v0_2_to_v0_3
from tests.migrate.conftest import FIXTURES, load

V02 = FIXTURES / "0.2/eagle3/llama-3.1-8b-converter-0.2.0.json"
GREEDY = {
    "accept_tolerance": 0.0,
    "proposal_type": "greedy",
    "speculative_tokens": 3,
    "verifier_accept_k": 1,
}
REMOVED = {
    "sampling": {"proposal_type": "sampling", "speculative_tokens": 4, "accept_lenience": 0.5},
    "static_tree": {"proposal_type": "static_tree", "depth": 3, "branching_factor": 2},
    "dynamic_tree": {"proposal_type": "dynamic_tree", "speculative_tokens": 48},
}


def with_methods(methods: list, default: str = "greedy") -> dict:
    doc = load(V02)
    doc["speculators_config"]["proposal_methods"] = copy.deepcopy(methods)
    doc["speculators_config"]["default_proposal_method"] = default
    return doc


# -- 0.2 -> 0.3: the proposal types 0.3 removed -------------------------------------------------
@pytest.mark.parametrize("kind", sorted(REMOVED))
@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("default", ["greedy", "removed"])
def test_a_removed_proposal_type_is_dropped_on_the_way_to_0_3(kind, where, default):
    methods = [REMOVED[kind], GREEDY] if where == "before" else [GREEDY, REMOVED[kind]]
    doc = with_methods(methods, kind if default == "removed" else "greedy")
    before = copy.deepcopy(doc)
    with pytest.raises(MigrationRefused, match="would lose information"):
        migrate(doc, MigrateOptions(to="0.3"))  # loses the method's settings
    result = migrate(doc, MigrateOptions(to="0.3", allow_lossy=True))
    assert doc == before and result.target_errors == []
    spec = result.document["speculators_config"]
    assert spec["proposal_methods"] == [GREEDY] and spec["default_proposal_method"] == "greedy"
    step = [c for c in result.changes if c.step == "0.2->0.3"]
    i = 0 if where == "before" else 1
    expected = [(f"/speculators_config/proposal_methods/{i}", REMOVED[kind], ABSENT, True)]
    if default == "removed":
        expected.append(("/speculators_config/default_proposal_method", kind, "greedy", False))
    assert [(c.pointer, c.before, c.after, c.lossy) for c in step] == expected
    assert [str(x.pointer) for x in result.losses] == [expected[0][0]]
    assert repr(kind) in step[0].why and "removed in 0.3" in step[0].why


def test_every_removed_method_goes_and_each_record_names_the_index_it_had():
    methods = [REMOVED["dynamic_tree"], GREEDY, REMOVED["sampling"], REMOVED["static_tree"]]
    result = migrate(with_methods(methods, "sampling"), MigrateOptions(to="0.9", allow_lossy=True))
    assert result.target_errors == []
    spec = result.document["speculators_config"]
    assert spec["proposal_methods"] == [GREEDY] and spec["default_proposal_method"] == "greedy"
    removed = [(c.pointer, c.before) for c in result.changes if c.op == "remove" and c.lossy]
    assert removed == [  # last first: each pointer is the element's index when it went
        ("/speculators_config/proposal_methods/3", REMOVED["static_tree"]),
        ("/speculators_config/proposal_methods/2", REMOVED["sampling"]),
        ("/speculators_config/proposal_methods/0", REMOVED["dynamic_tree"]),
    ]


def test_without_a_greedy_method_the_upgrade_is_refused():
    doc = with_methods([REMOVED["sampling"], REMOVED["static_tree"]], "sampling")
    with pytest.raises(MigrationRefused, match="no greedy method and 0.3 knows no other"):
        migrate(doc, MigrateOptions(to="0.3", allow_lossy=True))


@pytest.mark.parametrize(
    "methods",
    [
        [GREEDY],
        [GREEDY, {**GREEDY, "speculative_tokens": 5}],
        [GREEDY, "not an object"],  # a non-object entry: no type, left to the schema
    ],
)
def test_the_step_leaves_greedy_only_methods_alone(methods):
    doc = with_methods(methods)
    out = v0_2_to_v0_3.upgrade(doc, None)
    assert out.changes == [] and out.problems == [] and out.document == doc


@pytest.mark.parametrize("methods", [ABSENT, None, {"proposal_type": "sampling"}])
def test_the_step_skips_methods_that_are_no_list(methods):
    doc = load(V02)
    if methods is ABSENT:
        del doc["speculators_config"]["proposal_methods"]
    else:
        doc["speculators_config"]["proposal_methods"] = methods
    out = v0_2_to_v0_3.upgrade(doc, None)
    assert out.changes == [] and out.document == doc


@pytest.mark.parametrize("archs", [None, ["Eagle3Speculator"], [], "Eagle3DraftModel"])
def test_downgrading_0_3_to_0_2_changes_nothing_else(archs):
    doc = with_methods([GREEDY])
    if archs is not None:
        doc["architectures"] = archs
    out = v0_2_to_v0_3.downgrade(doc, None)
    assert out.changes == [] and out.problems == [] and out.document == doc


@pytest.mark.parametrize(
    ("archs", "after"),
    [
        (["Eagle3DraftModel"], ABSENT),
        (["Eagle3DraftModel", "Eagle3DraftModel"], ABSENT),
        (["Other", "Eagle3DraftModel", 7], ["Other", 7]),
    ],
)
def test_the_trainer_class_does_not_go_below_0_3(archs, after):
    """No 0.2 release has Eagle3DraftModel, and the name dates a file to 0.3 or later: left
    in, specfmt would read the 0.2 output as 0.3 (and Eagle3Speculator, 0.2's own class, says
    converter output with a broken decoder layer at 0.2.0: M007)."""
    doc = {**with_methods([GREEDY]), "architectures": archs}
    out = v0_2_to_v0_3.downgrade(doc, None)
    assert out.document.get("architectures", ABSENT) == after
    (change,) = out.changes
    assert (change.step, change.pointer, change.before, change.after, change.lossy) == (
        "0.3->0.2",
        "/architectures",
        archs,
        after,
        False,
    )
    assert change.why.startswith("no 0.2 release has the class Eagle3DraftModel")
    assert change.why.endswith("loads its default") is (after is ABSENT)


def test_the_command_migrates_a_config_with_a_removed_method(tmp_path):
    cfg = tmp_path / "config.json"
    doc = with_methods([REMOVED["static_tree"], GREEDY, REMOVED["sampling"]], "static_tree")
    cfg.write_text(json.dumps(doc))
    runner = CliRunner()
    refused = runner.invoke(app, ["migrate", str(cfg), "--to", "0.3"])
    assert refused.exit_code == 2 and "would lose information" in refused.output
    r = runner.invoke(app, ["migrate", str(cfg), "--to", "0.3", "--allow-lossy"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["speculators_config"]["proposal_methods"] == [GREEDY]
    assert out["speculators_config"]["default_proposal_method"] == "greedy"
    assert out["speculators_version"] == "0.3.0"


# -- the writer's known mistakes are the original's, not the stamped target's ----------------
DEV11 = FIXTURES / "0.1/eagle3/llama-3.1-8b-converter-0.2.0.dev11.json"  # before the window
CONVERTER_020 = V02  # converted by 0.2.0: inside 0.2.0.dev20-0.4.0 (M007)


@pytest.mark.parametrize("target", ["0.3", "0.4", "0.9"])
def test_a_migration_reports_the_mistakes_of_the_build_that_wrote_the_file(target):
    result = migrate(load(CONVERTER_020), MigrateOptions(to=target))
    (m007,) = [p for p in result.problems if p.rule == "M007"]
    assert m007.message.startswith("converted by speculators 0.2.0:"), m007.message


@pytest.mark.parametrize("target", ["0.3", "0.4"])
def test_a_target_release_inside_a_window_is_not_blamed_on_the_file(target):
    """The stamp says 0.3.0/0.4.0 afterwards; the file was converted by 0.2.0.dev11."""
    result = migrate(load(DEV11), MigrateOptions(to=target))
    assert result.document["speculators_version"] == f"{target}.0"
    assert [p.rule for p in result.problems if p.rule.startswith("M")] == []


# -- branches no whole config reaches through migrate (the step functions alone) --------------
from spec_format.rewrites.migration.steps import (  # noqa: E402
    v0_1_to_v0_2,
    v0_5_to_v0_6,
    v0_6_to_v0_7,
    v0_7_to_v0_8,
)


def _edits(out) -> list[tuple]:
    return [(c.pointer, c.before, c.after, c.lossy) for c in out.changes]


def test_a_null_spelling_beside_the_other_is_dropped_not_copied():
    doc = {"speculators_model_type": "eagle3", "torch_dtype": None, "dtype": "bfloat16"}
    out = v0_1_to_v0_2.upgrade(doc, None)
    assert out.document == {
        "speculators_model_type": "eagle3",
        "dtype": "bfloat16",
        "eagle_aux_hidden_state_layer_ids": None,
    }
    assert ("/torch_dtype", None, ABSENT, False) in _edits(out)
    assert not [c for c in out.changes if c.pointer == "/dtype"]


def test_two_different_dtype_spellings_are_a_problem_not_a_choice():
    doc = {"speculators_model_type": "eagle3", "torch_dtype": "float32", "dtype": "bfloat16"}
    out = v0_1_to_v0_2.upgrade(doc, None)
    assert out.document["torch_dtype"] == "float32" and out.document["dtype"] == "bfloat16"
    ((rule, severity, ptr),) = [(p.rule, p.severity, p.pointer) for p in out.problems]
    assert (rule, severity, ptr) == ("X012", "error", "/torch_dtype")


def test_an_mlp_keeps_its_own_torch_dtype_and_is_flagged_on_the_way_up():
    doc = {"speculators_model_type": "mlp", "torch_dtype": "float32"}
    out = v0_1_to_v0_2.upgrade(doc, None)
    assert out.document == doc and out.changes == []
    assert [(p.rule, p.pointer) for p in out.problems] == [("R002", "/torch_dtype")]


def _tlc(**layer) -> dict:
    return {"speculators_model_type": "eagle3", "transformer_layer_config": layer}


@pytest.mark.parametrize(
    ("layer", "params"),
    [
        ({"rope_theta": 5.0}, {"rope_type": "default", "rope_theta": 5.0}),
        (
            {"rope_scaling": {"rope_type": "yarn", "factor": 4.0}},
            {"rope_type": "yarn", "factor": 4.0},
        ),
        (
            {"rope_scaling": {"type": "linear", "factor": 2.0}, "rope_theta": 1.0},
            {"rope_type": "linear", "factor": 2.0, "rope_theta": 1.0},
        ),
        ({"rope_scaling": {"type": "a", "rope_type": "b"}}, {"type": "a", "rope_type": "b"}),
        ({"rope_scaling": None}, {"rope_type": "default"}),
    ],
)
def test_rope_goes_into_rope_parameters(layer, params):
    out = v0_7_to_v0_8.upgrade(_tlc(**layer), None)
    assert out.document["transformer_layer_config"] == {"rope_parameters": params}


@pytest.mark.parametrize(
    "layer",
    [{}, {"hidden_size": 8}, {"rope_parameters": {"rope_theta": 1.0}, "rope_theta": 2.0}],
)
def test_rope_already_in_parameters_or_absent_is_left_alone(layer):
    out = v0_7_to_v0_8.upgrade(_tlc(**layer), None)
    assert out.changes == [] and out.document == _tlc(**layer)


@pytest.mark.parametrize(
    ("params", "layer"),
    [
        ({"rope_type": "default", "rope_theta": 5.0}, {"rope_theta": 5.0, "rope_scaling": None}),
        ({"rope_type": "default"}, {"rope_scaling": None}),  # no theta: none written
        (
            {"rope_type": "yarn", "factor": 4.0, "rope_theta": 9.0},
            {"rope_theta": 9.0, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}},
        ),
        (
            {"rope_type": "linear", "rope_theta": 1.0},
            {"rope_theta": 1.0, "rope_scaling": {"rope_type": "linear"}},
        ),
        # the default type reads no factor: nothing to keep (rope_type default, one key)
        ({"factor": 4.0}, {"rope_scaling": None}),
        (
            {"rope_type": "default", "factor": 2.0},
            {"rope_scaling": {"rope_type": "default", "factor": 2.0}},
        ),
    ],
)
def test_rope_parameters_come_back_as_theta_and_scaling(params, layer):
    out = v0_7_to_v0_8.downgrade(_tlc(rope_parameters=params), None)
    assert out.document["transformer_layer_config"] == layer and out.problems == []


@pytest.mark.parametrize("params", [5, "x", [1]])
def test_rope_parameters_of_no_object_are_a_problem(params):
    out = v0_7_to_v0_8.downgrade(_tlc(rope_parameters=params), None)
    assert out.changes == []
    assert [(p.rule, p.pointer, p.step, p.message) for p in out.problems] == [
        (
            "R004",
            "/transformer_layer_config/rope_parameters",
            "0.8->0.7",
            "/transformer_layer_config/rope_parameters is not an object; fix it by hand",
        )
    ]


@pytest.mark.parametrize("doc", [{"speculators_model_type": "eagle3"}, _tlc(hidden_size=8)])
def test_no_rope_parameters_nothing_to_bring_back(doc):
    assert v0_7_to_v0_8.downgrade(doc, None).changes == []


@pytest.mark.parametrize(
    "spec",
    [
        None,
        "x",
        {"proposal_methods": None},
        {"proposal_methods": []},
        {"proposal_methods": ["x"], "default_proposal_method": "y"},
    ],
)
def test_the_default_method_is_only_repointed_at_a_configured_one(spec):
    doc = {"speculators_model_type": "dflash", "speculators_config": spec}
    out = v0_5_to_v0_6.upgrade(doc, None)
    assert [c.pointer for c in out.changes] == ["/sliding_window_non_causal"]


@pytest.mark.parametrize(("direction", "value"), [("upgrade", "llama"), ("downgrade", "qwen3")])
def test_a_missing_layer_model_type_is_written_as_the_other_side_assumed(direction, value):
    """migrate's explicit pass writes it before any step; a step called alone writes it too."""
    doc = {"speculators_model_type": "eagle3", "transformer_layer_config": {"hidden_size": 8}}
    out = getattr(v0_6_to_v0_7, direction)(doc, None)
    assert out.document["transformer_layer_config"] == {"hidden_size": 8, "model_type": value}
    (change,) = [c for c in out.changes if c.pointer == "/transformer_layer_config/model_type"]
    release = "0.6 and older" if direction == "upgrade" else "0.7 and newer"
    assert change.why == (
        f"without it, {release} builds a {value} layer config by default while the other "
        "side of 0.6/0.7 assumes the other class; write it explicitly"
    )


def test_training_keys_that_are_absent_are_not_removed():
    doc = {"speculators_model_type": "peagle", "num_depths": 8}
    out = v0_6_to_v0_7.upgrade(doc, None)
    removed = [c.pointer for c in out.changes if c.op == "remove"]
    assert removed == ["/num_depths"]


@pytest.mark.parametrize("layer", [None, {}, {"use_sliding_window": True}, {"sliding_window": 8}])
def test_no_sliding_layer_no_problem_going_down(layer):
    doc = {"speculators_model_type": "dflash", "sliding_window_non_causal": True}
    if layer is not None:
        doc["transformer_layer_config"] = layer
    out = v0_5_to_v0_6.downgrade(doc, None)
    assert out.problems == [] and not [c for c in out.changes if c.lossy]


@pytest.mark.parametrize(
    ("tokens", "depths"),
    [(1, 1), (2, 2), (15, 15), (16, 16), (17, 8), (0, 8), (True, 8), ("3", 8), (None, 8)],
)
def test_num_depths_mirrors_speculative_tokens_within_1_to_16(tokens, depths):
    """0.7->0.6 restores num_depths (0.6's field): speculative_tokens where 0.6 allows it,
    else 0.6's default 8; both ends of 1-16 included."""
    doc = {
        "speculators_model_type": "peagle",
        "speculators_config": {"proposal_methods": [{"speculative_tokens": tokens}]},
    }
    out = v0_6_to_v0_7.downgrade(doc, None)
    assert out.document["num_depths"] == depths
    (change,) = [c for c in out.changes if c.pointer == "/num_depths"]
    assert change.why.endswith("(num_depths mirrors speculative_tokens)")


from spec_format.rewrites.migration.steps._common import uses_sliding_window  # noqa: E402


@pytest.mark.parametrize(
    ("layer", "sliding"),
    [
        ({"layer_types": ["full_attention", "sliding_attention"]}, True),  # the list alone
        (
            {"layer_types": ["full_attention"], "use_sliding_window": True, "sliding_window": 8},
            True,
        ),
        ({"use_sliding_window": True, "sliding_window": 8}, True),  # the flag and a window
        ({"use_sliding_window": True, "sliding_window": None}, False),
        ({"use_sliding_window": False, "sliding_window": 8}, False),
        ({"layer_types": "sliding_attention"}, False),  # no list
        ({}, False),
        (None, False),
    ],
)
def test_what_counts_as_a_sliding_window_layer(layer, sliding):
    assert uses_sliding_window(layer) is sliding


def test_a_layer_config_of_no_object_is_left_to_the_schema():
    for step in (v0_1_to_v0_2, v0_5_to_v0_6, v0_6_to_v0_7, v0_7_to_v0_8):
        for direction in ("upgrade", "downgrade"):
            doc = {"speculators_model_type": "dflash", "transformer_layer_config": "x"}
            out = getattr(step, direction)(doc, None)
            assert out.document["transformer_layer_config"] == "x" and out.problems == []


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        # only the layer config spells it: it is respelled there (the top level has none)
        (
            {"transformer_layer_config": {"torch_dtype": "float16"}},
            {"transformer_layer_config": {"dtype": "float16"}},
        ),
        ({"torch_dtype": None}, {"dtype": None}),  # null alone: kept as the new spelling
    ],
)
def test_dtype_is_respelled_where_it_is(doc, expected):
    doc = {"speculators_model_type": "eagle3", **doc}
    out = v0_1_to_v0_2.upgrade(doc, None)
    del out.document["eagle_aux_hidden_state_layer_ids"]
    assert out.document == {"speculators_model_type": "eagle3", **expected}


def test_two_dtype_spellings_in_the_layer_config_are_named_there():
    doc = {
        "speculators_model_type": "eagle3",
        "transformer_layer_config": {"torch_dtype": "float32", "dtype": "bfloat16"},
    }
    out = v0_1_to_v0_2.upgrade(doc, None)
    ((pointer, message),) = [(p.pointer, p.message) for p in out.problems]
    assert pointer == "/transformer_layer_config/torch_dtype"
    assert message.startswith(
        "/transformer_layer_config/torch_dtype is 'float32' but "
        "/transformer_layer_config/dtype is 'bfloat16'; transformers refuses"
    )


from spec_format.rewrites.migration.steps import v0_4_to_v0_5  # noqa: E402


@pytest.mark.parametrize(("model_type", "kept"), [("eagle3", False), ("independent", True)])
def test_a_top_level_model_type_goes_on_the_way_to_0_4_except_for_independent(model_type, kept):
    """An independent draft is a plain transformers config: its model_type is its own."""
    doc = {"speculators_model_type": model_type, "model_type": "llama"}
    out = v0_4_to_v0_5.downgrade(doc, None)
    assert ("model_type" in out.document) is kept
    assert [c.pointer for c in out.changes] == ([] if kept else ["/model_type"])


@pytest.mark.parametrize(
    ("version", "removed"),
    [
        ("5.6.2", True),
        ("5", True),
        ("12.0.0", True),
        ("4.57.1", False),
        ("4", False),
        ("v5.0", False),
        ("99999.0", False),
        ("", False),
        (5, False),
        (None, False),
    ],
)
def test_a_transformers_5_version_goes_on_the_way_to_0_4(version, removed):
    """Every release up to 0.4 ran on transformers 4: a later version dates the file."""
    doc = {"speculators_model_type": "eagle3", "transformers_version": version}
    out = v0_4_to_v0_5.downgrade(doc, None)
    assert ("transformers_version" in out.document) is not removed
    assert [(c.pointer, c.lossy) for c in out.changes] == (
        [("/transformers_version", False)] if removed else []
    )
    if removed:
        assert out.changes[0].why == (
            f"every release up to 0.4 ran on transformers 4; transformers {version} dates the "
            "file to 0.5 or later"
        )


def test_a_conflict_at_the_top_level_does_not_stop_the_layer_config_respelling():
    doc = {
        "speculators_model_type": "eagle3",
        "torch_dtype": "float32",
        "dtype": "bfloat16",
        "transformer_layer_config": {"torch_dtype": "float16"},
    }
    out = v0_1_to_v0_2.upgrade(doc, None)
    assert out.document["transformer_layer_config"] == {"dtype": "float16"}
    assert [p.pointer for p in out.problems] == ["/torch_dtype"]
