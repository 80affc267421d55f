"""Tensor contracts: the tensors each ``speculators_model_type`` writes, declared once as data.

The declarations live in ``schema/tensors/<type>.json`` (shipped as package data). This
package loads them, reads the symbols they use from a config (:func:`resolve_symbols`),
expands them into concrete tensors (:func:`expected_tensors`) and compares that with an
actual header or state dict (:func:`diff_tensors`). The weights rules, the reference
forward's strict loader and the test-fixture builder all read the same declaration.

The names below are loaded from their module on first use: every validation imports the
weights rules, and a config-only run never expands a contract (start-up is most of it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spec_format.base.lazy import lazy_getattr
from spec_format.facts import package_data

if TYPE_CHECKING:
    from spec_format.facts.contract.diff import (
        ContractDiff,
        DtypeMismatch,
        ShapeMismatch,
        diff_tensors,
        torch_dtype_name,
    )
    from spec_format.facts.contract.expected import (
        AbsentTensor,
        ExpectedSet,
        ExpectedTensor,
        expected_tensors,
    )
    from spec_format.facts.contract.expr import UNKNOWN, ExpressionError, evaluate
    from spec_format.facts.contract.loader import (
        Contract,
        ContractError,
        RoleSpec,
        TensorSpec,
        has_contract,
        load_contract,
        roles,
    )
    from spec_format.facts.contract.symbols import Symbols, get_path, resolve_symbols

#: where each name of the package lives
_HOME = {
    "ContractDiff": "diff",
    "DtypeMismatch": "diff",
    "ShapeMismatch": "diff",
    "diff_tensors": "diff",
    "torch_dtype_name": "diff",
    "AbsentTensor": "expected",
    "ExpectedSet": "expected",
    "ExpectedTensor": "expected",
    "expected_tensors": "expected",
    "ExpressionError": "expr",
    "UNKNOWN": "expr",
    "evaluate": "expr",
    "Contract": "loader",
    "ContractError": "loader",
    "RoleSpec": "loader",
    "TensorSpec": "loader",
    "has_contract": "loader",
    "load_contract": "loader",
    "roles": "loader",
    "Symbols": "symbols",
    "get_path": "symbols",
    "resolve_symbols": "symbols",
}


def available_types() -> list[str]:
    """Every ``speculators_model_type`` with a tensor contract (a file of schema/tensors/)."""
    folder = package_data.schema_folder().joinpath("tensors")
    return sorted(
        p.name[: -len(".json")]
        for p in folder.iterdir()
        if p.name.endswith(".json") and p.name not in ("symbols.json", "contract.schema.json")
    )


__getattr__ = lazy_getattr(globals(), {n: f"{__name__}.{m}" for n, m in _HOME.items()})


__all__ = [
    "UNKNOWN",
    "AbsentTensor",
    "Contract",
    "ContractDiff",
    "ContractError",
    "DtypeMismatch",
    "ExpectedSet",
    "ExpectedTensor",
    "ExpressionError",
    "RoleSpec",
    "ShapeMismatch",
    "Symbols",
    "TensorSpec",
    "available_types",
    "diff_tensors",
    "evaluate",
    "expected_tensors",
    "get_path",
    "has_contract",
    "load_contract",
    "resolve_symbols",
    "roles",
    "torch_dtype_name",
]
