"""What a vLLM release's draft model class makes of a draft's tensors: the prediction rules
C020, W025 and C022 and ``specfmt serving`` share, from the ``models.<type>.weights``
block of the reader table (:mod:`spec_format.rules.engine_weights` says what the block holds
and how it is checked against the executed release)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache

from spec_format.facts import catalog, contract, readers

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


#: the conditions of ``required_when``/``initial_when``, as a message names them
CONDITIONS = {
    "reduced-vocab": "reduced-vocabulary draft (draft_vocab_size below vocab_size)",
    "other-vocab": "draft whose draft_vocab_size differs from vocab_size",
}


def holds(condition: str, config: dict) -> bool:
    """Whether a weights block's condition holds for the config (``reduced-vocab``: a
    draft_vocab_size below the vocabulary of the draft's layer config, which is the
    verifier's; ``other-vocab``: any other size)."""
    if condition not in CONDITIONS:
        raise ValueError(f"unknown weights condition {condition!r}")
    layer = config.get("transformer_layer_config")
    vocab = layer.get("vocab_size") if isinstance(layer, dict) else None
    draft = config.get("draft_vocab_size")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (draft, vocab)):
        return False  # unset: the release takes the full vocabulary
    return draft < vocab if condition == "reduced-vocab" else draft != vocab


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
    required_when = weights.get("required_when", {})
    for tensor in weights.get("required", {}):
        when = required_when.get(tensor)
        if tensor not in names and (when is None or holds(when, config)):
            out.fails.append((tensor, "/draft_vocab_size" if when else None, "requires it"))
    for tensor, when in weights.get("initial_when", {}).items():
        if tensor not in names and holds(when, config):
            out.initial[tensor] = ("/draft_vocab_size", f"builds it for a {CONDITIONS[when]}")
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


def module_fails(
    engine, weights: dict, model_type: str, config: dict
) -> list[tuple[str, str, str]]:
    """(module pattern, pointer, why) for each optional module the config turns on (its flag
    is ``true``: the type's contract then implies its tensors) that ``engine`` fails to load:
    :func:`predict`'s verdict on those tensors, without expanding the contract (a module a
    flag's default turns on is not asked)."""
    out = []
    dropped, optional = weights.get("dropped", {}), weights.get("optional", {})
    for pattern, flag in _optional_anywhere(model_type).items():
        if config.get(flag) is not True:
            continue
        kept = dropped.get(pattern, False)
        if kept is not False and (
            kept is None or not _reads_true(engine, model_type, kept, config)
        ):
            continue  # skipped without an error: degraded, not refused
        own = optional.get(pattern)
        if own is None:
            out.append((pattern, f"/{flag}", "never builds it"))
        elif not _reads_true(engine, model_type, own, config):
            why = (
                f"builds it only under {own}, which its config reader never passes on"
                if engine.reading(model_type, own, config).how == "ignored"
                else f"builds it only under {own}, which it reads as false"
            )
            out.append((pattern, f"/{own}", why))
    return out


def implied(config: dict) -> set[str]:
    """The tensors the config says the draft has (the type's tensor contract)."""
    return {n for n, t in contract.expected_tensors(config).tensors.items() if t.required}
