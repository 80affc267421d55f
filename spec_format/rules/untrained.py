"""Untrained weights (D011): tensors that are present, correctly shaped and never trained.

Read in the ``--scan-weights`` pass (the NaN/Inf scan, D010, hands every chunk to
:mod:`spec_format.parsers.weightstats`); when D010 does not run, this rule streams the tensors
itself, once. Only exact facts are reported, so a trained tensor never matches: every
value of a tensor the same (all zeros, a norm weight at its initial 1.0), or two tensors
byte for byte the same. The initializer's statistics (mean 0, std = ``initializer_range``)
are deliberately not a criterion: trained draft weights keep that std, so it cannot be told
apart without false positives (see the rule page and ``benches/RESULTS-untrained.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from spec_format.base.report import Severity
from spec_format.parsers import weightstats
from spec_format.parsers.header_errors import HeaderError
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.vocab import _IEEE, _NAN_ONLY, SCAN_CHUNK_BYTES, scan_tensor
from spec_format.rules.weights import expectations, tensor_hit

_LAYER = re.compile(r"^(.*layers\.\d+)\.(.+)$")
_LOST = "a converter that lost a layer or a key remap writes tensors at their initial values"


def _observed(ctx: Context) -> dict[str, weightstats.Observer]:
    seen = ctx.options.get(weightstats.CACHE)
    if seen is not None:
        return seen
    ckpt = ctx.checkpoint  # D010 did not run (--select D011): one pass of our own
    floats = [n for n, r in ckpt.tensors.items() if r.dtype in _IEEE or r.dtype in _NAN_ONLY]
    seen = weightstats.for_scan(ctx.options, ckpt.tensors, floats)
    buffer = bytearray(SCAN_CHUNK_BYTES)
    for name in sorted(seen, key=lambda n: (ckpt.tensors[n].file, ckpt.tensors[n].begin)):
        try:
            scan_tensor(ckpt, name, buffer, seen[name].observe)
        except HeaderError:
            seen.pop(name)  # D010 reports it
    return seen


def _same_bytes(ckpt, a: str, b: str) -> bool:
    """Whether two tensors hold the same bytes, compared chunk by chunk (two small buffers):
    run only for the rare pairs whose fingerprints are equal."""
    if ckpt.tensors[a].nbytes != ckpt.tensors[b].nbytes:
        return False
    size = min(SCAN_CHUNK_BYTES, 1 << 20)
    left, right = bytearray(size), bytearray(size)
    try:
        for x, y in zip(ckpt.iter_chunks(a, left), ckpt.iter_chunks(b, right), strict=True):
            if x.tobytes() != y.tobytes():  # memcmp; comparing memoryviews goes byte by byte
                return False
    except (HeaderError, ValueError):
        return False
    return True


class UntrainedWeights(Rule):
    """A weight tensor holds its initial values: constant (zeros, a norm at 1.0) or a copy."""

    id = "D011"
    name = "untrained-weights"
    layer = Layer.VOCAB
    severity = Severity.WARNING
    since = "0.1.0"
    requires = frozenset({"weights", "scan"})

    def check(self, ctx: Context) -> Iterator[Hit]:
        seen = _observed(ctx)
        records = ctx.checkpoint.tensors
        whole = {n: o for n, o in seen.items() if o.elements == records[n].numel > 1}
        zeros = sorted(n for n, o in whole.items() if o.zero)
        if len(zeros) > 1 and len(zeros) == len(whole):  # one cause, one finding
            yield tensor_hit(
                ctx,
                zeros[0],
                f"every float tensor ({len(zeros)}, {zeros[0]} first) holds only zeros: the "
                "checkpoint carries no trained weights (a placeholder or an export that never "
                "copied the values); re-export the trained checkpoint",
            )
            return
        yield from self._constant(ctx, whole)
        pairs = weightstats.candidate_pairs(whole)
        yield from self._copies(ctx, [p for p in pairs if _same_bytes(ctx.checkpoint, *p)])

    def _constant(self, ctx: Context, whole: dict) -> Iterator[Hit]:
        expected = expectations(ctx)
        records = ctx.checkpoint.tensors
        for name in sorted(whole):
            o, record = whole[name], records[name]
            if not (o.constant or o.zero):
                continue
            value = 0.0 if o.zero else o.value(record.dtype)
            if o.zero:
                what = (
                    f"all {record.numel:,} values are 0: a tensor nothing was loaded into "
                    f"({_LOST}, or zeros)"
                )
            elif expected is not None and expected.match(name) is None:
                continue  # a tensor the contract does not know is W002's
            elif value == 1.0 and "norm" in name.rsplit(".", 2)[-2]:
                what = (
                    f"all {record.numel:,} values are 1.0, the initial weight of RMSNorm and "
                    f"LayerNorm: this norm was never trained ({_LOST})"
                )
            else:
                shown = "a value that is not a number" if value is None else f"{value:g}"
                what = (
                    f"all {record.numel:,} values are {shown}: a trained tensor is never "
                    f"constant ({_LOST})"
                )
            yield tensor_hit(
                ctx,
                name,
                f"{name}: {what}; re-export the trained checkpoint, or check the converter's "
                "key mapping",
            )

    def _copies(self, ctx: Context, pairs: list[tuple[str, str]]) -> Iterator[Hit]:
        """One finding per copied layer (every tensor of ``layers.1`` equal to its twin in
        ``layers.0``), one per tensor otherwise."""
        layers: dict[tuple[str, str], list[str]] = {}
        single = []
        for first, later in pairs:
            a, b = _LAYER.match(first), _LAYER.match(later)
            if a and b and a.group(2) == b.group(2):
                layers.setdefault((a.group(1), b.group(1)), []).append(b.group(2))
            else:
                single.append((first, later))
        for (src, dst), parts in layers.items():
            if len(parts) == 1:
                single.append((f"{src}.{parts[0]}", f"{dst}.{parts[0]}"))
                continue
            yield tensor_hit(
                ctx,
                f"{dst}.{sorted(parts)[0]}",
                f"{dst} is a byte-identical copy of {src} ({len(parts)} tensors: "
                f"{', '.join(sorted(parts)[:3])}{', ...' if len(parts) > 3 else ''}): two trained "
                f"layers never share every bit, so the converter wrote {src} in place of a layer "
                "it lost (or mapped two layers to one source); re-export, or check its key mapping",
            )
        for first, later in single:
            yield tensor_hit(
                ctx,
                later,
                f"{later} is byte-identical to {first}: two trained tensors never share every "
                "bit, so one was written in place of the other (a converter that mapped two "
                "tensors to one source); re-export, or check the converter's key mapping",
            )
