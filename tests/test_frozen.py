"""Released format versions are frozen, and the shared definitions are append-only.

schema/frozen.json holds the digests (scripts/freeze.py computes them); these tests recompute
them, and check that no version's schemas reach into another version's folder.
"""

from __future__ import annotations

import copy
import json
import posixpath
import shutil
import subprocess
import sys
from urllib.parse import urldefrag, urljoin

import freeze
import pytest

from spec_format.facts import catalog, schemas
from tests.common import ROOT

SCHEMA_DIR = ROOT / "schema"
SHARED_FOLDER = "defs"


@pytest.mark.parametrize("version", list(catalog.versions()))
def test_released_version_is_frozen(version):
    problems = freeze.version_problems(version, freeze.load())
    assert not problems, "\n".join(problems)


def test_an_unfrozen_version_is_named_with_the_command_that_freezes_it():
    (problem,) = freeze.version_problems("0.9", {"versions": {}, "definitions": {}})
    assert "format version 0.9 is not frozen" in problem
    assert f"{freeze.REFREEZE} 0.9" in problem


def test_frozen_names_only_catalogued_versions():
    assert set(freeze.load()["versions"]) <= set(catalog.versions())


def test_shared_definitions_are_append_only():
    problems = freeze.definition_problems(freeze.shared_definitions(), freeze.load())
    assert not problems, "\n".join(problems)


def _refs(node):
    """Every reference in a schema document: $ref values and discriminator mappings."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            elif key == "discriminator" and isinstance(value, dict):
                yield from value.get("mapping", {}).values()
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


@pytest.mark.parametrize(
    "path",
    sorted(p for p in SCHEMA_DIR.glob("*/*.schema.json") if p.parent.name != "tensors"),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_no_schema_references_another_versions_folder(path):
    """A version's schemas reference their own folder and schema/defs/ only; the shared file
    references nothing but itself. Then nothing a later version edits can reach them."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    folder = path.parent.name
    allowed = {SHARED_FOLDER} if folder == SHARED_FOLDER else {folder, SHARED_FOLDER}
    documents = {urldefrag(uri)[0] for uri in schemas.registry()}
    for ref in set(_refs(doc)):
        target = urldefrag(urljoin(doc["$id"], ref))[0]
        assert target in documents, f"{path.name}: {ref} names no bundled schema"
        target_folder = posixpath.basename(posixpath.dirname(target))
        assert target_folder in allowed, (
            f"schema/{folder}/{path.name} references {ref}, a file of another format version: "
            f"put what both need in schema/{SHARED_FOLDER}/shared.schema.json"
        )


# -- the messages and commands a change meets -----------------------------------------------


def test_changed_definition_asks_for_a_new_name_and_rewording_is_allowed():
    recorded = freeze.load()
    definitions = freeze.shared_definitions()

    reworded = copy.deepcopy(definitions)
    reworded["dtype"]["description"] = "Reworded."
    assert freeze.definition_problems(reworded, recorded) == []

    changed = copy.deepcopy(definitions)
    changed["dtype"]["enum"].remove("int8")
    (problem,) = freeze.definition_problems(changed, recorded)
    assert "'dtype' changed meaning" in problem
    assert "new name" in problem and "dtype_v<first version" in problem

    removed = {k: v for k, v in definitions.items() if k != "verifier"}
    (problem,) = freeze.definition_problems(removed, recorded)
    assert "'verifier' was removed" in problem and "append-only" in problem

    added = {**definitions, "new_thing": {"type": "integer"}}
    (problem,) = freeze.definition_problems(added, recorded)
    assert "'new_thing' is not recorded" in problem and freeze.RECORD in problem


def test_a_property_named_like_an_annotation_is_part_of_the_meaning():
    node = {"type": "object", "properties": {"description": {"type": "string"}}}
    other = {"type": "object", "properties": {"description": {"type": "integer"}}}
    assert freeze.definition_digests({"x": node}) != freeze.definition_digests({"x": other})


@pytest.fixture
def checkout(tmp_path):
    """A copy of the pieces scripts/generate.py and the package need, to edit freely."""
    for name in ("spec_format", "schema", "scripts"):
        shutil.copytree(
            ROOT / name,
            tmp_path / name,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _run(checkout, *args):
    return subprocess.run(
        [sys.executable, *args], cwd=checkout, capture_output=True, text=True, timeout=300
    )


_PROBLEMS = (
    "import sys; sys.path.insert(0, 'scripts'); import freeze; "
    "frozen = freeze.load(); "
    "print('\\n'.join(freeze.version_problems('0.3', frozen) "
    "+ freeze.definition_problems(freeze.shared_definitions(), frozen)))"
)


def test_editing_a_shared_definition_fails_the_older_versions_until_refrozen(checkout):
    shared = checkout / "schema" / "defs" / "shared.schema.json"
    doc = json.loads(shared.read_text(encoding="utf-8"))
    doc["$defs"]["dtype"]["enum"].remove("int8")
    shared.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")

    out = _run(checkout, "-c", _PROBLEMS).stdout
    assert "format version 0.3 is frozen, but its self-contained schemas differ" in out
    assert "changed: eagle3, eagle, independent, mlp, speculators" in out
    assert f"{freeze.REFREEZE} 0.3" in out
    assert "'dtype' changed meaning" in out

    proc = _run(checkout, "scripts/generate.py", "--refreeze", "0.3")
    assert proc.returncode == 0, proc.stderr
    assert "refroze 0.3: eagle, eagle3, independent, mlp, speculators" in proc.stdout
    out = _run(checkout, "-c", _PROBLEMS).stdout
    assert "format version 0.3" not in out
    assert "'dtype' changed meaning" in out  # refreezing a version never re-records a definition

    proc = _run(checkout, "scripts/generate.py", "--record-defs")
    assert proc.returncode == 1
    assert "'dtype' changed meaning" in proc.stderr


def test_refreeze_refuses_an_unknown_version_and_writes_nothing(checkout):
    frozen = checkout / "schema" / "frozen.json"
    before = frozen.read_bytes()
    proc = _run(checkout, "scripts/generate.py", "--refreeze", "0.3", "7.0")
    assert proc.returncode == 2
    assert "unknown format version '7.0'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert frozen.read_bytes() == before


def test_record_defs_appends_a_new_definition(checkout):
    shared = checkout / "schema" / "defs" / "shared.schema.json"
    doc = json.loads(shared.read_text(encoding="utf-8"))
    doc["$defs"]["new_thing"] = {"type": "integer", "description": "A new definition."}
    shared.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")

    proc = _run(checkout, "scripts/generate.py", "--record-defs")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "recorded new_thing"
    recorded = json.loads((checkout / "schema" / "frozen.json").read_text())["definitions"]
    assert list(recorded)[-1] == "new_thing"
    assert list(recorded)[:-1] == list(freeze.load()["definitions"])
