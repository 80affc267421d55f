"""Tensor contracts: the tensors each ``speculators_model_type`` writes, declared once as data.

The declarations live in ``schema/tensors/<type>.json`` (shipped as package data). This
package loads them, reads the symbols they use from a config (:func:`resolve_symbols`),
expands them into concrete tensors (:func:`expected_tensors`) and compares that with an
actual header or state dict (:func:`diff_tensors`). The weights rules, the reference
forward's strict loader and the test-fixture builder all read the same declaration.
"""

from __future__ import annotations

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
    available_types,
    has_contract,
    load_contract,
    roles,
)
from spec_format.facts.contract.symbols import Symbols, get_path, resolve_symbols

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
