"""An accept-only compiled check of a JSON Schema: plain Python closures, built once per
(format version, type), that say True only for a document jsonschema also accepts.

Every config passes through it first (spec_format.rules.schema.schema_findings); jsonschema
walks, and words the findings of, only a config this check does not accept, so a passing
config never imports jsonschema. Soundness rests on one rule: every keyword is checked as
strictly as jsonschema or more strictly (only the exact JSON types dict, list, str, int,
float, bool and None are accepted; ``1.0`` is no integer here; ``enum``/``const`` compare
types exactly), never more leniently. Keywords whose strict version would not be sound
(``not``, an undiscriminated ``oneOf``) or that the bundled schemas do not use make
:func:`compile_schema` return None, and that schema is always walked.
tests/test_fast_path.py compares the verdicts on every fixture and on generated mutations.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]
#: (node, base URI) -> the node with its $ref chain followed, and its new base URI
Deref = Callable[[Any, str], tuple[Any, str]]

#: keywords that assert nothing (``$defs`` only holds what ``$ref`` points at; jsonschema
#: ignores ``discriminator``, an OpenAPI annotation)
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples"}
    | {"discriminator", "deprecated", "readOnly", "writeOnly"}
)
_JSON = (dict, list, str, int, float, bool, type(None))
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
_NUMBERS = (int, float)
#: each bound as the comparison that holds (the generated code tests its negation)
_BOUND_OPS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": lambda x, v: x >= v,
    "maximum": lambda x, v: x <= v,
    "exclusiveMinimum": lambda x, v: x > v,
    "exclusiveMaximum": lambda x, v: x < v,
}
_SIZES: dict[str, tuple[type, bool]] = {  # keyword -> (the type it applies to, is a minimum)
    "minLength": (str, True),
    "maxLength": (str, False),
    "minItems": (list, True),
    "maxItems": (list, False),
}


class _Unsupported(Exception):
    pass


def compile_schema(schema: Any, base: str, deref: Deref) -> Check | None:
    """The accept-only check of ``schema`` (references resolved with ``deref`` against
    ``base``) as nested closures, one per keyword, or None when it uses a keyword this
    module cannot check soundly. Cheap to build; :func:`generate` writes the same checks
    out as one function, faster per document and slower to build."""
    try:
        return _compile(schema, base, deref)
    except _Unsupported:
        return None


def _compile(node: Any, base: str, deref: Deref) -> Check:
    if node is True:
        return lambda x: True
    if node is False:
        return lambda x: False
    if not isinstance(node, dict):
        raise _Unsupported(node)
    node, base = deref(node, base)
    checks: list[Check] = []
    for key, value in node.items():
        if key in _ANNOTATIONS or key == "additionalProperties":
            continue  # additionalProperties: checked with properties
        if key == "type":
            checks.append(_type(value))
        elif key in _BOUNDS:
            checks.append(_bound(_BOUNDS[key], value))
        elif key in _SIZES:
            checks.append(_size(*_SIZES[key], value))
        elif key == "required":
            checks.append(_required(tuple(value)))
        elif key == "properties":
            checks.append(_properties(value, node.get("additionalProperties", True), base, deref))
        elif key == "items" and isinstance(value, (dict, bool)):
            checks.append(_items(_compile(value, base, deref)))
        elif key == "enum":
            checks.append(_enum(tuple(value)))
        elif key == "const":
            checks.append(_enum((value,)))
        elif key in ("anyOf", "allOf") or (key == "oneOf" and _exclusive(value, base, deref)):
            # a oneOf whose branches no document can match two of at once is an anyOf
            branches = [_compile(b, base, deref) for b in value]
            checks.append(_all(branches) if key == "allOf" else _any(branches))
        else:
            raise _Unsupported(key)
    if "additionalProperties" in node and "properties" not in node:
        checks.append(_properties({}, node["additionalProperties"], base, deref))
    return _all(checks)


def _all(checks: list[Check]) -> Check:
    if len(checks) == 1:
        only = checks[0]
        return lambda x: type(x) in _JSON and only(x)
    checks_ = tuple(checks)

    def check(x: Any) -> bool:
        if type(x) not in _JSON:
            return False
        for c in checks_:  # noqa: SIM110 - a loop: no generator per call (hot path)
            if not c(x):
                return False
        return True

    return check


def _any(checks: list[Check]) -> Check:
    checks_ = tuple(checks)

    def check(x: Any) -> bool:
        for c in checks_:  # noqa: SIM110 - a loop: no generator per call (hot path)
            if c(x):
                return True
        return False

    return check


def _type(value: str | list[str]) -> Check:
    names = [value] if isinstance(value, str) else value
    try:
        allowed = tuple({t for name in names for t in _TYPES[name]})
    except (KeyError, TypeError):
        raise _Unsupported(value) from None
    return lambda x: type(x) in allowed


def _bound(holds: Callable[[Any, Any], bool], limit: Any) -> Check:
    if type(limit) not in _NUMBERS:
        raise _Unsupported(limit)
    return lambda x: type(x) not in _NUMBERS or holds(x, limit)


def _size(kind: type, minimum: bool, limit: Any) -> Check:
    if type(limit) is not int:
        raise _Unsupported(limit)
    if minimum:
        return lambda x: type(x) is not kind or len(x) >= limit
    return lambda x: type(x) is not kind or len(x) <= limit


def _required(keys: tuple[str, ...]) -> Check:
    need = frozenset(keys)
    return lambda x: type(x) is not dict or need <= x.keys()


def _properties(props: dict[str, Any], additional: Any, base: str, deref: Deref) -> Check:
    checks = {name: _compile(sub, base, deref) for name, sub in props.items()}
    if additional is False:
        return _closed(props, {k: c for k, c in checks.items() if props[k] is not True})
    other = None if additional is True else _compile(additional, base, deref)

    def check(x: Any) -> bool:
        if type(x) is not dict:
            return True
        for key, value in x.items():
            c = checks.get(key) if type(key) is str else None
            if c is not None:
                if not c(value):
                    return False
            elif other is not None and not other(value):
                return False
        return True

    return check


def _closed(props: dict[str, Any], checks: dict[str, Check]) -> Check:
    """``properties`` with ``additionalProperties: false``: a dict's keys must be str and
    among the names (one set comparison); a True subschema has no check to call."""
    names = frozenset(props)

    def check(x: Any) -> bool:
        if type(x) is not dict:
            return True
        if not x.keys() <= names:
            return False
        for key, value in x.items():
            if type(key) is not str:
                return False
            c = checks.get(key)
            if c is not None and not c(value):
                return False
        return True

    return check


def _items(item: Check) -> Check:
    def check(x: Any) -> bool:
        if type(x) is list:
            for v in x:
                if not item(v):
                    return False
        return True

    return check


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same JSON types all the way down (stricter than jsonschema's
    ``equal``, which also takes 1 for 1.0)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b, strict=True))
    return a == b


#: types whose values are equal exactly when they are the same value (no NaN, no nesting)
_SCALARS = (str, int, bool, type(None))


def _enum(choices: tuple[Any, ...]) -> Check:
    if choices and all(type(c) in _SCALARS for c in choices):
        # what _same says of each choice: the same type and an equal value
        kinds, members = frozenset(map(type, choices)), frozenset((type(c), c) for c in choices)
        return lambda x: type(x) in kinds and (type(x), x) in members
    return lambda x: any(_same(x, c) for c in choices)


def _exclusive(branches: Any, base: str, deref: Deref) -> bool:
    """True when every branch requires one same property to be a ``const`` string, a
    different one per branch: no document matches two branches."""
    if not isinstance(branches, list) or not branches:
        return False
    seen: set[str] = set()
    shared: set[str] | None = None
    for branch in branches:
        node, _ = deref(branch, base) if isinstance(branch, dict) else (branch, base)
        if not isinstance(node, dict):
            return False
        tags = {
            name: sub["const"]
            for name, sub in node.get("properties", {}).items()
            if name in node.get("required", ())
            and isinstance(sub, dict)
            and isinstance(sub.get("const"), str)
        }
        shared = set(tags) if shared is None else shared & set(tags)
        if not shared:
            return False
    name = min(shared)  # type: ignore[type-var]
    for branch in branches:
        node, _ = deref(branch, base)
        value = node["properties"][name]["const"]
        if value in seen:
            return False
        seen.add(value)
    return True


# -- the generated function ----------------------------------------------------------------


def generate(schema: Any, base: str, deref: Deref) -> Check:
    """The checks of :func:`compile_schema`, keyword for keyword, written out as the source
    of one function per ``anyOf``/``oneOf`` branch and one for the root, then compiled: a
    value is checked by straight-line code instead of a call per keyword (about twice as
    fast; compiling it costs about as much as checking a thousand documents with the
    closures). Raises where :func:`compile_schema` returns None, and may raise
    SyntaxError, RecursionError or MemoryError on an unusual schema."""
    gen = _Generator(deref)
    root = gen.function(schema, base)
    namespace = dict(gen.constants)
    exec(compile("\n".join(gen.lines), "<schema check>", "exec"), namespace)  # noqa: S102
    return namespace[root]


#: what a generated module's ``build`` is given (the names its code refers to)
_BUILD_ARGUMENTS = ("_MISSING", "_JSON", "_NUMBERS", "_enum")


def module_source(schema: Any, base: str, deref: Deref, header: str) -> str | None:
    """The function :func:`generate` compiles, written out as the source of a module (for
    scripts/generate.py; :func:`load_module` builds it): a process that imports it pays
    neither for building the closures nor for compiling the generated function. None where
    :func:`generate` would raise (such a schema keeps the closures)."""
    gen = _Generator(deref)
    try:
        root = gen.function(schema, base)
    except (_Unsupported, RecursionError, ValueError, TypeError):
        return None
    given = set(_BUILD_ARGUMENTS)
    if any(name not in gen.sources for name in gen.constants if name not in given):
        return None  # a constant with no source
    constants = [f"    {name} = {gen.sources[name]}" for name in gen.constants if name not in given]
    body = [f"    {line}" if line else "" for line in gen.lines]
    return "\n".join(
        [
            header,
            f"def build({', '.join(_BUILD_ARGUMENTS)}):",
            *constants,
            "",
            *body,
            f"    return {root}",
            "",
        ]
    )


def load_module(module: Any) -> Check:
    """The check of a module :func:`module_source` wrote."""
    return module.build(_MISSING, _JSON, _NUMBERS, _enum)


_TYPE_NAMES = {t: "type(None)" if t is type(None) else t.__name__ for t in _JSON}


def _literal(value: Any) -> str:
    """Python source for a constant of the generated code (exact: equal and of the same
    type once evaluated); raises _Unsupported for anything else."""
    if type(value) is type:
        if value not in _TYPE_NAMES:
            raise _Unsupported(value)
        return _TYPE_NAMES[value]
    if type(value) is tuple:
        return "(" + "".join(f"{_literal(v)}, " for v in value) + ")"
    if type(value) is frozenset:
        items = sorted(_literal(v) for v in value)
        return f"frozenset({{{', '.join(items)}}})" if items else "frozenset()"
    if type(value) is list:
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if type(value) is dict:
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if type(value) is float and not math.isfinite(value):
        raise _Unsupported(value)
    if type(value) in (str, int, float, bool, type(None)):
        return repr(value)
    raise _Unsupported(value)


def generate_each(schemas: dict[str, Any], base: str, deref: Deref) -> dict[str, Check]:
    """:func:`generate` of each of ``schemas`` (the value of a ``properties`` keyword, say),
    written and compiled together. Raises as :func:`generate` does."""
    gen = _Generator(deref)
    names = {key: gen.function(sub, base) for key, sub in schemas.items()}
    namespace = dict(gen.constants)
    exec(compile("\n".join(gen.lines), "<schema check>", "exec"), namespace)  # noqa: S102
    return {key: namespace[name] for key, name in names.items()}


class _Generator:
    def __init__(self, deref: Deref) -> None:
        self.deref = deref
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {
            "_JSON": _JSON,
            "_NUMBERS": _NUMBERS,
            "_MISSING": _MISSING,
        }
        self.sources: dict[str, str] = {}
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def constant(self, value: Any, source: str | None = None) -> str:
        name = self.name("c")
        self.constants[name] = value
        # its source, for module_source (None: it has none; generate does not need it)
        with contextlib.suppress(_Unsupported):
            self.sources[name] = source if source is not None else _literal(value)
        return name

    def function(self, node: Any, base: str) -> str:
        """A function ``name(x) -> bool`` for ``node``; returns its name."""
        body: list[str] = []
        self.node(node, base, "x", body, 1)
        name = self.name("f")
        self.lines += [f"def {name}(x):", *body, "    return True", ""]
        return name

    def node(self, node: Any, base: str, var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        if node is True:
            return
        if node is False:
            out.append(f"{pad}return False")
            return
        if not isinstance(node, dict):
            raise _Unsupported(node)
        node, base = self.deref(node, base)
        t = self.name("t")
        out.append(f"{pad}{t} = type({var})")
        # the type first (every check is a pure test: the order does not change the
        # verdict), so that the tests after it can leave out a type they know
        allowed: tuple[type, ...] = _JSON
        if "type" in node:
            value = node["type"]
            names = [value] if isinstance(value, str) else value
            try:
                allowed = tuple(sorted({t_ for n in names for t_ in _TYPES[n]}, key=str))
            except (KeyError, TypeError):
                raise _Unsupported(value) from None
        if len(allowed) == 1:
            out.append(f"{pad}if {t} is not {self.constant(allowed[0])}: return False")
        else:
            out.append(f"{pad}if {t} not in {self.constant(allowed)}: return False")

        def only(*kinds: type) -> str:
            """The type test a keyword needs, "" when the type already passed says it."""
            if set(allowed) <= set(kinds):
                return ""
            if len(kinds) == 1:
                return f"{t} is {self.constant(kinds[0])} and "
            return f"{t} in {self.constant(kinds)} and "

        for key, value in node.items():
            if key in _ANNOTATIONS or key in ("additionalProperties", "type"):
                continue
            if key in _BOUNDS:
                if type(value) not in _NUMBERS:
                    raise _Unsupported(value)
                if not set(allowed) & set(_NUMBERS):
                    continue  # no number passes the type: the bound holds for the rest
                # "not (x >= v)", as the closures test it (x < v would take NaN)
                op = _BOUND_OPS[key]
                out.append(
                    f"{pad}if {only(*_NUMBERS)}not ({var} {op} {self.constant(value)}): "
                    "return False"
                )
            elif key in _SIZES:
                kind, minimum = _SIZES[key]
                if type(value) is not int:
                    raise _Unsupported(value)
                if kind not in allowed:
                    continue
                op = "<" if minimum else ">"
                out.append(f"{pad}if {only(kind)}len({var}) {op} {value}: return False")
            elif key == "required":
                if dict not in allowed:
                    continue
                need = self.constant(frozenset(value))
                out.append(f"{pad}if {only(dict)}not {need} <= {var}.keys(): return False")
            elif key == "properties":
                if dict not in allowed:
                    continue
                self.properties(
                    value,
                    node.get("additionalProperties", True),
                    base,
                    var,
                    only(dict),
                    out,
                    depth,
                )
            elif key == "items" and isinstance(value, (dict, bool)):
                self.items(value, base, var, only(list), out, depth)
            elif key in ("enum", "const"):
                choices = tuple(value) if key == "enum" else (value,)
                out.append(f"{pad}if not {self.enum(choices, var, t)}: return False")
            elif key in ("anyOf", "allOf") or (
                key == "oneOf" and _exclusive(value, base, self.deref)
            ):
                if key == "allOf":
                    for branch in value:
                        self.node(branch, base, var, out, depth)
                else:
                    names = [self.function(b, base) for b in value]
                    test = " or ".join(f"{n}({var})" for n in names) or "False"
                    out.append(f"{pad}if not ({test}): return False")
            else:
                raise _Unsupported(key)
        if "additionalProperties" in node and "properties" not in node and dict in allowed:
            self.properties({}, node["additionalProperties"], base, var, only(dict), out, depth)

    def enum(self, choices: tuple[Any, ...], var: str, t: str) -> str:
        """The test that ``var`` is one of ``choices`` (as :func:`_same` compares)."""
        for kind in (str, int):
            if choices and all(type(c) is kind for c in choices):
                member = self.constant(frozenset(choices))
                return f"({t} is {self.constant(kind)} and {var} in {member})"
        if choices and all(type(c) in _SCALARS for c in choices):
            kinds = self.constant(frozenset(map(type, choices)))
            members = self.constant(frozenset((type(c), c) for c in choices))
            return f"({t} in {kinds} and ({t}, {var}) in {members})"
        try:
            source: str | None = f"_enum({_literal(choices)})"
        except _Unsupported:
            source = None
        check = self.constant(_enum(choices), source)
        return f"{check}({var})"

    def items(self, item: Any, base: str, var: str, guard: str, out: list[str], depth: int):
        pad = "    " * depth
        value = self.name("v")
        body: list[str] = []
        self.node(item, base, value, body, depth + 2)
        if not body:
            return
        out.append(f"{pad}if {guard}True:" if guard else f"{pad}if True:")
        out.append(f"{pad}    for {value} in {var}:")
        out += body

    def properties(
        self,
        props: dict[str, Any],
        additional: Any,
        base: str,
        var: str,
        guard: str,
        out: list[str],
        depth: int,
    ) -> None:
        pad = "    " * depth
        body: list[str] = []
        for name, sub in props.items():
            value = self.name("v")
            inner: list[str] = []
            self.node(sub, base, value, inner, depth + 2)
            body.append(f"{pad}    {value} = {var}.get({name!r}, _MISSING)")
            body.append(f"{pad}    if {value} is not _MISSING:")
            body += inner or [f"{pad}        pass"]
        if additional is not True:
            key, value = self.name("k"), self.name("v")
            known = self.constant(frozenset(props))
            body.append(f"{pad}    for {key}, {value} in {var}.items():")
            body.append(f"{pad}        if type({key}) is str and {key} in {known}: continue")
            inner = []
            self.node(additional, base, value, inner, depth + 2)
            body += inner or [f"{pad}        pass"]
        if body:
            out.append(f"{pad}if {guard}True:" if guard else f"{pad}if True:")
            out += body


_MISSING = object()
