"""Released format versions are frozen: digests in schema/frozen.json, checked by the tests.

Two kinds of digest, both sha256 of canonical JSON (sorted keys, no whitespace):

* ``versions``: per format version, one per type and one for the root, over the
  self-contained 2020-12 export (``specfmt schema export``) without ``$id``, ``$comment``
  and ``x-specfmt-tensors`` (the tensor contract is kept per type, not per version). Any
  change to what a released version validates, defaults or documents changes its digest.
* ``definitions``: per definition of ``schema/defs/shared.schema.json``, without the
  annotations ``description``, ``$comment`` and ``examples``. The shared file is append-only:
  a recorded definition may not change its meaning or disappear, only get new siblings.

Changing a frozen version is deliberate: ``python scripts/generate.py --refreeze VERSION``
rewrites that version's digests; ``--record-defs`` records new shared definitions.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from spec_format.facts import catalog, export

# the bundler's table of keywords that hold subschemas, so a property called "description"
# is never taken for the annotation
from spec_format.facts.export import _SCHEMA_LIST, _SCHEMA_MAP, _SCHEMA_ONE

ROOT = Path(__file__).resolve().parent.parent
FROZEN = ROOT / "schema" / "frozen.json"
SHARED = ROOT / "schema" / "defs" / "shared.schema.json"
REFREEZE = "python scripts/generate.py --refreeze"
RECORD = "python scripts/generate.py --record-defs"
#: annotations a shared definition may reword in place (they do not change validation)
ANNOTATIONS = frozenset({"description", "$comment", "examples"})
#: top-level keys of an export that are not part of a version's frozen content
UNFROZEN = frozenset({"$id", "$comment", export.TENSORS_KEYWORD})
COMMENT = (
    "Digests of the released format versions' exports and of the shared definitions "
    "(scripts/freeze.py says what each covers; tests/test_frozen.py checks them). Do not edit: "
    f"`{REFREEZE} VERSION` rewrites a version, `{RECORD}` records new shared definitions."
)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def export_digests(version: str) -> dict[str, str]:
    """Digest of every type's and the root's export of ``version``, by name."""
    entry = catalog.version_entry(version)
    # the source form (codegen=True): how the exports spell the dispatch for editors may
    # change; what the schemas accept may not
    bundles = {t: export.bundle_type(version, t, codegen=True) for t in entry.types}
    bundles[export.root_name(version)] = export.bundle_root(version, codegen=True)
    return {
        name: _digest({k: v for k, v in schema.items() if k not in UNFROZEN})
        for name, schema in bundles.items()
    }


def _without_annotations(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ANNOTATIONS:
            continue
        if key in _SCHEMA_MAP and isinstance(value, dict):
            value = {k: _without_annotations(v) for k, v in value.items()}
        elif key in _SCHEMA_LIST and isinstance(value, list):
            value = [_without_annotations(v) for v in value]
        elif key in _SCHEMA_ONE:
            value = _without_annotations(value)
        out[key] = value
    return out


def shared_definitions(path: Path = SHARED) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))["$defs"]


def definition_digests(definitions: dict[str, Any]) -> dict[str, str]:
    return {name: _digest(_without_annotations(node)) for name, node in definitions.items()}


def load(path: Path = FROZEN) -> dict[str, Any]:
    if not path.is_file():
        return {"versions": {}, "definitions": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def _save(frozen: dict[str, Any], path: Path) -> None:
    order = {v: i for i, v in enumerate(catalog.versions())}
    body = {
        "$comment": COMMENT,
        "versions": dict(
            sorted(frozen["versions"].items(), key=lambda kv: order.get(kv[0], len(order)))
        ),
        "definitions": frozen["definitions"],
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# -- checks (each returns one message per problem) -----------------------------------------


def _compare(recorded: dict[str, str], current: dict[str, str]) -> dict[str, list[str]]:
    """Names whose digest changed, that disappeared, or that are new (in ``current`` order)."""
    return {
        "changed": [n for n in recorded if n in current and current[n] != recorded[n]],
        "removed": [n for n in recorded if n not in current],
        "new": [n for n in current if n not in recorded],
    }


def version_problems(version: str, frozen: dict[str, Any]) -> list[str]:
    recorded = frozen["versions"].get(version)
    if recorded is None:
        return [
            f"format version {version} is not frozen: once its schemas are final (released), "
            f"run `{REFREEZE} {version}` and commit schema/frozen.json"
        ]
    diff = _compare(recorded, export_digests(version))
    if not any(diff.values()):
        return []
    what = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in diff.items() if names)
    example = next(n for names in diff.values() for n in names)
    return [
        f"format version {version} is frozen, but its self-contained schemas differ from "
        f"schema/frozen.json ({what}; see `specfmt schema show {example} --format-version {version}`). "
        f"Configs that {version} accepted must keep validating the same way. If a shared "
        "definition changed meaning, restore it and add the new meaning under a new name in "
        "schema/defs/shared.schema.json, used only by the new version. If the change is "
        f"deliberate (a description fix, a wrong schema), run `{REFREEZE} {version}` and say "
        "why in the commit."
    ]


def definition_problems(
    definitions: dict[str, Any],
    frozen: dict[str, Any],
    kinds: tuple[str, ...] = ("changed", "removed", "new"),
) -> list[str]:
    diff = _compare(frozen["definitions"], definition_digests(definitions))
    return [_DEFINITION_PROBLEM[kind].format(name=name) for kind in kinds for name in diff[kind]]


_WHERE = "schema/defs/shared.schema.json: definition {name!r}"
_DEFINITION_PROBLEM = {
    "changed": _WHERE + " changed meaning. Shared definitions are append-only (released versions "
    "validate through them): restore it and add the new meaning under a new name (for example "
    "{name}_v<first version that uses it>), referenced only by the versions that have it. "
    "Rewording description, $comment or examples in place is fine.",
    "removed": _WHERE + " was removed. Shared definitions are append-only (released versions "
    "reference them by name): put it back.",
    "new": _WHERE + f" is not recorded in schema/frozen.json: run `{RECORD}`",
}


# -- the two commands -----------------------------------------------------------------------


def refreeze(versions: list[str], path: Path = FROZEN) -> list[str]:
    """Rewrite the export digests of ``versions``; returns what changed, one line each."""
    for version in versions:
        catalog.version_entry(version)  # unknown version: UsageError before anything is written
    frozen = load(path)
    lines = []
    for version in versions:
        old = frozen["versions"].get(version, {})
        new = export_digests(version)
        frozen["versions"][version] = new
        changed = [n for names in _compare(old, new).values() for n in names]
        lines.append(f"{version}: {', '.join(sorted(changed)) if changed else 'unchanged'}")
    _save(frozen, path)
    return lines


def record_definitions(path: Path = FROZEN, shared: Path = SHARED) -> tuple[list[str], list[str]]:
    """Record new shared definitions; returns (recorded names, problems). Never rewrites or
    drops a recorded definition: with problems nothing is written."""
    frozen = load(path)
    definitions = shared_definitions(shared)
    problems = definition_problems(definitions, frozen, kinds=("changed", "removed"))
    if problems:
        return [], problems
    current = definition_digests(definitions)
    new = [n for n in current if n not in frozen["definitions"]]
    frozen["definitions"].update({n: current[n] for n in new})
    _save(frozen, path)
    return new, []
