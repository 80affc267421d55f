"""The tests kill at least 90% of a fixed sample of mutmut's mutants in each of rules, facts,
rewrites and parsers (issue 38; benches/RESULTS-mutation.md records the full sample's rates
and this test's time). Slow (minutes: mutmut generates every mutant, maps the selected tests
to functions once and runs the sample), so it runs with ``pytest -m slow`` and in
scripts/test.sh, not in the contributor loop. mutmut writes ``mutants/`` beside the sources,
so the test runs it in a copy of the checkout under ``tmp_path``."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.common import ROOT

#: what the copy leaves out: git's, the environments, caches and build outputs
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "mutants", ".cache", "envs", "__pycache__", "*.egg-info",
    "build", "dist", "site", ".hypothesis", ".pytest_cache", ".ruff_cache",
)  # fmt: skip


@pytest.mark.slow
def test_the_tests_kill_a_fixed_mutation_sample(tmp_path):
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT, copy, ignore=_NOT_COPIED, symlinks=True)
    run = subprocess.run(
        [sys.executable, "scripts/mutation_sample.py", "--ci"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    table = run.stdout[run.stdout.find("| package") :]
    assert run.returncode == 0, f"{table}\n{run.stderr[-3000:]}"
