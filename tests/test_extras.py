"""A feature whose extra is missing prints a command that adds it to the installation the
user has (spec_format/base/extras.py), never ``pip install 'specfmt[X]'``, which no index
can answer (specfmt is on none); docs/guide/install.md says the same per installation."""

from __future__ import annotations

import ast
import shlex
import sys
from pathlib import Path

import pytest
import tomllib

from spec_format.base import extras
from spec_format.base.errors import UsageError
from tests.common import EXAMPLES, ROOT


def _strings(path: Path, *, docstrings: bool) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    if not docstrings:
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            first = body[0] if isinstance(body, list) and body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
    ]


def test_no_message_tells_the_user_to_pip_install_specfmt_by_name():
    """Messages (and the CLI's help, its docstrings) said pip install 'specfmt[deep]'."""
    found = []
    for path in sorted((ROOT / "spec_format").rglob("*.py")) + sorted((ROOT / "cli").rglob("*.py")):
        for text in _strings(path, docstrings=path.is_relative_to(ROOT / "cli")):
            if "specfmt[" in text:
                found.append(f"{path.relative_to(ROOT)}: {text[:80]!r}")
    assert not found, found


def test_the_fallback_requirements_are_pyprojects():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    optional = project["project"]["optional-dependencies"]
    assert {k: tuple(v) for k, v in optional.items() if k != "dev"} == extras.FALLBACK
    for extra, reqs in extras.FALLBACK.items():
        assert extras.requirements(extra) == reqs


@pytest.mark.parametrize(
    ("prefix", "start"),
    [
        ("/home/u/.local/share/pipx/venvs/specfmt", "pipx inject specfmt "),
        ("/home/u/.local/share/uv/tools/specfmt", "uv pip install --python /x/bin/python "),
        ("/home/u/specfmt/.venv", "/x/bin/python -m pip install "),
    ],
)
def test_the_command_fits_the_installation(prefix, start):
    command = extras.add_command("deep", prefix=prefix, executable="/x/bin/python")
    assert command.startswith(start), command
    assert shlex.split(command)[-1] == "numpy>=1.24"


def test_the_command_for_this_environment_names_its_python():
    """The venv form is this interpreter's own pip: it installs where specfmt runs."""
    argv = shlex.split(extras.add_command("plot"))
    assert argv[:4] == [sys.executable, "-m", "pip", "install"]


@pytest.mark.parametrize(
    ("module", "call"),
    [
        (
            "numpy",
            lambda: __import__("spec_format").validate(
                EXAMPLES[0], __import__("spec_format").ValidateOptions(scan_weights=True)
            ),
        ),
        ("numpy", lambda: __import__("spec_format.inspect.token_freq").inspect.token_freq._numpy()),
        ("numpy", lambda: __import__("spec_format.convert.write").convert.write._numpy()),
        (
            "matplotlib",
            lambda: __import__("spec_format.inspect.plot").inspect.plot.require_matplotlib(),
        ),
        ("huggingface_hub", lambda: __import__("spec_format.parsers.remote").parsers.remote._hub()),
        ("torch", lambda: __import__("spec_format.forward.run").forward.run._import_torch()),
    ],
)
def test_each_missing_extra_prints_the_command(monkeypatch, module, call):
    for name in list(sys.modules):
        if name == module or name.startswith(f"{module}."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(UsageError) as caught:
        call()
    message = str(caught.value)
    assert "specfmt[" not in message
    assert f"`{sys.executable} -m pip install " in message, message
    assert extras.GUIDE in message
    page = (ROOT / "docs" / "guide" / "install.md").read_text(encoding="utf-8")
    assert "## Add an extra" in page  # where GUIDE points
