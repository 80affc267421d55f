"""Helpers for the tests that run Node.js tools (Ajv, @hyperjump/json-schema, VS Code's JSON
language service, tsc, json-schema-to-typescript).

They skip, with the command to run, when Node.js or the pinned packages are missing; CI
runs `npm ci` first so they never skip there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"


def require_node(*packages: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed (needed for the Ajv and TypeScript checks)")
    missing = [p for p in packages if not (NODE_MODULES / p).is_dir()]
    if missing:
        pytest.skip(f"node_modules lacks {', '.join(missing)}: run `npm ci` in the repository root")
    return node


def run_node(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    node = require_node()
    return subprocess.run([node, *args], cwd=ROOT, capture_output=True, text=True, **kwargs)
