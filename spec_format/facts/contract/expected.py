"""Expand a contract against one config: the concrete tensors a checkpoint should hold."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spec_format.facts.contract.expr import UNKNOWN, evaluate
from spec_format.facts.contract.loader import Contract, TensorSpec, load_contract
from spec_format.facts.contract.symbols import Symbols, resolve_symbols

#: A loop longer than this is not expanded (a hostile config can claim 10**9 layers); its
#: entries become patterns, which still accept and shape-check matching tensors.
MAX_LOOP = 4096

_VAR = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class ExpectedTensor:
    """One tensor the checkpoint should (or may) hold."""

    name: str
    shape: tuple[int | None, ...]  # None: this dimension cannot be judged
    shape_text: tuple[str, ...]  # the contract's expressions, for messages
    dtype: str  # family: "float", "bool", "int64"
    required: bool
    spec: TensorSpec

    @property
    def role(self) -> str | None:
        return self.spec.role

    def shape_matches(self, actual: tuple[int, ...]) -> bool:
        if len(actual) != len(self.shape):
            return False
        return all(e is None or e == a for e, a in zip(self.shape, actual, strict=False))

    def describe_shape(self) -> str:
        parts = []
        for value, text in zip(self.shape, self.shape_text, strict=False):
            if value is None:
                parts.append(f"{text}=?")
            elif str(value) == text:
                parts.append(text)
            else:
                parts.append(f"{text}={value}")
        return "[" + ", ".join(parts) + "]"


@dataclass(frozen=True)
class AbsentTensor:
    """A tensor the contract knows but this config rules out (``fc_norm.0.weight`` when
    ``fc_norm`` is false): present in a checkpoint, it is unexpected *for this reason*."""

    name: str
    spec: TensorSpec
    condition: str


@dataclass
class ExpectedSet:
    model_type: str
    contract: Contract
    symbols: Symbols
    tensors: dict[str, ExpectedTensor] = field(default_factory=dict)
    absent: dict[str, AbsentTensor] = field(default_factory=dict)
    #: entries whose loop bounds are unknown: (compiled name pattern, spec, loop vars)
    patterns: list[tuple[re.Pattern[str], TensorSpec, tuple[str, ...]]] = field(
        default_factory=list
    )
    exhaustive: Any = True  # True, False or UNKNOWN

    def match(self, name: str) -> ExpectedTensor | None:
        """The expectation for ``name``: exact, or through a pattern (shape evaluated with
        the loop variables bound to the numbers in the name)."""
        if name in self.tensors:
            return self.tensors[name]
        for pattern, spec, variables in self.patterns:
            m = pattern.fullmatch(name)
            if m:
                env = dict(self.symbols.values)
                env.update({v: int(m.group(v)) for v in variables})
                return _make(name, spec, env, required=False)
        return None

    def by_role(self, role: str) -> list[ExpectedTensor]:
        return [t for t in self.tensors.values() if t.role == role]

    @property
    def required(self) -> list[ExpectedTensor]:
        return [t for t in self.tensors.values() if t.required]


def expected_tensors(config: Mapping[str, Any], model_type: str | None = None) -> ExpectedSet:
    """What a checkpoint with this ``config.json`` should hold, according to its contract.

    ``model_type`` defaults to ``config["speculators_model_type"]``. Raises
    :class:`~spec_format.facts.contract.loader.ContractError` for a type without a contract.
    """
    model_type = model_type or config.get("speculators_model_type")
    contract = load_contract(str(model_type))
    symbols = resolve_symbols(contract, config)
    out = ExpectedSet(model_type=contract.model_type, contract=contract, symbols=symbols)
    out.exhaustive = evaluate(contract.exhaustive, symbols.values)
    for spec in contract.tensors:
        _expand(spec, symbols, out)
    return out


def _expand(spec: TensorSpec, symbols: Symbols, out: ExpectedSet) -> None:
    env = dict(symbols.values)
    ranges: list[tuple[str, range]] = []
    for var, start, stop in spec.loops:
        lo, hi = evaluate(start, env), evaluate(stop, env)
        if not (isinstance(lo, int) and isinstance(hi, int)) or hi - lo > MAX_LOOP:
            variables = tuple(v for v, _, _ in spec.loops)
            out.patterns.append((_name_pattern(spec.name), spec, variables))
            return
        ranges.append((var, range(lo, max(lo, hi))))
    for combo in itertools.product(*(r for _, r in ranges)):
        local = dict(env)
        local.update({var: value for (var, _), value in zip(ranges, combo, strict=False)})
        name = _VAR.sub(lambda m, local=local: str(local.get(m.group(1), m.group(0))), spec.name)
        required = evaluate(spec.required_if, local)
        if required is True:
            out.tensors[name] = _make(name, spec, local, required=True)
            continue
        optional = evaluate(spec.optional_if, local)
        if required is UNKNOWN or optional is UNKNOWN or optional is True:
            out.tensors.setdefault(name, _make(name, spec, local, required=False))
        else:
            condition = spec.required_if if isinstance(spec.required_if, str) else "never"
            out.absent.setdefault(name, AbsentTensor(name, spec, str(condition)))


def _name_pattern(name: str) -> re.Pattern[str]:
    """``"layers.{l}.x"`` -> ``layers\\.(?P<l>\\d+)\\.x`` (a repeated variable must repeat)."""
    seen: set[str] = set()
    regex = []
    for i, part in enumerate(_VAR.split(name)):
        if i % 2 == 0:
            regex.append(re.escape(part))
        elif part in seen:
            regex.append(f"(?P={part})")
        else:
            seen.add(part)
            regex.append(f"(?P<{part}>0|[1-9]\\d{{0,17}})")  # int() never sees 4300 digits
    return re.compile("".join(regex))


def _make(name: str, spec: TensorSpec, env: Mapping[str, Any], *, required: bool) -> ExpectedTensor:
    dims: list[int | None] = []
    for expr in spec.shape:
        value = evaluate(expr, env)
        dims.append(value if isinstance(value, int) and not isinstance(value, bool) else None)
    return ExpectedTensor(
        name=name,
        shape=tuple(dims),
        shape_text=tuple(str(e) for e in spec.shape),
        dtype=spec.dtype,
        required=required,
        spec=spec,
    )
