"""Where ``migrate`` and ``fix`` put their result: stdout, another file, or the input itself.

``--in-place`` replaces the input atomically (temporary file in the same directory, fsync,
rename), so the original is intact if anything fails before the rename: a full disk, a
kill, or a result that fails validation (that is checked before anything is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spec_format.errors import InputError, UsageError
from spec_format.migration.output import dumps, unified_diff, write_atomic


@dataclass(frozen=True)
class WriteOptions:
    output: Path | None = None  # -o FILE
    in_place: bool = False
    backup: bool = False  # with in_place: keep <name>.bak
    dry_run: bool = False  # print the diff, write nothing
    check: bool = False  # report whether the file would change, write nothing

    def validate(self) -> None:
        if self.in_place and self.output is not None:
            raise UsageError("--in-place and -o/--output exclude each other; pick one")
        if self.backup and not self.in_place:
            raise UsageError("--backup only makes sense with --in-place")
        if self.check and (self.in_place or self.output is not None):
            raise UsageError("--check writes nothing; drop --in-place/-o, or drop --check")

    @property
    def to_stdout(self) -> bool:
        return not (self.in_place or self.output or self.dry_run or self.check)


@dataclass
class Outcome:
    path: Path
    before: str
    after: str
    written_to: Path | None = None
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return unified_diff(self.before, self.after, self.path.name)


def prepare(path: Path, original_text: str, document: dict) -> Outcome:
    return Outcome(path=path, before=original_text, after=dumps(document))


def commit(outcome: Outcome, options: WriteOptions) -> Outcome:
    """Write the result where ``options`` say (nothing for stdout, dry-run and check)."""
    if options.dry_run or options.check or options.to_stdout:
        return outcome
    target = outcome.path if options.in_place else Path(options.output)
    backup = outcome.path.with_name(outcome.path.name + ".bak") if options.backup else None
    if options.in_place and not outcome.changed:
        return outcome  # nothing to do; leave the file (and its mtime) alone
    try:
        write_atomic(target, outcome.after, backup=backup)
    except OSError as exc:
        raise InputError(
            f"{target}: could not write ({exc.strerror or exc}); "
            + ("the original is unchanged" if options.in_place else "nothing was written")
        ) from None
    outcome.written_to = target
    outcome.backup = backup
    return outcome
