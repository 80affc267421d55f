"""The plan runner (rules/base.py run_plan) against the explaining path (run_rule): a check
may return its hits as a list or tuple, or yield them; either way the findings, their order
and the per-rule cap are the same."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from spec_format.base.report import MAX_FINDINGS_PER_RULE, Finding, Severity
from spec_format.rules.base import (
    FINDING_FIELDS,
    Context,
    Hit,
    Layer,
    Profile,
    Rule,
    plan_of,
    run_plan,
    run_rule,
)


def _rule(rule_id: str, produce) -> type[Rule]:
    return type(
        f"Rule{rule_id}",
        (Rule,),
        {
            "__doc__": "Made by the test.",
            "id": rule_id,
            "name": f"made-{rule_id.lower()}",
            "layer": Layer.CROSS_FIELD,
            "severity": Severity.WARNING,
            "legacy_severity": Severity.INFO,
            "since": "0.1.0",
            "check": lambda self, ctx: produce(ctx),
        },
    )


def _hits(n: int) -> list[Hit]:
    return [
        Hit(
            f"hit {i}" + ("é" if i % 3 == 0 else ""),
            pointer=f"/k/{i}",
            file="other.json" if i % 4 == 1 else ("" if i % 4 == 2 else None),
            command=("specfmt", "fix", str(i)) if i % 2 else None,
        )
        for i in range(n)
    ]


def _context() -> Context:
    return Context(
        config={"transformer_layer_config": {"vocab_size": 8}},
        config_path=Path("some/config.json"),
        model_type="eagle3",
        format_version="0.9",
    )


SHAPES = {
    "list": lambda hits: lambda ctx: list(hits),
    "tuple": lambda hits: lambda ctx: tuple(hits),
    "generator": lambda hits: lambda ctx: (h for h in hits),
}
COUNTS = [0, 1, 2, MAX_FINDINGS_PER_RULE, MAX_FINDINGS_PER_RULE + 1, MAX_FINDINGS_PER_RULE + 7]


@pytest.mark.parametrize("profile", list(Profile))
@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_plan_gives_run_rules_findings_for_every_shape_of_result(shape, count, profile):
    rule = _rule("X990", SHAPES[shape](_hits(count)))
    expected = run_rule(rule, _context(), profile)
    found: list = []
    run_plan(plan_of([rule]), _context(), profile, found)
    assert found == expected
    assert len(found) == min(count, MAX_FINDINGS_PER_RULE + 1)
    if count > MAX_FINDINGS_PER_RULE:
        assert found[-1].message.startswith(f"{count - MAX_FINDINGS_PER_RULE:,} more X990")
    # the same findings whatever shape the check returns them in
    for other in SHAPES:
        again: list = []
        run_plan(plan_of([_rule("X990", SHAPES[other](_hits(count)))]), _context(), profile, again)
        assert again == found
    files = {f.file for f in found[:MAX_FINDINGS_PER_RULE]}
    assert files <= {"other.json", str(Path("some/config.json"))}


def test_rules_run_in_plan_order_and_nothing_found_appends_nothing():
    rules = [
        _rule("X991", lambda ctx: ()),
        _rule("X992", lambda ctx: [Hit("b")]),
        _rule("X993", lambda ctx: iter(())),
        _rule("X994", lambda ctx: (Hit("d1"), Hit("d2"))),
        _rule("X995", lambda ctx: []),
    ]
    found: list = ["already there"]
    run_plan(plan_of(rules), _context(), Profile.STRICT, found)
    assert found[0] == "already there"
    assert [(f.rule, f.message, f.severity) for f in found[1:]] == [
        ("X992", "b", Severity.ERROR),
        ("X994", "d1", Severity.ERROR),
        ("X994", "d2", Severity.ERROR),
    ]


def test_long_and_non_ascii_text_is_bounded_as_rule_finding_bounds_it():
    long = "x" * 5000
    lone = "bad \udc80 surrogate"
    rule = _rule("X996", lambda ctx: [Hit(long, pointer="/" + "p" * 400), Hit(lone, pointer=lone)])
    found: list = []
    run_plan(plan_of([rule]), _context(), Profile.CURRENT, found)
    direct = [
        rule.finding(long, "some/config.json", pointer="/" + "p" * 400),
        rule.finding(lone, "some/config.json", pointer=lone),
    ]
    assert found == direct
    assert "characters left out" in found[0].message and len(found[0].pointer) < 400
    assert "\\udc80" in found[1].message and "\\udc80" in found[1].pointer


def test_the_context_views_are_worked_out_once_and_match_the_config():
    config = {
        "speculators_config": {"proposal_methods": [{"proposal_type": "greedy"}, 3, None]},
        "transformer_layer_config": [1],
    }
    ctx = Context(config=config, config_path=Path("-"), model_type="eagle3", format_version="0.9")
    assert ctx.layer_config == {}  # not an object: read as empty
    assert ctx.spec_config is config["speculators_config"]
    assert ctx.proposal_methods == [{"proposal_type": "greedy"}]
    assert ctx.proposal_methods is ctx.proposal_methods  # kept, not rebuilt
    assert ctx.command("fix") is None  # standard input: no command rewrites it
    assert ctx.path_text == "-"


def test_findings_are_built_by_position_in_the_order_of_their_fields():
    assert tuple(f.name for f in dataclasses.fields(Finding)) == FINDING_FIELDS
