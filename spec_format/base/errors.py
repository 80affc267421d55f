"""One error family for the library. The CLI turns these into one clean line and an exit code."""

from __future__ import annotations


class SpecfmtError(Exception):
    """Base class for every error specfmt raises on purpose."""

    exit_code = 2


class UsageError(SpecfmtError):
    """The caller asked for something that cannot be done (bad option, unknown version)."""

    exit_code = 2


class InputError(SpecfmtError):
    """An input file could not be read or parsed at all."""

    exit_code = 3


class InternalError(SpecfmtError):
    """A bug in specfmt (for example a migration whose output fails its own schema)."""

    exit_code = 70


class MigrationRefused(UsageError):
    """A migration cannot be done as asked (a type the target lacks, a lossy downgrade
    without ``--allow-lossy``, an input no release can read)."""

    exit_code = 2
