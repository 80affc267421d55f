"""One error family for the library. The CLI turns these into one clean line and an exit code.

:class:`ExitCode` and :data:`EXIT_MEANINGS` are the one table of exit codes: the error classes,
the rewrite batch and the command line take their codes from it, and the exit-code tables
of README.md and docs/guide/validate.md start each row with its meaning
(tests/test_exit_codes.py)."""

from __future__ import annotations

import enum
from typing import NamedTuple


class ExitCode(enum.IntEnum):
    """The exit codes every specfmt command shares (the one place: the command line, the
    rewrite pipeline, the CLI reference and README.md's table read them from here)."""

    OK = 0
    FINDINGS = 1  # errors found / --check found a difference
    USAGE = 2  # bad options or arguments
    UNREADABLE = 3  # an input could not be read or parsed
    INTERNAL = 70  # a bug in specfmt


#: stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), as a shell reports it
SIGNALLED = "128+N"


class ExitMeaning(NamedTuple):
    """One row of the exit-code table: the code (``"128+N"``: a signal), what it means in
    every command, and what it covers in particular commands."""

    code: str
    meaning: str
    details: str

    def __str__(self) -> str:
        return self.meaning + self.details


#: the one table of exit codes: what each means in every command (``meaning``, which the
#: docs' tables and the CLI reference start with) and in full (README.md's table, generated
#: by scripts/generate.py)
EXIT_MEANINGS: tuple[ExitMeaning, ...] = (
    ExitMeaning(
        str(ExitCode.OK),
        "no errors (warnings and notes allowed)",
        "; `--check`: nothing would change",
    ),
    ExitMeaning(
        str(ExitCode.FINDINGS),
        "at least one error finding",
        "; `--check`: the file would change; `forward`: the checkpoint cannot run or "
        "`--compare` found a mismatch",
    ),
    ExitMeaning(
        str(ExitCode.USAGE),
        "usage error",
        " (bad option, unknown version, rule id or prefix); a refused migration "
        "(lossy without `--allow-lossy`); a refused conversion (`convert`: an unknown tensor, a "
        "wrong shape, missing aux layer ids; nothing written); a missing optional dependency "
        "(`validate --deep`/`--scan-weights` without numpy: the `deep` extra; `inspect --plot`, "
        "a `.pt` token file); `inspect`: a verifier it cannot count",
    ),
    ExitMeaning(
        str(ExitCode.UNREADABLE),
        "an input could not be read or parsed at all",
        "; `validate --deep`/`--scan-weights`: an "
        "input without weights (I013); `inspect`: a checkpoint without weights or with a broken "
        "header, token counts that cannot be used; the environment failed a read or a write in "
        "any command: a full disk or quota, a full or closed standard output (`> /dev/full`, "
        "`>&-`), a closed standard input (`<&-`), a permission, a read-only file system (one "
        "line naming the file and the cause; no partial file is left)",
    ),
    ExitMeaning(
        SIGNALLED,
        "stopped by signal N",
        ": 130 Ctrl-C (SIGINT), 143 SIGTERM (`timeout`, docker, CI), 129 "
        "SIGHUP; temporary outputs (`convert`'s hidden DEST directory, a writer's temporary "
        "file) are removed first",
    ),
    ExitMeaning(
        str(ExitCode.INTERNAL),
        "a bug in specfmt",
        " (for example a migration whose output fails its target schema); the "
        "input that hit it gets an `I012` finding (`validate`) or an error line "
        "(`migrate`/`fix`), and every other input of the run is still checked, reported and, "
        "with `--in-place`, rewritten",
    ),
)


def meaning(code: int | str) -> str:
    """The short meaning of ``code`` (an ExitCode, or SIGNALLED) in the table."""
    key = code if isinstance(code, str) else str(int(code))
    return next(m.meaning for m in EXIT_MEANINGS if m.code == key)


class SpecfmtError(Exception):
    """Base class for every error specfmt raises on purpose."""

    exit_code = int(ExitCode.USAGE)


class UsageError(SpecfmtError):
    """The caller asked for something that cannot be done (bad option, unknown version)."""

    exit_code = int(ExitCode.USAGE)


class InputError(SpecfmtError):
    """An input file could not be read or parsed at all."""

    exit_code = int(ExitCode.UNREADABLE)


class InternalError(SpecfmtError):
    """A bug in specfmt (for example a migration whose output fails its own schema)."""

    exit_code = int(ExitCode.INTERNAL)


class MigrationRefused(UsageError):
    """A migration cannot be done as asked (a type the target lacks, a lossy downgrade
    without ``--allow-lossy``, an input no release can read)."""

    exit_code = int(ExitCode.USAGE)
