"""The rule runner behind ``specfmt validate`` and ``spec_format.validate``.

For each input: find the config (a ``config.json`` path, or a checkpoint directory that
holds one), read it strictly, dispatch on ``speculators_model_type``, validate against the
type's JSON Schema for the format version, then run the rule layers in order. One input
that cannot be read never stops the others.

The parts, each in its own module: :mod:`~spec_format.runner.validate_options` (what was asked),
:mod:`~spec_format.runner.input_paths` (paths to targets), :mod:`~spec_format.runner.dispatch` (version
and type), :mod:`~spec_format.runner.config_checks` (schema and config rules) and
:mod:`~spec_format.runner.weight_checks` (headers, weights, vocabulary, verifier). This module runs
them over every input and keeps the names callers import from it.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from spec_format.base import extras, notes, progress
from spec_format.base.errors import InputError, UsageError
from spec_format.base.report import FileReport, Report
from spec_format.parsers import documents, stdin
from spec_format.parsers.verifier import VerifierInfo, load_verifier
from spec_format.rules import base_models
from spec_format.rules import input as input_rules
from spec_format.rules.base import Layer
from spec_format.rules.registry import by_layer
from spec_format.runner.config_checks import (
    CONFIG_LAYERS,
    check_config_file,
    check_loaded,
    engines_of,
    sglang_of,
    validate_config,
)
from spec_format.runner.config_memo import PLACEHOLDER, ConfigMemo
from spec_format.runner.converted import check_converted
from spec_format.runner.dispatch import third_party_kind
from spec_format.runner.fetch_ahead import Fetch, ahead
from spec_format.runner.input_paths import (
    CONFIG_NAME,
    ReadConfig,
    Target,
    expand,
    written_as_a_path,
)
from spec_format.runner.validate_options import ValidateOptions, filtered, rule_ids, selected
from spec_format.runner.weight_checks import (
    WEIGHT_LAYERS,
    audit_safetensors_file,
    check_weights,
    fetch_remote,
    load_remote,
)

__all__ = [
    "CONFIG_LAYERS",
    "CONFIG_NAME",
    "WEIGHT_LAYERS",
    "Target",
    "Job",
    "SETTABLE",
    "ValidateOptions",
    "Validation",
    "check_config_file",
    "rule_ids",
    "third_party_kind",
    "validate",
    "validate_config",
    "validate_target",
]


#: the :class:`ValidateOptions` fields a configuration file can set -> its key there
#: (spec_format.runner.settings.KEYS); a field the caller gives wins over the file's key
SETTABLE = {"profile": "profile", "select": "select", "ignore": "ignore", "engines": "engine"}


def validate(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    options: ValidateOptions | None = None,
    *,
    settings: bool = True,
    config: str | os.PathLike | None = None,
    given: Iterable[str] | None = None,
) -> Report:
    """Validate one path or every path of an iterable (config.json files, checkpoint
    directories, ``.safetensors`` files, ``hf://ORG/NAME[@REV]``, ``-`` for standard input)
    into one report, exactly as ``specfmt validate`` does: each input with the project
    configuration that applies to it (``[tool.specfmt]`` in ``pyproject.toml`` or a
    ``specfmt.toml``, found walking up from the input; see :class:`Job` for ``settings``,
    ``config`` and ``given``).
    """
    job = Job(paths, options, settings=settings, config=config, given=given)
    report = Report(files=list(job))
    report.notes = job.notes()
    return report


class Job:
    """The job of ``specfmt validate`` and :func:`validate`: the inputs in runs that share
    one project configuration, each run a :class:`Validation` whose options are the caller's
    merged with that configuration's keys; iterating yields every input's file report (its
    ``per-file-ignores`` applied) as it is checked.

    ``settings``: find each input's configuration file (False: read none, as
    ``--isolated``); ``config``: use this file for every input (``--config``).
    ``given``: the :data:`SETTABLE` fields the caller set, which the configuration does not
    override (``specfmt validate`` passes the flags given); None: those that differ from
    :class:`ValidateOptions`' defaults. Every usage error (the inputs, the configuration
    files, the verifier, the engines) is raised here, before any input is checked."""

    def __init__(
        self,
        paths: str | os.PathLike | Iterable[str | os.PathLike],
        options: ValidateOptions | None = None,
        *,
        settings: bool = True,
        config: str | os.PathLike | None = None,
        given: Iterable[str] | None = None,
    ) -> None:
        from spec_format.runner import settings as project

        options = options or ValidateOptions()
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        if given is None:
            default = ValidateOptions()
            given = [f for f in SETTABLE if getattr(options, f) != getattr(default, f)]
        kept = frozenset(given)
        self.isolated = not settings
        self.runs = [
            (conf, Validation(inputs, _configured(options, conf, kept)))
            for conf, inputs in project.for_inputs(list(paths), config, not settings)
        ]

    def __iter__(self) -> Iterator[FileReport]:
        from spec_format.runner import settings as project

        for conf, run in self.runs:
            for report in run:
                project.drop_ignored(report, conf)
                yield report

    def notes(self) -> list[str]:
        """The run-level remarks of every run, once each (after iterating)."""
        out: list[str] = []
        for _, run in self.runs:
            out.extend(n for n in run.notes() if n not in out)
        return out


def _configured(options: ValidateOptions, conf, given: frozenset[str]) -> ValidateOptions:
    """``options`` with the keys ``conf`` sets for the fields the caller did not give."""
    from dataclasses import replace

    changes = {
        name: getattr(conf, key)
        for name, key in SETTABLE.items()
        if name not in given and getattr(conf, key) is not None
    }
    return replace(options, **changes) if changes else options


class Validation:
    """One run of :func:`validate`, streamed: iterating it checks each input in turn and
    yields its file report, so a caller that reports and drops each one keeps nothing of a
    passing file (``specfmt validate`` with text output). Everything that can be a usage
    error (the inputs, the verifier, the engines) is checked when it is made, before any
    input; :meth:`notes` are the run-level remarks once it has been iterated."""

    def __init__(
        self,
        paths: str | os.PathLike | Iterable[str | os.PathLike],
        options: ValidateOptions | None = None,
    ) -> None:
        options = options or ValidateOptions()
        if options.deep or options.scan_weights:
            _require_numpy(options)
        if isinstance(paths, (str, os.PathLike)):  # one path, not the characters of one
            paths = [paths]
        self.options = options
        # loaded once per run; a --verifier that cannot be read is a usage error (exit 2)
        self.verifier = load_verifier(options.verifier) if options.verifier else None
        self.engines = engines_of(tuple(options.engines))  # an unknown engine: usage error too
        names = [os.fspath(p) for p in paths]
        #: hf:// inputs: fetched ``options.jobs`` at a time ahead of their checks
        self.remote = sum(1 for n in names if n.startswith("hf://"))
        self.targets = expand(names, options)  # made as they are checked
        self.memo = ConfigMemo()  # identical documents of this run are checked once
        self._typed = False  # some input had a model type
        self._absent: list[str] = []  # checkpoints without weights

    def __iter__(self) -> Iterator[FileReport]:
        if self.remote == 0:
            items: Iterable = ((t, None) for t in self.targets)
        else:  # the network part of hf:// inputs runs ahead, in worker threads
            from spec_format.parsers import remote

            remote.prepare()
            items = ahead(self.targets, _remote_fetch, self.options.jobs)
        counted = self.remote >= AUDIT_BAR_FROM  # a bar counts the drafts (on a terminal)
        with _audit_progress(self.remote) if counted else contextlib.nullcontext():
            for target, fetched in items:
                if isinstance(target, FileReport):
                    report = target
                else:
                    report = _isolated(target, self.options, self.verifier, self.memo, fetched)
                self._typed = self._typed or bool(report.model_type)
                if report.weights_absent and not report.weights_required:
                    self._absent.append(report.path)
                if fetched is not None:
                    progress.advance(1)
                if not counted:
                    yield report
                    continue
                with progress.hidden():  # the caller may write the report on the terminal
                    yield report

    def notes(self) -> list[str]:
        out = []
        if self.verifier is None and self._typed:
            note = _verifier_note(self.options)
            if note:
                out.append(note)
        if not self.engines and self._typed:
            out.append(_engines_note(bool(sglang_of(tuple(self.options.engines)))))
        if self._absent:
            out.append(_no_weights_note(self._absent))
        select, ignore = self.options.select, self.options.ignore
        return [n for n in out if notes.selected(n.split(" ", 1)[0], select, ignore)]


def _remote_fetch(target: Target | ReadConfig | FileReport):
    """The fetch to run ahead for an hf:// input (None for any other input)."""
    remote = getattr(target, "remote", None)
    return None if remote is None else functools.partial(fetch_remote, remote)


#: a run of this many hf:// drafts or more shows a bar that counts them
AUDIT_BAR_FROM = 2


def _audit_progress(remote: int):
    """A bar for a run of several hf:// drafts (shown on a terminal only: base.progress)."""
    return progress.task(f"checking {remote} hf:// drafts", remote, unit="drafts")


def _no_weights_note(paths: list[str]) -> str:
    if len(paths) == 1:
        who, what = f"{paths[0]} has no weights", "its config"
    else:
        who, what = f"{len(paths)} checkpoints have no weights", "their configs"
    return notes.text(
        "N003", f"{who}: only {what} checked, not the safetensors header, tensors or values"
    )


def _require_numpy(options: ValidateOptions) -> None:
    """--deep and --scan-weights read tensor values with numpy (the deep extra)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        flags = " and ".join(
            options.spell(f)
            for f, on in (("deep", options.deep), ("scan_weights", options.scan_weights))
            if on
        )
        raise UsageError(
            extras.missing(
                flags,
                "deep",
                alternative=", or drop the option to check configs, headers and the tensor "
                "contract alone",
            )
        ) from None


def _isolated(
    target: Target | ReadConfig,
    options: ValidateOptions,
    verifier: VerifierInfo | None,
    memo: ConfigMemo | None = None,
    fetched: Fetch | None = None,
) -> FileReport:
    """validate_target, with a bug in any check turned into an I012 finding of this input
    (exit 70) so that the other inputs are still checked and reported."""
    try:
        return validate_target(target, options, verifier, memo, fetched)
    except UsageError:
        raise
    except Exception as exc:
        if os.environ.get("SPECFMT_DEBUG"):
            raise
        report = FileReport(path=target.shown, internal_error=True)
        report.findings.append(
            input_rules.SpecfmtBug.finding(
                f"checking this input hit a bug in specfmt ({type(exc).__name__}: "
                f"{str(exc)[:300]}); the other inputs were checked. Rerun with SPECFMT_DEBUG=1 "
                "for the traceback and report it with the input",
                target.shown,
                profile=options.profile,
            )
        )
        return report


def _engines_note(sglang_named: bool = False) -> str:
    from spec_format.facts import disputes

    assumed = ", ".join(e.id for e in disputes.assumed_engines())
    given = (
        "only SGLang named (it reads no speculators config)"
        if sglang_named
        else "no --engine given"
    )
    return notes.text(
        "N002",
        f"{given}: reader checks assumed {assumed} and each file's own speculators "
        "release; pass --engine NAME==VERSION",
    )


def _verifier_note(options: ValidateOptions) -> str | None:
    ids = [r.id for r in by_layer(Layer.VERIFIER) if selected(r, options)]
    if not ids:  # --select / --ignore left no verifier rule: nothing was skipped
        return None
    return notes.text(
        "N001",
        f"no --verifier given: skipped the checks against the target model "
        f"({notes.id_ranges(ids)}: hidden size, vocabulary, aux layer range, attention, rope "
        "and positional range, architectures, quantization, dtype, rotation, the named "
        "verifier, the mask token against its special ids, the engine's class for it); pass "
        "--verifier PATH",
    )


def validate_target(
    target: Target | ReadConfig,
    options: ValidateOptions,
    verifier: VerifierInfo | None = None,
    memo: ConfigMemo | None = None,
    fetched: Fetch | None = None,
) -> FileReport:
    """The report of one input; ``fetched``: its hf:// fetch, already under way."""
    if type(target) is ReadConfig:
        if memo is not None and memo.active and _shareable(target.shown, options):
            shared = _shared_file(target.shown, target.raw, options, verifier, memo)
            if shared is not None:
                return shared
        target = target.target()
    report = FileReport(path=target.shown)
    if target.weights_file is not None:
        return audit_safetensors_file(target, options)
    checkpoint = None
    if target.remote is not None:
        checkpoint, loaded = load_remote(target, report, options, fetched)
        if loaded is None:
            return report
    else:
        assert target.config_path is not None
        source = stdin.DASH if target.stdin else target.config_path
        loaded = documents.load(source, raw=target.raw)
    return _checked(target, loaded, report, checkpoint, options, verifier, memo)


def _shareable(shown: str, options: ValidateOptions) -> bool:
    """Whether the report of a config file named on its own is a function of its bytes and
    the run: not with --deep or --scan-weights (its I013 finding names its folder), nor for
    a name its report would spell otherwise (``./a.json`` is reported as ``a.json``)."""
    return not (options.deep or options.scan_weights) and written_as_a_path(shown)


def _shared_file(
    shown: str,
    raw: bytes,
    options: ValidateOptions,
    verifier: VerifierInfo | None,
    memo: ConfigMemo,
) -> FileReport | None:
    """The report of the config file ``shown`` (its bytes ``raw``) from an earlier file of
    the run with the same bytes (:meth:`ConfigMemo.file_report`), or None: the usual path
    checks it."""

    def check() -> FileReport:  # under the placeholder path, from the bytes just read
        path = Path(PLACEHOLDER)
        loaded = documents.load(path, raw=raw)
        placeholder = Target(PLACEHOLDER, path, None)
        return _checked(placeholder, loaded, FileReport(path=PLACEHOLDER), None, options, verifier)

    return memo.file_report(raw, shown, check)


def _checked(
    target: Target,
    loaded,
    report: FileReport,
    checkpoint,
    options: ValidateOptions,
    verifier: VerifierInfo | None,
    memo: ConfigMemo | None = None,
) -> FileReport:
    """The checks of one read input: its config, then its checkpoint when there is one."""
    ctx = check_loaded(loaded, target.config_path, report, options, verifier, memo)
    if ctx is None and report.unreadable:
        if checkpoint is not None:
            checkpoint.close()
        return report
    if checkpoint is None and target.checkpoint_dir is not None:
        from spec_format.parsers.checkpoint import load_checkpoint

        try:
            checkpoint = load_checkpoint(target.checkpoint_dir)
        except InputError as exc:  # the directory cannot be listed: its weights go unchecked
            report.findings.append(
                input_rules.FileUnreadable.finding(
                    str(exc), str(target.checkpoint_dir), profile=options.profile
                )
            )
    if ctx is None and loaded.ok:  # another project's draft: checked as convert writes it
        check_converted(loaded.data, target, checkpoint, report, options, verifier)
    if ctx is None and loaded.ok and isinstance(loaded.data, dict):
        # a base model's checkpoint (S006): where the engines read its MTP layer count
        from spec_format.facts import disputes

        engines = engines_of(tuple(options.engines)) or disputes.assumed_engines()
        report.findings.extend(
            base_models.engine_findings(
                loaded.data, engines, str(target.config_path), options.profile
            )
        )
    if ctx is None and checkpoint is not None and checkpoint.has_weights:
        # a base model's checkpoint (S006): the MTP layers its config declares, if absent
        report.findings.extend(
            base_models.weight_findings(
                loaded.data, checkpoint.tensors, str(target.config_path), options.profile
            )
        )
    check_weights(ctx, checkpoint, verifier, target, report, options)
    report.findings = filtered(report.findings, options)
    _drop_unused_positions(report)
    return report


def _drop_unused_positions(report: FileReport) -> None:
    """A report keeps its file's text only while a finding may need a line number."""
    if report.positions is not None and not any(
        f.pointer is not None and f.line is None for f in report.findings
    ):
        report.positions = None
