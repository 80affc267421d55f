"""A small, safe evaluator for the shape and presence expressions of tensor contracts.

Contracts say things like ``"A*Ht"``, ``"nH*hd"``, ``"D < V"`` or
``"H + r if confidence_head_with_markov else H"``. We parse them with :mod:`ast` and walk a
fixed whitelist of node types (names, literals, ``+ - * // %``, comparisons, ``and/or/not``,
``x if c else y``). There is no ``eval()``, no attribute access, no calls and no power
operator, so a contract file cannot run code or build huge numbers.

Symbols a config does not provide evaluate to :data:`UNKNOWN`, which propagates (three-valued
logic: ``False and UNKNOWN`` is ``False``, ``True and UNKNOWN`` is ``UNKNOWN``). Checks treat
an unknown dimension or condition as "cannot judge" and stay silent rather than guess.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

MAX_EXPRESSION_LENGTH = 200


class _Unknown:
    """The value of an expression that needs a symbol the config does not provide."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("UNKNOWN has no truth value; test `is UNKNOWN` first")


UNKNOWN: Any = _Unknown()


class ExpressionError(ValueError):
    """A contract expression uses syntax outside the whitelist (a bug in the contract)."""


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMPOPS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
#: JSON spellings accepted as literals, so contracts read naturally to non-Python tools.
_LITERAL_NAMES = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}


@lru_cache(maxsize=1024)
def compile_expression(text: str) -> ast.expr:
    """Parse ``text`` and check every node against the whitelist; cached."""
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ExpressionError(f"cannot parse {text!r}: {e.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(
            node,
            (
                ast.Expression,
                ast.Name,
                ast.Load,
                ast.Constant,
                ast.BinOp,
                ast.UnaryOp,
                ast.BoolOp,
                ast.Compare,
                ast.IfExp,
                ast.Tuple,
                ast.List,
                ast.And,
                ast.Or,
                ast.Not,
                ast.USub,
                *_BINOPS,
                *_CMPOPS,
            ),
        ):
            raise ExpressionError(f"{type(node).__name__} is not allowed in {text!r}")
        if isinstance(node, ast.Constant) and not isinstance(
            node.value, (int, str, bool, type(None))
        ):
            raise ExpressionError(f"literal {node.value!r} is not allowed in {text!r}")
    return tree.body


def names_in(text: str | int) -> set[str]:
    """The symbols an expression refers to."""
    if isinstance(text, int):
        return set()
    return {
        n.id
        for n in ast.walk(compile_expression(text))
        if isinstance(n, ast.Name) and n.id not in _LITERAL_NAMES
    }


def evaluate(expr: str | int | bool | None, env: Mapping[str, Any]) -> Any:
    """Evaluate a contract expression. Ints, bools and None are returned as they are."""
    if expr is None or isinstance(expr, (int, bool)):
        return expr
    return _eval(compile_expression(expr), env)


def _is_num(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _eval(node: ast.expr, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in _LITERAL_NAMES:
            return _LITERAL_NAMES[node.id]
        return env.get(node.id, UNKNOWN)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_eval(e, env) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        if v is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return not v
        return -v if _is_num(v) else UNKNOWN
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if not (_is_num(a) and _is_num(b)):
            return UNKNOWN
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            return UNKNOWN
        return _BINOPS[type(node.op)](a, b)
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, env) for v in node.values]
        decisive = isinstance(node.op, ast.Or)  # `or` is decided by a true value
        if any(v is not UNKNOWN and bool(v) is decisive for v in values):
            return decisive
        if any(v is UNKNOWN for v in values):
            return UNKNOWN
        return not decisive
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators, strict=False):
            right = _eval(right_node, env)
            if left is UNKNOWN or right is UNKNOWN:
                result = UNKNOWN
            else:
                try:
                    ok = _CMPOPS[type(op)](left, right)
                except TypeError:  # e.g. "qwen3" < 3: a config value of the wrong type
                    return UNKNOWN
                if not ok:
                    return False
            left = right
        return result
    if isinstance(node, ast.IfExp):
        cond = _eval(node.test, env)
        if cond is UNKNOWN:
            return UNKNOWN
        return _eval(node.body if cond else node.orelse, env)
    raise ExpressionError(f"{type(node).__name__} is not allowed")  # pragma: no cover
