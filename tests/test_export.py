"""`specfmt schema export/show/vscode` and spec_format.facts.export: self-contained, stable, faithful."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from spec_format.facts import catalog, export, schemas
from tests.common import EXAMPLES, INVALID, ROOT, VALID, load_case

VERSIONS = list(catalog.versions())
ALL_FILES = export.export_all(drafts=tuple(export.Draft))
VALIDATOR = {export.Draft.D2020_12: Draft202012Validator, export.Draft.D07: Draft7Validator}


def _pointer(doc, ref):
    node = doc
    for token in ref[2:].split("/") if ref != "#" else []:
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


@pytest.mark.parametrize("f", ALL_FILES, ids=lambda f: f.path)
def test_exported_schema_is_self_contained_and_valid(f):
    VALIDATOR[f.draft].check_schema(f.schema)
    for ref in export.iter_refs(f.schema):
        assert ref.startswith("#"), f"{f.path}: external $ref {ref}"
        _pointer(f.schema, ref)  # resolves inside the file
    key = "definitions" if f.draft is export.Draft.D07 else "$defs"
    assert "$defs" not in f.schema or key == "$defs"
    assert f.schema["$schema"] == (
        export.DRAFT_07 if f.draft is export.Draft.D07 else export.DRAFT_2020_12
    )
    # the header keywords first and the definitions last, as the committed files show them
    keys = list(f.schema)
    head = [k for k in keys if k in ("$schema", "$id", "$comment", "title", "description")]
    assert keys[: len(head)] == head and head[:2] == ["$schema", "$id"], f.path
    assert "description" in head and "title" in head, f.path
    assert keys[-1] == ("definitions" if f.draft is export.Draft.D07 else "$defs"), f.path


@pytest.mark.parametrize("version", VERSIONS)
def test_ids_are_stable(version):
    for model_type in catalog.version_entry(version).types:
        source_id = schemas.type_schema(version, model_type)["$id"]
        assert export.bundle_type(version, model_type)["$id"] == source_id
        assert export.bundle_type(version, model_type, "07")["$id"] == source_id.replace(
            f"/{version}/", f"/{version}/draft-07/"
        )
    assert export.bundle_root(version)["$id"] == schemas.schema_uri(
        version, catalog.version_entry(version).root
    )


def _instances():
    """Every positive config and every negative case, with the version specfmt checks it at."""
    out = [json.loads((e / "config.json").read_text()) for e in EXAMPLES]
    out += [json.loads(p.read_text()) for p in VALID]
    out += [load_case(p)["config"] for p in INVALID]
    return out


INSTANCES = _instances()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("draft", list(export.Draft), ids=lambda d: d.value)
def test_bundles_validate_exactly_like_the_source(version, draft):
    """Same verdict as the hand-written, multi-file source; the codegen form (the source's
    structure) also the same error locations. The default form's if/then dispatch may report
    deeper ones: inside the matching branch instead of at the oneOf."""
    for model_type in catalog.version_entry(version).types:
        source = schemas.validator(version, model_type)
        bundled = VALIDATOR[draft](export.bundle_type(version, model_type, draft, codegen=True))
        generic = VALIDATOR[draft](export.bundle_type(version, model_type, draft))
        for config in INSTANCES:
            want = sorted(tuple(e.absolute_path) for e in source.iter_errors(config))
            got = sorted(tuple(e.absolute_path) for e in bundled.iter_errors(config))
            assert got == want, (model_type, config.get("speculators_model_type"))
            assert generic.is_valid(config) == (not want), model_type
    source_root = schemas.root_validator(version)
    root = VALIDATOR[draft](export.bundle_root(version, draft))
    for config in INSTANCES:
        assert root.is_valid(config) == source_root.is_valid(config)


def test_draft07_keeps_annotations_beside_refs():
    """draft-07 ignores siblings of $ref, so defaults and descriptions move beside an allOf."""
    prop = export.bundle_type("0.9", "eagle3", "07")["properties"]["norm_before_residual"]
    assert prop["allOf"] == [{"$ref": "#/definitions/norm_before_residual"}]
    assert prop["default"] is False
    assert prop["description"].startswith("EAGLE-3: apply hidden_norm")  # for editors
    root = export.bundle_root("0.9", "07")
    assert [b["then"] for b in root["allOf"]] == [
        {"$ref": f"#/definitions/{t}"} for t in catalog.version_entry("0.9").types
    ]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("draft", list(export.Draft), ids=lambda d: d.value)
def test_root_dispatches_in_plain_json_schema(version, draft):
    """No OpenAPI discriminator and no oneOf in the export: an enum on the discriminator
    and one if/then per type; code generators get the source form with codegen=True."""
    types = list(catalog.version_entry(version).types)
    root = export.bundle_root(version, draft)
    assert "discriminator" not in root and "oneOf" not in root
    assert root["required"] == ["speculators_model_type"]
    assert root["properties"]["speculators_model_type"]["enum"] == types
    conditions = [b["if"]["properties"]["speculators_model_type"]["const"] for b in root["allOf"]]
    assert conditions == types
    source_form = export.bundle_root(version, draft, codegen=True)
    assert set(source_form["discriminator"]["mapping"]) == set(types)
    assert len(source_form["oneOf"]) == len(types)


def test_dispatch_rewrite_refuses_what_it_cannot_rewrite():
    branches = [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}]
    disc = {"propertyName": "kind", "mapping": {"a": "#/$defs/a", "b": "#/$defs/b"}}
    out = export._generic_dispatch({"oneOf": branches, "discriminator": disc}, "#")
    assert out["properties"]["kind"]["enum"] == ["a", "b"]
    assert out["allOf"][1] == {
        "if": {"properties": {"kind": {"const": "b"}}, "required": ["kind"]},
        "then": {"$ref": "#/$defs/b"},
    }
    with pytest.raises(export.ExportError, match="mapping and oneOf name different"):
        export._generic_dispatch({"oneOf": branches[:1], "discriminator": disc}, "#")
    with pytest.raises(export.ExportError, match="needs a mapping"):
        export._generic_dispatch({"oneOf": branches, "discriminator": {"propertyName": "k"}}, "#")
    with pytest.raises(export.ExportError, match="beside required"):
        export._generic_dispatch(
            {"oneOf": branches, "discriminator": disc, "required": ["x"]}, "#/items"
        )


def test_unknown_type_gets_one_error_listing_the_known_types():
    root = Draft202012Validator(export.bundle_root("0.9"))
    config = json.loads((EXAMPLES[0] / "config.json").read_text())
    (error,) = root.iter_errors({**config, "speculators_model_type": "eagle-3"})
    assert list(error.absolute_path) == ["speculators_model_type"]
    assert "'eagle3'" in error.message and "'dflash'" in error.message


def test_draft07_refuses_keywords_it_lacks():
    bundled = {
        "type": "object",
        "properties": {
            "ids": {"type": "array", "prefixItems": [{"type": "integer"}]},
            "nested": {"type": "object", "unevaluatedProperties": False},
        },
    }
    with pytest.raises(export.ExportError) as info:
        export.to_draft07(bundled, "0.9", "x.schema.json")
    message = str(info.value)
    assert "#/properties/ids/prefixItems" in message
    assert "#/properties/nested/unevaluatedProperties" in message


def _fake_registry(monkeypatch, docs):
    registry = Registry().with_resources(
        (d["$id"], Resource.from_contents(d, default_specification=DRAFT202012)) for d in docs
    )
    monkeypatch.setattr(schemas, "registry", lambda: registry)


def test_bundler_qualifies_clashing_names_and_rejects_typos(monkeypatch):
    base = "https://example.test/schema/"
    old = {"$id": base + "0.1/defs.schema.json", "$defs": {"dtype": {"type": "string"}}}
    new = {"$id": base + "0.2/defs.schema.json", "$defs": {"dtype": {"enum": ["float16"]}}}
    entry = {
        "$id": base + "0.2/t.schema.json",
        "properties": {
            "a": {"$ref": "defs.schema.json#/$defs/dtype"},
            "b": {"$ref": "../0.1/defs.schema.json#/$defs/dtype", "default": "x"},
        },
    }
    _fake_registry(monkeypatch, [old, new, entry])
    out = export._Bundler(entry["$id"]).bundle()
    assert out["properties"]["a"] == {"$ref": "#/$defs/dtype"}
    assert out["properties"]["b"] == {"$ref": "#/$defs/dtype_v0_1", "default": "x"}
    assert out["$defs"] == {"dtype": {"enum": ["float16"]}, "dtype_v0_1": {"type": "string"}}

    typo = {"$id": base + "0.2/typo.schema.json", "properties": {"a": {"minimun": 1}}}
    _fake_registry(monkeypatch, [typo])
    with pytest.raises(export.ExportError, match="unknown keyword 'minimun'"):
        export._Bundler(typo["$id"]).bundle()


def test_tensor_contract_is_carried_when_shipped(monkeypatch):
    contract = {"speculators_model_type": "eagle3", "tensors": [{"name": "fc.weight"}]}
    monkeypatch.setattr(export, "_tensor_contract", lambda t: contract if t == "eagle3" else None)
    assert export.bundle_type("0.9", "eagle3")[export.TENSORS_KEYWORD] == contract
    assert export.TENSORS_KEYWORD not in export.bundle_type("0.9", "dflash")


def test_generated_schemas_are_up_to_date():
    proc = subprocess.run(
        [sys.executable, "scripts/generate.py", "--check", "--only", "schemas"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize("draft", ["2020-12", "07"])
def test_cli_export_writes_what_is_committed(cli, tmp_path, draft):
    result = cli("schema", "export", "--draft", draft, "-o", tmp_path)
    assert result.exit_code == 0, result.output
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json"))
    expected = sorted(f.path for f in ALL_FILES if f.draft.value == draft)
    assert written == expected
    for rel in written:
        assert (tmp_path / rel).read_text() == (ROOT / "generated" / "schemas" / rel).read_text()


def test_cli_export_one_version(cli, tmp_path):
    version = VERSIONS[-1]
    result = cli("schema", "export", "--version", version, "-o", tmp_path)
    assert result.exit_code == 0
    assert {p.parent.name for p in tmp_path.rglob("*.json")} == {version}
    assert cli("schema", "export", "--version", "7.0", "-o", tmp_path).exit_code == 2


def test_cli_show(cli):
    result = cli("schema", "show", "dflash")
    assert result.exit_code == 0
    assert json.loads(result.output) == export.bundle_type(catalog.latest_version(), "dflash")
    root = json.loads(cli("schema", "show", "speculators", "--draft", "07").output)
    assert root["$schema"] == export.DRAFT_07 and "allOf" in root
    bad = cli("schema", "show", "eagle-3")
    assert bad.exit_code == 2
    assert "known types" in bad.output


def test_cli_vscode_writes_a_local_schema_by_default(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("schema", "vscode")
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["json.schemas"]
    latest = catalog.latest_version()  # the default --version
    assert entry["url"] == f"./.vscode/specfmt/{latest}/draft-07/speculators.schema.json"
    committed = ROOT / "generated" / "schemas" / latest / "draft-07" / "speculators.schema.json"
    assert (tmp_path / entry["url"]).read_text() == committed.read_text()
    assert "**/*speculator*/config.json" in entry["fileMatch"]
    assert "**/config.json" not in entry["fileMatch"]  # far too broad, see docs/guide/editors.md

    result = cli(
        "schema", "vscode", "--schema-dir", "drafts/schema", "--match", "drafts/*/config.json"
    )
    (entry,) = json.loads(result.stdout)["json.schemas"]
    assert entry["fileMatch"] == ["drafts/*/config.json"]
    assert entry["url"].startswith("./drafts/schema/")
    assert json.loads((tmp_path / entry["url"]).read_text())["$schema"] == export.DRAFT_07


def test_cli_vscode_url_points_at_a_published_copy(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = "https://schemas.example.org/0.9/draft-07/speculators.schema.json"
    result = cli("schema", "vscode", "--url", url)
    (entry,) = json.loads(result.stdout)["json.schemas"]
    assert entry["url"] == url
    assert not list(tmp_path.iterdir())  # wrote nothing


def test_cli_export_codegen_keeps_the_discriminator(cli, tmp_path):
    result = cli("schema", "export", "--version", "0.9", "--codegen", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    root = json.loads((tmp_path / "0.9" / "speculators.schema.json").read_text())
    assert root["discriminator"]["propertyName"] == "speculators_model_type"


# -- publishing -------------------------------------------------------------------------------


def test_each_id_is_its_path_under_the_base_uri():
    """Publishing generated/schemas/ as it is at base_uri serves every file at its $id."""
    base = catalog.data()["base_uri"]
    for path, uri in export.published_files():
        assert uri == base + path


def test_schemastore_entry_is_committed_and_points_at_the_roots():
    entry = export.schemastore_entry()
    committed = ROOT / "generated" / "schemastore" / "catalog-entry.json"
    assert json.loads(committed.read_text()) == entry
    # the shape SchemaStore's catalog schema asks for
    assert {"name", "description", "url"} <= set(entry)
    assert len(set(entry["fileMatch"])) == len(entry["fileMatch"])
    urls = [entry["url"], *entry["versions"].values()]
    assert all(u.startswith("https://") for u in urls)
    assert list(entry["versions"]) == VERSIONS
    for version, url in entry["versions"].items():
        assert url == export.bundle_root(version, "07")["$id"]
    assert entry["url"] == entry["versions"][catalog.latest_version()]
    assert entry["fileMatch"] == export.default_globs(catalog.latest_version())


def _paragraphs(path):
    return [p for p in path.read_text(encoding="utf-8").split("\n\n") if "specfmt.dev" in p]


def test_no_document_presents_the_ids_as_live_addresses():
    """specfmt.dev serves nothing: where a guide or the README names it, the same paragraph
    says it is a $id or points at the publishing guide; tool output never links there."""
    guides = sorted((ROOT / "docs" / "guide").glob("*.md"))
    # publishing.md is the page that says what is (not) served there
    pages = [ROOT / "README.md", *(p for p in guides if p.name != "publishing.md")]
    loose = [
        f"{page.relative_to(ROOT)}: {para.strip()[:120]}"
        for page in pages
        for para in _paragraphs(page)
        if "$id" not in para and "publish" not in para.lower()
    ]
    assert not loose, "\n".join(loose)
    from spec_format.base.links import DOCS_URL

    assert DOCS_URL is None or "specfmt.dev" not in DOCS_URL


def test_the_header_keywords_lead_and_the_definitions_close_whatever_the_source_order():
    source = {
        "$defs": {},
        "type": "object",
        "description": "d",
        "title": "t",
        "$comment": "c",
        "$id": "i",
        "$schema": "s",
        "properties": {},
    }
    assert list(export._order(source)) == [
        "$schema", "$id", "$comment", "title", "description", "type", "properties", "$defs",
    ]  # fmt: skip
