"""Load the tensor contracts declared in ``schema/tensors/*.json``.

The JSON files are the single declaration of which tensors each ``speculators_model_type``
writes (see ``schema/tensors/contract.schema.json``). This module turns them into small
frozen objects and checks every expression once at load time, so a typo in a contract is a
tool error at import of the contract, not a silent skip during validation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from spec_format.base.errors import SpecfmtError
from spec_format.facts import package_data
from spec_format.facts.contract import available_types
from spec_format.facts.contract.expr import compile_expression

_FOLDER = "tensors"
_SHARED = "symbols.json"


class ContractError(SpecfmtError):
    """A contract file is missing or malformed (a bug in specfmt, not in the user's input)."""


@dataclass(frozen=True)
class SymbolSpec:
    """How to read one symbol (``H``, ``A``, ``fc_norm`` ...) from a config."""

    name: str
    type: str  # "dim" (int >= 1), "count" (int >= 0), "bool", "str"
    paths: tuple[str, ...] = ()
    length_of: str | None = None
    otherwise: str | None = None  # the JSON key "else"
    default: Any = None
    has_default: bool = False
    description: str = ""


@dataclass(frozen=True)
class RoleSpec:
    """What a tensor role means (``roles`` in ``symbols.json``)."""

    name: str
    group: str  # the part of the draft it belongs to ("decoder layers", "lm_head" ...)
    compute: bool  # a draft step multiplies by it (false: a lookup table or an index map)
    description: str = ""


@dataclass(frozen=True)
class TensorSpec:
    """One entry of a contract, before loop expansion."""

    name: str
    shape: tuple[str | int, ...]
    dtype: str  # family: "float", "bool", "int64"
    loops: tuple[tuple[str, str | int, str | int], ...] = ()  # (var, start, stop)
    required_if: str | bool = True
    optional_if: str | bool = False
    role: str | None = None  # a key of :func:`roles` (every contract entry names one)
    description: str = ""

    @property
    def presence_text(self) -> str:
        if self.required_if is True:
            return "required"
        if self.required_if is False and self.optional_if is True:
            return "optional"
        return f"required when {self.required_if}" + (
            f", optional when {self.optional_if}" if self.optional_if is not False else ""
        )


@dataclass(frozen=True)
class Contract:
    model_type: str
    description: str
    symbols: dict[str, SymbolSpec]
    tensors: tuple[TensorSpec, ...]
    exhaustive: str | bool = True
    dtype_families: dict[str, frozenset[str]] = field(default_factory=dict)
    config_dtypes: dict[str, str] = field(default_factory=dict)

    def spec(self, name: str) -> TensorSpec | None:
        return next((t for t in self.tensors if t.name == name), None)


@cache
def roles() -> dict[str, RoleSpec]:
    """The tensor roles every contract entry chooses from, in the order of ``symbols.json``."""
    table = _read(_SHARED).get("roles", {})
    return {
        name: RoleSpec(name, spec["group"], bool(spec["compute"]), spec.get("description", ""))
        for name, spec in table.items()
        if not name.startswith("$")
    }


def has_contract(model_type: str | None) -> bool:
    return isinstance(model_type, str) and model_type in available_types()


@cache
def load_contract(model_type: str) -> Contract:
    """The contract of one type; raises :class:`ContractError` if there is none."""
    if not has_contract(model_type):
        raise ContractError(
            f"no tensor contract for speculators_model_type {model_type!r}; "
            f"contracts exist for {', '.join(available_types())}"
        )
    shared = _read(_SHARED)
    doc = _read(f"{model_type}.json")
    symbols = {
        name: _symbol(name, spec)
        for name, spec in {**shared.get("symbols", {}), **doc.get("symbols", {})}.items()
    }
    tensors = tuple(_tensor(entry, model_type) for entry in doc["tensors"])
    contract = Contract(
        model_type=doc["speculators_model_type"],
        description=doc.get("description", ""),
        symbols=symbols,
        tensors=tensors,
        exhaustive=doc.get("exhaustive", True),
        dtype_families={k: frozenset(v) for k, v in shared["dtype_families"].items()},
        config_dtypes=dict(shared.get("config_dtypes", {})),
    )
    _check(contract)
    return contract


@cache
def _read(name: str) -> dict:
    try:
        text = package_data.schema_folder().joinpath(_FOLDER, name).read_text(encoding="utf-8")
        return json.loads(text)
    except (OSError, ValueError) as e:
        raise ContractError(f"cannot read tensor contract {name}: {e}") from None


def _symbol(name: str, spec: dict) -> SymbolSpec:
    return SymbolSpec(
        name=name,
        type=spec["type"],
        paths=tuple(spec.get("from", ())),
        length_of=spec.get("length_of"),
        otherwise=spec.get("else"),
        default=spec.get("default"),
        has_default="default" in spec,
        description=spec.get("description", ""),
    )


def _tensor(entry: dict, model_type: str) -> TensorSpec:
    presence = entry.get("presence", "required")
    if presence == "required":
        required_if, optional_if = True, False
    elif presence == "optional":
        required_if, optional_if = False, True
    elif isinstance(presence, dict):
        required_if = _condition(presence.get("required", False))
        optional_if = _condition(presence.get("optional", False))
    else:
        raise ContractError(
            f"{model_type}: tensor {entry.get('name')!r}: bad presence {presence!r}"
        )
    loops = tuple((var, bounds[0], bounds[1]) for var, bounds in entry.get("for", {}).items())
    return TensorSpec(
        name=entry["name"],
        shape=tuple(entry["shape"]),
        dtype=entry["dtype"],
        loops=loops,
        required_if=required_if,
        optional_if=optional_if,
        role=entry.get("role"),
        description=entry.get("description", ""),
    )


def _condition(value: str | bool) -> str | bool:
    if isinstance(value, str) and value.strip() in ("true", "True"):
        return True
    if isinstance(value, str) and value.strip() in ("false", "False"):
        return False
    return value


def _check(contract: Contract) -> None:
    """Compile every expression now, so contract bugs surface at load, not mid-validation."""
    exprs: list[str | int | bool | None] = [contract.exhaustive]
    for s in contract.symbols.values():
        exprs.append(s.otherwise)
        if s.type not in ("dim", "count", "bool", "str"):
            raise ContractError(f"{contract.model_type}: symbol {s.name}: unknown type {s.type!r}")
    known_roles = roles()
    for t in contract.tensors:
        if t.role not in known_roles:
            raise ContractError(
                f"{contract.model_type}: {t.name}: role {t.role!r} is not one of "
                f"{', '.join(known_roles)} (the roles table of {_SHARED})"
            )
        if t.dtype not in contract.dtype_families:
            raise ContractError(
                f"{contract.model_type}: {t.name}: unknown dtype family {t.dtype!r}"
            )
        exprs.extend(t.shape)
        exprs.extend([t.required_if, t.optional_if])
        for _, start, stop in t.loops:
            exprs.extend([start, stop])
    for e in exprs:
        if isinstance(e, str):
            try:
                compile_expression(e)
            except ValueError as err:
                raise ContractError(f"{contract.model_type}: {err}") from None
