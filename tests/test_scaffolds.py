"""The scaffolds work: a new format version made by scripts/new_version.py passes the suite.

The scaffold runs in a copy of the repository (tracked files only), so the checkout is never
touched; then the tests that cover versions, schemas, migration and generated files run
there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # over a minute: deselected by default; scripts/test.sh runs it

ROOT = Path(__file__).resolve().parents[1]


def _copy_repo(dest: Path) -> Path:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for raw in filter(None, files):
        rel = raw.decode()
        src = ROOT / rel
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        elif src.is_file():
            shutil.copy2(src, target)
    node_modules = ROOT / "node_modules"
    if node_modules.is_dir():
        (dest / "node_modules").symlink_to(node_modules)
    return dest


def _run(repo: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    env.pop("SPECFMT_INTEROP", None)
    return subprocess.run(
        [sys.executable, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    repo = _copy_repo(tmp_path_factory.mktemp("repo"))
    skip = [] if (ROOT / "node_modules").is_dir() else ["--skip", "typescript"]
    done = _run(repo, "scripts/new_version.py", "0.10", "--no-generate")
    assert done.returncode == 0, done.stderr
    gen = _run(repo, "scripts/generate.py", *skip)
    assert gen.returncode == 0, gen.stdout + gen.stderr
    frozen = _run(repo, "scripts/generate.py", "--refreeze", "0.10")
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    return repo


def test_new_version_is_catalogued_and_latest(scaffolded):
    catalog = json.loads((scaffolded / "schema" / "catalog.json").read_text())
    assert catalog["latest"] == "0.10"
    assert catalog["versions"]["0.10"]["types"] == catalog["versions"]["0.9"]["types"]
    assert (scaffolded / "generated" / "models" / "v0_10.py").is_file()
    assert (scaffolded / "spec_format" / "migration" / "steps" / "v0_9_to_v0_10.py").is_file()


def test_suite_passes_with_the_new_version(scaffolded):
    tests = [
        "tests/test_schemas.py",
        "tests/test_fixtures.py",
        "tests/test_frozen.py",
        "tests/versions",
        "tests/migrate",
        "tests/test_api.py",  # the Python API guide names no latest version
    ]
    result = _run(scaffolded, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_cli_migrates_to_the_new_version(scaffolded):
    example = scaffolded / "examples" / "qwen3-8b-eagle3" / "config.json"
    out = scaffolded / "migrated.json"
    result = _run(
        scaffolded,
        "-m",
        "spec_format",
        "migrate",
        str(example),
        "--to",
        "0.10",
        "-o",
        str(out),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(out.read_text())
    assert doc["speculators_version"] == "0.10.0"
    check = _run(scaffolded, "-m", "spec_format", "validate", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
