"""Hints that run as written (issue 36 item 13): a missing optional dependency is answered
with the command that adds the extra to the installation that is running (a clone, a wheel
in a virtual environment, pipx, uv tool), never `pip install 'specfmt[deep]'`, which only
works where an index pip asks knows specfmt."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from spec_format.base import extras
from tests.common import ROOT


def test_the_fallback_requirements_are_pyprojects():
    text = (ROOT / "pyproject.toml").read_text()
    for extra, needs in extras.FALLBACK.items():
        (line,) = re.findall(rf"^{extra} = \[(.*)\]$", text, re.MULTILINE)
        assert tuple(re.findall(r'"([^"]+)"', line)) == needs, extra


@pytest.mark.parametrize(
    ("prefix", "checkout", "expected"),
    [
        ("/home/u/.local/share/pipx/venvs/specfmt", None, "pipx inject specfmt 'numpy>=1.24'"),
        ("/home/u/.local/share/uv/tools/specfmt", None, "uv pip install --python PY 'numpy>=1.24'"),
        ("/home/u/venv", None, "PY -m pip install 'numpy>=1.24'"),
        ("/home/u/venv", Path("/src/specfmt"), "PY -m pip install -e '/src/specfmt[deep]'"),
    ],
)
def test_the_command_fits_the_installation(monkeypatch, prefix, checkout, expected):
    monkeypatch.setattr(sys, "prefix", prefix)
    monkeypatch.setattr(sys, "executable", "/opt/py/bin/python3")
    monkeypatch.setattr(extras, "checkout_root", lambda: checkout)
    monkeypatch.setattr(extras, "requirements", lambda extra: extras.FALLBACK[extra])
    assert extras.install_command("deep") == expected.replace("PY", "/opt/py/bin/python3")


def test_this_checkout_is_found_and_named():
    assert extras.checkout_root() == ROOT
    assert f"{ROOT}[deep]" in extras.install_command("deep")


def test_no_message_tells_users_to_pip_install_specfmt_from_an_index():
    pattern = re.compile(r"pip install '?specfmt\[")
    for folder in ("spec_format", "cli"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "extras.py":
                continue
            assert not pattern.search(path.read_text()), path


def test_validate_deep_without_numpy_names_the_command(cli, monkeypatch, tmp_path):
    import builtins

    real = builtins.__import__

    def without_numpy(name, *args, **kwargs):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("No module named 'numpy'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_numpy)
    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    result = cli("validate", "--deep", ROOT / "examples/qwen3-8b-eagle3")
    assert result.exit_code == 2
    assert extras.install_command("deep") in result.output, result.output
