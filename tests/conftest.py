"""Shared test helpers: fixture discovery and a CLI runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

# re-exported for `from conftest import ...` still written elsewhere; import from tests.common
from tests.common import EXAMPLES, INVALID, RELEASES, ROOT, VALID, load_case  # noqa: F401


def pytest_configure(config):
    """An xdist worker starts with COLUMNS=80 and LINES=24 in its environment, which a plain
    run from a pipe does not have: the CLI would wrap its text output (and so would every
    subprocess a test starts). Tests that need a width set COLUMNS themselves."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)


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
