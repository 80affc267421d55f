"""Shared test helpers: fixture discovery and a CLI runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/config.json"))
VALID = sorted((ROOT / "tests" / "fixtures" / "valid").glob("*.json"))
INVALID = sorted((ROOT / "tests" / "fixtures" / "invalid").glob("*/*.json"))
#: what each speculators release writes: releases/<format version>/<type>/<case>.json
RELEASES = sorted((ROOT / "tests" / "fixtures" / "releases").glob("*/*/*.json"))


def load_case(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def cli():
    """Invoke the specfmt CLI in-process; returns typer's Result."""
    from spec_format.cli.app import app

    runner = CliRunner()

    def invoke(*args: str, env: dict | None = None):
        return runner.invoke(app, [str(a) for a in args], env=env, catch_exceptions=False)

    return invoke


@pytest.fixture
def write_config(tmp_path):
    """Write a config dict (or raw bytes) into tmp_path/<name>/config.json."""

    def write(config, name: str = "ckpt") -> Path:
        folder = tmp_path / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "config.json"
        if isinstance(config, bytes):
            path.write_bytes(config)
        else:
            path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        return path

    return write
