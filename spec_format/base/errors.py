"""One error family for the library. The CLI turns these into one clean line and an exit code.

:class:`ExitCode` and :data:`MEANING` are the one table of exit codes: the error classes,
the rewrite batch and the command line take their codes from it, and the exit-code tables
of README.md and docs/guide/validate.md start each row with its meaning
(tests/test_exit_codes.py)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The exit codes every specfmt command shares."""

    OK = 0
    FINDINGS = 1  # errors found / --check found a difference
    USAGE = 2  # bad options or arguments, a refused migration or conversion
    UNREADABLE = 3  # an input could not be read or parsed, or a write failed
    INTERNAL = 70  # a bug in specfmt (EX_SOFTWARE of sysexits.h)


#: what each code means for every command (a command's table may add its own cases)
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
