"""The chain as a data structure, built from fake steps (no files, no real steps)."""

from __future__ import annotations

import pytest

from spec_format.base.errors import UsageError
from spec_format.facts import catalog
from spec_format.rewrites.migration.chain import Chain, ChainError, Step
from spec_format.rewrites.migration.records import StepOutput
from spec_format.rewrites.migration.runner import chain


def fake(source: str, target: str) -> Step:
    def up(doc, ctx):
        return StepOutput({**doc, "trail": [*doc.get("trail", []), f"{source}->{target}"]})

    def down(doc, ctx):
        return StepOutput({**doc, "trail": [*doc.get("trail", []), f"{target}->{source}"]})

    return Step(source, target, up, down, doc=f"{source} -> {target}: fake.")


def test_plan_up_and_down_in_order():
    c = Chain([fake("b", "c"), fake("a", "b"), fake("c", "d")])
    assert (c.base, c.head, c.versions) == ("a", "d", ("a", "b", "c", "d"))
    assert [p.id for p in c.plan("a", "d")] == ["a->b", "b->c", "c->d"]
    assert [p.id for p in c.plan("d", "b")] == ["d->c", "c->b"]
    assert [p.direction for p in c.plan("a", "c")] == ["up", "up"]
    assert [p.direction for p in c.plan("d", "b")] == ["down", "down"]
    assert c.plan("c", "c") == []
    doc = {}
    for p in c.plan("b", "d"):
        doc = p.run(doc, None).document
    assert doc["trail"] == ["b->c", "c->d"]


@pytest.mark.parametrize(
    "steps",
    [
        [fake("a", "b"), fake("c", "d")],  # gap: two bases, two heads
        [fake("a", "b"), fake("a", "c")],  # a fork
        [fake("a", "b"), fake("b", "a")],  # a cycle
        [fake("a", "a")],  # a self-loop
        [],
    ],
)
def test_malformed_chains_are_rejected(steps):
    with pytest.raises(ChainError):
        Chain(steps)


def test_chain_must_match_the_catalog():
    with pytest.raises(ChainError, match="catalog"):
        Chain([fake("0.1", "0.2")], versions=("0.1", "0.2", "0.3"))


def test_unknown_versions_are_usage_errors():
    with pytest.raises(UsageError):
        Chain([fake("a", "b")]).plan("a", "z")


def test_real_chain_links_every_catalog_version():
    c = chain()
    assert c.versions == tuple(catalog.versions())
    assert all(s.summary and s.touches is not None for s in c.ordered())


def test_a_step_module_gives_both_directions():
    from spec_format.rewrites.migration.steps import v0_2_to_v0_3 as module

    step = Step.from_module(module)
    assert (step.source, step.target) == (module.SOURCE, module.TARGET)
    assert (step.upgrade, step.downgrade) == (module.upgrade, module.downgrade)
