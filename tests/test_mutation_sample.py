"""The tests kill at least 90% of a fixed sample of mutmut's mutants in each of rules, facts,
rewrites and parsers (issue 38; benches/RESULTS-mutation.md records the full sample's rates).
Slow (minutes: mutmut generates every mutant, maps the tests once and runs the sample), so
it runs with ``pytest -m slow`` and in scripts/test.sh, not in the contributor loop."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.common import ROOT


@pytest.mark.slow
def test_the_tests_kill_a_fixed_mutation_sample():
    run = subprocess.run(
        [sys.executable, "scripts/mutation_sample.py", "--ci"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    table = run.stdout[run.stdout.find("| package") :]
    assert run.returncode == 0, f"{table}\n{run.stderr[-3000:]}"
