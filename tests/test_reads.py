"""Every config field a vLLM release reads is checked by a rule or listed as inert.

The reads are recorded per release group and draft class from the release's own code
(``schema/readers/reads/vllm-<group>.json``, ``python -m tests.readers.reads``;
``tests/readers/test_reads.py`` checks them against the executed release); the accounts are
``schema/readers/reads/accounted.json``. No environment is needed here.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import ROOT

from spec_format.facts import readers, reads
from spec_format.rules import registry

FOLDER = ROOT / "schema" / "readers" / "reads"
GROUPS = reads.groups()
EXECUTED = [
    r.split("==")[1]
    for r in readers.representatives()
    if r.startswith("vllm==")
    and any(
        (m.get("weights") or {}).get("status") == "executed"
        for m in readers.release(*r.split("==")).data.get("models", {}).values()
    )
]


def _schema(name: str) -> dict:
    return json.loads((FOLDER / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("version", EXECUTED)
def test_every_executed_group_has_its_reads(version):
    assert version in GROUPS, (
        f"schema/readers/reads/vllm-{version}.json is missing: "
        f"run python -m tests.readers.reads vllm=={version}"
    )
    jsonschema.validate(GROUPS[version], _schema("reads.schema.json"))


@pytest.mark.parametrize("version", list(GROUPS))
def test_every_field_read_is_accounted_for(version):
    found = reads.count(version, GROUPS[version])
    assert not found.missing, (
        f"vllm {version} reads fields that no rule checks and schema/readers/reads/"
        f"accounted.json does not list as inert: {', '.join(found.missing)}"
    )


def test_the_accounts_name_existing_rules_and_one_line_reasons():
    data = json.loads((FOLDER / "accounted.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, _schema("accounted.schema.json"))
    known = set(registry.entries())
    for side in ("draft", "verifier"):
        for field, entry in data[side].items():
            unknown = set(entry.get("rules", ())) - known
            assert not unknown, f"accounted.json {side}.{field}: no rule {sorted(unknown)}"


def test_an_unaccounted_field_is_reported():
    data = {"classes": {"X": {"draft": ["a_field_nobody_checks"], "verifier": ["hidden_size"]}}}
    found = reads.count("9.9.9", data)
    assert found.missing == ("draft:a_field_nobody_checks",)
    assert (found.read, found.accounted) == (2, 1)


def test_a_wildcard_accounts_for_every_key_under_it(monkeypatch):
    monkeypatch.setattr(
        reads, "accounted", lambda: {"draft": {"a.*": {"inert": "x" * 10}}, "verifier": {}}
    )
    assert reads.count("9", {"classes": {"X": {"draft": ["a.b.c"], "verifier": []}}}).missing == ()


def test_the_readme_has_the_current_counts():
    readme = (ROOT / "schema" / "readers" / "README.md").read_text(encoding="utf-8")
    assert reads.readme_text(readme) == readme, (
        "schema/readers/README.md's read counts are stale: run python -m tests.readers.reads"
    )
    for line in reads.summary():
        assert line in readme


@pytest.mark.parametrize("version", list(GROUPS))
def test_the_source_reading_of_the_interface_agrees_with_the_executed_one(version):
    """``supports_eagle3`` executed on the classes the test verifiers load against
    tests/readers/aux_archs.py's reading of the release's source."""
    data = GROUPS[version]
    executed = data["executed_interface"]
    assert executed, f"vllm {version}: no executed answer"
    for arch, supports in executed.items():
        if supports is None:
            continue
        read = reads.serving(version, arch)
        assert read is not None and read.serves is supports, (version, arch, supports, read)


def test_a_type_refusal_names_the_types_read_and_the_error_raised():
    from spec_format.facts.readers import type_refusal

    def table(accepted, message):
        return {"types": {"accepted": accepted, "message": message}}

    assert type_refusal(table(["eagle3", "dflash"], "KeyError: 'mtp'"), "mtp") == (
        "speculators_model_type 'mtp' is not a type it serves: it reads eagle3, dflash "
        "(KeyError when loading)"
    )
    # an engine's text that starts with no exception name adds no kind
    assert type_refusal(table([], "Unsupported type: {'eagle3': ...}"), None) == (
        "speculators_model_type absent or not a string is not a type it serves: it reads none"
    )
