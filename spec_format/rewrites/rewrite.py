"""The one pipeline behind every rewrite of a config file: read, rewrite, write, per file
and in batch. ``specfmt migrate`` and ``specfmt fix`` are an option parser and a renderer on
top of it; the Python API (:func:`spec_format.api.migrate_files`,
:func:`spec_format.api.fix_files`) is the same pipeline with keyword arguments.

* read: :func:`spec_format.parsers.documents.read_config` (a ``config.json``, its directory, or ``-``
  for standard input);
* rewrite: :func:`spec_format.rewrites.migration.migrate` or :func:`spec_format.rewrites.fixing.fix`, pure
  functions of the document;
* write: where :class:`WriteOptions` say (stdout, ``-o``, ``--in-place``, nothing for
  ``--check`` and ``--dry-run``). Every file goes through
  :func:`spec_format.parsers.outfile.write_output`: ``--in-place`` and ``-o`` onto a regular file
  replace it atomically (the original is intact if anything fails before the rename: a full
  disk, a kill, a result that fails validation), keeping its mode, owner and extended
  attributes; ``-o /dev/null`` or a FIFO is written through; ``--backup`` never overwrites an
  earlier backup (``.bak``, ``.bak.1``, ...); a file that changed since it was read is left
  alone;
* batch: :func:`rewrite_files` runs every input; one failing input never stops the others,
  and each ends as a :class:`FileResult` with its exit code (:func:`exit_code` picks the one
  of the batch).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from spec_format.base.errors import ExitCode, InternalError, SpecfmtError, UsageError
from spec_format.base.jsoncopy import same_json
from spec_format.base.oserror import as_error
from spec_format.facts import versions
from spec_format.parsers import documents
from spec_format.parsers.outfile import write_output
from spec_format.rewrites import fixing, migration
from spec_format.rewrites.fixing import FixOptions, FixResult
from spec_format.rewrites.migration.output import dumps, unified_diff
from spec_format.rewrites.migration.records import ABSENT, Change, Problem
from spec_format.rewrites.migration.runner import MigrateOptions, MigrationResult
from spec_format.rules.base import MAX_MESSAGE, bounded

#: the exit codes a rewrite ends with (base.errors.ExitCode, the one table)
OK, FINDINGS, USAGE, UNREADABLE, INTERNAL = map(int, ExitCode)
#: which exit code wins when several inputs end differently (a bug, then unreadable input,
#: then a refusal or usage problem, then "would change" / findings)
PRECEDENCE = (INTERNAL, UNREADABLE, USAGE, FINDINGS)


class WriteRefused(UsageError):
    """A value the rewrite would write brings an error the input did not have (exit 2):
    the checks ran again on the rewritten config before anything was written."""


class InputInvalid(SpecfmtError):
    """The input fails its own format version's schema, so its rewrite fails the target's
    too (exit 1); the message lists the errors."""

    exit_code = FINDINGS


@dataclass(frozen=True)
class WriteOptions:
    output: Path | None = None  # -o FILE
    in_place: bool = False
    backup: bool = False  # with in_place: keep <name>.bak (or .bak.N; never overwritten)
    dry_run: bool = False  # print the diff, write nothing
    check: bool = False  # report whether the file would change, write nothing

    def __post_init__(self) -> None:  # flags that exclude each other: before any input is read
        self.validate()

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
    #: the parse of ``before`` (no duplicate keys) and the document ``after`` is the text of;
    #: with both, :attr:`changed` compares them instead of parsing ``before`` again
    documents: tuple[dict, dict] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def changed(self) -> bool:
        """The content differs. Formatting alone (key order, indentation, the final newline)
        is not a change: ``--check`` passes, ``--in-place`` leaves the file alone, and the
        report says the formatting differs (:attr:`formatting_only`)."""
        if self.before == self.after:
            return False
        if self.documents is not None:
            return not same_json(*self.documents)
        return _canonical(self.before) != self.after

    @property
    def formatting_only(self) -> bool:
        """Only the formatting differs from the text specfmt writes."""
        return self.before != self.after and not self.changed

    def diff(self) -> str:
        name = self.path.as_posix()  # the path as given, so several inputs' diffs differ
        return unified_diff(self.before, self.after, "<stdin>" if name == "-" else name)


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


def prepare(
    path: Path,
    original_text: str,
    document: dict,
    raw: bytes | None = None,
    original: dict | None = None,
) -> Outcome:
    """``original``: the parse of ``original_text`` when it has no duplicate keys (what
    :func:`spec_format.parsers.documents.read_config` hands a rewrite)."""
    pair = (original, document) if original is not None else None
    return Outcome(path=path, before=original_text, after=dumps(document), raw=raw, documents=pair)


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


# -- one document -------------------------------------------------------------------------------
@dataclass
class Rewritten:
    """A document brought to a format version: the migration (None when it was at that
    version already) and the fix that followed it (None when the migration failed the
    target schema)."""

    document: dict[str, Any]
    migrated: MigrationResult | None
    fixed: FixResult | None


def to_version(
    document: dict[str, Any],
    line: str,
    *,
    verifier: dict[str, Any] | None = None,
    allow_lossy: bool = False,
) -> Rewritten:
    """``document`` in format ``line`` with the defaults readers disagree about written, as
    ``specfmt migrate --to LINE`` then ``specfmt fix`` would make it (``convert`` gives its
    config this way). The caller checks ``migrated.target_errors`` before using the result.
    ``document`` is handed over, not copied: the result shares the parts no edit went into."""
    migrated = None
    if versions.detect(document).line != line:
        options = MigrateOptions(to=line, allow_lossy=allow_lossy, verifier=verifier)
        migrated = migration.migrate(document, options, share_input=True)
        if migrated.target_errors:
            return Rewritten(migrated.document, migrated, None)
        document = migrated.document
    fixed = fixing.fix(
        document, FixOptions(format_version=line, verifier=verifier), share_input=True
    )
    return Rewritten(fixed.document, migrated, fixed)


# -- one file -----------------------------------------------------------------------------------
@dataclass
class FileResult:
    """What rewriting one input ended with: the rewrite and where it went, or the error."""

    path: Path  # the config.json read (the input as given when it could not be read)
    write: WriteOptions
    result: MigrationResult | FixResult | None = None
    outcome: Outcome | None = None
    error: str | None = None  # names the file and the fix; None when it was rewritten
    exit_code: int = OK

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def changed(self) -> bool:
        """The content differs from the input (written, or would be)."""
        return self.outcome is not None and self.outcome.changed

    def __repr__(self) -> str:
        if self.error is not None:
            return f"<FileResult {self.path}: failed (exit {self.exit_code}): {self.error[:80]}>"
        assert self.outcome is not None
        where = f"wrote {self.outcome.written_to}" if self.outcome.written_to else "not written"
        state = "changed" if self.changed else "unchanged"
        return f"<FileResult {self.path}: {state}, {where}; exit code {self.exit_code}>"

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` object of this input."""
        if self.error is not None or self.result is None or self.outcome is None:
            return {"path": str(self.path), "error": self.error, "exit_code": self.exit_code}
        payload = {**self.result.to_dict(), "path": str(self.path)}
        opts, outcome = self.write, self.outcome
        payload["would_change" if opts.check or opts.dry_run else "changed"] = outcome.changed
        payload["formatting_only"] = outcome.formatting_only
        if outcome.written_to is not None:
            payload["written_to"] = str(outcome.written_to)
        if opts.dry_run:
            payload["diff"] = outcome.diff()
        if opts.to_stdout:
            payload["document"] = json.loads(outcome.after)
        return payload


def migrate_file(
    path: str | os.PathLike[str], options: MigrateOptions | None, write: WriteOptions
) -> FileResult:
    """Read, migrate and write one config; raises :class:`SpecfmtError` when it cannot."""
    cfg = documents.read_config(path)
    result = migration.migrate(cfg.data, options, share_input=True)
    if result.target_errors:
        detail = "\n".join(f"  {e}" for e in result.target_errors[:20])
        if result.is_bug:
            raise InternalError(
                f"{cfg.path}: the migrated config fails the {result.target} schema although the "
                f"input passed its own ({result.detection.line}). This is a bug in specfmt; "
                f"please report it with the input file. Nothing was written.\n{detail}"
            )
        raise InputInvalid(
            f"{cfg.path}: the input does not validate against format {result.detection.line}, so "
            f"the migrated config fails {result.target} too; fix these first (`specfmt validate "
            f"{cfg.path}` explains each). Nothing was written.\n{detail}"
        )
    recheck(cfg.path, cfg.data, result, options.verifier if options else None, ())
    outcome = commit(prepare(cfg.path, cfg.text, result.document, cfg.raw, cfg.data), write)
    code = FINDINGS if write.check and outcome.changed else OK
    return FileResult(cfg.path, write, result, outcome, exit_code=code)


def fix_file(
    path: str | os.PathLike[str], options: FixOptions | None, write: WriteOptions
) -> FileResult:
    """Read, fix and write one config; raises :class:`SpecfmtError` when it cannot. With
    ``check``, exit 1 also when an error, or a named engine's disagreement, is left that no
    value removes."""
    cfg = documents.read_config(path)
    result = fixing.fix(cfg.data, options, share_input=True)
    recheck(cfg.path, cfg.data, result, options.verifier if options else None, options)
    outcome = commit(prepare(cfg.path, cfg.text, result.document, cfg.raw, cfg.data), write)
    stuck = any(p.severity == "error" or p.lossy for p in result.problems)
    code = FINDINGS if write.check and (outcome.changed or stuck) else OK
    return FileResult(cfg.path, write, result, outcome, exit_code=code)


def recheck(
    path: Path,
    original: dict[str, Any],
    result: MigrationResult | FixResult,
    verifier: dict[str, Any] | None,
    options: FixOptions | None | tuple,
) -> None:
    """Check the rewritten config again before it is written: a new error refuses the
    write (:class:`WriteRefused`, naming the value and the finding); every other new
    finding joins the result's problems, so the report names what the rewrite brings
    (``validate`` would report it next). Nothing happens when the document is unchanged.
    ``fix`` checks with the engines it reconciled for (``--engine``, else the newest
    covered release of each), so a value a served class cannot load is refused."""
    if not result.changes or same_json(original, result.document):
        return
    from spec_format.facts import disputes
    from spec_format.runner import recheck as checks
    from spec_format.runner.validate_options import ValidateOptions

    engines: tuple[str, ...] = ()
    version = None  # each document at its own version (a migration's is its target)
    if isinstance(options, FixOptions):
        engines = options.engines or tuple(e.id for e in disputes.assumed_engines())
        version = options.format_version  # fix --format-version: both read at that one
    run = ValidateOptions(engines=engines, format_version=version)
    before = checks.findings(original, verifier=verifier, options=run)
    new = checks.introduced(before, result.document, verifier=verifier, options=run)
    for finding in checks.errors(new):
        change = _change_at(result.changes, finding.pointer)
        if change is None:
            continue  # not about a written value (a version rule of the target, say)
        shown = json.dumps(change.after, separators=(", ", ": "))
        raise WriteRefused(
            bounded(
                f"{path}: refused to write {change.pointer} = {shown} ({change.why}): "
                f"{finding.rule} {finding.message}; nothing was written",
                MAX_MESSAGE,
            )
        )
    known = {(p.rule, p.pointer) for p in result.problems}
    for finding in new:
        if (finding.rule, finding.pointer) in known:
            continue
        result.problems.append(
            Problem(
                finding.rule,
                f"the rewritten config gets {finding.rule} ({finding.severity.value}), which "
                f"validate reports next: {finding.message}",
                finding.pointer,
                finding.severity.value,
                step="recheck",
            )
        )


def _change_at(changes: list[Change], at: str | None) -> Change | None:
    """The change that wrote the value at pointer ``at`` (or a value around or inside it)."""
    if at is None:
        return None
    for change in changes:
        if change.after is ABSENT:
            continue
        if at == change.pointer or at.startswith(change.pointer + "/"):
            return change
        if change.pointer.startswith(at + "/"):
            return change
    return None


# -- many files ---------------------------------------------------------------------------------
def check_inputs(paths: list[Path], write: WriteOptions) -> None:
    """Usage errors of a batch, before anything is read or written."""
    write.validate()
    if write.in_place and any(str(p) == "-" for p in paths):
        raise UsageError(
            "- (standard input) cannot be rewritten in place; drop --in-place (the result "
            "goes to stdout) or pass -o FILE"
        )
    if len(paths) > 1 and (write.to_stdout or write.output is not None):
        raise UsageError(
            f"{len(paths)} inputs given: stdout and -o take one file; use --check, --dry-run or "
            "--in-place for several"
        )


def rewrite_files(
    paths: Iterable[str | os.PathLike[str]],
    rewrite_one: Callable[[Path], FileResult],
    write: WriteOptions,
) -> Iterator[FileResult]:
    """Rewrite every input with ``rewrite_one`` (:func:`migrate_file` or :func:`fix_file`
    with their options), yielding each result as soon as it is done. Usage errors of the
    batch are raised here, before the first input is read; after that nothing is raised: an
    input that fails ends as a :class:`FileResult` with its error and exit code, and the
    others go on. Several inputs need a mode that writes no document to stdout (``check``,
    ``dry_run``, ``in_place``)."""
    inputs = [Path(p) for p in paths]
    check_inputs(inputs, write)
    return (_guarded(path, rewrite_one, write) for path in inputs)


#: the rewrites of :func:`rewrite_job`: name -> (one file's rewrite, its options class)
JOBS: dict[str, tuple[Callable[..., FileResult], type]] = {
    "migrate": (migrate_file, MigrateOptions),
    "fix": (fix_file, FixOptions),
}


def rewrite_job(
    kind: str,
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    options: MigrateOptions | FixOptions | None = None,
    write: WriteOptions | None = None,
    *,
    settings: bool = True,
    config: str | os.PathLike[str] | None = None,
) -> Iterator[FileResult]:
    """The job of ``specfmt migrate`` / ``specfmt fix`` (``kind``) and of
    :func:`spec_format.api.migrate_files` / ``fix_files``: every input rewritten with
    ``options`` and written where ``write`` says, each result yielded as soon as it is done.

    Each input's engines are ``options.engines`` when given, else the
    ``engine`` key of the project configuration that applies to it (``settings=False``
    reads none, as ``--isolated``; ``config`` names one file for every input, as
    ``--config``). Every usage error (the write options, the engines, the verifier, the
    configuration files; a verifier that cannot be read, when ``options`` were made) is
    raised here, before any input is read."""
    from dataclasses import replace

    from spec_format.facts.disputes import parse_readers
    from spec_format.runner import settings as project

    rewrite_one, options_class = JOBS[kind]
    options = options or options_class()
    write = write or WriteOptions()
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    inputs = [Path(p) for p in paths]
    check_inputs(inputs, write)
    flag = options.engines or None
    parse_readers(flag or ())
    engines = {
        name: tuple(project.merged(flag, conf.engine) or ())
        for conf, names in project.for_inputs(inputs, config, not settings)
        for name in names
    }

    def one(path: Path) -> FileResult:
        return rewrite_one(path, replace(options, engines=engines[str(path)]), write)

    return rewrite_files(inputs, one, write)


def _guarded(path: Path, rewrite_one: Callable[[Path], FileResult], write: WriteOptions):
    try:
        return rewrite_one(path)
    except SpecfmtError as exc:
        code, message = exc.exit_code, str(exc)
    except Exception as exc:  # a bug: report it for this input, go on with the others
        environment = as_error(exc)  # ENOSPC, EACCES ...: exit 3, not a bug
        if environment is not None:
            code, message = environment.exit_code, f"{path}: {environment}"
        elif os.environ.get("SPECFMT_DEBUG"):
            raise
        else:
            code = INTERNAL
            message = (
                f"{path}: internal error: {type(exc).__name__}: {str(exc)[:300]}; this is a "
                "bug in specfmt (nothing was written for this input); rerun with "
                "SPECFMT_DEBUG=1 for the traceback and report it"
            )
    return FileResult(path, write, error=bounded(message, MAX_MESSAGE), exit_code=int(code))


def exit_code(results: Iterable[FileResult]) -> int:
    """The exit code of a batch: the most serious of its inputs' (see :data:`PRECEDENCE`)."""
    codes = {r.exit_code for r in results}
    return next((c for c in PRECEDENCE if c in codes), OK)
