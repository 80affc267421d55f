from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "releases"
GOLDEN = Path(__file__).resolve().parent / "golden"


def release_fixtures() -> list[Path]:
    """Every reconstructed release config: tests/fixtures/releases/<line>/<type>/<name>.json."""
    return sorted(FIXTURES.glob("*/*/*.json"))


def fixture_id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}/{path.stem}"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(params=release_fixtures(), ids=fixture_id)
def release_fixture(request) -> Path:
    return request.param
