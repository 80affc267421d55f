"""Where ``migrate`` and ``fix`` put their result: stdout, another file, or the input itself.

Every file goes through :func:`spec_format.outfile.write_output`: ``--in-place`` and ``-o``
onto a regular file replace it atomically (the original is intact if anything fails before
the rename: a full disk, a kill, a result that fails validation), keeping its mode, owner
and extended attributes; ``-o /dev/null`` or a FIFO is written through; ``--backup`` never
overwrites an earlier backup (``.bak``, ``.bak.1``, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from spec_format.errors import UsageError
from spec_format.migration.output import dumps, unified_diff
from spec_format.outfile import write_output


@dataclass(frozen=True)
class WriteOptions:
    output: Path | None = None  # -o FILE
    in_place: bool = False
    backup: bool = False  # with in_place: keep <name>.bak (or .bak.N; never overwritten)
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
    raw: bytes | None = None  # the input's bytes as read; None when unknown
    written_to: Path | None = None
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        """The content differs. Formatting alone (key order, indentation, the final newline)
        is not a change: ``--check`` passes, ``--in-place`` leaves the file alone, and the
        report says the formatting differs (:attr:`formatting_only`)."""
        return self.before != self.after and _canonical(self.before) != self.after

    @property
    def formatting_only(self) -> bool:
        """Only the formatting differs from the text specfmt writes."""
        return self.before != self.after and not self.changed

    def diff(self) -> str:
        return unified_diff(self.before, self.after, self.path.name)


def _canonical(text: str) -> str | None:
    """``text`` as specfmt would write the same content; None when it is no plain JSON
    object (duplicate keys: dropping one is a change)."""

    def pairs(items: list[tuple[str, object]]) -> dict:
        if len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate key")
        return dict(items)

    try:
        return dumps(json.loads(text, object_pairs_hook=pairs))
    except ValueError:
        return None


def prepare(path: Path, original_text: str, document: dict, raw: bytes | None = None) -> Outcome:
    return Outcome(path=path, before=original_text, after=dumps(document), raw=raw)


def commit(outcome: Outcome, options: WriteOptions) -> Outcome:
    """Write the result where ``options`` say (nothing for stdout, dry-run and check)."""
    if options.dry_run or options.check or options.to_stdout:
        return outcome
    if options.in_place and not outcome.changed:
        return outcome  # nothing to do; leave the file (and its mtime) alone
    if options.in_place:
        written = write_output(
            outcome.path, outcome.after, backup=options.backup, expect=outcome.raw
        )
    else:
        written = write_output(Path(options.output), outcome.after)
    outcome.written_to = written.path
    outcome.backup = written.backup
    return outcome
