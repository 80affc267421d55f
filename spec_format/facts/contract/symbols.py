"""Read the contract symbols (H, V, D, A, L, ...) out of a config dict.

Each symbol names the config paths it comes from (see ``schema/tensors/symbols.json``). A
value of the wrong type (a string hidden size, a negative layer count) leaves the symbol
unknown and is recorded in ``problems``; the schema layer reports the config error itself,
and the weights rules simply skip what depends on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spec_format.facts.contract.expr import UNKNOWN, evaluate, names_in
from spec_format.facts.contract.loader import Contract, SymbolSpec


@dataclass
class Symbols(Mapping):
    """Resolved symbol values (``UNKNOWN`` when a config does not provide one)."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # symbol -> config path or "default"
    problems: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def known(self, *names: str) -> bool:
        return all(self.values.get(n, UNKNOWN) is not UNKNOWN for n in names)

    def describe(self, name: str) -> str:
        """``"A=3 (len(eagle_aux_hidden_state_layer_ids))"`` for messages."""
        value = self.values.get(name, UNKNOWN)
        src = self.sources.get(name)
        return f"{name}={value!r}" + (f" ({src})" if src else "")


def get_path(config: Mapping[str, Any], path: str) -> Any:
    """Follow a dotted path through nested dicts; ``None`` when any step is missing."""
    node: Any = config
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _typed(value: Any, kind: str) -> bool:
    if kind == "dim":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1
    if kind == "count":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    return False  # pragma: no cover - the loader checks types


def resolve_symbols(contract: Contract, config: Mapping[str, Any]) -> Symbols:
    out = Symbols()
    resolving: set[str] = set()

    def resolve(name: str) -> Any:
        if name in out.values:
            return out.values[name]
        spec = contract.symbols.get(name)
        if spec is None or name in resolving:
            return UNKNOWN
        resolving.add(name)
        value, source = _resolve_one(spec, config, resolve, out.problems)
        resolving.discard(name)
        out.values[name] = value
        if source:
            out.sources[name] = source
        return value

    for name in contract.symbols:
        resolve(name)
    return out


def _resolve_one(spec: SymbolSpec, config, resolve, problems: list[str]) -> tuple[Any, str]:
    for path in spec.paths:
        value = get_path(config, path)
        if value is None:
            continue
        if _typed(value, spec.type):
            return value, path
        problems.append(f"{path} is {value!r}, not a valid {spec.type} for symbol {spec.name}")
    if spec.length_of:
        value = get_path(config, spec.length_of)
        if isinstance(value, list):
            return len(value), f"len({spec.length_of})"
        if value is not None:
            problems.append(f"{spec.length_of} is not a list; symbol {spec.name} is unknown")
            return UNKNOWN, ""
    if spec.otherwise:
        env = {n: resolve(n) for n in names_in(spec.otherwise)}
        value = evaluate(spec.otherwise, env)
        if value is not UNKNOWN and value is not None and _typed(value, spec.type):
            return value, spec.otherwise
    if spec.has_default:
        return spec.default, "default"
    return UNKNOWN, ""
