"""The pre-commit hooks in .pre-commit-hooks.yaml, run for real with `pre-commit try-repo`
against a small sample repository: pre-commit installs specfmt from this checkout
(uncommitted changes included) into a fresh environment, as it would for a user. try-repo
uses a new temporary store each call, so each call costs about 10 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.common import EXAMPLES, ROOT

pytestmark = pytest.mark.slow  # over a minute: deselected by default; scripts/test.sh runs it

pytest.importorskip("pre_commit", reason="pre-commit is in the dev extra: pip install -e '.[dev]'")


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="specfmt tests",
        GIT_AUTHOR_EMAIL="tests@specfmt.invalid",
        GIT_COMMITTER_NAME="specfmt tests",
        GIT_COMMITTER_EMAIL="tests@specfmt.invalid",
        NO_COLOR="1",
    )
    env.pop("PRE_COMMIT", None)
    return env


@pytest.fixture
def sample_repo(tmp_path):
    """A repository with a good draft, a broken one and a config that is no draft at all."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    example = next(e for e in EXAMPLES if e.name == "qwen3-8b-eagle3")
    good = json.loads((example / "config.json").read_text())
    bad = {k: v for k, v in good.items() if k != "speculators_config"}
    files = {
        "drafts/good/config.json": good,
        "drafts/bad/config.json": bad,
        "drafts/good/tokenizer_config.json": {"model_max_length": 40960},
    }
    for rel, content in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content, indent=2) + "\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sample"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, env=_git_env())
    return tmp_path


def _try_repo(repo, hook: str, *files: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(ROOT),
            hook,
            "--verbose",
            "--files",
            *files,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env=_git_env(),
        timeout=600,
    )


def test_validate_hook(sample_repo):
    proc = _try_repo(
        sample_repo,
        "specfmt-validate",
        "drafts/good/config.json",
        "drafts/bad/config.json",
        "drafts/good/tokenizer_config.json",
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "ok drafts/good/config.json" in out
    assert "fail drafts/bad/config.json" in out
    assert "S101" in out
    assert "tokenizer_config.json" not in out.split("specfmt validate", 1)[-1]  # not matched


@pytest.fixture
def migrated_repo(sample_repo):
    """The sample repository plus drafts/current, already at the newest format version."""
    current = sample_repo / "drafts" / "current" / "config.json"
    current.parent.mkdir()
    migrated = subprocess.run(
        [
            sys.executable,
            "-m",
            "spec_format",
            "migrate",
            "drafts/good/config.json",
            "-o",
            str(current),
        ],
        cwd=sample_repo,
        capture_output=True,
        text=True,
    )
    assert migrated.returncode == 0, migrated.stderr
    subprocess.run(["git", "add", "-A"], cwd=sample_repo, check=True, env=_git_env())
    return sample_repo


def test_migrate_check_hook(migrated_repo):
    old = _try_repo(migrated_repo, "specfmt-migrate-check", "drafts/good/config.json")
    assert old.returncode == 1, old.stdout + old.stderr
    assert "would change drafts/good/config.json" in old.stdout
    current = _try_repo(migrated_repo, "specfmt-migrate-check", "drafts/current/config.json")
    assert current.returncode == 0, current.stdout + current.stderr


def test_migrate_check_hook_with_several_files(migrated_repo):
    proc = _try_repo(
        migrated_repo,
        "specfmt-migrate-check",
        "drafts/good/config.json",
        "drafts/current/config.json",
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert "would change drafts/good/config.json" in out
    assert "drafts/current/config.json is up to date" in out


def test_migrate_check_hook_passes_a_file_that_differs_only_in_formatting(migrated_repo):
    """Key order, indentation and the final newline are not a change: the hook passes the
    file and says why, instead of calling it unchanged and failing."""
    import json

    current = migrated_repo / "drafts" / "current" / "config.json"
    data = json.loads(current.read_text(encoding="utf-8"))
    current.write_text(json.dumps(dict(reversed(list(data.items()))), indent=4), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=migrated_repo, check=True, env=_git_env())
    proc = _try_repo(migrated_repo, "specfmt-migrate-check", "drafts/current/config.json")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "formatting differs only" in out and "would change" not in out


#: the repository URL the docs give, which a reader replaces with where they get specfmt
DOCUMENTED_REPO = "https://github.com/OWNER/specfmt"


def _documented_block(language: str, containing: str) -> str:
    import re

    text = (ROOT / "docs" / "guide" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)
    (block,) = [b for b in blocks if containing in b]
    return block


def test_the_documented_config_works(sample_repo, tmp_path_factory):
    """docs/guide/ci.md's `.pre-commit-config.yaml` and its autoupdate line, as a reader
    pastes them (OWNER's URL replaced by a scratch clone of this repository, which has no
    tags, as the real one has none yet): autoupdate writes a commit into `rev`, and the hooks
    then install and run. The block named `rev: v0.1.0`, a tag nobody could fetch."""
    from tests.scratch import committed_copy

    upstream, sha = committed_copy(tmp_path_factory.mktemp("upstream") / "specfmt")
    config = _documented_block("yaml", "rev:").replace(DOCUMENTED_REPO, str(upstream))
    assert str(upstream) in config, "the block no longer names the documented repository"
    (sample_repo / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    for old, new in (("drafts/good", "checkpoints/good"), ("drafts/bad", "checkpoints/bad")):
        (sample_repo / new).parent.mkdir(exist_ok=True)
        (sample_repo / old).rename(sample_repo / new)
    subprocess.run(["git", "add", "-A"], cwd=sample_repo, check=True, env=_git_env())
    (line,) = [
        line.removeprefix("$ ")
        for line in _documented_block("console", "autoupdate").splitlines()
        if "autoupdate" in line
    ]
    argv = line.replace(DOCUMENTED_REPO, str(upstream)).split()
    assert argv[0] == "pre-commit"
    run = dict(cwd=sample_repo, capture_output=True, text=True, env=_git_env(), timeout=600)
    updated = subprocess.run([sys.executable, "-m", "pre_commit", *argv[1:]], **run)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    written = (sample_repo / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert f"rev: {sha}" in written, written
    hooks = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], **run)
    out = hooks.stdout + hooks.stderr
    assert hooks.returncode == 1, out  # the broken draft fails; nothing about the set-up
    assert "specfmt validate" in out or "S101" in out, out
    assert "fail checkpoints/bad/config.json" in out and "S101" in out, out
    assert "tokenizer_config.json" not in out  # the documented `files` narrows the hooks
