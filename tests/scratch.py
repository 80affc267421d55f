"""A scratch copy of the repository for the recipe tests, and the files a recipe touched.

docs/development.md gives a recipe per kind of change (a format version, a model type, a
rule, a reader release), each with the list of every file it touches. The recipe tests
(tests/test_scaffolds.py, tests/test_new_rule.py; marked slow) follow a recipe in a copy
made here, run the tests it names there, and check with :func:`unlisted` that every file the
change touched is on the recipe's list.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.common import ROOT

DEVELOPMENT = ROOT / "docs" / "development.md"
#: what a copy or a run leaves that is no file of the change
_NOT_CHANGES = re.compile(
    r"(^|/)(__pycache__|\.pytest_cache|\.ruff_cache|\.import_linter_cache|node_modules|\.cache"
    r"|.*\.egg-info)(/|$)"
)


def copy_repo(dest: Path) -> Path:
    """The files git knows about (tracked, and new ones not ignored) copied into ``dest``,
    with ``node_modules`` linked when the checkout has it."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        import pytest

        pytest.skip("needs a git checkout to list the repository's files")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        rel = raw.decode()
        src, target = ROOT / rel, dest / rel
        if rel == "node_modules":  # a link to the Node packages, linked below
            continue
        if src.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(src))
        elif src.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    if (ROOT / "node_modules").is_dir():
        (dest / "node_modules").symlink_to((ROOT / "node_modules").resolve())
    return dest


def run(repo: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """``python ARGS`` in the copy, importing the copy's code."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    env.pop("SPECFMT_INTEROP", None)
    return subprocess.run(
        [sys.executable, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=timeout
    )


def generate_args() -> list[str]:
    """``scripts/generate.py`` without the TypeScript generator when Node's packages are missing."""
    return [] if (ROOT / "node_modules").is_dir() else ["--skip", "typescript"]


def snapshot(repo: Path) -> dict[str, str]:
    """path -> sha256 of every file of the copy (what a change is measured against)."""
    out = {}
    for path in repo.rglob("*"):
        rel = path.relative_to(repo).as_posix()
        if path.is_file() and not path.is_symlink() and not _NOT_CHANGES.search(rel):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def changed(before: dict[str, str], repo: Path) -> set[str]:
    """Files added, changed or removed since ``before``."""
    after = snapshot(repo)
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def recipe(title: str, text: str | None = None) -> list[str]:
    """The file patterns a recipe of docs/development.md lists: the backquoted paths that
    start the list items of the section ``## <title>`` (``<name>`` stands for one path
    part, ``*`` for any characters of one part, a trailing ``/`` for a folder)."""
    text = DEVELOPMENT.read_text(encoding="utf-8") if text is None else text
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end > 0 else len(text)]
    heads = re.findall(r"^\s*(?:-|\d+\.) ((?:`[^`\s]+`(?:, )?)+)", section, re.M)
    return [p for head in heads for p in re.findall(r"`([^`\s]+)`", head)]


def _regex(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(<[^>]+>|\*)", pattern)
    body = "".join(
        "[^/]+" if p.startswith("<") else "[^/]*" if p == "*" else re.escape(p) for p in parts
    )
    return re.compile(body + (".*" if pattern.endswith("/") else ""))


def unlisted(paths: set[str], patterns: list[str]) -> list[str]:
    """The paths no pattern of the recipe covers."""
    compiled = [_regex(p) for p in patterns]
    return sorted(p for p in paths if not any(r.fullmatch(p) for r in compiled))


def committed_copy(dest: Path) -> tuple[Path, str]:
    """:func:`copy_repo` as a git repository with one commit: what a reader's ``git+URL`` or
    pre-commit ``repo:`` fetches. Returns the copy and the commit's full sha (the ``SHA``
    the docs tell a reader to pin)."""
    copy_repo(dest)
    if (dest / "node_modules").is_symlink():
        (dest / "node_modules").unlink()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "specfmt tests",
        "GIT_AUTHOR_EMAIL": "tests@specfmt.invalid",
        "GIT_COMMITTER_NAME": "specfmt tests",
        "GIT_COMMITTER_EMAIL": "tests@specfmt.invalid",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "scratch copy"]):
        subprocess.run(["git", *args], cwd=dest, check=True, env=env, capture_output=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=dest, check=True, capture_output=True, text=True
    ).stdout.strip()
    return dest, sha
