"""The checks of one parsed config: the reading problems, the type dispatch, the JSON
Schema of its type and version, then the config-only rule layers (cross-field, consumer,
version), run through the rule list worked out once per (type, version, selection)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from spec_format.base.jsonload import Loaded
from spec_format.base.report import FileReport, Finding
from spec_format.facts import catalog
from spec_format.parsers import documents
from spec_format.parsers.verifier import VerifierInfo
from spec_format.rules import input as input_rules
from spec_format.rules import schema as schema_rules
from spec_format.rules.base import Context, Layer, Rule, Step, bounded, plan_of, run_plan, run_rule
from spec_format.rules.registry import checks_for
from spec_format.runner.config_memo import ConfigMemo, Outcome
from spec_format.runner.dispatch import dispatch, format_version
from spec_format.runner.input_paths import CONFIG_NAME
from spec_format.runner.validate_options import ValidateOptions, filtered

#: rule layers that look at the config alone, in the order they run
CONFIG_LAYERS = (Layer.CROSS_FIELD, Layer.CONSUMER, Layer.VERSION)


@cache
def engines_of(texts: tuple[str, ...]) -> tuple:
    from spec_format.facts import disputes

    return disputes.parse_engines(texts)


@cache
def sglang_of(texts: tuple[str, ...]) -> tuple:
    """The SGLang releases named (rules C023, V020)."""
    from spec_format.facts import disputes

    return disputes.parse_sglang(texts)


@cache
def newer_engines_of(texts: tuple[str, ...]) -> tuple:
    """The engine strings that pin a release newer than the reader table (rule C021)."""
    from spec_format.facts import disputes

    return disputes.newer_engines(texts)


def validate_config(
    config: dict[str, Any], options: ValidateOptions | None = None, *, name: str = CONFIG_NAME
) -> FileReport:
    """Validate an already-parsed config dict (no file involved)."""
    options = options or ValidateOptions()
    loaded = Loaded(path=Path(name), data=config)
    report = FileReport(path=name)
    check_config(loaded, report, options)
    report.findings = filtered(report.findings, options)
    return report


def check_config_file(
    path: Path, options: ValidateOptions | None = None
) -> tuple[FileReport, Context | None]:
    """The config-only part of :func:`validate` for one ``config.json`` (the findings
    ``specfmt validate PATH`` reports), and the context (parsed config, detected format
    version, type) when the file could be read and dispatched. ``specfmt forward`` reads
    its input through this."""
    options = options or ValidateOptions()
    report = FileReport(path=str(path))
    ctx = check_loaded(documents.load(path), path, report, options)
    report.findings = filtered(report.findings, options)
    return report, ctx


def check_loaded(
    loaded: Loaded,
    config_path: Path | None,
    report: FileReport,
    options: ValidateOptions,
    verifier: VerifierInfo | None = None,
    memo: ConfigMemo | None = None,
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
    return check_config(loaded, report, options, verifier, memo)


def check_config(
    loaded: Loaded,
    report: FileReport,
    options: ValidateOptions,
    verifier: VerifierInfo | None = None,
    memo: ConfigMemo | None = None,
) -> Context | None:
    """Dispatch, schema and config-only rule layers; returns the context for later layers.
    With a ``memo``, a document identical to one the run checked before takes its findings
    (:mod:`spec_format.runner.config_memo`)."""

    def check(file: str) -> Outcome:  # the file's own path, or the memo's placeholder
        path = loaded.path if file == str(loaded.path) else Path(file)
        return _outcome(loaded.data, path, options, verifier)

    outcome = check(str(loaded.path)) if memo is None else memo.outcome(loaded, check)
    report.format_version, report.version_source = outcome.version, outcome.source
    if not outcome.dispatched and outcome.source == "inferred" and outcome.model_type is None:
        # no speculators_model_type (another project's config, a verifier's): no format
        # version of this format describes it, so none is claimed
        report.format_version = report.version_source = None
    report.model_type = outcome.model_type
    report.findings.extend(outcome.findings)
    report.positions = loaded.positions() if memo is None else memo.positions(loaded)
    if not outcome.dispatched:
        return None
    return _context(loaded.data, loaded.path, outcome, options, verifier)


def _context(
    config: dict[str, Any],
    path: Path,
    outcome: Outcome,
    options: ValidateOptions,
    verifier: VerifierInfo | None,
) -> Context:
    declared = config.get("speculators_version")
    ctx = Context(
        config=config,
        config_path=path,
        model_type=outcome.model_type,
        format_version=outcome.version,
        detection=outcome.detection,
        speculators_version=declared if isinstance(declared, str) else None,
        options={
            "engines": engines_of(tuple(options.engines)),
            "engines_newer": newer_engines_of(tuple(options.engines)),
            "sglang": sglang_of(tuple(options.engines)),
        },
    )
    if verifier is not None:  # config rules name the concrete values it implies in hints
        ctx.verifier, ctx.verifier_path = verifier.config, verifier.path
        ctx.options["verifier_info"] = verifier
        ctx.options["verifier_given"] = options.verifier
    _, running, _ = _config_rules(
        outcome.model_type, outcome.version, options.select, options.ignore
    )
    ctx.options["running"] = running  # a symptom defers to its cause
    return ctx


#: the top-level keys only a speculators config has (any one makes the format version a claim)
_SPECULATORS_KEYS = frozenset(
    {"speculators_model_type", "speculators_version", "speculators_config"}
)


def _outcome(
    config: dict[str, Any], path: Path, options: ValidateOptions, verifier: VerifierInfo | None
) -> Outcome:
    """What the config checks find of ``config``, its findings under ``path``."""
    file = str(path)
    version, source, detection = format_version(config, options)
    dispatched = dispatch(config, version, file, options)
    if isinstance(dispatched, Finding):
        declared = config.get("speculators_model_type")
        shown = bounded(declared, 80) if isinstance(declared, str) else None
        if source == "inferred" and not _SPECULATORS_KEYS & config.keys():
            # no key of the format at all (a third-party draft, a model's own config): no
            # format version was inferred from anything, so the report names none
            version, source = None, None
        return Outcome(version, source, detection, shown, False, (dispatched,))
    model_type = dispatched
    findings: list[Finding] = []
    retired = catalog.retired_types().get(model_type)
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
    outcome = Outcome(version, source, detection, model_type, True, ())
    ctx = _context(config, path, outcome, options, verifier)
    rules, _, plan = _config_rules(model_type, version, options.select, options.ignore)
    if options.fast_path is False:  # the explaining path: each rule through run_rule
        for rule in rules:
            findings.extend(run_rule(rule, ctx, options.profile))
    else:  # the same findings (tests/test_fast_path.py compares them on every fixture)
        run_plan(plan, ctx, options.profile, findings)
    return Outcome(version, source, detection, model_type, True, tuple(findings))


@cache
def _config_rules(
    model_type: str, version: str, select: frozenset[str], ignore: frozenset[str]
) -> tuple[tuple[type[Rule], ...], frozenset[str], tuple[Step, ...]]:
    """The config-layer rules that apply to one type and version, in layer order, their
    ids and their plan (worked out once per type, version and selection, not per config):
    a rule that cannot apply to the pair is never called."""
    rules = tuple(
        rule
        for layer in CONFIG_LAYERS
        for rule in checks_for(layer)
        if (not select or rule.id in select)
        and rule.id not in ignore
        and rule.applies(model_type, version)
    )
    return rules, frozenset(r.id for r in rules), plan_of(rules)
