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

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache

from spec_format.base.report import Severity
from spec_format.facts import catalog, contract, readers
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.engines import named_engines

_LAYER = re.compile(r"^layers\.(\d+)\.(.+)$")


def _matches(pattern: str, name: str) -> bool:
    return re.fullmatch(re.escape(pattern).replace(r"\{i\}", r"\d+"), name) is not None


@dataclass
class Load:
    """What loading the draft into one release does, in the draft's tensor names."""

    fc_sized: int | None = 3
    fails: list[tuple[str, str | None, str]] = field(default_factory=list)  # tensor, pointer, why
    dropped: dict[str, str | None] = field(default_factory=dict)  # tensor -> its flag
    initial: dict[str, tuple[str, str]] = field(default_factory=dict)  # tensor -> pointer, why


def _blocks(model_type: str) -> Iterator[dict]:
    """The ``weights`` blocks of ``model_type`` in every group's table file."""
    for rid in readers.representatives():
        block = readers.release(*rid.split("==")).data.get("models", {}).get(model_type, {})
        if "weights" in block:
            yield block["weights"]


@cache
def _layer_norms(model_type: str) -> frozenset[str]:
    """The per-layer norms any release's drafter of the type builds for some decoder family:
    a release whose block knows its layer norms builds none of the others."""
    return frozenset(
        n for w in _blocks(model_type) for norms in w.get("layer_norms", {}).values() for n in norms
    )


@cache
def _optional_anywhere(model_type: str) -> dict[str, str]:
    """Optional module pattern -> its flag, over every release's block of the type: a release
    whose block lacks the pattern never builds that module."""
    return {p: f for w in _blocks(model_type) for p, f in w.get("optional", {}).items()}


def _reads_true(engine, model_type: str, flag: str, config: dict) -> bool:
    reading = engine.reading(model_type, flag, config)
    return reading.how != "ignored" and bool(reading.value)


def predict(engine, weights: dict, model_type: str, config: dict, names: Iterable[str]) -> Load:
    """The release's load of a draft with these tensor names (the rule and the executed
    weight-contract test share it)."""
    names = sorted(set(names))
    weights = readers.class_weights(weights, config)
    out = Load()
    out.fc_sized = readers.fc_aux_layers(engine, weights, model_type, config)
    aux = catalog.aux_key(model_type)
    wants = readers.aux_count(config.get(aux)) if aux else 3
    sized = out.fc_sized
    if sized is not None and sized != wants and "fc.weight" in names:
        out.fails.append(("fc.weight", f"/{aux}", f"takes {wants} aux hidden states"))
    optional, dropped = weights.get("optional", {}), weights.get("dropped", {})
    family = readers.draft_family(config)
    known_norms = weights.get("layer_norms")
    built_norms = set((known_norms or {}).get(family, ()))
    every_norm = _layer_norms(model_type)
    anywhere = _optional_anywhere(model_type)
    expected = contract.expected_tensors(config)
    for name in names:
        kept = next((f for p, f in dropped.items() if _matches(p, name)), False)
        if kept is not False and (
            kept is None or not _reads_true(engine, model_type, kept, config)
        ):
            out.dropped[name] = kept
            continue
        flag = next((f for p, f in optional.items() if _matches(p, name)), None)
        elsewhere = next((f for p, f in anywhere.items() if _matches(p, name)), None)
        if flag is None and elsewhere is not None:
            out.fails.append((name, f"/{elsewhere}", "never builds it"))
            continue
        if flag is not None and not _reads_true(engine, model_type, flag, config):
            why = (
                f"builds it only under {flag}, which its config reader never passes on"
                if engine.reading(model_type, flag, config).how == "ignored"
                else f"builds it only under {flag}, which it reads as false"
            )
            out.fails.append((name, f"/{flag}", why))
            continue
        m = _LAYER.match(name)
        if known_norms is not None and m and m.group(2) in every_norm - built_norms:
            out.fails.append(
                (
                    name,
                    "/transformer_layer_config/model_type",
                    f"builds no such norm for {family} layers",
                )
            )
        elif expected.match(name) is None and name not in expected.absent:
            # unknown to the type's contract: no release of the type has a parameter for it
            out.fails.append((name, None, "never builds it"))
    for tensor in weights.get("required", {}):
        if tensor not in names:
            out.fails.append((tensor, None, "requires it"))
    layers = sorted({int(m.group(1)) for n in names if (m := _LAYER.match(n))})
    for index in layers:
        for norm in sorted(built_norms):
            if f"layers.{index}.{norm}" not in names:
                out.initial[f"layers.{index}.{norm}"] = (
                    "/transformer_layer_config/model_type",
                    f"builds it for {family} layers",
                )
    for pattern, flag in optional.items():
        if not _reads_true(engine, model_type, flag, config):
            continue
        wanted = (
            [pattern.replace("{i}", str(i)) for i in range(sized)]
            if "{i}" in pattern
            else [pattern]
        )
        for name in wanted:
            if name not in names and name not in weights.get("unfilled", {}):
                out.initial[name] = (f"/{flag}", f"builds it under {flag}, which it reads as true")
    return out


class EngineCannotLoadDraft(Rule):
    """A named vLLM release cannot load the draft's tensors, or silently leaves one unused."""

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


def implied(config: dict) -> set[str]:
    """The tensors the config says the draft has (the type's tensor contract)."""
    return {n for n, t in contract.expected_tensors(config).tensors.items() if t.required}


def _hits(engine, weights: dict, config: dict, load: Load) -> Iterator[Hit]:
    where = f"{engine.id} ({weights['from']}, {weights['status']})"
    for tensor, pointer, why in load.fails:
        if why == "requires it":
            yield Hit(
                f"the draft has no {tensor}; {where} requires it, and loading fails "
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
    """A named vLLM release fails on, skips or never fills a tensor of this checkpoint."""

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
