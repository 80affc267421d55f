"""Every reconstructed release config migrated to 0.5.0 and 0.9.0 matches its golden file.

Goldens live in tests/migrate/golden/<line>/<type>/<name>.to-<release>.json: the migrated
document, or for a refused migration a .refused.txt with the message. Regenerate them with
SPECFMT_UPDATE_GOLDEN=1 pytest tests/migrate/test_golden.py and review the diff.
"""

from __future__ import annotations

import os

import pytest

from spec_format.base.errors import MigrationRefused
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.rewrites.migration.output import dumps
from tests.migrate.conftest import FIXTURES, GOLDEN, load

UPDATE = bool(os.environ.get("SPECFMT_UPDATE_GOLDEN"))


@pytest.mark.parametrize("target", ["0.5.0", "0.9.0"])
def test_release_fixture_matches_golden(release_fixture, target):
    rel = release_fixture.relative_to(FIXTURES).with_suffix("")
    try:
        result = migrate(load(release_fixture), MigrateOptions(to=target))
    except MigrationRefused as exc:
        golden, produced = GOLDEN / f"{rel}.to-{target}.refused.txt", str(exc) + "\n"
    else:
        assert result.target_errors == [], "migrated output must pass the target schema"
        golden, produced = GOLDEN / f"{rel}.to-{target}.json", dumps(result.document)
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(produced, encoding="utf-8")
    assert golden.is_file(), f"no golden {golden}; run with SPECFMT_UPDATE_GOLDEN=1"
    assert produced == golden.read_text(encoding="utf-8")


def test_every_golden_has_a_fixture():
    fixtures = {
        p.relative_to(FIXTURES).with_suffix("").as_posix() for p in FIXTURES.glob("*/*/*.json")
    }
    for golden in GOLDEN.glob("*/*/*"):
        stem = golden.relative_to(GOLDEN).as_posix().split(".to-")[0]
        assert stem in fixtures, f"{golden} has no fixture (stale golden?)"
