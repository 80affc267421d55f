"""`python scripts/new_rule.py ID` in a temporary copy of the repository: the new rule is
registered, documented, has its cases file (a failing and a passing case), and the rule
tests pass there."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scratch import changed, copy_repo, recipe, run, snapshot, unlisted

#: the registry and docs tests, and the fixture cases of the new rule
RULE_TESTS = [
    "tests/test_rules_registry.py",
    "tests/test_registry_contract.py",
    "tests/test_docs.py::test_generated_docs_are_up_to_date",
]


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    return copy_repo(tmp_path_factory.mktemp("repo"))


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess:
    return run(copy, *args, timeout=600)


@pytest.mark.slow  # new_rule.py, generate.py and the rule tests in a copy: over a minute
def test_new_rule_is_scaffolded_and_its_tests_pass(copy):
    before = snapshot(copy)
    made = _run(
        copy, "scripts/new_rule.py", "X099", "--name", "vocab-null", "--key", "draft_vocab_size"
    )
    assert made.returncode == 0, made.stdout + made.stderr
    # every file the scaffold touched is on the recipe's list in docs/development.md
    touched = changed(before, copy)
    assert "tests/rules/cases/X099.json" in touched
    assert not unlisted(touched, recipe("Adding a rule"))
    module = (copy / "spec_format/rules/crossfield.py").read_text()
    assert 'id = "X099"' in module and "class VocabNull(_CrossFieldRule):" in module
    assert 'applies_to = catalog.family("chain")' in module  # no literal list of types
    assert "crossfield.VocabNull," in (copy / "spec_format/rules/registry.py").read_text()
    assert "## Use instead" in (copy / "spec_format/rules/docs/X099.md").read_text()
    cases = json.loads((copy / "tests/rules/cases/X099.json").read_text())
    assert [c["expect"] for c in cases["cases"]] == ["fail", "pass"]
    assert "# X099 vocab-null" in (copy / "docs/rules/X099.md").read_text()
    explained = _run(copy, "-m", "spec_format", "explain", "X099")
    assert explained.returncode == 0 and "vocab-null" in explained.stdout
    tests = _run(copy, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *RULE_TESTS)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    # its two cases and its file's form; every rule has a file and every file a rule
    cases = _run(
        copy,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/rules",
        "-k",
        "X099 or every_rule",
    )
    assert cases.returncode == 0 and "4 passed" in cases.stdout, cases.stdout[-4000:]
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff:
        touched = ["spec_format/rules/crossfield.py", "spec_format/rules/registry.py"]
        lint = subprocess.run([ruff, "check", *touched], cwd=copy, capture_output=True, text=True)
        assert lint.returncode == 0, lint.stdout
        fmt = subprocess.run(
            [ruff, "format", "--check", *touched], cwd=copy, capture_output=True, text=True
        )
        assert fmt.returncode == 0, fmt.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["X001", "--name", "x-new", "--key", "draft_vocab_size"], "X001 is taken"),
        (["H099", "--name", "h-new", "--key", "draft_vocab_size"], "not scaffolded"),
        (["C099", "--name", "c-new", "--key", "no_such_key"], "--key no_such_key"),
        (["C099", "--name", "Not_Kebab", "--key", "draft_vocab_size"], "kebab-case"),
    ],
)
def test_new_rule_refuses_with_a_reason(copy, args, says):
    done = _run(copy, "scripts/new_rule.py", *args, "--no-generate")
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr
