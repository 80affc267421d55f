"""A fast deep copy of a parsed JSON document, and a comparison as JSON text compares.

``copy.deepcopy`` keeps a memo of every object and dispatches per item: on a config whose
list holds 1.4M numbers each copy took seconds, and migrate copies the document once per
step. A parsed document has no shared or cyclic parts, so a plain walk does: scalars are
immutable and taken as they are, dicts and lists rebuilt. Anything else (an object a
Python caller put in) is handed to ``copy.deepcopy``."""

from __future__ import annotations

import copy
from typing import Any

_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else copy_json(v) for k, v in value.items()}
    if kind is list:
        if all(type(v) in _SCALARS for v in value):
            return value.copy()
        return [v if type(v) in _SCALARS else copy_json(v) for v in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


def same_json(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are written as the same JSON text (with sorted keys): the same
    types (``1``, ``1.0`` and ``true`` are equal in Python, not in JSON) and the same float
    spellings (``0.0`` and ``-0.0``). Parts two documents share are not walked, so comparing
    a rewrite with its input costs what the rewrite touched."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return a.keys() == b.keys() and all(same_json(v, b[k]) for k, v in a.items())
    if kind is list:
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if kind is float:
        return repr(a) == repr(b)
    return a == b
