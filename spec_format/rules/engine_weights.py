"""What a named vLLM release's draft model class makes of the draft's tensors (C020, W025).

The facts are the ``models.<type>.weights`` block of the reader table (EAGLE-3, P-EAGLE,
DFlash, ...): how many aux hidden states the release sizes ``fc`` for, which optional modules
it builds under which flag, which tensors its ``load_weights`` skips without an error
(``dropped``), which per-layer norms it builds for each decoder family (``layer_norms``:
Qwen3-style ``q_norm``/``k_norm``), which parameters it fills from elsewhere when the draft
lacks them (``unfilled``), which tensors the load cannot do without (``required``: P-EAGLE's
``mask_hidden``) and how the load fails on a tensor it has not built. An
``executed`` block is checked by building the release's draft class on CPU and loading test
checkpoints (tests/readers/test_weight_contract.py); a ``read-not-executed`` one is read from
the release's source and has no ``layer_norms`` facts, so that check waits for execution.

The draft's tensors are the checkpoint's when weights are given, else the ones its config
implies (the type's tensor contract). A release builds an optional module only when its model
code has it and its config reader (the table's rows) passes the flag on; a module some
release of the type builds optionally and this one has no flag for, it never builds; a tensor
the type's contract does not know at all, no release builds. Reported, at error severity: a
tensor the load fails on, a tensor the writer meant (its flag is true) that the release skips,
and a tensor the release builds that the draft lacks (left at its initial value).
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format.base.report import Severity
from spec_format.facts.engine_load import CONDITIONS, Load, implied, predict
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.engines import named_engines

__all__ = [
    "EngineCannotLoadDraft",
    "EngineCannotLoadTensors",
    "Load",
    "implied",
    "predict",
]


class EngineCannotLoadDraft(Rule):
    """A named vLLM release cannot load the draft's tensors, or silently leaves one unused
    (an SGLang release's ``fc`` of another width: spec_format.rules.sglang_drafts)."""

    id = "C020"
    name = "engine-cannot-load-draft"
    layer = Layer.CONSUMER
    severity = Severity.ERROR
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        # the types whose drafter a release's table file describes (models.<type>.weights)
        for engine in named_engines(ctx):
            weights = engine.data.get("models", {}).get(ctx.model_type, {}).get("weights")
            if weights and engine.serves(ctx.model_type):
                yield from self._check(ctx, engine, weights)

    def _check(self, ctx: Context, engine, weights: dict) -> Iterator[Hit]:
        yield from _hits(
            engine,
            weights,
            ctx.config,
            predict(engine, weights, ctx.model_type, ctx.config, implied(ctx.config)),
        )


def _hits(engine, weights: dict, config: dict, load: Load) -> Iterator[Hit]:
    where = f"{engine.id} ({weights['from']}, {weights['status']})"
    for tensor, pointer, why in load.fails:
        if why == "requires it":
            when = weights.get("required_when", {}).get(tensor)
            what = f" for a {CONDITIONS[when]}" if when else ""
            yield Hit(
                f"the draft has no {tensor}; {where} requires it{what}, and loading fails "
                f"({weights['required'][tensor]})",
                pointer=pointer,
            )
            continue
        if tensor == "fc.weight":
            yield Hit(
                f"fc.weight {why}, but {where} sizes fc for {load.fc_sized}: the load "
                f"fails on its shape ({weights.get('shape_error', 'a shape mismatch')})",
                pointer=pointer,
            )
            continue
        yield Hit(
            f"the draft has {tensor}; {where} {why}, and loading it fails "
            f"({weights['unknown_tensor']})",
            pointer=pointer,
        )
    for tensor, flag in load.dropped.items():
        if flag is None or config.get(flag) is not True:
            continue  # the writer never meant it either (t2d: the release derives it)
        yield Hit(
            f"{flag} is true, so the draft was trained with {tensor}; {where} skips it "
            f"without an error ({flag} reads as false there), so it serves the draft without it",
            pointer=f"/{flag}",
        )
    for tensor, (pointer, why) in load.initial.items():
        yield Hit(
            f"the draft has no {tensor}, but {where} {why}: it stays at its initial value "
            "without an error",
            pointer=pointer,
        )


class EngineCannotLoadTensors(Rule):
    """A named vLLM release fails on, skips or never fills a tensor of this checkpoint (an
    SGLang release's unfilled EAGLE-3 head: spec_format.rules.sglang_drafts)."""

    id = "W025"
    name = "engine-cannot-load-tensors"
    layer = Layer.WEIGHTS
    severity = Severity.ERROR
    since = "0.1.0"
    requires = frozenset({"weights"})

    def check(self, ctx: Context) -> Iterator[Hit]:
        # what the checkpoint's own tensors add to what its config implies (C020)
        names = set(ctx.checkpoint.tensors)
        for engine in named_engines(ctx):
            weights = engine.data.get("models", {}).get(ctx.model_type, {}).get("weights")
            if not (weights and engine.serves(ctx.model_type)):
                continue
            meant = predict(engine, weights, ctx.model_type, ctx.config, implied(ctx.config))
            got = predict(engine, weights, ctx.model_type, ctx.config, names)
            seen = {f[0] for f in meant.fails} | set(meant.dropped) | set(meant.initial)
            new = Load(
                fc_sized=got.fc_sized,
                fails=[f for f in got.fails if f[0] not in seen],
                dropped={k: v for k, v in got.dropped.items() if k not in seen},
                initial={k: v for k, v in got.initial.items() if k not in seen},
            )
            yield from _hits(engine, weights, ctx.config, new)
