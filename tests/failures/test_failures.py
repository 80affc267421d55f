"""Every reproduced public report (tests/failures/reports/) gives what its record says: the
rules ``validate`` raises at warning or error, and which of them name the report's cause. A
report that a new rule now catches fails here until its record (and the README's table,
``python -m tests.failures.corpus``) says so; a report that stops being caught fails too."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.failures.corpus import README, SCHEMA, readme_with_table, reports, run

REPORTS = reports()


def test_there_are_at_least_30_reports_each_from_its_own_thread():
    threads = [r.thread for r in REPORTS]
    assert len(REPORTS) >= 30
    assert len(set(threads)) == len(threads)


@pytest.mark.parametrize("report", REPORTS, ids=lambda r: r.id)
def test_record_is_well_formed(report):
    jsonschema.validate(report.data, json.loads(SCHEMA.read_text(encoding="utf-8")))
    record = report.data["specfmt"]
    assert record["findings"] == sorted(record["findings"])
    assert set(record["caught_by"]) <= set(record["findings"])
    # caught, or missed with the reason: never both, never neither
    assert bool(record["caught_by"]) != bool(record.get("missed"))


@pytest.mark.parametrize("report", REPORTS, ids=lambda r: r.id)
def test_validate_says_what_the_record_says(report, tmp_path):
    outcome = run(report, tmp_path)
    assert outcome.counted == report.findings, (
        f"{report.id}: validate now raises {outcome.counted} at warning or error, the record "
        f"says {report.findings}; update reports/{report.id}.json (caught_by, or missed and "
        "why) and run `python -m tests.failures.corpus`"
    )


def test_readme_table_is_current():
    text = README.read_text(encoding="utf-8")
    assert text == readme_with_table(text), "run `python -m tests.failures.corpus`"
