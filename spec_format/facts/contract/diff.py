"""Compare what a contract expects with what a header (or a state dict) actually holds.

Used by the W rules, by the reference forward's strict loader (``ContractDiff.format()`` is
its error message) and by the fixture builder's self-check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spec_format.facts.contract.expected import AbsentTensor, ExpectedSet, ExpectedTensor


@dataclass(frozen=True)
class ShapeMismatch:
    expected: ExpectedTensor
    actual: tuple[int, ...]

    @property
    def name(self) -> str:
        return self.expected.name


@dataclass(frozen=True)
class DtypeMismatch:
    expected: ExpectedTensor
    actual: str

    @property
    def name(self) -> str:
        return self.expected.name


@dataclass
class ContractDiff:
    missing: list[ExpectedTensor] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    #: present although the config rules them out (with the condition that would allow them)
    ruled_out: list[AbsentTensor] = field(default_factory=list)
    wrong_shape: list[ShapeMismatch] = field(default_factory=list)
    wrong_dtype: list[DtypeMismatch] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.missing
            or self.unexpected
            or self.ruled_out
            or self.wrong_shape
            or self.wrong_dtype
        )

    def format(self, limit: int = 20) -> str:
        """A compact multi-line summary (the strict loader's error message)."""
        lines: list[str] = []

        def section(title: str, items: list[str]) -> None:
            if items:
                lines.append(f"{title} ({len(items)}):")
                lines.extend(f"  {i}" for i in items[:limit])
                if len(items) > limit:
                    lines.append(f"  ... and {len(items) - limit} more")

        section("missing", [f"{t.name} {t.describe_shape()}" for t in self.missing])
        section("unexpected", list(self.unexpected))
        section(
            "present although the config rules them out",
            [f"{a.name} (only when {a.condition})" for a in self.ruled_out],
        )
        section(
            "wrong shape",
            [
                f"{m.name}: {list(m.actual)}, expected {m.expected.describe_shape()}"
                for m in self.wrong_shape
            ],
        )
        section(
            "wrong dtype",
            [f"{m.name}: {m.actual}, expected {m.expected.dtype}" for m in self.wrong_dtype],
        )
        return "\n".join(lines) if lines else "matches the contract"


def _dtype_and_shape(value: Any) -> tuple[str, tuple[int, ...]]:
    if isinstance(value, tuple) and len(value) == 2:
        return value[0], tuple(value[1])
    return value.dtype, tuple(value.shape)


def diff_tensors(expected: ExpectedSet, actual: Mapping[str, Any]) -> ContractDiff:
    """``actual`` maps tensor names to objects with ``dtype``/``shape`` (a header's
    ``TensorInfo``) or to ``(dtype, shape)`` tuples. Dtypes are safetensors names
    (``"BF16"``); use :func:`torch_dtype_name` to convert torch dtypes."""
    out = ContractDiff()
    families = expected.contract.dtype_families
    for name, tensor in expected.tensors.items():
        if tensor.required and name not in actual:
            out.missing.append(tensor)
    for name, value in actual.items():
        exp = expected.match(name)
        if exp is None:
            if name in expected.absent:
                out.ruled_out.append(expected.absent[name])
            elif expected.exhaustive is True:
                out.unexpected.append(name)
            continue
        dtype, shape = _dtype_and_shape(value)
        if not exp.shape_matches(shape):
            out.wrong_shape.append(ShapeMismatch(exp, shape))
        if dtype not in families.get(exp.dtype, ()):
            out.wrong_dtype.append(DtypeMismatch(exp, dtype))
    return out


_TORCH_NAMES = {
    "float32": "F32",
    "float16": "F16",
    "bfloat16": "BF16",
    "float64": "F64",
    "bool": "BOOL",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
}


def torch_dtype_name(dtype: Any) -> str:
    """``torch.bfloat16`` (or ``"bfloat16"``) -> ``"BF16"``, without importing torch."""
    text = str(dtype).removeprefix("torch.")
    return _TORCH_NAMES.get(text, text.upper())
