"""Bundled JSON Schemas: the catalog, lookup by (format version, type), and validators.

Schemas are read from the package (``spec_format.schema``, the repository's
``schema/`` folder) with :mod:`importlib.resources`, so an installed wheel works from any
directory. Every file has an absolute ``$id``; references between files are resolved
against the bundled files only: nothing is fetched. jsonschema and referencing are imported
only when a validator is built (to explain a config that failed, or by callers that ask for
one); inlining and :func:`resolve` follow ``$ref`` with the plain resolver below.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urldefrag, urljoin

from spec_format.base.errors import UsageError
from spec_format.facts import catalog, package_data

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError
    from referencing import Registry

SCHEMA_SUFFIX = ".schema.json"


def _schema_root():
    return package_data.schema_folder()


def schema_uri(version: str, name: str) -> str:
    return f"{catalog.data()['base_uri']}{version}/{name}"


@cache
def _all_documents() -> dict[str, dict[str, Any]]:
    """Every bundled schema document keyed by its ``$id``."""
    docs: dict[str, dict[str, Any]] = {}

    def walk(folder, prefix: str) -> None:
        for item in folder.iterdir():
            if item.is_dir():
                walk(item, f"{prefix}{item.name}/")
            elif item.name.endswith(SCHEMA_SUFFIX):
                doc = _load(f"{prefix}{item.name}")
                docs[doc["$id"]] = doc

    walk(_schema_root(), "")
    return docs


@cache
def _load(relative: str) -> dict[str, Any]:
    """One bundled document by its path below the schema folder (read once)."""
    return package_data.read_json(_schema_root().joinpath(*relative.split("/")))


def _document(uri: str) -> dict[str, Any] | None:
    """The bundled document whose ``$id`` is ``uri``: read alone when the URI names its
    file (every bundled one does), else found among all of them."""
    base = catalog.data()["base_uri"]
    if uri.startswith(base) and uri.endswith(SCHEMA_SUFFIX) and ".." not in uri:
        try:
            doc = _load(uri[len(base) :])
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict) and doc.get("$id") == uri:
            return doc
    return _all_documents().get(uri)


@cache
def registry() -> Registry:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resources_ = [
        (uri, Resource.from_contents(doc, default_specification=DRAFT202012))
        for uri, doc in _all_documents().items()
    ]
    return Registry().with_resources(resources_)


def load_schema(version: str, name: str) -> dict[str, Any]:
    """The raw document of ``<version>/<name>`` (``name`` with or without the suffix)."""
    if not name.endswith(SCHEMA_SUFFIX):
        name += SCHEMA_SUFFIX
    doc = _document(schema_uri(version, name))
    if doc is None:
        raise UsageError(f"no bundled schema {version}/{name}")
    return doc


def type_schema(version: str, model_type: str) -> dict[str, Any]:
    entry = catalog.version_entry(version)
    if model_type not in entry.types:
        raise UsageError(
            f"format version {version} has no type {model_type!r}; "
            f"it knows {', '.join(entry.types)}"
        )
    return load_schema(version, model_type)


@cache
def validator(version: str, model_type: str) -> Draft202012Validator:
    """A compiled validator for one type of one version (cached for the process).

    It validates an inlined copy of the schema (:func:`inlined`), which spares the registry
    lookups that otherwise dominate validation time. Messages and paths are the same.
    """
    from spec_format.base.numguard import IntegerValidator  # jsonschema: only to explain

    return IntegerValidator(inlined(version, model_type), registry=registry())


@cache
def pruned_validator(version: str, model_type: str) -> Draft202012Validator:
    """:func:`validator`, except that it does not descend into a property value or an
    array that the compiled check of its subschema accepts (:class:`_Part`).

    The compiled check never accepts what jsonschema rejects, so a subtree it accepts holds
    no error: the errors are the same, in the same order, and a failing config costs the
    walk of its failing parts only. :func:`validator` stays the plain reference the checks
    are tested against; tests/test_fast_path.py compares the findings of the two."""
    from jsonschema import validators as jsonschema_validators

    from spec_format.base.numguard import IntegerValidator

    keywords = IntegerValidator.VALIDATORS
    plain_properties, plain_items = keywords["properties"], keywords["items"]

    def properties(validator, props, instance, schema):
        if type(instance) is dict:  # the others: as jsonschema says (nothing, or its errors)
            props = dict(_Properties.of(props).rejected(instance))
        return plain_properties(validator, props, instance, schema)

    def items(validator, item, instance, schema):
        accepted = type(instance) is list and "prefixItems" not in schema
        if accepted and _Part.of(item).accepts_each(instance):
            return iter(())
        return plain_items(validator, item, instance, schema)

    pruned = jsonschema_validators.extend(
        IntegerValidator, validators={"properties": properties, "items": items}
    )
    return pruned(inlined(version, model_type), registry=registry())


def explained_errors(version: str, model_type: str, config: Any) -> Iterator[ValidationError]:
    """The errors ``pruned_validator(version, model_type).iter_errors(config)`` yields, in
    the same order and with the same attributes, found with less of jsonschema's walk.

    jsonschema checks every keyword of each object it descends into before descending
    further; here an object whose own keywords (all but ``properties`` and ``items``) the
    compiled check accepts yields no error of its own, so the walk goes straight on to the
    values whose subschema's check rejects them. Where a subschema's own keywords are
    rejected (or cannot be compiled), jsonschema descends into it as it would have, from
    the type's validator: below the root the inlined schema has no ``$ref``, ``$id`` or
    ``$schema`` on the way (a subschema with one is left to jsonschema whole), so that
    validator descends exactly as the one jsonschema would have built for the parent. Each
    error then gets the path and schema path that jsonschema's descent adds on the way up.
    tests/test_schema_walk.py compares every attribute with the plain walk's errors."""
    walker = pruned_validator(version, model_type)
    return _errors_below(walker, walker.schema, config, root=True)


def _errors_below(walker, schema: Any, instance: Any, root: bool = False):
    part = _Part.of(schema)
    layout = part.layout(walker.VALIDATORS, root)
    if layout is None or not _passes(layout[0], instance):
        yield from walker.iter_errors(instance) if root else part.descend(walker, instance)
        return
    for keyword, children in layout[1]:
        if keyword == "properties":
            if type(instance) is not dict:
                continue
            for name, sub in children.rejected(instance):
                for error in _errors_below(walker, sub, instance[name]):
                    error.path.appendleft(name)
                    error.schema_path.appendleft(name)
                    error.schema_path.appendleft("properties")
                    yield error
        elif type(instance) is list:  # items
            sub, child = children
            for index, value in enumerate(instance):
                if not child.accepts(value):
                    for error in _errors_below(walker, sub, value):
                        error.path.appendleft(index)
                        error.schema_path.appendleft("items")
                        yield error


def _passes(check, value: Any) -> bool:
    try:
        return check(value)
    except RecursionError:  # absurdly deep input: let the walk say what is wrong
        return False


class _Part:
    """One subschema of an :func:`inlined` schema with its compiled check, built once (the
    inlined schemas are cached and never mutated; :data:`_PARTS` keeps each one alive).

    After :data:`GENERATE_AFTER` uses the closures of a subschema that holds others give
    way to the generated function, as for a whole type in :func:`accepts`."""

    __slots__ = ("schema", "_check", "uses", "_layout", "_evolved")

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._check: Any = _UNSET  # compiled when first asked for
        self.uses = 0
        self._layout: Any = _UNSET
        self._evolved: tuple[Any, Any] | None = None

    @staticmethod
    def of(schema: Any) -> _Part:
        known = _PARTS.get(id(schema))
        if known is None or known.schema is not schema:
            known = _PARTS[id(schema)] = _Part(schema)
        return known

    @property
    def check(self):
        """The compiled check of the subschema (None: not compilable)."""
        if self._check is _UNSET:
            from spec_format.facts.schema_check import compile_schema

            # an inlined subschema has no $ref left: nothing for the resolver to look up
            ok = isinstance(self.schema, (dict, bool))
            self._check = compile_schema(self.schema, "", _deref) if ok else None
        return self._check

    def accepts(self, value: Any) -> bool:
        """True when the compiled check accepts ``value``; False when it does not, or
        cannot be compiled."""
        check = self._counted()
        try:
            return check is not None and check(value)
        except RecursionError:  # absurdly deep input: let the walk say what is wrong
            return False

    def accepts_each(self, values: list) -> bool:
        """True when the compiled check accepts every item of ``values``."""
        check = self._counted()
        try:
            return check is not None and all(check(v) for v in values)
        except RecursionError:
            return False

    def _counted(self) -> Callable[[Any], bool] | None:
        """The check for one more use (None: it cannot be compiled); the use that reaches
        :data:`GENERATE_AFTER` swaps the closures for the generated function."""
        self.uses += 1
        if self.uses == GENERATE_AFTER:
            self._generate()
        return self.check

    def _generate(self) -> None:
        if self.check is not None and _nested(self.schema):
            from spec_format.facts.schema_check import generate

            # where it cannot be generated (an unusual schema), the closures stay
            with contextlib.suppress(
                SyntaxError, RecursionError, MemoryError, ValueError, TypeError
            ):
                self._check = generate(self.schema, "", _deref)

    def descend(self, walker: Any, instance: Any) -> Iterator[ValidationError]:
        """``walker.descend(instance, schema)``: its validator for the subschema is built
        once. With no ``$``-keyword (no ``$id``, no ``$schema``) the subschema gets the
        walker's own class and resolver, so evolving the walker yields the same validator
        descend would build, and its iter_errors are descend's errors."""
        evolved = self._evolved
        if evolved is None or evolved[0] is not walker:
            schema = self.schema
            plain = isinstance(schema, dict) and not any(key.startswith("$") for key in schema)
            evolved = self._evolved = (walker, walker.evolve(schema=schema) if plain else None)
        if evolved[1] is None:
            return walker.descend(instance, self.schema)
        return evolved[1].iter_errors(instance)

    def layout(self, keywords: Any, root: bool):
        """(the check of the subschema's own keywords, its ``properties`` and ``items`` in
        schema order) for :func:`explained_errors`; None where jsonschema walks it whole."""
        if self._layout is _UNSET:
            self._layout = self._lay_out(keywords)
        if self._layout is None or (self._layout[2] and not root):
            return None
        return self._layout

    def _lay_out(self, keywords: Any):
        from spec_format.facts.schema_check import compile_schema

        schema = self.schema
        if not isinstance(schema, dict):
            return None
        own: dict[str, Any] = {}
        structure: list[tuple[str, Any]] = []
        for key, value in schema.items():
            if key not in keywords or (key == "additionalProperties" and value is True):
                continue  # jsonschema finds nothing there either
            if key == "properties" and isinstance(value, dict):
                structure.append((key, _Properties.of(value)))
            elif key == "items" and isinstance(value, dict) and "prefixItems" not in schema:
                structure.append((key, (value, _Part.of(value))))
            else:
                own[key] = value
        if "additionalProperties" in own and isinstance(schema.get("properties"), dict):
            # what is additional depends on the declared names, not on their subschemas
            own["properties"] = dict.fromkeys(schema["properties"], True)
        check = compile_schema(own, "", _deref)
        # below the root, a $schema, $id or reference is left to jsonschema's own descent
        anchored = any(key.startswith("$") for key in schema)
        return None if check is None else (check, tuple(structure), anchored)


_UNSET = object()
#: id of an inlined subschema -> its :class:`_Part`
_PARTS: dict[int, _Part] = {}
#: id of a ``properties`` value of an inlined schema -> its :class:`_Properties`
_PROPERTIES: dict[int, _Properties] = {}


class _Properties:
    """The value of one ``properties`` keyword of an :func:`inlined` schema: for each name
    with a subschema that is not ``true``, its position and the :class:`_Part` of it. After
    :data:`GENERATE_AFTER` uses the generated checks of all its subschemas, compiled
    together, stand in for the parts' (:func:`spec_format.facts.schema_check.generate_each`)."""

    __slots__ = ("entries", "parts", "props", "table", "uses")

    def __init__(self, props: dict[str, Any]) -> None:
        self.props = props
        self.entries = tuple(props.items())
        self.parts = {
            name: (i, _Part.of(sub).accepts)
            for i, (name, sub) in enumerate(self.entries)
            if sub is not True  # jsonschema finds nothing there
        }
        self.table = self.parts
        self.uses = 0

    @staticmethod
    def of(props: dict[str, Any]) -> _Properties:
        known = _PROPERTIES.get(id(props))
        if known is None or known.props is not props:
            known = _PROPERTIES[id(props)] = _Properties(props)
        return known

    def rejected(self, instance: dict) -> list[tuple[str, Any]]:
        """(name, subschema) of each entry whose value in ``instance`` (a dict) the
        compiled check of the subschema rejects or cannot check, in schema order."""
        self.uses += 1
        if self.uses == GENERATE_AFTER:
            self._generate()
        try:
            found = _scan(instance, self.table)
        except RecursionError:  # absurdly deep input: each part on its own says False
            found = _scan(instance, self.parts)
        if len(found) > 1:
            found.sort()
        return [self.entries[i] for i in found]

    def _generate(self) -> None:
        from spec_format.facts.schema_check import generate_each

        subs = {name: self.props[name] for name in self.parts}
        if all(_Part.of(sub).check is not None for sub in subs.values()):
            # where they cannot be generated (an unusual schema), the parts stay
            with contextlib.suppress(
                SyntaxError, RecursionError, MemoryError, ValueError, TypeError
            ):
                generated = generate_each(subs, "", _deref)
                self.table = {name: (i, generated[name]) for name, (i, _) in self.parts.items()}


def _scan(instance: dict, table: dict) -> list[int]:
    """The positions of the entries of ``table`` whose check rejects their value: each key
    of ``instance`` equal to a name is the one ``name in instance`` finds."""
    found = []
    for key, value in instance.items():
        known = table.get(key)
        if known is not None and not known[1](value):
            found.append(known[0])
    return found


def _nested(sub: Any) -> bool:
    """Whether a subschema holds others (an object's properties, an array's items, branches):
    only those are worth generating; a leaf's closures are about as fast."""
    return isinstance(sub, dict) and any(
        k in sub for k in ("properties", "additionalProperties", "items", "anyOf", "oneOf", "allOf")
    )


@cache
def inlined(version: str, model_type: str) -> dict[str, Any]:
    """The type's schema with every ``$ref`` replaced by its target (the schemas have no
    recursive references; sibling keywords of a ``$ref`` are merged over its target).
    Cached: callers must not mutate it."""
    schema = type_schema(version, model_type)
    return _inline(schema, schema["$id"])


def _inline(node: Any, base: str) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target, target_base = _deref(node, base)
            return _inline(target, target_base)
        return {
            k: _inline(v, base) if k not in ("const", "enum", "default", "examples") else v
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_inline(v, base) for v in node]
    return node


@cache
def _compiled(version: str, model_type: str):
    """The accept-only compiled check of the type's schema (None: not compilable)."""
    from spec_format.facts.schema_check import compile_schema

    schema = type_schema(version, model_type)
    return compile_schema(schema, schema["$id"], _deref)


@cache
def generated(version: str, model_type: str):
    """The type's compiled check as one generated function
    (:func:`spec_format.facts.schema_check.generate`), or the closures where it cannot be
    generated (None: not compilable)."""
    from spec_format.facts.schema_check import generate

    closures = _compiled(version, model_type)
    if closures is None:
        return None
    schema = type_schema(version, model_type)
    try:
        return generate(schema, schema["$id"], _deref)
    except (SyntaxError, RecursionError, MemoryError, ValueError, TypeError):
        return closures


#: configs of one (version, type) checked with the closures before its check is generated:
#: a run of one config never pays for compiling the generated function, a batch soon does
GENERATE_AFTER = 64
_CHECKED: dict[tuple[str, str], int] = {}


#: the package of the checks written out ahead (generated/checks, scripts/generate.py)
CHECKS_PACKAGE = "spec_format.checks"


def check_module_name(version: str, model_type: str) -> str:
    return f"v{version.replace('.', '_')}_{model_type}"


def check_modules(header: str) -> dict[str, str]:
    """The module of each bundled type's generated check (name -> source; scripts/generate.py
    writes them to generated/checks), for every type whose check can be generated."""
    from spec_format.facts.schema_check import module_source

    out = {}
    for version, entry in catalog.versions().items():
        for model_type in entry.types:
            schema = type_schema(version, model_type)
            text = module_source(
                schema, schema["$id"], _deref, header.format(schema=f"{version}/{model_type}")
            )
            if text is not None:
                out[check_module_name(version, model_type)] = text
    return out


@cache
def pregenerated(version: str, model_type: str):
    """The type's check as generated/checks holds it (None: no module for it): the
    generated function of :func:`generated`, without building the closures or compiling."""
    import importlib

    from spec_format.facts.schema_check import load_module

    try:
        module = importlib.import_module(
            f"{CHECKS_PACKAGE}.{check_module_name(version, model_type)}"
        )
    except ModuleNotFoundError:
        return None
    return load_module(module)


def accepts(version: str, model_type: str, config: Any) -> bool:
    """True when the compiled check (:mod:`spec_format.facts.schema_check`) accepts ``config``
    against the type's schema: the generated function as generated/checks holds it; for a
    type without one, the closures for the first :data:`GENERATE_AFTER` configs of a version
    and type, then the generated function (tests/test_fast_path.py checks that they agree).

    Only ever used to *accept*: False sends the config to the jsonschema walk, which is the
    reference and words every finding. tests/test_fast_path.py checks that it never accepts
    what jsonschema rejects, on every fixture and on generated mutations.
    """
    compiled = pregenerated(version, model_type)
    if compiled is None:
        key = (version, model_type)
        seen = _CHECKED.get(key, 0)
        if seen < GENERATE_AFTER:
            _CHECKED[key] = seen + 1
            compiled = _compiled(version, model_type)
        else:
            compiled = generated(version, model_type)
    if compiled is None:
        return False
    try:
        return compiled(config)
    except RecursionError:  # absurdly deep input: let the walk say what is wrong
        return False


@cache
def model_class(version: str, model_type: str):
    """The generated pydantic model of one type (imports spec_format.models lazily)."""
    import importlib

    module = importlib.import_module(f"spec_format.models.v{version.replace('.', '_')}")
    return getattr(module, type_schema(version, model_type)["title"])


def accepts_strictly(version: str, model_type: str, config: dict[str, Any]) -> bool:
    """True when the generated model accepts ``config`` in strict mode."""
    from pydantic import ValidationError

    try:
        model_class(version, model_type).model_validate(config, strict=True)
    except ValidationError:
        return False
    return True


@cache
def root_validator(version: str) -> Draft202012Validator:
    from spec_format.base.numguard import IntegerValidator

    entry = catalog.version_entry(version)
    return IntegerValidator(load_schema(version, entry.root), registry=registry())


@cache
def resolve(version: str, model_type: str, pointer_parts: tuple[str, ...]) -> dict[str, Any]:
    """The (``$ref``-followed) subschema describing the property at ``pointer_parts``,
    with sibling keywords of a ``$ref`` merged over the referenced schema. Returns ``{}``
    when the path leaves the declared properties. Cached: callers must not mutate it."""
    found = _walk(version, model_type, pointer_parts)
    return found[0] if found else {}


def _walk(version: str, model_type: str, parts: tuple[str, ...]) -> tuple[Any, str] | None:
    """The subschema at ``parts`` and its base URI, following the ``$ref``s on the way;
    None when the path leaves the declared properties."""
    schema = type_schema(version, model_type)
    node, base = _deref(schema, schema["$id"])
    for part in parts:
        props = node.get("properties", {})
        if part in props:
            node, base = _deref(props[part], base)
        elif part.isdigit() and "items" in node:
            node, base = _deref(node["items"], base)
        else:
            return None
    return node, base


@cache
def declared_names(version: str, model_type: str, parts: tuple[str, ...]) -> frozenset[str]:
    """The properties the type's schema declares at ``parts`` (as :func:`resolve` walks
    them), with those of every branch of a ``oneOf``/``anyOf``/``allOf`` there. Follows
    only the references on the way, never inlining a whole schema."""
    found = _walk(version, model_type, parts)
    if found is None:
        return frozenset()
    names: set[str] = set()
    todo = [found]
    while todo:
        n, b = todo.pop()
        if isinstance(n, dict):
            names.update(n.get("properties", {}))
            for key in ("oneOf", "anyOf", "allOf"):
                todo += (_deref(branch, b) for branch in n.get(key, []))
    return frozenset(names)


def _deref(node: dict[str, Any], base: str) -> tuple[dict[str, Any], str]:
    """``node`` with its ``$ref`` chain followed (siblings merged over each target) and the
    base URI its own references resolve against."""
    while isinstance(node, dict) and "$ref" in node:
        target, base = _lookup(node["$ref"], base)
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        node = merged
    return node, base


def _lookup(ref: str, base: str) -> tuple[Any, str]:
    """The target of ``ref`` (relative to ``base``) among the bundled documents, and the
    URI of the document that holds it. Only JSON-pointer fragments occur in the schemas."""
    uri, fragment = urldefrag(urljoin(base, ref))
    target: Any = _document(uri)
    if target is None:
        raise LookupError(f"unresolvable $ref {ref!r} from {base}")
    for token in fragment.split("/")[1:] if fragment else ():
        token = unquote(token).replace("~1", "/").replace("~0", "~")
        target = target[int(token)] if isinstance(target, list) else target[token]
    return target, uri
