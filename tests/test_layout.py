"""The repository shows the architecture: cli/, schema/ and generated/models/ at the top level,
mapped into the one import package spec_format by pyproject.toml, with no symbolic links."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import tomllib

import spec_format.cli
import spec_format.models
import spec_format.schema
from spec_format import _checkout

ROOT = Path(__file__).resolve().parents[1]


def test_the_checkout_map_is_pyprojects_package_dir():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = pyproject["tool"]["setuptools"]["package-dir"]
    assert mapped == {f"spec_format.{name}": f for name, f in _checkout.SOURCE_DIRS.items()}
    for name, folder in _checkout.SOURCE_DIRS.items():
        assert Path(folder).name == name  # the finder searches the folder's parent for the name
        assert f"spec_format.{name}" in pyproject["tool"]["setuptools"]["packages"]


def test_a_checkout_imports_its_own_folders():
    assert Path(spec_format.cli.__file__).parent == ROOT / "cli"
    assert Path(spec_format.models.__file__).parent == ROOT / "generated" / "models"
    assert [Path(p) for p in spec_format.schema.__path__] == [ROOT / "schema"]


def test_no_symbolic_links_are_tracked():
    if not (ROOT / ".git").exists():  # a scratch copy (tests/test_scaffolds.py): no index
        pytest.skip("needs a git checkout")
    staged = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert not [line for line in staged.splitlines() if line.startswith("120000")]
