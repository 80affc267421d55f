"""Deterministic round trips over every fixture (release and off the happy path) and every
pair of adjacent format lines, anchored on the reviewed goldens.

For a fixture at line ``hi`` (its golden there) going down to ``lo`` and back up:

* the downgrade writes exactly the golden at ``lo``: a downgrade's wrong value cannot hide
  behind the next upgrade erasing it;
* the upgrade of that gets back everything the downgrade could represent: the fixture at
  ``hi`` again, except where the downgrade recorded a loss.

The few reviewed exceptions are listed below with their reasons: an upgrade that changed
the fixture for good (so the golden at ``lo``, the fixture itself, is not what coming back
down writes), and values the lower line has no way to hold that no loss is recorded for.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from spec_format.base.errors import MigrationRefused
from spec_format.facts import catalog
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.rewrites.migration.records import split_pointer
from tests.migrate.conftest import GOLDEN, fixture_id, golden_stem, migration_fixtures

LINES = list(catalog.versions())
PAIRS = list(pairwise(LINES))

#: (fixture, lo, hi): why coming down from ``hi`` does not write the fixture at ``lo``
UPGRADE_FOR_GOOD = {
    ("edge/0.2/eagle3/proposal-methods-removed-in-0.3", "0.2", "0.3"): "0.2->0.3 removed the "
    "sampling and tree methods (lossy); nothing brings them back",
    ("edge/0.5/dflash/default-names-no-method", "0.5", "0.6"): "0.5->0.6 pointed the default "
    "at a configured method; 0.5 reads that as well",
    ("edge/0.7/eagle3/rope-scaling-type-key", "0.7", "0.8"): "rope_scaling's 'type' comes "
    "back as 'rope_type', which transformers 4 reads the same",
}
#: (fixture, lo, hi) -> (pointer, why): a value ``lo`` cannot hold, dropped without a loss
NOT_RESTORED = {
    ("edge/0.5/eagle3/top-level-model-type", "0.4", "0.5"): (
        "/model_type",
        "0.5->0.4 drops the top-level model_type 0.4 fails to load with (C008 reports it at 0.5)",
    ),
    ("edge/0.9/eagle3/rope-per-layer-type-same", "0.7", "0.8"): (
        "/transformer_layer_config/rope_parameters",
        "the per-layer-type RoPE settings were the same: 0.7 holds the one setting, and 0.8 "
        "gets it back as one rope_parameters",
    ),
}
#: (lo, hi) -> pointers of what dates a file to ``hi`` or later: the downgrade removes them
#: (recorded, not lossy: no reader reads them) so that specfmt reads its output at ``lo``, and
#: no upgrade can bring back the value a newer writer would have written
DATING = {
    ("0.2", "0.3"): ("/architectures",),  # Eagle3DraftModel: 0.3's trainer class
    ("0.4", "0.5"): ("/transformers_version",),  # transformers 5: no release up to 0.4 ran on it
}


def golden(fixture: Path, line: str) -> dict | None:
    """The fixture at ``line`` as its golden states it (with its losses), None if refused."""
    stem = golden_stem(fixture)
    release = catalog.version_entry(line).release
    for suffix in ("json", "lossy.json"):
        path = Path(f"{stem}.to-{release}.{suffix}")
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    assert Path(f"{stem}.to-{release}.refused.txt").is_file(), f"no golden of {stem} at {line}"
    return None


def without(doc: dict, pointers: list[str]) -> dict:
    """``doc`` less the values at ``pointers`` (a copy)."""
    doc = json.loads(json.dumps(doc))
    for ptr in pointers:
        *parents, last = split_pointer(ptr)
        node = doc
        for part in parents:
            node = node.get(part, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(last, None)
    return doc


@pytest.mark.parametrize(("lo", "hi"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_down_one_line_and_up_again(migration_fixture, lo, hi):
    top = golden(migration_fixture, hi)
    if top is None:
        pytest.skip(f"no document at {hi}")
    expected = golden(migration_fixture, lo)
    try:
        down = migrate(top, MigrateOptions(to=lo, allow_lossy=True))
    except MigrationRefused:
        assert expected is None, f"the golden at {lo} exists, the downgrade is refused"
        return
    assert down.target_errors == []
    key = (fixture_id(migration_fixture), lo, hi)
    if key not in UPGRADE_FOR_GOOD:
        assert down.document == expected, f"{hi}->{lo} wrote another document than the golden"
    else:
        assert down.document != expected, f"stale exception: {UPGRADE_FOR_GOOD[key]}"
    # from the line the downgrade wrote, as specfmt reads it (the last test of this file)
    up = migrate(down.document, MigrateOptions(to=hi))
    assert up.target_errors == [] and not [c for c in up.changes if c.lossy]
    lost = [x.pointer for x in down.losses if x.pointer]
    dated = [c.pointer for c in down.changes if c.pointer in DATING.get((lo, hi), ())]
    assert not [c for c in down.changes if c.pointer in dated and c.lossy]
    lost += dated
    if key in NOT_RESTORED:
        pointer, _ = NOT_RESTORED[key]
        assert without(up.document, lost) != without(top, lost), "stale exception"
        lost.append(pointer)
    assert without(up.document, lost) == without(top, lost), (lost, up.changes)
    if not down.losses and not dated and key not in NOT_RESTORED:
        assert up.document == top


def test_every_exception_names_a_fixture_and_a_pair():
    ids = {fixture_id(p) for p in migration_fixtures()}
    for fixture, lo, hi in [*UPGRADE_FOR_GOOD, *NOT_RESTORED]:
        assert fixture in ids and (lo, hi) in PAIRS, (fixture, lo, hi)
    assert set(DATING) <= set(PAIRS)


def test_specfmt_reads_its_own_output_at_the_line_it_was_migrated_to():
    """Detection trusts what dates a file over its stamp (a re-save never updates the stamp),
    so a downgrade must not leave its source line's marks: Eagle3DraftModel below 0.3,
    transformers 5 below 0.5 (else validate checks the file against the wrong format, M003
    fires, and migrating it again skips steps)."""
    from spec_format.facts import versions

    misread = []
    for path in sorted(GOLDEN.rglob("*.json")):  # the documents (reports are .jsonl)
        release = path.name.split(".to-")[1].removesuffix(".json").removesuffix(".lossy")
        line = ".".join(release.split(".")[:2])
        found = versions.detect(json.loads(path.read_text(encoding="utf-8"))).line
        if found != line:
            misread.append(f"{path.relative_to(GOLDEN)}: {found}")
    assert not misread, "\n".join(misread)
