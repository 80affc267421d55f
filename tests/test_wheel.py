"""The built wheel works from outside the source tree, with every schema bundled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv

import pytest
from conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(dist),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("specfmt-*.whl")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    pip = env_dir / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", str(wheel)], check=True, capture_output=True)
    return env_dir, wheel


def test_wheel_contains_every_schema_and_package(installed):
    import zipfile

    _, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in (ROOT / "schema").rglob("*.json"):
        rel = schema.relative_to(ROOT / "schema").as_posix()
        assert f"spec_format/schema/{rel}" in names, rel
    for init in ROOT.joinpath("spec_format").rglob("__init__.py"):
        rel = init.relative_to(ROOT).as_posix()
        assert rel in names, f"{rel}: add the package to pyproject's packages list"
    assert "spec_format/cli/app.py" in names and "spec_format/models/v0_9.py" in names
    for page in ROOT.joinpath("spec_format", "rules", "docs").glob("*.md"):
        rel = page.relative_to(ROOT).as_posix()
        assert rel in names, f"{rel}: the rule page texts are package data"


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
        "import spec_format, spec_format.schemas as s; "
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
