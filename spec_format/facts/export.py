"""Self-contained exports of the bundled JSON Schemas, for editors and other languages.

The hand-written schemas under ``schema/`` share definitions across files (every format
version's types use ``../defs/shared.schema.json#/$defs/dtype``). Tools in other languages
and editors want one file per schema with nothing to fetch, so an export *bundles*: every
``$ref`` is resolved and the target copied into the file's own ``$defs``, and the reference
rewritten to point there. The result gives the same verdict as the source (a test proves it
on every fixture). One rewrite makes the exports easier on generic tools: each ``oneOf`` +
OpenAPI ``discriminator`` becomes an ``enum`` plus one ``if``/``then`` per value (see
``_generic_dispatch``); ``codegen=True`` keeps the source's form for code generators.

Two dialects come from the same bundle:

* ``2020-12`` (the source dialect): ``$id`` is the source's ``$id``, the URI a published
  copy would live at (an identifier: nothing fetches it; docs/guide/publishing.md).
* ``07`` (draft-07, what most editors support best): produced mechanically from the
  2020-12 bundle: ``$defs`` becomes ``definitions``, references are rewritten, and a
  ``$ref`` with sibling keywords is wrapped in ``allOf`` (draft-07 ignores siblings of
  ``$ref``, which would drop every ``default`` and ``description`` beside one). Keywords
  draft-07 does not have make the conversion fail with the list of places, rather than
  produce a schema that silently validates less.

Why not a bundling library: the ``referencing`` registry resolves references but does not
bundle, and the few JSON Schema bundlers on PyPI either inline everything (losing the
shared names the TypeScript generator turns into interfaces) or do not rewrite the
OpenAPI ``discriminator`` mapping. The walk below knows which keywords hold subschemas,
so it never mistakes data (``default``, ``examples``, ``x-*`` values) for schema.

Layout of an export (also what ``generated/schemas/`` holds)::

    <out>/<version>/<type>.schema.json            2020-12, one per type
    <out>/<version>/speculators.schema.json       2020-12, the version's root (dispatch)
    <out>/<version>/draft-07/<name>.schema.json   the draft-07 variants
"""

from __future__ import annotations

import copy
import enum
import json
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urldefrag, urljoin

from spec_format.base.errors import InternalError, UsageError
from spec_format.facts import catalog, schemas

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT07_DIR = "draft-07"
#: extension keyword carrying a type's tensor contract (``schema/tensors/<type>.json``)
TENSORS_KEYWORD = "x-specfmt-tensors"


class Draft(str, enum.Enum):
    """JSON Schema dialect of an export."""

    D2020_12 = "2020-12"
    D07 = "07"


class ExportError(InternalError):
    """A bundled schema cannot be exported as asked (a problem of the schema source)."""


# -- which keywords hold subschemas ----------------------------------------------------------

_SCHEMA_MAP = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentSchema",
    }
)
#: keywords whose values are data, never subschemas
_DATA = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$vocabulary",
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveRef",
        "$recursiveAnchor",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "format",
        "contentEncoding",
        "contentMediaType",
        # OpenAPI's discriminator: JSON Schema validators ignore it; codegen uses it
        "discriminator",
    }
)
_KNOWN = _SCHEMA_MAP | _SCHEMA_LIST | _SCHEMA_ONE | _DATA | {"$ref"}

#: 2020-12 keywords draft-07 lacks; exporting a schema that uses one to draft-07 fails
_NOT_IN_DRAFT07 = frozenset(
    {
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
        "$recursiveRef",
        "$recursiveAnchor",
        "$vocabulary",
        "prefixItems",
        "unevaluatedProperties",
        "unevaluatedItems",
        "dependentRequired",
        "dependentSchemas",
        "maxContains",
        "minContains",
        "contentSchema",
    }
)
#: keywords the bundler cannot follow (they need dynamic scope or plain-name fragments)
_UNSUPPORTED = frozenset(
    {"$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor"}
)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _pointer_get(doc: Any, pointer: str, where: str) -> Any:
    node = doc
    for raw in pointer.split("/")[1:] if pointer else []:
        token = _unescape(raw)
        try:
            node = node[int(token)] if isinstance(node, list) else node[token]
        except (KeyError, IndexError, ValueError, TypeError):
            raise ExportError(f"{where}: reference target #{pointer} does not exist") from None
    return node


# -- bundling ---------------------------------------------------------------------------------


class _Bundler:
    """Copies one schema and everything it references into a single document."""

    def __init__(self, entry_uri: str) -> None:
        self.entry_uri = entry_uri
        self.registry = schemas.registry()
        self.defs: dict[str, Any] = {}
        self.names: dict[tuple[str, str], str] = {}

    def bundle(self) -> dict[str, Any]:
        doc = self._document(self.entry_uri, self.entry_uri)
        body = {k: v for k, v in doc.items() if k not in ("$defs", "definitions")}
        out = self._walk(body, self.entry_uri, "#")
        if self.defs:
            out["$defs"] = dict(sorted(self.defs.items()))
        return out

    def _document(self, uri: str, where: str) -> dict[str, Any]:
        try:
            return self.registry.contents(uri)
        except Exception:  # referencing raises its own NoSuchResource family
            raise ExportError(f"{where}: no bundled schema has $id {uri}") from None

    def _def_name(self, doc_uri: str, pointer: str) -> str:
        parts = [_unescape(p) for p in pointer.split("/")[1:]] if pointer else []
        if len(parts) == 2 and parts[0] in ("$defs", "definitions"):
            base = parts[1]
        elif not parts:
            stem = posixpath.basename(doc_uri)
            base = (
                stem[: -len(schemas.SCHEMA_SUFFIX)]
                if stem.endswith(schemas.SCHEMA_SUFFIX)
                else stem
            )
        else:
            base = parts[-1]
        if base not in self.defs:
            return base
        # same name from another document (for example an older version's defs file):
        # qualify it with that document's folder, which is its format version
        folder = posixpath.basename(posixpath.dirname(doc_uri)).replace(".", "_")
        candidate = f"{base}_v{folder}" if folder else base
        n = 2
        while candidate in self.defs:
            candidate = f"{base}_{n}"
            n += 1
        return candidate

    def _target(self, ref: str, base: str, where: str) -> str:
        """The bundled reference for ``ref`` (copying its target into ``$defs``)."""
        absolute = urljoin(base, ref)
        doc_uri, fragment = urldefrag(absolute)
        if fragment and not fragment.startswith("/"):
            raise ExportError(
                f"{where}: plain-name fragment {ref!r} is not supported by the export"
            )
        if doc_uri == self.entry_uri and not fragment:
            return "#"  # recursion to the entry schema itself
        key = (doc_uri, fragment)
        if key not in self.names:
            doc = self._document(doc_uri, where)
            node = _pointer_get(doc, fragment, where)
            name = self._def_name(doc_uri, fragment)
            self.names[key] = name
            self.defs[name] = None  # reserve the name while the target is walked (cycles)
            if isinstance(node, dict):
                node = {
                    k: v
                    for k, v in node.items()
                    if k not in ("$id", "$schema", "$defs", "definitions")
                }
            self.defs[name] = self._walk(node, doc_uri, f"{doc_uri}#{fragment}")
        return "#/$defs/" + _escape(self.names[key])

    def _walk(self, node: Any, base: str, where: str) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise ExportError(
                f"{where}: expected a schema (object or boolean), found {type(node).__name__}"
            )
        out: dict[str, Any] = {}
        for key, value in node.items():
            here = f"{where}/{_escape(key)}"
            if key.startswith("x-"):
                out[key] = copy.deepcopy(value)
            elif key not in _KNOWN:
                raise ExportError(
                    f"{here}: unknown keyword {key!r} (typo? extensions must start with x-)"
                )
            elif key in _UNSUPPORTED:
                raise ExportError(f"{here}: {key} is not supported by the export")
            elif key == "$id" and where != "#":
                raise ExportError(f"{here}: nested $id is not supported by the export")
            elif key == "$ref":
                out[key] = self._target(value, base, here)
            elif key in _SCHEMA_MAP:
                out[key] = {
                    k: self._walk(v, base, f"{here}/{_escape(k)}") for k, v in value.items()
                }
            elif key in _SCHEMA_LIST:
                out[key] = [self._walk(v, base, f"{here}/{i}") for i, v in enumerate(value)]
            elif key in _SCHEMA_ONE:
                out[key] = self._walk(value, base, here)
            elif key == "discriminator":
                out[key] = self._discriminator(value, base, here)
            else:
                out[key] = copy.deepcopy(value)
        return out

    def _discriminator(self, value: Any, base: str, where: str) -> Any:
        value = copy.deepcopy(value)
        mapping = value.get("mapping") if isinstance(value, dict) else None
        if isinstance(mapping, dict):
            value["mapping"] = {
                k: self._target(v, base, f"{where}/mapping") for k, v in mapping.items()
            }
        return value


def _order(schema: dict[str, Any]) -> dict[str, Any]:
    """Put the header keywords first and ``$defs`` last, the rest in source order."""
    head = [k for k in ("$schema", "$id", "$comment", "title", "description") if k in schema]
    tail = [k for k in ("$defs", "definitions") if k in schema]
    middle = [k for k in schema if k not in head and k not in tail]
    return {k: schema[k] for k in head + middle + tail}


def _source_name(version: str, name: str) -> str:
    return f"schema/{version}/{name}"


def _comment(version: str, name: str, draft: Draft) -> str:
    what = "draft-07 variant" if draft is Draft.D07 else "self-contained copy"
    return (
        f"Generated by `specfmt schema export` ({what} of {_source_name(version, name)}, "
        "every $ref resolved inside this file). Do not edit: change the source and regenerate."
    )


@cache
def _tensor_contract(model_type: str) -> dict[str, Any] | None:
    """The type's tensor contract when the package ships one (``schema/tensors/``)."""
    folder = resources.files("spec_format.schema") / "tensors"
    item = folder / f"{model_type}.json"
    if not item.is_file():
        return None
    contract = json.loads(item.read_text(encoding="utf-8"))
    contract.pop("$schema", None)
    symbols = folder / "symbols.json"
    if symbols.is_file():
        shared = json.loads(symbols.read_text(encoding="utf-8"))
        shared.pop("$schema", None)
        contract = {"shared_symbols": shared, **contract}
    return contract


def _bundle(version: str, name: str) -> dict[str, Any]:
    if not name.endswith(schemas.SCHEMA_SUFFIX):
        name += schemas.SCHEMA_SUFFIX
    schemas.load_schema(version, name)  # a clean UsageError for unknown names
    bundled = _Bundler(schemas.schema_uri(version, name)).bundle()
    bundled["$schema"] = DRAFT_2020_12
    bundled["$comment"] = _comment(version, name, Draft.D2020_12)
    return bundled


def bundle_type(
    version: str,
    model_type: str,
    draft: Draft | str = Draft.D2020_12,
    *,
    codegen: bool = False,
) -> dict[str, Any]:
    """The self-contained schema of one type of one format version (``codegen``: see
    :func:`bundle_root`).

    >>> from spec_format.facts import catalog
    >>> model_type = catalog.current_types()[0]
    >>> schema = bundle_type("0.9", model_type)
    >>> schema["$id"] == f"https://specfmt.dev/schema/0.9/{model_type}.schema.json"
    True
    >>> all(ref.startswith("#") for ref in iter_refs(schema))
    True
    """
    schemas.type_schema(version, model_type)  # unknown version/type: UsageError
    name = f"{model_type}{schemas.SCHEMA_SUFFIX}"
    bundled = _bundle(version, model_type)
    if not codegen:
        bundled = _generic_dispatch(bundled, _source_name(version, name))
    contract = _tensor_contract(model_type)
    if contract is not None:
        bundled[TENSORS_KEYWORD] = contract
    return _finish(bundled, version, name, draft)


def bundle_root(
    version: str, draft: Draft | str = Draft.D2020_12, *, codegen: bool = False
) -> dict[str, Any]:
    """The self-contained root schema of a format version.

    By default every ``oneOf`` + OpenAPI ``discriminator`` of the source (the root's over
    the types, 0.1/0.2's over proposal types) becomes a dispatch that generic validators and
    editors understand (see :func:`_generic_dispatch`); with ``codegen=True`` they stay, for
    code generators that build a tagged union from them.
    """
    root = catalog.version_entry(version).root
    bundled = _bundle(version, root)
    if not codegen:
        bundled = _generic_dispatch(bundled, _source_name(version, root))
    return _finish(bundled, version, root, draft)


def _generic_dispatch(node: Any, where: str) -> Any:
    """Replace each ``oneOf`` + ``discriminator`` by an ``enum`` on the discriminating
    property and one ``if``/``then`` per value.

    With ``oneOf`` a generic tool reports every branch's failure (or only the first
    branch's): that the type must be the branch's, for a config of another type. Here an
    unknown value gets one message listing the known ones, and a known one is checked
    against its own schema only. Validators that do not know OpenAPI's ``discriminator`` (strict Ajv) get none.
    """
    if isinstance(node, list):
        return [_generic_dispatch(x, f"{where}/{i}") for i, x in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in _SCHEMA_MAP and isinstance(value, dict):
            out[key] = {k: _generic_dispatch(v, f"{where}/{key}/{k}") for k, v in value.items()}
        elif key in _SCHEMA_LIST | _SCHEMA_ONE:
            out[key] = _generic_dispatch(value, f"{where}/{key}")
        else:
            out[key] = value
    if "discriminator" not in out:
        return out
    disc, branches = out.pop("discriminator"), out.pop("oneOf", None)
    mapping = disc.get("mapping") if isinstance(disc, dict) else None
    if not isinstance(mapping, dict) or not branches:
        raise ExportError(f"{where}: a discriminator needs a mapping and a oneOf beside it")
    if sorted(mapping.values()) != sorted(b.get("$ref", "") for b in branches):
        raise ExportError(f"{where}: the discriminator mapping and oneOf name different schemas")
    clash = [k for k in ("type", "required", "properties", "allOf") if k in out]
    if clash:
        raise ExportError(f"{where}: cannot add a dispatch beside {', '.join(clash)}")
    prop, known = disc["propertyName"], list(mapping)
    out["type"] = "object"
    out["required"] = [prop]
    out["properties"] = {
        prop: {
            "description": "Selects the schema the rest of this object is checked against: "
            + ", ".join(known)
            + ".",
            "enum": known,
        }
    }
    out["allOf"] = [
        {"if": {"properties": {prop: {"const": v}}, "required": [prop]}, "then": {"$ref": ref}}
        for v, ref in mapping.items()
    ]
    return out


def _finish(bundled: dict[str, Any], version: str, name: str, draft: Draft | str) -> dict[str, Any]:
    draft = Draft(draft)
    if draft is Draft.D07:
        bundled = to_draft07(bundled, version, name)
    return _order(bundled)


# -- draft-07 ----------------------------------------------------------------------------------


def draft07_uri(version: str, name: str) -> str:
    return f"{catalog.data()['base_uri']}{version}/{DRAFT07_DIR}/{name}"


def to_draft07(bundled: dict[str, Any], version: str, name: str) -> dict[str, Any]:
    """Rewrite a bundled 2020-12 schema as draft-07; raises :class:`ExportError` listing
    every keyword draft-07 lacks."""
    problems: list[str] = []
    defs = bundled.get("$defs", {})

    def ref(value: str) -> str:
        return (
            "#/definitions/" + value[len("#/$defs/") :] if value.startswith("#/$defs/") else value
        )

    def walk(node: Any, where: str) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            here = f"{where}/{_escape(key)}"
            if key in _NOT_IN_DRAFT07:
                problems.append(f"{here}: {key}")
                continue
            if key.startswith("x-"):
                out[key] = value
            elif key == "$ref":
                out[key] = ref(value)
            elif key in _SCHEMA_MAP:
                new_key = "definitions" if key == "$defs" else key
                out[new_key] = {k: walk(v, f"{here}/{_escape(k)}") for k, v in value.items()}
            elif key in _SCHEMA_LIST:
                out[key] = [walk(v, f"{here}/{i}") for i, v in enumerate(value)]
            elif key in _SCHEMA_ONE:
                out[key] = walk(value, here)
            elif key == "discriminator" and isinstance(value, dict) and "mapping" in value:
                out[key] = {**value, "mapping": {k: ref(v) for k, v in value["mapping"].items()}}
            else:
                out[key] = value
        siblings = [k for k in out if k not in ("$ref", "$comment")]
        if "$ref" in out and siblings:
            # draft-07 ignores every keyword beside $ref: keep them by wrapping the reference
            target = defs.get(out["$ref"].removeprefix("#/definitions/"))
            wrapped = {"allOf": [{"$ref": out.pop("$ref")}]}
            wrapped.update(out)
            out = wrapped
            # editors read a property's description from the property itself (VS Code's
            # completion does not look inside allOf), so the target's description comes along
            if isinstance(target, dict) and "description" in target:
                out.setdefault("description", target["description"])
        return out

    converted = walk(copy.deepcopy(bundled), "#")
    if problems:
        raise ExportError(
            f"{_source_name(version, name)} uses keywords that draft-07 does not have, so a "
            "draft-07 copy would validate less than the source: " + "; ".join(problems)
        )
    converted["$schema"] = DRAFT_07
    converted["$id"] = draft07_uri(version, name)
    converted["$comment"] = _comment(version, name, Draft.D07)
    return converted


# -- helpers for callers and tests --------------------------------------------------------------


def iter_refs(schema: Any) -> Iterator[str]:
    """Every ``$ref`` value in a schema document (schema positions only)."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            elif key in _SCHEMA_MAP and isinstance(value, dict):
                for sub in value.values():
                    yield from iter_refs(sub)
            elif key in _SCHEMA_LIST and isinstance(value, list):
                for sub in value:
                    yield from iter_refs(sub)
            elif key in _SCHEMA_ONE:
                yield from iter_refs(value)


def dumps(schema: dict[str, Any]) -> str:
    """The canonical text of an exported schema (stable: committed files are compared)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class ExportedFile:
    path: str  # relative, with forward slashes: "0.9/eagle3.schema.json"
    version: str
    name: str  # a type (the file's stem) or the root's stem ("speculators")
    draft: Draft
    schema: dict[str, Any]

    @property
    def text(self) -> str:
        return dumps(self.schema)


def export_path(version: str, name: str, draft: Draft | str) -> str:
    if not name.endswith(schemas.SCHEMA_SUFFIX):
        name += schemas.SCHEMA_SUFFIX
    if Draft(draft) is Draft.D07:
        return f"{version}/{DRAFT07_DIR}/{name}"
    return f"{version}/{name}"


def root_name(version: str) -> str:
    root = catalog.version_entry(version).root
    return root[: -len(schemas.SCHEMA_SUFFIX)] if root.endswith(schemas.SCHEMA_SUFFIX) else root


def export_all(
    versions: Iterable[str] | None = None,
    drafts: Iterable[Draft | str] = (Draft.D2020_12,),
    *,
    codegen: bool = False,
) -> list[ExportedFile]:
    """Every exported file for the given versions (all catalogued versions by default);
    ``codegen`` keeps every ``oneOf`` + ``discriminator`` (see :func:`bundle_root`)."""
    chosen = list(versions) if versions is not None else list(catalog.versions())
    files: list[ExportedFile] = []
    for version in chosen:
        entry = catalog.version_entry(version)
        for draft in (Draft(d) for d in drafts):
            for model_type in entry.types:
                files.append(
                    ExportedFile(
                        export_path(version, model_type, draft),
                        version,
                        model_type,
                        draft,
                        bundle_type(version, model_type, draft, codegen=codegen),
                    )
                )
            name = root_name(version)
            files.append(
                ExportedFile(
                    export_path(version, name, draft),
                    version,
                    name,
                    draft,
                    bundle_root(version, draft, codegen=codegen),
                )
            )
    return files


def newest_version_with(model_type: str) -> str:
    """The newest format version that has ``model_type`` (or its root name)."""
    for version, entry in reversed(list(catalog.versions().items())):
        if model_type in entry.types or model_type == root_name(version):
            return version
    known = ", ".join(catalog.known_types())
    raise UsageError(f"no format version has a type {model_type!r}; known types: {known}")


def shown(model_type: str, version: str | None, draft: Draft | str) -> dict[str, Any]:
    """``specfmt schema show``: the self-contained schema of ``model_type``, or the root
    schema when it is the version's root name (``version``: the newest that has it)."""
    version = version or newest_version_with(model_type)
    if model_type == root_name(version):
        return bundle_root(version, draft)
    return bundle_type(version, model_type, draft)


# -- editor settings ------------------------------------------------------------------------------


#: directory-name fragments that mark a draft checkpoint besides the type names
_DIR_HINTS = ("speculator",)


def default_globs(version: str) -> list[str]:
    """Path globs for config.json files that are probably speculators drafts.

    One per type name of the version plus ``*speculator*``, matched against the directory
    that holds the file; names that contain another (``dflash2``/``dflash``) are covered by
    the shorter one.
    """
    words = sorted(set(_DIR_HINTS) | set(catalog.version_entry(version).types))
    kept = [w for w in words if not any(o != w and o in w for o in words)]
    return [f"**/*{w}*/config.json" for w in kept]


def published_files(drafts: Iterable[Draft | str] = tuple(Draft)) -> list[tuple[str, str]]:
    """(path under ``generated/schemas/``, the file's ``$id``) for every exported file.

    The ``$id`` s are identifiers: validators match references by them and never fetch them
    (every file is self-contained). Serving each file at its ``$id`` is what publishing
    means (docs/guide/publishing.md); until that is done, nothing answers at those addresses.
    """
    return [(f.path, f.schema["$id"]) for f in export_all(drafts=drafts)]


def schemastore_entry() -> dict[str, Any]:
    """The entry for SchemaStore's catalog (``src/api/json/catalog.json``): the newest
    version's draft-07 root as ``url``, every version's in ``versions``, and the path globs
    of :func:`default_globs` (config.json alone is far too common a name)."""
    latest = catalog.latest_version()
    root = {v: root_name(v) + schemas.SCHEMA_SUFFIX for v in catalog.versions()}
    return {
        "name": "speculators draft config",
        "description": "config.json of a speculative-decoding draft checkpoint in the "
        "speculators format (schemas generated by specfmt)",
        "fileMatch": default_globs(latest),
        "url": draft07_uri(latest, root[latest]),
        "versions": {v: draft07_uri(v, name) for v, name in root.items()},
    }


def vscode_settings(url: str, globs: list[str]) -> dict[str, Any]:
    """A VS Code ``settings.json`` fragment that maps ``globs`` to the schema at ``url``."""
    return {"json.schemas": [{"fileMatch": list(globs), "url": url}]}
