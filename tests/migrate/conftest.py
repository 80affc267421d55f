from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "releases"
#: hand-made configs for the branches no release wrote (tests/migrate/fixtures/README.md)
EDGE_FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"


def release_fixtures() -> list[Path]:
    """Every reconstructed release config: tests/fixtures/releases/<line>/<type>/<name>.json."""
    return sorted(FIXTURES.glob("*/*/*.json"))


def edge_fixtures() -> list[Path]:
    """The configs off the happy path: tests/migrate/fixtures/<line>/<type>/<name>.json."""
    return sorted(EDGE_FIXTURES.glob("*/*/*.json"))


def migration_fixtures() -> list[Path]:
    return release_fixtures() + edge_fixtures()


def golden_stem(path: Path) -> Path:
    """Where a fixture's goldens live, less the ``.to-<release>...`` suffix: golden/<line>/...
    for a release fixture, golden/edge/<line>/... for one off the happy path."""
    if path.is_relative_to(EDGE_FIXTURES):
        return GOLDEN / "edge" / path.relative_to(EDGE_FIXTURES).with_suffix("")
    return GOLDEN / path.relative_to(FIXTURES).with_suffix("")


def fixture_id(path: Path) -> str:
    edge = "edge/" if path.is_relative_to(EDGE_FIXTURES) else ""
    return f"{edge}{path.parent.parent.name}/{path.parent.name}/{path.stem}"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(params=release_fixtures(), ids=fixture_id)
def release_fixture(request) -> Path:
    return request.param


@pytest.fixture(params=migration_fixtures(), ids=fixture_id)
def migration_fixture(request) -> Path:
    return request.param
