"""The validation engine behind ``specfmt validate`` and ``spec_format.validate``.

For each input: find the config (a ``config.json`` path, or a checkpoint directory that
holds one), read it strictly, dispatch on ``speculators_model_type``, validate against the
type's JSON Schema for the format version, then run the rule layers in order. One input
that cannot be read never stops the others.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from spec_format import notes, schemas, versions
from spec_format.errors import InputError, UsageError
from spec_format.jsonload import Loaded, load_json, parse_json_bytes
from spec_format.pathkind import DIRECTORY, MISSING, REGULAR, kind_of
from spec_format.report import Coverage, FileReport, Finding, Report, cap_per_rule
from spec_format.rules import header as header_rules
from spec_format.rules import input as input_rules
from spec_format.rules import rootcause
from spec_format.rules import schema as schema_rules
from spec_format.rules.base import Context, Layer, Profile, Rule, bounded, run_rule
from spec_format.rules.registry import by_layer, by_name, checks_for, entries, expand
from spec_format.verifier import VerifierInfo, load_verifier

CONFIG_NAME = "config.json"

#: rule layers that look at the config alone, in the order they run
CONFIG_LAYERS = (Layer.CROSS_FIELD, Layer.CONSUMER, Layer.VERSION)
#: rule layers that also need the weights, the verifier or tensor data (see Rule.requires)
WEIGHT_LAYERS = (Layer.WEIGHTS, Layer.VOCAB, Layer.VERIFIER)


@dataclass(frozen=True)
class ValidateOptions:
    """What ``specfmt validate`` was asked to do (the CLI fills this and nothing else)."""

    profile: Profile = Profile.CURRENT
    format_version: str | None = None  # None: the version the config was written for
    recursive: bool = False
    #: only these rule ids (empty: all) / never these; a list, tuple, set or comma string
    #: is accepted and checked here (see :func:`rule_ids`)
    select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    #: the target model's config.json, its directory, or hf://ORG/NAME[@REV]
    verifier: str | None = None
    deep: bool = False  # read the vocabulary maps (t2d/d2t)
    scan_weights: bool = False  # stream every tensor looking for NaN/Inf
    #: engines the draft is served with ("vllm==0.33.0"); empty: the newest covered ones
    engines: tuple[str, ...] = ()
    #: confirm valid configs with the compiled validator (jsonschema-rs) before the jsonschema
    #: walk (same findings, a few us instead of 1-2 ms per valid config, and jsonschema is
    #: imported only to explain a config that failed; see rules.schema.schema_findings).
    #: False: always walk. None is the default and means True, for any number of inputs.
    fast_path: bool | None = None

    def __post_init__(self) -> None:
        # what a Python caller writes: a list, a tuple, one id, "C001,C002", "strict"
        set_ = object.__setattr__
        set_(self, "select", rule_ids(self.select, "select"))
        set_(self, "ignore", rule_ids(self.ignore, "ignore"))
        if not isinstance(self.profile, Profile):
            try:
                set_(self, "profile", Profile(str(self.profile).lower()))
            except ValueError:
                known = ", ".join(p.value for p in Profile)
                raise UsageError(f"profile {self.profile!r}: expected one of {known}") from None
        if isinstance(self.engines, str):
            set_(self, "engines", (self.engines,))
        elif not isinstance(self.engines, tuple):
            set_(self, "engines", tuple(self.engines))


@cache
def _known_ids() -> frozenset[str]:
    return frozenset(entries())


def rule_ids(value: str | Iterable[str] | None, option: str = "select") -> frozenset[str]:
    """Rule selectors as a caller gives them (one, a comma list, or an iterable of either)
    -> the rule ids they name: an id, a prefix (``C`` a layer, ``C00`` C001-C009) or ``ALL``,
    like ruff's (see :func:`spec_format.rules.registry.expand`). A selector that names no
    rule is a :class:`UsageError` naming ``option`` with the closest ids."""
    if not value:
        return frozenset()
    if isinstance(value, frozenset) and value <= _known_ids():
        return value  # already expanded (dataclasses.replace re-runs __post_init__)
    items = [value] if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise UsageError(
                f"{option}: {item!r} is not a rule id; pass ids such as 'C001' (a string, "
                "a list of strings or a comma list)"
            )
        out.extend(part.strip() for part in item.split(",") if part.strip())
    return expand(out, option)


@dataclass
class Target:
    """One thing to validate: a config file, and the checkpoint directory when one was given."""

    shown: str  # the path as the user wrote it (or as found by --recursive)
    config_path: Path | None
    checkpoint_dir: Path | None
    remote: str | None = None  # hf://ORG/NAME[@REV]: config and headers fetched remotely
    weights_file: Path | None = None  # a bare .safetensors file: header audit only
    stdin: bool = False  # "-": the config is read from standard input


def validate(
    paths: str | os.PathLike | Iterable[str | os.PathLike], options: ValidateOptions | None = None
) -> Report:
    """Validate one path or every path of an iterable (config.json files, checkpoint
    directories, ``.safetensors`` files, ``hf://ORG/NAME[@REV]``, ``-`` for standard input)
    into one report."""
    run = Validation(paths, options)
    report = Report(files=list(run))
    report.notes = run.notes()
    return report


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
        self.engines = _engines(tuple(options.engines))  # an unknown engine: usage error too
        self.targets = list(_expand(paths, options))
        self._typed = False  # some input had a model type
        self._absent: list[str] = []  # checkpoints without weights

    def __iter__(self) -> Iterator[FileReport]:
        for target in self.targets:
            if isinstance(target, FileReport):
                report = target
            else:
                report = _isolated(target, self.options, self.verifier)
            self._typed = self._typed or bool(report.model_type)
            if report.weights_absent and not report.weights_required:
                self._absent.append(report.path)
            yield report

    def notes(self) -> list[str]:
        out = []
        if self.verifier is None and self._typed:
            note = _verifier_note(self.options)
            if note:
                out.append(note)
        if not self.engines and self._typed:
            out.append(_engines_note())
        if self._absent:
            out.append(_no_weights_note(self._absent))
        select, ignore = self.options.select, self.options.ignore
        return [n for n in out if notes.selected(n.split(" ", 1)[0], select, ignore)]


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
            f
            for f, on in (("--deep", options.deep), ("--scan-weights", options.scan_weights))
            if on
        )
        raise UsageError(
            f"{flags} needs numpy, which is not installed: pip install 'specfmt[deep]' (or "
            "drop the option to check configs, headers and the tensor contract alone)"
        ) from None


def _isolated(
    target: Target, options: ValidateOptions, verifier: VerifierInfo | None
) -> FileReport:
    """validate_target, with a bug in any check turned into an I012 finding of this input
    (exit 70) so that the other inputs are still checked and reported."""
    try:
        return validate_target(target, options, verifier)
    except UsageError:
        raise
    except Exception as exc:
        if os.environ.get("SPECFMT_DEBUG"):
            raise
        report = FileReport(path=target.shown, internal_error=True)
        report.findings.append(
            input_rules.InternalError.finding(
                f"checking this input hit a bug in specfmt ({type(exc).__name__}: "
                f"{str(exc)[:300]}); the other inputs were checked. Rerun with SPECFMT_DEBUG=1 "
                "for the traceback and report it with the input",
                target.shown,
                profile=options.profile,
            )
        )
        return report


@cache
def _engines(texts: tuple[str, ...]) -> tuple:
    from spec_format import disputes

    return disputes.parse_engines(texts)


def _engines_note() -> str:
    from spec_format import disputes

    assumed = ", ".join(e.id for e in disputes.assumed_engines())
    return notes.text(
        "N002",
        f"no --engine given: reader checks assumed {assumed} and each file's own speculators "
        "release; pass --engine NAME==VERSION",
    )


def _verifier_note(options: ValidateOptions) -> str | None:
    ids = [r.id for r in by_layer(Layer.VERIFIER) if _selected(r, options)]
    if not ids:  # --select / --ignore left no verifier rule: nothing was skipped
        return None
    return notes.text(
        "N001",
        f"no --verifier given: skipped the checks against the target model "
        f"({notes.id_ranges(ids)}: hidden size, vocabulary, aux layer range, attention, rope "
        "and positional range, architectures, quantization, dtype, rotation, the named "
        "verifier); pass --verifier PATH",
    )


def validate_config(
    config: dict[str, Any], options: ValidateOptions | None = None, *, name: str = CONFIG_NAME
) -> FileReport:
    """Validate an already-parsed config dict (no file involved)."""
    options = options or ValidateOptions()
    loaded = Loaded(path=Path(name), data=config)
    report = FileReport(path=name)
    _check_config(loaded, report, options)
    report.findings = _filtered(report.findings, options)
    return report


def _expand(
    paths: Iterable[str | os.PathLike], options: ValidateOptions
) -> Iterator[Target | FileReport]:
    from spec_format import stdin

    read_stdin = False
    for raw in paths:
        shown = os.fspath(raw)
        if stdin.is_stdin(shown):
            if read_stdin:
                raise UsageError("- (standard input) was given twice; it can be read once")
            read_stdin = True
            yield Target(stdin.NAME, Path(stdin.NAME), None, stdin=True)
            continue
        if shown.startswith("hf://"):
            yield Target(shown, None, None, remote=shown)
            continue
        path = Path(shown)
        kind = kind_of(path)
        if kind == MISSING:
            report = FileReport(path=shown, unreadable=True)
            report.findings.append(
                input_rules.PathNotFound.emit(
                    shown, profile=options.profile, variant="path", path=shown
                )
            )
            yield report
        elif kind == DIRECTORY:
            if options.recursive:
                found, unreadable = _walk_configs(path)
                if not found and not unreadable:
                    yield _no_config(shown, options, recursive=True)
                yield from (_unreadable(d, why, options) for d, why in unreadable)
                for config_path in found:
                    yield Target(str(config_path.parent), config_path, config_path.parent)
            elif kind_of(path / CONFIG_NAME) != MISSING:  # load_json says what it is
                yield Target(shown, path / CONFIG_NAME, path)
            else:
                yield _no_config(shown, options, recursive=False)
        elif path.suffix == ".safetensors":
            yield Target(shown, None, None, weights_file=path)
        else:
            yield Target(shown, path, None)


def _walk_configs(root: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every config.json below ``root`` that looks like a draft (not a plain model config),
    sorted, and the directories that could not be listed (with the reason)."""
    found: list[Path] = []
    unreadable: list[tuple[str, str]] = []

    def onerror(exc: OSError) -> None:
        unreadable.append((str(exc.filename or root), exc.strerror or str(exc)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if CONFIG_NAME in filenames or CONFIG_NAME in dirnames:
            candidate = Path(dirpath) / CONFIG_NAME
            if _looks_like_draft(candidate):
                found.append(candidate)
    return sorted(found), unreadable


def _looks_like_draft(path: Path) -> bool:
    """Cheap pre-filter for --recursive: a plain model config (a verifier) is skipped; a
    config.json that cannot be told apart (unreadable, empty, not JSON, not a regular
    file) is kept, so that the real read reports it instead of hiding it."""
    if kind_of(path) != REGULAR:
        return True  # a FIFO, directory, dangling link: the real read describes it
    try:
        with path.open("rb") as f:
            head = f.read(1 << 20)
            complete = not f.read(1)
    except OSError:
        return True
    if any(s in head for s in (b"speculators", b"Eagle3", b"dflash_config", b"eagle_config")):
        return True
    if not complete:
        return False  # over 1 MiB without a draft marker: not a draft config
    try:
        return not isinstance(json.loads(head), dict)
    except (ValueError, RecursionError):
        return True  # empty or corrupt: report it


def _unreadable(directory: str, why: str, options: ValidateOptions) -> FileReport:
    report = FileReport(path=directory, unreadable=True)
    report.findings.append(
        input_rules.FileUnreadable.finding(
            f"{directory}: cannot list the directory ({why}); drafts below it were not "
            "checked. Fix the permissions, or leave it out of the tree",
            directory,
            profile=options.profile,
        )
    )
    return report


def _no_config(shown: str, options: ValidateOptions, *, recursive: bool) -> FileReport:
    report = FileReport(path=shown, unreadable=True)
    report.findings.append(
        input_rules.NoConfigInDirectory.emit(
            shown,
            profile=options.profile,
            variant="recursive" if recursive else "directory",
            path=shown,
            hint=_no_config_hint(Path(shown), recursive),
        )
    )
    return report


def _no_config_hint(path: Path, recursive: bool) -> str:
    """What to do instead, from what the directory holds: --recursive only when a draft
    config.json is below it, the files by name when it holds loose .json files."""
    loose = sorted(p.name for p in path.glob("*.json") if p.is_file())
    if loose:
        files = (
            f"`specfmt validate {path / '*.json'}`"
            if len(loose) > 1
            else (f"`specfmt validate {path / loose[0]}`")
        )
        return f"{'; ' if recursive else ''}pass its .json files by name: {files}"
    if recursive:
        return ""
    if _walk_configs(path)[0]:
        return "use --recursive to check the draft checkpoints below it"
    return "pass the checkpoint directory itself"


def validate_target(
    target: Target, options: ValidateOptions, verifier: VerifierInfo | None = None
) -> FileReport:
    report = FileReport(path=target.shown)
    if target.weights_file is not None:
        return _audit_safetensors_file(target, options)
    checkpoint = None
    if target.remote is not None:
        checkpoint, loaded = _load_remote(target, report, options)
        if loaded is None:
            return report
    elif target.stdin:
        from spec_format import stdin

        loaded = stdin.load_json()
    else:
        assert target.config_path is not None
        loaded = load_json(target.config_path)
    ctx = _check_loaded(loaded, target.config_path, report, options, verifier)
    if ctx is None and report.unreadable:
        if checkpoint is not None:
            checkpoint.close()
        return report
    if checkpoint is None and target.checkpoint_dir is not None:
        from spec_format.checkpoint import load_checkpoint

        try:
            checkpoint = load_checkpoint(target.checkpoint_dir)
        except InputError as exc:  # the directory cannot be listed: its weights go unchecked
            report.findings.append(
                input_rules.FileUnreadable.finding(
                    str(exc), str(target.checkpoint_dir), profile=options.profile
                )
            )
    _check_weights(ctx, checkpoint, verifier, target, report, options)
    report.findings = _filtered(report.findings, options)
    _drop_unused_positions(report)
    return report


def _drop_unused_positions(report: FileReport) -> None:
    """A report keeps its file's text only while a finding may need a line number."""
    if report.positions is not None and not any(
        f.pointer is not None and f.line is None for f in report.findings
    ):
        report.positions = None


def check_config_file(
    path: Path, options: ValidateOptions | None = None
) -> tuple[FileReport, Context | None]:
    """The config-only part of :func:`validate` for one ``config.json`` (the findings
    ``specfmt validate PATH`` reports), and the context (parsed config, detected format
    version, type) when the file could be read and dispatched. ``specfmt forward`` reads
    its input through this."""
    options = options or ValidateOptions()
    report = FileReport(path=str(path))
    ctx = _check_loaded(load_json(path), path, report, options)
    report.findings = _filtered(report.findings, options)
    return report, ctx


def _check_loaded(
    loaded: Loaded,
    config_path: Path | None,
    report: FileReport,
    options: ValidateOptions,
    verifier: VerifierInfo | None = None,
) -> Context | None:
    """The findings of reading the file, then (when it could be read) of the config."""
    for problem in loaded.problems:  # jsonload caps each kind itself
        report.findings.append(
            input_rules.BY_PROBLEM_KIND[problem.kind].finding(
                problem.message,
                config_path,
                profile=options.profile,
                pointer=problem.pointer,
                line=problem.line,
                column=problem.column,
            )
        )
    if not loaded.ok:
        report.unreadable = True
        return None
    return _check_config(loaded, report, options, verifier)


# -- weights, tensor data and verifier ------------------------------------------------------


def _check_weights(
    ctx: Context | None,
    checkpoint,
    verifier: VerifierInfo | None,
    target: Target,
    report: FileReport,
    options: ValidateOptions,
) -> None:
    """The H findings of the checkpoint's headers, then the W, D and V rules whose
    ``requires`` are met. Header problems are errors, never "unreadable": the config was
    checked, so the input was readable."""
    available: set[str] = set()
    if checkpoint is not None:
        report.findings.extend(header_rules.header_findings(checkpoint, options.profile))
        if checkpoint.has_weights:
            available.add("weights")
        else:
            report.weights_absent = True
            report.skipped.append(
                "weights (H, W, D rules): no model.safetensors or model.safetensors.index.json"
            )
            _weights_required(report, target, options, "directory")
    elif target.remote is None:
        given = (
            "the config came from standard input"
            if target.stdin
            else "a config.json file was given"
        )
        report.skipped.append(
            f"weights (H, W, D rules): {given}; pass the checkpoint directory to check its weights"
        )
        _weights_required(report, target, options, "stdin" if target.stdin else "config-file")
    if verifier is not None:
        available.add("verifier")
    if options.deep:
        available.add("deep")
    elif "weights" in available:
        report.skipped.append("vocabulary map values (D001-D004): pass --deep")
    if options.scan_weights:
        available.add("scan")
    elif "weights" in available:
        report.skipped.append(
            "NaN/Inf and untrained-weights scan of every tensor (D010, D011): pass --scan-weights"
        )
    try:
        if ctx is None:
            return
        ctx.checkpoint = checkpoint if "weights" in available else None
        if verifier is not None:
            ctx.verifier = verifier.config
            ctx.verifier_path = verifier.path
            ctx.options["verifier_info"] = verifier
        ran: set[str] = set()  # what the rules that ran required (for the coverage line)
        for layer in WEIGHT_LAYERS:
            for rule in checks_for(layer):
                if rule.requires <= available and _runs(rule, ctx, options):
                    report.findings.extend(run_rule(rule, ctx, options.profile))
                    ran |= rule.requires
        # one config value that explains many shape findings replaces them (W024)
        report.findings = rootcause.grouped(ctx, report.findings)
        report.coverage = _coverage(ctx, ran, verifier)
    finally:
        if checkpoint is not None:
            checkpoint.close()


def _weights_required(
    report: FileReport, target: Target, options: ValidateOptions, variant: str
) -> None:
    """I013 (exit 3) when --deep or --scan-weights asked for weights the input lacks."""
    asked = [
        flag
        for flag, on in (("--deep", options.deep), ("--scan-weights", options.scan_weights))
        if on
    ]
    if not asked or not _selected(input_rules.WeightsNotFound, options):
        return
    what = " and ".join(
        {
            "--deep": "the vocabulary map checks (--deep)",
            "--scan-weights": "the NaN/Inf scan (--scan-weights)",
        }[a]
        for a in asked
    )
    parent = Path(target.shown).parent
    report.weights_required = True
    report.findings.append(
        input_rules.WeightsNotFound.emit(
            target.shown,
            profile=options.profile,
            variant=variant,
            path=target.shown,
            what=what,
            flags=" ".join(asked) if variant == "config-file" else " and ".join(asked),
            parent=f"{parent}/" if str(parent) != "." else "./",
        )
    )


def _coverage(ctx: Context, ran: set[str], verifier: VerifierInfo | None) -> Coverage:
    """What the rules of one input read: the config, and the inputs of the layers that ran."""
    coverage = Coverage(config=True)
    if "weights" in ran and ctx.checkpoint is not None:
        records = ctx.checkpoint.tensors.values()
        coverage.tensors = len(records)
        coverage.tensor_bytes = sum(r.nbytes for r in records)
        coverage.dtypes = tuple(sorted({r.dtype for r in records}))
        coverage.contract = ctx.model_type
    coverage.vocab_maps = "deep" in ran
    coverage.nan_scan = "scan" in ran
    if "verifier" in ran and verifier is not None:
        coverage.verifier = str(verifier.path)
    return coverage


def _load_remote(target: Target, report: FileReport, options: ValidateOptions):
    """Fetch the listing, config.json and headers of an hf:// checkpoint."""
    from spec_format.checkpoint import RemoteName, load_checkpoint

    assert target.remote is not None
    try:
        checkpoint = load_checkpoint(target.remote)
        raw = checkpoint.read_config()
    except InputError as e:
        report.unreadable = True
        report.findings.append(
            input_rules.FileUnreadable.emit(
                target.remote, profile=options.profile, variant="remote", reason=e
            )
        )
        return None, None
    if raw is None:
        checkpoint.close()
        report.unreadable = True
        report.findings.append(
            input_rules.NoConfigInDirectory.emit(
                target.remote, profile=options.profile, variant="remote", path=target.remote
            )
        )
        return None, None
    name = RemoteName(f"{checkpoint.location}/config.json")
    return checkpoint, parse_json_bytes(raw, name)  # type: ignore[arg-type]


def _audit_safetensors_file(target: Target, options: ValidateOptions) -> FileReport:
    """A bare .safetensors path: the header audit alone. Unreadable (exit 3) when the
    header cannot be parsed at all, since nothing else can be checked."""
    from spec_format.checkpoint import issues_from_scan
    from spec_format.safetensors import scan_header

    assert target.weights_file is not None
    report = FileReport(path=target.shown)
    scan = scan_header(target.weights_file)
    for issue in issues_from_scan(scan, str(target.weights_file)):
        report.findings.append(
            by_name(Layer.HEADER)[issue.rule].finding(
                issue.message, issue.file, profile=options.profile, tensor=issue.tensor
            )
        )
    report.unreadable = scan.header is None
    report.skipped.append("config checks: a bare .safetensors file was given")
    report.findings = _filtered(report.findings, options)
    return report


def _check_config(
    loaded: Loaded,
    report: FileReport,
    options: ValidateOptions,
    verifier: VerifierInfo | None = None,
) -> Context | None:
    """Dispatch, schema and config-only rule layers; returns the context for later layers."""
    config = loaded.data
    file = str(loaded.path)
    version, source, detection = _format_version(config, options)
    report.format_version, report.version_source = version, source
    dispatched = _dispatch(config, version, file, options)
    if isinstance(dispatched, Finding):
        report.findings.append(dispatched)
        declared = config.get("speculators_model_type")
        report.model_type = bounded(declared, 80) if isinstance(declared, str) else None
        report.positions = loaded.positions()
        return None
    model_type = dispatched
    report.model_type = model_type
    findings: list[Finding] = []
    retired = schemas.retired_types().get(model_type)
    if retired is not None and source != "requested":
        findings.append(
            schema_rules.RetiredModelType.emit(
                file,
                profile=options.profile,
                pointer="/speculators_model_type",
                variant="checked",
                type=model_type,
                retired=retired,
                version=version,
            )
        )
    for rule, hit in schema_rules.schema_findings(
        config, version, model_type, fast_path=options.fast_path is not False
    ):
        findings.append(
            rule.finding(hit.message, file, profile=options.profile, pointer=hit.pointer)
        )
    ctx = Context(
        config=config,
        config_path=loaded.path,
        model_type=model_type,
        format_version=version,
        detection=detection,
        speculators_version=config.get("speculators_version")
        if isinstance(config.get("speculators_version"), str)
        else None,
        options={"engines": _engines(tuple(options.engines))},
    )
    if verifier is not None:  # config rules name the concrete values it implies in hints
        ctx.verifier, ctx.verifier_path = verifier.config, verifier.path
        ctx.options["verifier_info"] = verifier
        ctx.options["verifier_given"] = options.verifier
    rules, running = _config_rules(model_type, version, options.select, options.ignore)
    ctx.options["running"] = running  # a symptom defers to its cause
    for rule in rules:
        findings.extend(run_rule(rule, ctx, options.profile))
    report.findings.extend(findings)
    report.positions = loaded.positions()
    return ctx


def _runs(rule: type[Rule], ctx: Context, options: ValidateOptions) -> bool:
    if not _selected(rule, options):
        return False
    return rule.applies(ctx.model_type, ctx.format_version)


@cache
def _config_rules(
    model_type: str, version: str, select: frozenset[str], ignore: frozenset[str]
) -> tuple[tuple[type[Rule], ...], frozenset[str]]:
    """The config-layer rules that apply to one type and version, in layer order, and
    their ids (worked out once per type, version and selection, not per config)."""
    rules = tuple(
        rule
        for layer in CONFIG_LAYERS
        for rule in checks_for(layer)
        if (not select or rule.id in select)
        and rule.id not in ignore
        and rule.applies(model_type, version)
    )
    return rules, frozenset(r.id for r in rules)


def _selected(rule: type[Rule], options: ValidateOptions) -> bool:
    if options.select and rule.id not in options.select:
        return False
    return rule.id not in options.ignore


def _filtered(findings: list[Finding], options: ValidateOptions) -> list[Finding]:
    """The selected findings, at most MAX_FINDINGS_PER_RULE per rule (see cap_per_rule)."""
    if not findings:
        return findings
    if options.select or options.ignore:
        findings = [
            f
            for f in findings
            if f.rule not in options.ignore and (not options.select or f.rule in options.select)
        ]
    return list(cap_per_rule(findings))


def _format_version(
    config: dict[str, Any], options: ValidateOptions
) -> tuple[str, str, versions.Detection | None]:
    """The format version to validate against and where it came from: ``requested``
    (``--format-version``), ``declared`` (``speculators_version``, when the keys agree) or
    ``inferred`` (from the keys; see :func:`spec_format.versions.detect`)."""
    if options.format_version:  # a usage error when unknown
        line, _ = versions.option_version(options.format_version)
        return line, "requested", None
    detection = versions.detect(config)
    return detection.line, detection.source, detection


# -- dispatch ------------------------------------------------------------------------------


def _meant_type(config: dict[str, Any], model_type: str, types: tuple[str, ...]) -> list[str]:
    """The type of ``types`` a config most likely means: its speculators_config.algorithm,
    else a type the name begins (``eagle`` -> ``eagle3``), else the closest spelling."""
    spec = config.get("speculators_config")
    algorithm = spec.get("algorithm") if isinstance(spec, dict) else None
    if isinstance(algorithm, str) and algorithm in types:
        return [algorithm]
    longer = [t for t in types if t.startswith(model_type)]
    return longer[:1] or difflib.get_close_matches(model_type, types, n=1)


def _dispatch(
    config: dict[str, Any], version: str, file: str, options: ValidateOptions
) -> str | Finding:
    """The config's type, or the finding that explains why it has none we can check."""
    profile = options.profile
    model_type = config.get("speculators_model_type")
    pointer = "/speculators_model_type"
    if model_type is None:
        known = ", ".join(schemas.known_types())
        if "speculators_config" in config:
            return schema_rules.MissingModelType.emit(
                file,
                profile=profile,
                pointer=pointer,
                variant="with-speculators-config",
                hint=_type_hint(config),
                known=known,
            )
        third_party = _third_party(config)
        if third_party:
            return schema_rules.ThirdPartyConfig.emit(
                file, profile=profile, pointer="", variant=third_party[0], **third_party[1]
            )
        return schema_rules.MissingModelType.emit(
            file, profile=profile, pointer="", variant="absent", known=known
        )
    if not isinstance(model_type, str):
        return schema_rules.MissingModelType.emit(
            file,
            profile=profile,
            pointer=pointer,
            variant="not-a-string",
            found=type(model_type).__name__,
        )
    entry = schemas.version_entry(version)
    if model_type in entry.types:
        return model_type
    retired = schemas.retired_types()
    if model_type in retired:
        # a retired name in a version that never had it is most likely a current type mistyped
        close = _meant_type(config, model_type, entry.types)
        return schema_rules.RetiredModelType.emit(
            file,
            profile=profile,
            pointer=pointer,
            variant="dispatch",
            type=model_type,
            retired=retired[model_type],
            hint=f" (did you mean {close[0]!r}, a type of format {version}?)" if close else "",
        )
    if model_type in schemas.known_types():
        since = next(v for v, e in schemas.versions().items() if model_type in e.types)
        return schema_rules.TypeNotInVersion.emit(
            file, profile=profile, pointer=pointer, type=model_type, version=version, since=since
        )
    names = list(dict.fromkeys([*schemas.known_types(), *retired]))  # known_types has retired
    # difflib indexes every character of its argument: only names of a plausible length
    close = difflib.get_close_matches(model_type, names, n=1) if len(model_type) <= 64 else []
    folded = [n for n in entry.types if n == model_type.lower()]  # EAGLE3 -> eagle3
    close = folded or close
    return schema_rules.UnknownModelType.emit(
        file,
        profile=profile,
        pointer=pointer,
        type=model_type,
        hint=f" (did you mean {close[0]!r}?)" if close else "",
        known=", ".join(n for n in names if n not in retired)
        + (f" (retired: {', '.join(retired)})" if retired else ""),
    )


def _type_hint(config: dict[str, Any]) -> str:
    """Suggest a type from speculators_config.algorithm or the architectures list."""
    spec = config.get("speculators_config")
    algorithm = spec.get("algorithm") if isinstance(spec, dict) else None
    if isinstance(algorithm, str) and algorithm in schemas.known_types():
        return f": speculators_config.algorithm suggests {algorithm!r}"
    return ""


def third_party_kind(config: dict[str, Any]) -> str | None:
    """The other project whose draft config this is (an S004 variant: "safeailab-eagle3",
    "z-lab-dflash", ...), or None; ``specfmt convert``'s source kinds detect with it."""
    found = _third_party(config)
    return found[0] if found else None


def _third_party(config: dict[str, Any]) -> tuple[str, dict[str, str]] | None:
    """Recognise draft configs of other projects: (S004 message variant, its parameters)."""
    archs = config.get("architectures")
    archs = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    if "dflash_config" in config or any("DFlash" in a for a in archs):
        return "z-lab-dflash", {}
    if any("Eagle3" in a and "ForCausalLM" in a for a in archs) or "eagle_config" in config:
        return "safeailab-eagle3", {"what": ", ".join(archs) or "eagle_config"}
    if {"speculators_algorithm", "draft_model"} <= config.keys():
        return "pre-0.1", {}
    if any("Eagle" in a or "EAGLE" in a for a in archs):
        return "eagle1", {"what": ", ".join(archs)}
    return None
