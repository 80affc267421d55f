"""The reader table's files and typed loader, without running any reader (normal suite)."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from docgen.sections import weight_blocks

from spec_format.facts import catalog, readers
from tests.common import ROOT

TABLE = readers.table_dir()
SCHEMA = json.loads(TABLE.joinpath("reader.schema.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("rid", readers.representatives())
def test_file_matches_schema(rid):
    name, version = rid.split("==")
    path = TABLE.joinpath(f"{name}-{version}.json")
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(path.read_text("utf-8")))


def test_releases_cover_vllm_and_every_speculators_line():
    """Every format line's speculators release and at least two vLLM releases. Only the
    latest line may precede its release: scripts/new_version.py adds it before the wheel
    exists, and it reads as the line before it until the release joins the table."""
    covered = readers.releases()
    assert len([r for r in covered if r.startswith("vllm")]) >= 2
    lines = set(catalog.versions())  # "0.9"
    released = {r.split("==")[1] for r in covered if r.startswith("speculators==")}
    missing = lines - {".".join(v.split(".")[:2]) for v in released}
    assert missing <= {catalog.latest_version()}, sorted(missing)


def test_unknown_release_names_covered_versions():
    cov = readers.coverage("vllm")
    said = f"covered: vllm=={cov.first} to vllm=={cov.newest} ({cov.releases} releases"
    with pytest.raises(KeyError, match=re.escape(said)):
        readers.release("vllm", "0.1.0")


def test_every_vllm_release_from_the_first_reader_is_covered():
    """0.10.1 (the first with a speculators reader) to the newest, patch releases included,
    with no gap between groups; each member release reads with its group's file, whose own
    version is a member."""
    vllm = [r.split("==")[1] for r in readers.releases() if r.startswith("vllm==")]
    assert vllm[0] == "0.10.1" and "0.10.1.1" in vllm
    cov = readers.coverage("vllm")
    assert (cov.first, cov.newest, cov.releases) == (vllm[0], vllm[-1], len(vllm))
    assert cov.groups == len([r for r in readers.representatives() if r.startswith("vllm==")])
    minors = sorted({tuple(int(p) for p in v.split(".")[:2]) for v in vllm})
    assert minors == [(0, m) for m in range(minors[0][1], minors[-1][1] + 1)]  # no minor missed
    for rid in readers.representatives():
        rel = readers.release(*rid.split("=="))
        if rel.name == "vllm":
            assert rel.version in rel.members
            for version in rel.members:
                assert readers.release("vllm", version).data is rel.data
    assert readers.release("vllm", "0.20.2").representative == "0.20.0"
    assert readers.newest("vllm").version == vllm[-1]


def test_reading_cases():
    vllm = readers.release("vllm", "0.33.0")
    assert vllm.serves("dflash") and not vllm.serves("xpress")
    row = "sliding_window_non_causal"
    assert vllm.reading("dflash", row, {}) == readers.Reading(True, "absent")
    assert vllm.reading("dflash", row, {row: None}) == readers.Reading(False, "null")
    assert vllm.reading("dflash", row, {row: False}) == readers.Reading(False, "given")
    assert vllm.reading("dspark", row, {row: False}).how == "ignored"
    aux = "aux_hidden_state_layer_ids"
    assert vllm.reading("dflash", aux, {aux: []}) == readers.Reading(None, "empty")
    assert vllm.reading("dflash", aux, {}).how == "rejected"


@pytest.mark.parametrize(
    ("value", "form"),
    [
        (None, "null"),
        (3, "non-string"),
        ("s3://b/m", "url"),
        ("/models/q", "absolute-path"),
        ("./q", "relative-path"),
        ("~/q", "relative-path"),
        ("a/b/c", "malformed-id"),
        ("a--b/c", "malformed-id"),
        ("Qwen/Qwen3-8B", "hub-id"),
        ("gpt2", "hub-id"),
    ],
)
def test_verifier_form(value, form):
    assert readers.verifier_form(value) == form


def test_rejections_name_pointer_and_message():
    vllm = readers.release("vllm", "0.33.0")
    config = {
        "model_type": "qwen3",
        "speculators_model_type": "dflash",
        "speculators_config": {
            "proposal_methods": [{"speculative_tokens": 7}],
            "verifier": {"name_or_path": "/local/qwen"},
        },
        "transformer_layer_config": {"model_type": "qwen3"},
    }
    pointers = [p for p, _ in vllm.rejections(config)]
    assert pointers == [
        "/model_type",
        "/speculators_config/verifier/name_or_path",
        "/aux_hidden_state_layer_ids",
        "/mask_token_id",
    ]
    older = readers.release("vllm", "0.32.0")
    assert "/speculators_config/verifier/name_or_path" not in dict(older.rejections(config))


def test_readme_counts_executed_and_read_weight_blocks():
    """schema/readers/README.md and docs/guide/readers.md state, per draft type, how many weight-contract
    blocks are executed (generated: docgen.sections, which stops when a type with a block in
    one group has none in another group serving it)."""
    claims = weight_blocks()
    assert claims and all("executed" in claim for claim in claims)
    for readme in (TABLE.joinpath("README.md"), ROOT / "docs" / "guide" / "readers.md"):
        text = " ".join(readme.read_text(encoding="utf-8").split())
        for claim in claims:
            assert claim in text, f"{readme} must say: {claim}"
