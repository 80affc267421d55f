"""The weights layer (W), shared part: the config against the tensor names, shapes and dtypes.

Every W check compares the safetensors headers (read by :mod:`spec_format.parsers.checkpoint`, never
the tensor bytes) with the type's tensor contract (``schema/tensors/<type>.json``). This
module holds what the W rules share: the contract expanded for a config and its difference
from the headers (computed once per context), the layer counting, the file a finding points
at, the cap on findings, and the base class. The rules live by concern:
:mod:`~spec_format.rules.weights_presence` (missing, unexpected, layer count),
:mod:`~spec_format.rules.weights_shapes`, :mod:`~spec_format.rules.weights_vocab_maps`,
:mod:`~spec_format.rules.weights_dtypes` and :mod:`~spec_format.rules.weights_consumers`
(layouts the library loads but an engine refuses). The generic rules (missing, unexpected,
shape, dtype) cover every tensor; the rules for ``fc``, ``lm_head``, ``embed_tokens``, the
vocabulary maps, the EAGLE-3 first layer and the layer count explain the failures seen in
the field in their own words, and the generic rules leave those tensors to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, ClassVar

from spec_format.base.report import Severity
from spec_format.facts import catalog, contract
from spec_format.rules.base import Context, Hit, Layer, Rule

if TYPE_CHECKING:
    from spec_format.facts.contract import ContractDiff, ExpectedSet

CONTRACT_TYPES = tuple(contract.available_types())
#: types that may reduce the draft vocabulary and then carry t2d/d2t
VOCAB_MAP_TYPES = catalog.vocab_map_types()
_DEFAULT_LAYERS = catalog.RepeatedLayers(
    "layers", "L", "transformer_layer_config.num_hidden_layers"
)
#: at most this many findings per rule and checkpoint; the last one says how many more
MAX_HITS = 25


# -- shared helpers --------------------------------------------------------------------


def expectations(ctx: Context) -> ExpectedSet | None:
    """The contract expanded for this config (cached on the context)."""
    key = "_weights_expected"
    if key not in ctx.options:
        try:
            ctx.options[key] = contract.expected_tensors(ctx.config, ctx.model_type)
        except contract.ContractError:
            ctx.options[key] = None
    return ctx.options[key]


def contract_diff(ctx: Context) -> ContractDiff | None:
    key = "_weights_diff"
    if key not in ctx.options:
        exp = expectations(ctx)
        ctx.options[key] = (
            None
            if exp is None or ctx.checkpoint is None
            else contract.diff_tensors(exp, ctx.checkpoint.tensors)
        )
    return ctx.options[key]


def weights_file(ctx: Context, tensor: str | None = None) -> str:
    """The file a finding about ``tensor`` points at: its shard, or the weights entry point."""
    ckpt = ctx.checkpoint
    if tensor is not None and tensor in ckpt.tensors:
        return ckpt.display(ckpt.tensors[tensor].file)
    if ckpt.layout == "sharded":
        return ckpt.display("model.safetensors.index.json")
    return ckpt.display("model.safetensors")


def tensor_hit(ctx: Context, tensor: str, message: str) -> Hit:
    """A hit about ``tensor``, pointing at the file that holds it."""
    return Hit(message, tensor=tensor, file=weights_file(ctx, tensor))


def capped(hits: Iterable[Hit | Callable[[], Hit]], what: str) -> Iterator[Hit]:
    """The first MAX_HITS hits, then one saying how many more there were. An item may be a
    callable that builds its hit: those past the cap are counted, never built."""
    rest = 0
    first_left_out: Hit | Callable[[], Hit] | None = None
    for n, hit in enumerate(hits):
        if n < MAX_HITS:
            yield hit() if callable(hit) else hit
        else:
            rest += 1
            first_left_out = first_left_out or hit
    if rest:
        left = first_left_out() if callable(first_left_out) else first_left_out
        yield Hit(f"... and {rest} more {what}", file=left.file)


def layer_prefix(ctx: Context) -> tuple[str, str, str]:
    """(name prefix, symbol, config field) of the repeated layers of this type."""
    rec = catalog.record(ctx.model_type)
    layers = rec.layers if rec and rec.layers else _DEFAULT_LAYERS
    return layers.prefix, layers.symbol, layers.count


def _layer_index(name: str, prefix: str) -> int | None:
    # at most 18 digits: a hostile header's "layers.<5000 digits>.x" is no layer (and int()
    # of it would raise)
    m = re.match(rf"{prefix}\.(0|[1-9]\d{{0,17}})\.", name)
    return int(m.group(1)) if m else None


def layer_counts(ctx: Context) -> tuple[int | None, list[int]]:
    """(layers the config declares, layer indices found in the headers); computed once per
    context (rules ask per tensor)."""
    key = "_weights_layer_counts"
    if key not in ctx.options:
        exp = expectations(ctx)
        prefix, symbol, _ = layer_prefix(ctx)
        declared = exp.symbols.get(symbol) if exp else None
        found = sorted(
            {i for n in ctx.checkpoint.tensors if (i := _layer_index(n, prefix)) is not None}
        )
        ctx.options[key] = (declared if isinstance(declared, int) else None), found
    return ctx.options[key]


def left_to_layer_rule(ctx: Context, name: str) -> bool:
    """Tensors of layers beyond the smaller of (declared, found) are W010's to report."""
    declared, found = layer_counts(ctx)
    if declared is None or is_range(found, declared):
        return False
    prefix, _, _ = layer_prefix(ctx)
    index = _layer_index(name, prefix)
    return index is not None and index >= min(declared, len(found))


def gaps(found: list[int], limit: int = 10) -> list[int]:
    """The first ``limit`` numbers missing from sorted ``found`` (never builds the range)."""
    gaps: list[int] = []
    expected = 0
    for i in found:
        while expected < i and len(gaps) < limit:
            gaps.append(expected)
            expected += 1
        if len(gaps) >= limit:
            break
        expected = i + 1
    return gaps


def few(numbers: list[int], limit: int = 10) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return f"[{shown}{', ...' if len(numbers) > limit else ''}]"


def is_range(found: list[int], count: int) -> bool:
    """``found == list(range(count))`` without building a list of ``count`` items."""
    return len(found) == count and (not found or (found[0] == 0 and found[-1] == count - 1))


def left_out(ctx: Context, name: str) -> bool:
    """W002 leaves this tensor to another rule."""
    return _claimed_by_consumer_rule(ctx, name) or left_to_layer_rule(ctx, name)


def _claimed_by_consumer_rule(ctx: Context, name: str) -> bool:
    if name.startswith("verifier_"):
        return True
    return ctx.model_type in catalog.family("block") and name == "mask_hidden"


def show(value) -> str:
    """A symbol's value for a message: ``?`` when the config does not provide it."""
    return "?" if value is contract.UNKNOWN or value is None else str(value)


def fmt(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def condition_text(condition: str) -> str:
    return condition if " " in condition or "(" in condition else f"{condition} is true"


class WeightsRule(Rule):
    abstract = True
    layer = Layer.WEIGHTS
    severity = Severity.ERROR
    applies_to = CONTRACT_TYPES
    requires = frozenset({"weights"})


class TensorNameRule(WeightsRule):
    """A weights rule that flags tensors by their name alone: one hit per tensor, in name
    order, whose name is one of ``names``, starts with one of ``prefixes`` or ends with one
    of ``suffixes``, worded by the template ``says`` (over ``{name}``)."""

    abstract = True
    names: ClassVar[tuple[str, ...]] = ()
    prefixes: ClassVar[tuple[str, ...]] = ()
    suffixes: ClassVar[tuple[str, ...]] = ()
    says: ClassVar[str] = ""

    def flags(self, ctx: Context, name: str) -> bool:
        return name in self.names or name.startswith(self.prefixes) or name.endswith(self.suffixes)

    def words(self, name: str) -> str:
        return self.says.format(name=name)

    def check(self, ctx: Context) -> Iterator[Hit]:
        for name in sorted(n for n in ctx.checkpoint.tensors if self.flags(ctx, n)):
            yield tensor_hit(ctx, name, self.words(name))


def mismatches(ctx: Context, kind: str) -> list:
    """The contract difference's ``wrong_shape`` or ``wrong_dtype`` entries (none without a
    contract or weights)."""
    diff = contract_diff(ctx)
    return [] if diff is None else getattr(diff, kind)


def role_mismatch(ctx: Context, role: str):
    return [m for m in mismatches(ctx, "wrong_shape") if m.expected.role == role]


__all__ = [
    "VOCAB_MAP_TYPES",
    "TensorNameRule",
    "WeightsRule",
    "capped",
    "condition_text",
    "contract_diff",
    "expectations",
    "few",
    "fmt",
    "gaps",
    "is_range",
    "layer_counts",
    "layer_prefix",
    "left_out",
    "left_to_layer_rule",
    "mismatches",
    "role_mismatch",
    "show",
    "tensor_hit",
    "weights_file",
]
