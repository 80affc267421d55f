"""One error family for the library. The CLI turns these into one clean line and an exit code.

:class:`ExitCode` and :data:`MEANING` are the one table of exit codes: the error classes,
the rewrite batch and the command line take their codes from it, and the exit-code tables
of README.md and docs/guide/validate.md start each row with its meaning
(tests/test_exit_codes.py)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The exit codes every specfmt command shares (the one place: the command line, the
    rewrite pipeline, the CLI reference and README.md's table read them from here)."""

    OK = 0
    FINDINGS = 1  # errors found / --check found a difference
    USAGE = 2  # bad options or arguments
    UNREADABLE = 3  # an input could not be read or parsed
    INTERNAL = 70  # a bug in specfmt


#: what each code means in every command, as README.md's table says it (``"128+N"``: a
#: signal; generated into the README by scripts/generate.py)
EXIT_MEANINGS: tuple[tuple[str, str], ...] = (
    (
        str(ExitCode.OK),
        "no errors (warnings and notes allowed); `--check`: nothing would change",
    ),
    (
        str(ExitCode.FINDINGS),
        "at least one error finding; `--check`: the file would change; `forward`: the "
        "checkpoint cannot run or `--compare` found a mismatch",
    ),
    (
        str(ExitCode.USAGE),
        "usage error (bad option, unknown version, rule id or prefix); a refused migration "
        "(lossy without `--allow-lossy`); a refused conversion (`convert`: an unknown tensor, a "
        "wrong shape, missing aux layer ids; nothing written); a missing optional dependency "
        "(`validate --deep`/`--scan-weights` without numpy: the `deep` extra; `inspect --plot`, "
        "a `.pt` token file); `inspect`: a verifier it cannot count",
    ),
    (
        str(ExitCode.UNREADABLE),
        "an input could not be read or parsed at all; `validate --deep`/`--scan-weights`: an "
        "input without weights (I013); `inspect`: a checkpoint without weights or with a broken "
        "header, token counts that cannot be used; the environment failed a read or a write in "
        "any command: a full disk or quota, a full or closed standard output (`> /dev/full`, "
        "`>&-`), a closed standard input (`<&-`), a permission, a read-only file system (one "
        "line naming the file and the cause; no partial file is left)",
    ),
    (
        "128+N",
        "stopped by signal N: 130 Ctrl-C (SIGINT), 143 SIGTERM (`timeout`, docker, CI), 129 "
        "SIGHUP; temporary outputs (`convert`'s hidden DEST directory, a writer's temporary "
        "file) are removed first",
    ),
    (
        str(ExitCode.INTERNAL),
        "a bug in specfmt (for example a migration whose output fails its target schema); the "
        "input that hit it gets an `I012` finding (`validate`) or an error line "
        "(`migrate`/`fix`), and every other input of the run is still checked, reported and, "
        "with `--in-place`, rewritten",
    ),
)


#: the short meaning of each code (tests check the docs' tables against it; EXIT_MEANINGS
#: above says each in full for README.md)
MEANING = {
    ExitCode.OK: "no errors (warnings and notes allowed)",
    ExitCode.FINDINGS: "at least one error finding",
    ExitCode.USAGE: "usage error",
    ExitCode.UNREADABLE: "an input could not be read or parsed at all",
    ExitCode.INTERNAL: "a bug in specfmt",
}
#: stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), as a shell reports it
SIGNALLED = "128+N"


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
