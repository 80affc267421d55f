"""One root cause instead of a cascade (W024): a config value that many tensor shapes
contradict in the same way.

When several tensors disagree with the contract, each config dimension the contract reads
(the ``from`` paths of ``schema/tensors/symbols.json``: hidden_size, intermediate_size,
vocab_size, heads, ...) is tried at each size the mismatched tensors show. A value under
which at least two mismatches disappear and no tensor that matched stops matching is the
cause: it is reported once, at that config line, with the consequences listed under it, and
the per-tensor findings it explains (W003-W006, W009) are dropped from the report
(:func:`grouped`, called by the validate engine after the weights rules).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, NamedTuple

from spec_format.base.report import Severity
from spec_format.facts import contract
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.weights import contract_diff, expectations

#: the per-tensor shape rules whose findings a cause explains
CONSEQUENCES = frozenset({"W003", "W004", "W005", "W006", "W009"})
_KEY = "_root_cause"
_MAX_TRIALS = 64  # contract expansions per config, at most


class Cause(NamedTuple):
    path: str  # dotted config path, "transformer_layer_config.hidden_size"
    declared: Any
    implied: int
    explained: tuple[str, ...]  # tensor names whose mismatch the implied value removes


def _set(config: dict, path: str, value: Any) -> None:
    node = config
    *parents, last = path.split(".")
    for p in parents:
        node = node[p]
    node[last] = value


def root_cause(ctx: Context) -> Cause | None:
    """The one config value the weights contradict, when there is one (cached)."""
    if _KEY in ctx.options:
        return ctx.options[_KEY]
    ctx.options[_KEY] = None
    diff, exp = contract_diff(ctx), expectations(ctx)
    if diff is None or exp is None or len(diff.wrong_shape) < 2:
        return None
    actual = {n: (r.dtype, tuple(r.shape)) for n, r in ctx.checkpoint.tensors.items()}
    wrong = {m.name for m in diff.wrong_shape}
    sizes = sorted({d for m in diff.wrong_shape for d in m.actual if isinstance(d, int) and d > 0})
    best: Cause | None = None
    trials = 0
    for symbol, path in exp.symbols.sources.items():
        spec = exp.contract.symbols.get(symbol)
        if spec is None or spec.type != "dim" or path not in spec.paths:
            continue  # not a size, or computed / defaulted: no config line to name
        declared = exp.symbols.get(symbol)
        if not isinstance(declared, int) or isinstance(declared, bool):
            continue
        for value in sizes:
            if value == declared or trials >= _MAX_TRIALS:
                continue
            trials += 1
            trial = copy.deepcopy(ctx.config)
            try:
                _set(trial, path, value)
                after = contract.diff_tensors(
                    contract.expected_tensors(trial, ctx.model_type), actual
                )
            except (contract.ContractError, KeyError, TypeError, ValueError):
                continue
            still = {m.name for m in after.wrong_shape}
            if still - wrong or len(after.missing) > len(diff.missing):
                continue  # the value breaks a tensor that matched: not the cause
            explained = tuple(sorted(wrong - still))
            if len(explained) >= 2 and (best is None or len(explained) > len(best.explained)):
                best = Cause(path, declared, value, explained)
    ctx.options[_KEY] = best
    return best


class ConfigValueContradictsWeights(Rule):
    """Many tensor shapes disagree with the config in a way one config value explains."""

    id = "W024"
    name = "config-value-contradicts-weights"
    layer = Layer.WEIGHTS
    severity = Severity.ERROR
    since = "0.1.0"
    requires = frozenset({"weights"})

    def check(self, ctx: Context) -> Iterator[Hit]:
        cause = root_cause(ctx)
        if cause is None:
            return
        shapes = {n: list(ctx.checkpoint.tensors[n].shape) for n in cause.explained}
        shown = ", ".join(f"{n} {shapes[n]}" for n in cause.explained[:6])
        more = len(cause.explained) - 6
        yield Hit(
            f"{cause.path} is {cause.declared}, but the weights were written for "
            f"{cause.implied}: with {cause.implied} the shapes of {len(cause.explained)} "
            f"tensors match the contract ({shown}{f', and {more} more' if more > 0 else ''}); "
            f"set {cause.path.rsplit('.', 1)[-1]} to {cause.implied}, or export weights for "
            f"{cause.declared}",
            pointer="/" + cause.path.replace(".", "/"),
            file=None,
        )


def grouped(ctx: Context, findings: list) -> list:
    """``findings`` without the per-tensor shape findings a reported cause explains."""
    cause = ctx.options.get(_KEY)
    if cause is None or not any(f.rule == ConfigValueContradictsWeights.id for f in findings):
        return findings
    explained = set(cause.explained)
    return [f for f in findings if not (f.rule in CONSEQUENCES and f.tensor in explained)]


__all__ = ["CONSEQUENCES", "Cause", "ConfigValueContradictsWeights", "grouped", "root_cause"]
