"""One table of exit codes (spec_format.base.errors.ExitCode and EXIT_MEANINGS): the exit-code
tables of the README and the guides name only its codes, and the tables shared by every
command list each code with its meaning first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spec_format.base.errors import (
    EXIT_MEANINGS,
    SIGNALLED,
    ExitCode,
    InputError,
    InternalError,
    UsageError,
    meaning,
)
from spec_format.rewrites import rewrite

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: the tables that state the codes of every command (others are one command's own)
SHARED = [ROOT / "README.md", ROOT / "docs" / "guide" / "validate.md"]
_ROW = re.compile(r"^\| *([0-9]+|128\+N) *\| *(.+?) *\|$")


def _tables(page: Path) -> list[dict[str, str]]:
    """Every ``| code | meaning |`` table of ``page``: code -> meaning."""
    tables, current = [], None
    for line in page.read_text(encoding="utf-8").splitlines():
        if re.match(r"^\| *code *\| *meaning *\|", line):
            current = {}
            tables.append(current)
        elif current is not None and (m := _ROW.match(line)):
            current[m.group(1)] = m.group(2)
        elif current is not None and not line.startswith("|"):
            current = None
    return tables


def test_the_errors_and_the_rewrite_batch_take_their_codes_from_the_table():
    assert (UsageError.exit_code, InputError.exit_code, InternalError.exit_code) == (
        ExitCode.USAGE,
        ExitCode.UNREADABLE,
        ExitCode.INTERNAL,
    )
    assert tuple(ExitCode[n] for n in ("OK", "FINDINGS", "INTERNAL")) == (
        rewrite.OK,
        rewrite.FINDINGS,
        rewrite.INTERNAL,
    )
    assert {m.code for m in EXIT_MEANINGS} == {str(int(c)) for c in ExitCode} | {SIGNALLED}


def test_exit_code_tables_name_only_the_library_codes():
    known = {str(int(c)) for c in ExitCode} | {SIGNALLED}
    tables = {page: _tables(page) for page in PAGES}
    assert set(SHARED) <= {page for page, found in tables.items() if found}
    for page, found in tables.items():
        for table in found:
            assert set(table) <= known, f"{page.name}: codes not in ExitCode: {set(table) - known}"


@pytest.mark.parametrize("page", SHARED, ids=lambda p: p.name)
def test_shared_tables_list_every_code_with_its_meaning_first(page):
    (table,) = [t for t in _tables(page) if len(t) >= len(ExitCode)]
    for code in ExitCode:
        assert str(int(code)) in table, f"{page.name} lacks exit code {int(code)}"
        assert table[str(int(code))].startswith(meaning(code)), (
            f"{page.name}: exit code {int(code)} should start with {meaning(code)!r}"
        )


def test_command_help_states_only_the_library_codes():
    """Each command's ``Exit codes:`` sentence names codes of the one table, and a usage
    error is always its 2."""
    import typer

    from spec_format.cli.app import COMMANDS, app

    root = typer.main.get_command(app)
    known = {str(int(c)) for c in ExitCode}
    stated = {}
    for name in COMMANDS:
        help_text = root.commands[name].help or ""
        if "Exit codes:" in help_text:
            sentence = help_text.split("Exit codes:", 1)[1]
            stated[name] = set(re.findall(r"(?:^|[,;:] ?) ?([0-9]+) ", sentence.split("\n\n")[0]))
    assert stated, "no command states its exit codes"
    for name, codes in stated.items():
        assert codes and codes <= known, f"{name}: exit codes {codes - known} not in ExitCode"
        assert str(int(ExitCode.USAGE)) in codes, f"{name} does not state the usage error's code"
