"""Integers as the format means them, for the JSON Schema layer.

JSON Schema calls any number with a zero fraction an ``integer``, so ``"hidden_size": 1e20``
(a float of Python's json) passed the schema and then reached every rule as "no integer
here": the rules skipped it and ``validate`` said ok. Readers build tensors from these
values; a float past 2**53 is not even the integer it spells. Here an ``integer`` is an
int, or a float with no fraction that a double holds exactly (``64.0``, as JSON Schema
allows); ``1e20``, ``1e+308`` and ``64.5`` are the wrong type (S102), reported where the
schema says ``integer``, in every validator specfmt builds.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator, validators

from spec_format.base.jsonload import MAX_EXACT_FLOAT_INT


def is_format_integer(checker: Any, value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer() and abs(value) <= MAX_EXACT_FLOAT_INT


IntegerValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", is_format_integer),
)
