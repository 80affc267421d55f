"""Shell completion (typer's): the script installs, and completes commands and choices."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _complete(words: str, cword: int) -> list[str]:
    env = dict(
        os.environ, _SPECFMT_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword)
    )
    code = "from spec_format.cli.app import app; app(prog_name='specfmt')"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return proc.stdout.split()


def test_completion_script_for_bash():
    code = "from spec_format.cli.app import app; app(prog_name='specfmt')"
    proc = subprocess.run(
        [sys.executable, "-c", code, "--show-completion", "bash"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "_specfmt_completion" in proc.stdout and "complete " in proc.stdout


@pytest.mark.parametrize(
    "words, cword, expected",
    [
        ("specfmt sch", 1, ["schema"]),
        ("specfmt validate --format ", 3, ["text", "json", "github", "sarif"]),
        ("specfmt schema export --draft ", 4, ["2020-12", "07"]),
    ],
)
def test_completes_commands_and_choices(words, cword, expected):
    assert _complete(words, cword) == expected
