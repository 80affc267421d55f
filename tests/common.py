"""Paths and loaders shared by the tests: import them as ``from tests.common import ...``
(fixtures stay in conftest.py, which pytest loads itself)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/config.json"))
VALID = sorted((ROOT / "tests" / "fixtures" / "valid").glob("*.json"))
INVALID = sorted((ROOT / "tests" / "fixtures" / "invalid").glob("*/*.json"))
#: what each speculators release writes: releases/<format version>/<type>/<case>.json
RELEASES = sorted((ROOT / "tests" / "fixtures" / "releases").glob("*/*/*.json"))


def load_case(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
