"""Weights rules (W) about dtypes: the wrong kind of dtype (W011), mixed float dtypes
(W012), and a config dtype that is not the stored one (W013).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from spec_format.base.report import Edit, Severity
from spec_format.rules.base import Context, Hit
from spec_format.rules.weights import (
    WeightsRule,
    capped,
    expectations,
    mismatches,
    tensor_hit,
)


class DtypeFamilyMismatch(WeightsRule):
    """A tensor is stored in the wrong kind of dtype (`t2d` not bool, `d2t` not int64, a
    weight stored as integers)."""

    id = "W011"
    name = "dtype-family-mismatch"
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        wanted = {"bool": "BOOL", "int64": "I64 (int64)", "float": "a float dtype (BF16, F16, F32)"}
        hits = []
        for m in mismatches(ctx, "wrong_dtype"):
            fix = {"t2d": "save t2d.bool()", "d2t": "save d2t.long()"}.get(
                m.expected.role or "", "store it as float"
            )
            hits.append(
                tensor_hit(
                    ctx,
                    m.name,
                    f"{m.name} is stored as {m.actual}, but it must be {wanted[m.expected.dtype]}; {fix}",
                )
            )
        yield from capped(hits, "dtype mismatches")


def _float_weights(ctx: Context) -> dict[str, str]:
    """name -> dtype of the tensors the contract declares as float and that are stored as
    a float (a float ``t2d`` is W011's, not a weight)."""
    exp = expectations(ctx)
    if exp is None:
        return {}
    floats = exp.contract.dtype_families["float"]
    out = {}
    for name, t in ctx.checkpoint.tensors.items():
        expected = exp.match(name)
        if expected is not None and expected.dtype == "float" and t.dtype in floats:
            out[name] = t.dtype
    return out


def _float_dtypes(ctx: Context) -> Counter:
    return Counter(_float_weights(ctx).values())


class MixedFloatDtypes(WeightsRule):
    """The weights mix float dtypes (some bf16, some fp32, ...)."""

    id = "W012"
    name = "mixed-float-dtypes"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("InternLM/lmdeploy#4991",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        counts = _float_dtypes(ctx)
        if len(counts) < 2:
            return
        main, _ = counts.most_common(1)[0]
        odd = sorted(n for n, dtype in _float_weights(ctx).items() if dtype != main)
        summary = ", ".join(f"{n} {d}" for d, n in counts.most_common())
        example = ", ".join(odd[:3]) + (" ..." if len(odd) > 3 else "")
        yield tensor_hit(
            ctx,
            odd[0],
            f"the weights mix float dtypes ({summary}); cast everything to {main} before saving "
            f"(not {main}: {example})",
        )


class DtypeConfigMismatch(WeightsRule):
    """The config's `torch_dtype`/`dtype` is not the dtype the weights are stored in."""

    id = "W013"
    name = "dtype-config-mismatch"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        exp = expectations(ctx)
        counts = _float_dtypes(ctx)
        if exp is None or not counts:
            return
        for key in ("torch_dtype", "dtype"):
            value = ctx.config.get(key)
            if isinstance(value, str):
                break
        else:
            return
        declared = exp.contract.config_dtypes.get(value.removeprefix("torch."))
        main, _ = counts.most_common(1)[0]
        if declared is None or declared == main:
            return
        names = {
            v: k
            for k, v in exp.contract.config_dtypes.items()
            if k in ("bfloat16", "float16", "float32", "float64")
        }
        yield Hit(
            f"{key} is {value!r} but the weights are stored as {main}; set {key} to "
            f"{names.get(main, main.lower())!r} (engines with dtype auto cast to the config's dtype)",
            pointer=f"/{key}",
            edit=(Edit.set(f"/{key}", names[main]),) if main in names else None,
        )
