"""Every reconstructed release config migrated to every format line, up and down, matches
its golden file.

The fixtures are the release configs and the hand-made ones off the happy path
(tests/migrate/fixtures). Goldens live in tests/migrate/golden/<line>/<type>/<name>.to-<release>.json
(golden/edge/... for the hand-made ones): the migrated
document, or for a refused migration a .refused.txt with the message. A migration refused
only because it loses information also has the --allow-lossy document,
<name>.to-<release>.lossy.json, so what each downgrade writes is pinned exactly (a wrong
value a later upgrade would erase again is caught here, not hidden by a round trip). Beside
each document, <name>.to-<release>.report.jsonl holds what the command reports, one line
per change record (with its reason and its line of text) and per problem.
Regenerate them with SPECFMT_UPDATE_GOLDEN=1 pytest tests/migrate/test_golden.py and review
the diff: a golden is what the code does today.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spec_format.base.errors import MigrationRefused
from spec_format.facts import catalog
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.rewrites.migration.output import dumps
from tests.migrate.conftest import GOLDEN, fixture_id, golden_stem, load, migration_fixtures

UPDATE = bool(os.environ.get("SPECFMT_UPDATE_GOLDEN"))
TARGETS = [catalog.version_entry(line).release for line in catalog.versions()]
LOSS = "would lose information"


def _outcome(doc: dict, target: str, allow_lossy: bool) -> tuple[str, str, str]:
    """(golden suffix, text, report) of ``doc`` migrated to ``target``: the report is what
    the command lists, each change and problem as a record and as its line of text."""
    try:
        result = migrate(doc, MigrateOptions(to=target, allow_lossy=allow_lossy))
    except MigrationRefused as exc:
        return "refused.txt", str(exc) + "\n", ""
    assert result.target_errors == [], "migrated output must pass the target schema"
    records = [{**c.to_dict(), "text": c.describe()} for c in result.changes]
    records += [p.to_dict() for p in result.problems]
    report = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)
    return "lossy.json" if allow_lossy else "json", dumps(result.document), report or "\n"


def _expect(golden, produced: str) -> None:
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(produced, encoding="utf-8")
    assert golden.is_file(), f"no golden {golden}; run with SPECFMT_UPDATE_GOLDEN=1"
    assert produced == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("target", TARGETS)
def test_fixture_matches_golden(migration_fixture, target):
    stem = golden_stem(migration_fixture)
    doc = load(migration_fixture)
    suffix, produced, report = _outcome(doc, target, allow_lossy=False)
    _expect(Path(f"{stem}.to-{target}.{suffix}"), produced)
    lossy = Path(f"{stem}.to-{target}.lossy.json")
    if suffix == "refused.txt" and LOSS in produced:
        suffix, produced, report = _outcome(doc, target, allow_lossy=True)
        assert suffix == "lossy.json", produced  # refused for its losses only
        _expect(lossy, produced)
    else:
        assert UPDATE or not lossy.exists(), f"{lossy} is stale"
    if report:
        _expect(Path(f"{stem}.to-{target}.report.jsonl"), report)


def test_every_golden_has_a_fixture_and_a_target():
    stems = {golden_stem(p).as_posix(): fixture_id(p) for p in migration_fixtures()}
    goldens = [p for p in GOLDEN.rglob("*") if p.is_file()]
    for golden in goldens:
        stem, _, rest = golden.as_posix().partition(".to-")
        assert stem in stems, f"{golden} has no fixture (stale golden?)"
        assert any(rest.startswith(t + ".") for t in TARGETS), golden
    assert len(goldens) >= len(stems) * len(TARGETS)
