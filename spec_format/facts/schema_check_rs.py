"""An accept-only fast check of a JSON Schema with jsonschema-rs (Rust), built once per schema.

Past the first configs of a process (checked with the closures of
spec_format.facts.schema_check, cheaper to build than importing jsonschema-rs), every config
passes through it first (spec_format.facts.schemas.accepts); jsonschema, the reference,
walks and words the findings of only a config this check does not accept. It must never
accept what the reference (:class:`spec_format.base.numguard.IntegerValidator`, Draft
2020-12) rejects. jsonschema-rs implements the same draft, on the same (inlined) schema, and
reads a Python value the same way except in two places, both closed here:

* an integral float past 2**53 (``1e20``) is an ``integer`` to jsonschema-rs and to plain
  JSON Schema, not to the reference: wherever the schema says ``integer``, the copy
  jsonschema-rs compiles also bounds the value to +-2**53 (a larger int is then walked, and
  the walk accepts it: stricter is sound, only slower);
* a tuple is an ``array`` to jsonschema-rs, not to jsonschema: the check then looks at
  every place where the schema names the ``array`` type (:func:`_tuple_places`: the few
  array-valued keys).

Elsewhere jsonschema-rs is at least as strict: it refuses NaN and infinities, strings with
lone surrogates, non-string keys and non-JSON objects (it raises: not accepted). Being
stricter is sound only where a keyword's verdict grows with its subschemas' (``not``,
``if``, a ``oneOf`` two branches of which a document can match all invert one), and the
regular expressions and formats of the two differ, so a schema using a keyword outside
:data:`_SOUND` (``oneOf`` only where a ``const`` tag tells its branches apart) gets no
check (None) and is always walked. tests/test_fast_path.py compares the verdicts on every
fixture, rule case, generated mutations and Python values the two libraries read
differently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jsonschema_rs

from spec_format.base.jsonload import MAX_EXACT_FLOAT_INT

Check = Callable[[Any], bool]

#: keywords that assert nothing here (jsonschema and jsonschema-rs both ignore
#: ``discriminator``, an OpenAPI annotation, and ``x-`` extensions; ``$defs`` only holds
#: what a ``$ref`` points at, and the schemas checked here have none left)
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples"}
    | {"discriminator", "deprecated", "readOnly", "writeOnly"}
)
_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
#: keywords whose verdict holds whenever the verdicts of their subschemas do, and that the
#: two validators read alike (no regular expression, no format)
_SOUND = frozenset(
    {"type", "enum", "const", "required", "properties", "additionalProperties", "items"}
    | _BOUNDS
    | {"minLength", "maxLength", "minItems", "maxItems", "anyOf", "allOf", "oneOf"}
)
_TYPE_NAMES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
#: every integer bounded to what the reference takes for one (a float past it is not)
_EXACT = MAX_EXACT_FLOAT_INT


def compile_schema(schema: Any) -> Check | None:
    """The accept-only check of ``schema`` (a Draft 2020-12 schema with no ``$ref``, as
    :func:`spec_format.facts.schemas.inlined` makes them), or None when it uses a keyword
    whose jsonschema-rs verdict could be more lenient than the reference's."""
    if not _sound(schema):
        return None
    is_valid = jsonschema_rs.Draft202012Validator(
        _bounded_integers(schema), validate_formats=False
    ).is_valid
    places = tuple(_tuple_places(schema, ()))

    def check(value: Any) -> bool:
        try:
            if not is_valid(value):
                return False
        except (ValueError, TypeError, OverflowError, RecursionError):
            return False  # a value jsonschema-rs cannot read: the walk says what it is
        return not places or _no_tuple_at(places, value)

    return check


def _types(node: dict[str, Any]) -> frozenset[str]:
    value = node.get("type", ())
    return frozenset([value] if isinstance(value, str) else value)


def _sound(node: Any) -> bool:
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        if key in _ANNOTATIONS or key.startswith("x-"):
            continue
        if key not in _SOUND:
            return False
        if key in _BOUNDS and type(value) not in (int, float):
            return False
        if key == "type" and not (isinstance(value, (str, list)) and _types(node) <= _TYPE_NAMES):
            return False
        if key == "properties" and not (
            isinstance(value, dict) and all(map(_sound, value.values()))
        ):
            return False
        if key in ("additionalProperties", "items") and not _sound(value):
            return False
        if key in ("anyOf", "allOf", "oneOf") and not (
            isinstance(value, list) and all(map(_sound, value))
        ):
            return False
        if key == "oneOf" and not _tagged(value):
            return False
    return True


def _tagged(branches: list[Any]) -> bool:
    """True when every branch requires one same property to be a ``const`` string, a
    different one per branch: no document matches two branches, in either validator."""
    shared: set[str] | None = None
    for branch in branches:
        if not isinstance(branch, dict):
            return False
        props, required = branch.get("properties", {}), branch.get("required", ())
        tags = {
            name
            for name, sub in props.items()
            if name in required and isinstance(sub, dict) and isinstance(sub.get("const"), str)
        }
        shared = tags if shared is None else shared & tags
        if not shared:
            return False
    return any(
        len({b["properties"][name]["const"] for b in branches}) == len(branches)
        for name in shared or ()
    )


def _bounded_integers(node: Any) -> Any:
    """``node`` with every subschema that admits integers (and not all numbers) also bounded
    to +-2**53 (its own ``minimum``/``maximum`` kept where tighter); ``$defs`` left out
    (nothing refers to them in a schema without ``$ref``)."""
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k != "$defs"}
    if "properties" in node:
        out["properties"] = {k: _bounded_integers(v) for k, v in node["properties"].items()}
    for key in ("additionalProperties", "items"):
        if key in node:
            out[key] = _bounded_integers(node[key])
    for key in ("anyOf", "allOf", "oneOf"):
        if key in node:
            out[key] = [_bounded_integers(v) for v in node[key]]
    if "integer" in _types(node) and "number" not in _types(node):
        out["minimum"] = max(node.get("minimum", -_EXACT), -_EXACT)
        out["maximum"] = min(node.get("maximum", _EXACT), _EXACT)
    return out


def _tuple_guard(node: Any) -> Check | None:
    """A check that no tuple sits where ``node`` (or a subschema of it) names the ``array``
    type; None when it names it nowhere. Conservative: the places of every branch, and of
    ``additionalProperties`` and ``items`` for every value, are looked at."""
    places = tuple(_tuple_places(node, ()))
    return (lambda x: _no_tuple_at(places, x)) if places else None


def _no_tuple_at(places: tuple, x: Any) -> bool:
    for path, inner in places:
        v = x
        for key in path:
            if not isinstance(v, dict):  # no value there (the walk says what is)
                break
            v = v.get(key, _MISSING)
        else:
            if inner is None:
                if type(v) is tuple:  # exactly: jsonschema-rs refuses a subclass
                    return False
            elif v is not _MISSING and not inner(v):
                return False
    return True


def _tuple_places(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(the keys to a value, None) where the value must not be a tuple; (keys, a check)
    where the check of every item or property value of the value must hold."""
    if not isinstance(node, dict):
        return
    if "array" in _types(node):
        yield path, None
    for name, sub in node.get("properties", {}).items():
        yield from _tuple_places(sub, (*path, name))
    for key in ("anyOf", "allOf", "oneOf"):
        for sub in node.get(key, ()):
            yield from _tuple_places(sub, path)
    values, items = _tuple_guard(node.get("additionalProperties")), _tuple_guard(node.get("items"))
    if values is not None:
        yield path, lambda x: not isinstance(x, dict) or all(map(values, x.values()))
    if items is not None:
        yield path, lambda x: not isinstance(x, list) or all(map(items, x))


_MISSING = object()
