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

from spec_format.base.report import Edit, Severity
from spec_format.facts import contract
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.weights import contract_diff, expectations

#: the per-tensor shape rules whose findings a cause explains
CONSEQUENCES = frozenset({"W003", "W004", "W005", "W006", "W009"})
_KEY = "_root_cause"
_MAX_TRIALS = 160  # contract expansions per config, at most


class Cause(NamedTuple):
    path: str  # dotted config path, "transformer_layer_config.hidden_size"
    declared: Any  # the value the contract used (read, or computed when absent)
    implied: int
    explained: tuple[str, ...]  # tensor names whose mismatch the implied value removes
    absent: bool = False  # the path holds no value: ``declared`` was computed or defaulted
    verifier: bool = False  # the verifier's config has the implied value for this key


#: the verifier's key for a draft config key whose name differs (the rest share the name)
_VERIFIER_KEY = {"target_hidden_size": "hidden_size"}


def _set(config: dict, path: str, value: Any) -> None:
    node = config
    *parents, last = path.split(".")
    for p in parents:
        if not isinstance(node.get(p), dict):
            node[p] = {}
        node = node[p]
    node[last] = value


def _verifier_value(ctx: Context, path: str) -> Any:
    if not isinstance(ctx.verifier, dict):
        return None
    name = path.rsplit(".", 1)[-1]
    value = ctx.verifier.get(_VERIFIER_KEY.get(name, name))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _possible(symbols: Any, before: Any) -> bool:
    """The sizes a trial resolves to can describe attention at all: every size the
    original config resolved stays known (a head count that leaves the head size
    undefined explains nothing), and the key/value heads divide the query heads."""
    for name, value in before.values.items():
        if isinstance(value, int) and not isinstance(symbols.values.get(name), int):
            return False
    heads, kv = symbols.values.get("nH"), symbols.values.get("nKV")
    return not (isinstance(heads, int) and isinstance(kv, int) and (kv > heads or heads % kv))


def _candidates(ctx: Context, path: str, sizes: list[int], known: list[int]) -> list[int]:
    """Values to try for ``path``: the verifier's first (the draft copies its attention
    geometry more often than not), then each size the mismatched tensors show, then each
    of those sizes divided by a size the config already has (a head size hides in
    ``heads x head_dim``)."""
    out: list[int] = []
    theirs = _verifier_value(ctx, path)
    if theirs is not None and theirs > 0:
        out.append(theirs)
    out += sizes
    out += sorted({s // k for s in sizes for k in known if k > 1 and s % k == 0 and s // k > 1})
    seen: set[int] = set()
    return [v for v in out if not (v in seen or seen.add(v))]


def root_cause(ctx: Context) -> Cause | None:
    """The one config value the weights contradict, when there is one (cached).

    Every size symbol the contract reads from a config path is tried, set or absent (a
    missing ``head_dim`` is computed as ``H // nH``, which the weights may contradict),
    at the verifier's value and at each size the mismatched tensors imply. A value counts
    when at least two mismatches become matches against fully known shapes, no tensor
    that matched stops matching and the sizes stay possible; the most explained wins,
    the verifier's value on a tie."""
    if _KEY in ctx.options:
        return ctx.options[_KEY]
    ctx.options[_KEY] = None
    diff, exp = contract_diff(ctx), expectations(ctx)
    if diff is None or exp is None or len(diff.wrong_shape) < 2:
        return None
    actual = {n: (r.dtype, tuple(r.shape)) for n, r in ctx.checkpoint.tensors.items()}
    wrong = {m.name for m in diff.wrong_shape}
    sizes = sorted({d for m in diff.wrong_shape for d in m.actual if isinstance(d, int) and d > 0})
    known = sorted(
        {v for v in exp.symbols.values.values() if isinstance(v, int) and not isinstance(v, bool)}
    )
    best: Cause | None = None
    trials = 0
    for symbol, spec in exp.contract.symbols.items():
        if spec.type != "dim" or not spec.paths:
            continue  # not a size, or not read from the config: no config line to name
        declared = exp.symbols.values.get(symbol)
        if not isinstance(declared, int) or isinstance(declared, bool):
            continue
        source = exp.symbols.sources.get(symbol)
        path = source if source in spec.paths else spec.paths[0]
        theirs = _verifier_value(ctx, path)
        for value in _candidates(ctx, path, sizes, known):
            if value == declared or trials >= _MAX_TRIALS:
                continue
            trials += 1
            trial = copy.deepcopy(ctx.config)
            try:
                _set(trial, path, value)
                expected = contract.expected_tensors(trial, ctx.model_type)
                after = contract.diff_tensors(expected, actual)
            except (contract.ContractError, KeyError, TypeError, ValueError, AttributeError):
                continue
            if not _possible(expected.symbols, exp.symbols):
                continue
            still = {m.name for m in after.wrong_shape}
            if still - wrong or len(after.missing) > len(diff.missing):
                continue  # the value breaks a tensor that matched: not the cause
            explained = tuple(sorted(n for n in wrong - still if _judged(expected, n)))
            if len(explained) < 2:
                continue
            cause = Cause(path, declared, value, explained, source != path, value == theirs)
            if best is None or (len(explained), cause.verifier) > (
                len(best.explained),
                best.verifier,
            ):
                best = cause
    ctx.options[_KEY] = best
    return best


def _judged(expected: Any, name: str) -> bool:
    """The tensor's expected shape is fully known (a match, not a shape left unjudged)."""
    want = expected.match(name)
    return want is not None and all(d is not None for d in want.shape)


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
        key = cause.path.rsplit(".", 1)[-1]
        state = (
            f"{cause.path} is absent, so the contract uses {cause.declared}"
            if cause.absent
            else f"{cause.path} is {cause.declared}"
        )
        theirs = " (the verifier's value)" if cause.verifier else ""
        pointer = "/" + cause.path.replace(".", "/")
        yield Hit(
            f"{state}, but the weights were written for {cause.implied}: with "
            f"{cause.implied} the shapes of {len(cause.explained)} tensors match the "
            f"contract ({shown}{f', and {more} more' if more > 0 else ''}); set {key} to "
            f"{cause.implied}{theirs}, or export weights for {cause.declared}",
            pointer=pointer,
            file=None,
            edit=(Edit.set(pointer, cause.implied),),
        )


def grouped(ctx: Context, findings: list) -> list:
    """``findings`` without the per-tensor shape findings a reported cause explains."""
    cause = ctx.options.get(_KEY)
    if cause is None or not any(f.rule == ConfigValueContradictsWeights.id for f in findings):
        return findings
    explained = set(cause.explained)
    return [f for f in findings if not (f.rule in CONSEQUENCES and f.tensor in explained)]


__all__ = ["CONSEQUENCES", "Cause", "ConfigValueContradictsWeights", "grouped", "root_cause"]
