"""The sdist builds a wheel that works from outside the source tree, with every schema bundled.

The repository keeps the CLI in cli/, the schemas in schema/ and the models in generated/models/;
the wheel has them inside the one import package (pyproject.toml's package-dir)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv

import pytest
import tomllib

from tests.common import EXAMPLES, ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    # sdist first, then the wheel built from the unpacked sdist: the sdist is complete
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("specfmt-*.whl")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    pip = env_dir / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", str(wheel)], check=True, capture_output=True)
    return env_dir, wheel


def _installed_names() -> dict[str, str]:
    """Each source file of the package -> its path in the wheel (pyproject's package-dir)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = pyproject["tool"]["setuptools"]["package-dir"]
    folders = {"spec_format": "spec_format", **mapped}
    out = {}
    for package, folder in folders.items():
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder).as_posix()
            out[path.relative_to(ROOT).as_posix()] = f"{package.replace('.', '/')}/{rel}"
    return out


def test_wheel_contains_every_schema_and_module(installed):
    import zipfile

    _, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in (ROOT / "schema").rglob("*.json"):
        rel = schema.relative_to(ROOT / "schema").as_posix()
        assert f"spec_format/schema/{rel}" in names, rel
    modules = _installed_names()
    assert "cli/app.py" in modules and "generated/models/v0_9.py" in modules
    for source, installed_as in modules.items():
        assert installed_as in names, f"{source}: add its package to pyproject's packages list"
    for page in ROOT.joinpath("spec_format", "rules", "docs").glob("*.md"):
        rel = page.relative_to(ROOT).as_posix()
        assert rel in names, f"{rel}: the rule page texts are package data"


def test_sdist_holds_the_layout_without_links(installed):
    _, wheel = installed
    (sdist,) = wheel.parent.glob("specfmt-*.tar.gz")
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
    assert not [m.name for m in members if m.issym() or m.islnk()]
    top = {m.name.split("/")[1] for m in members if m.name.count("/") >= 1}
    assert {"cli", "schema", "spec_format", "generated", "pyproject.toml"} <= top


def test_installed_explain_prints_the_page_text(installed, tmp_path):
    env_dir, _ = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(
        [str(env_dir / "bin" / "specfmt"), "explain", "--json", "X001"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    page = (ROOT / "spec_format" / "rules" / "docs" / "X001.md").read_text(encoding="utf-8")
    assert json.loads(proc.stdout)["explanation"].endswith(page.strip())


def test_installed_cli_runs_outside_the_source_tree(installed, tmp_path):
    env_dir, _ = installed
    config = tmp_path / "config.json"
    config.write_text((EXAMPLES[0] / "config.json").read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(
        [str(env_dir / "bin" / "specfmt"), "validate", str(config), "--format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"][0]["status"] == "ok"
    code = (
        "import spec_format, spec_format.facts.schemas as s; "
        "assert 'site-packages' in spec_format.__file__; print(len(s._all_documents()))"
    )
    out = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(list((ROOT / "schema").rglob("*.schema.json")))
