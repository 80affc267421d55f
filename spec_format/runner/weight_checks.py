"""The checks past the config: the safetensors headers (H), then the weight, vocabulary
and verifier layers (W, D, V) whose inputs the run has (``Rule.requires``), the coverage line
of what they read, and the two inputs that carry no local config file (an ``hf://``
checkpoint, a bare ``.safetensors`` file)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from spec_format.base.errors import InputError
from spec_format.base.report import Coverage, FileReport
from spec_format.parsers import documents
from spec_format.parsers.verifier import VerifierInfo
from spec_format.rules import header as header_rules
from spec_format.rules import input as input_rules
from spec_format.rules import rootcause
from spec_format.rules.base import Context, Layer, Rule, run_rule
from spec_format.rules.registry import by_name, checks_for
from spec_format.runner.input_paths import Target
from spec_format.runner.validate_options import ValidateOptions, filtered, selected

#: rule layers that also need the weights, the verifier or tensor data (see Rule.requires)
WEIGHT_LAYERS = (Layer.WEIGHTS, Layer.VOCAB, Layer.VERIFIER)


def check_weights(
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
        report.skipped.append("vocabulary map values (D001-D005): pass --deep")
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
        ran = run_weight_rules(ctx, available, verifier, report, options)
        report.coverage = _coverage(ctx, ran, verifier)
    finally:
        if checkpoint is not None:
            checkpoint.close()


def run_weight_rules(
    ctx: Context,
    available: set[str],
    verifier: VerifierInfo | None,
    report: FileReport,
    options: ValidateOptions,
) -> set[str]:
    """The W, D and V rules whose ``requires`` are within ``available``, over ``ctx`` (its
    checkpoint set by the caller); returns what the rules that ran required."""
    if verifier is not None:
        ctx.verifier = verifier.config
        ctx.verifier_path = verifier.path
        ctx.options["verifier_info"] = verifier
    ran: set[str] = set()  # what the rules that ran required (for the coverage line)
    for rule in _weight_rules(
        ctx.model_type,
        ctx.format_version,
        options.select,
        options.ignore,
        frozenset(available),
    ):
        report.findings.extend(run_rule(rule, ctx, options.profile))
        ran |= rule.requires
    # one config value that explains many shape findings replaces them (W024)
    report.findings = rootcause.grouped(ctx, report.findings)
    return ran


@cache
def _weight_rules(
    model_type: str,
    version: str,
    select: frozenset[str],
    ignore: frozenset[str],
    available: frozenset[str],
) -> tuple[type[Rule], ...]:
    """The W, D and V rules that run, in layer order, for one type, version, selection and
    set of available inputs (worked out once, not per input)."""
    return tuple(
        rule
        for layer in WEIGHT_LAYERS
        for rule in checks_for(layer)
        if rule.requires <= available
        and (not select or rule.id in select)
        and rule.id not in ignore
        and rule.applies(model_type, version)
    )


def _weights_required(
    report: FileReport, target: Target, options: ValidateOptions, variant: str
) -> None:
    """I013 (exit 3) when --deep or --scan-weights asked for weights the input lacks."""
    asked = [
        flag
        for flag, on in (("--deep", options.deep), ("--scan-weights", options.scan_weights))
        if on
    ]
    if not asked or not selected(input_rules.WeightsNotFound, options):
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


class RemoteFetch(NamedTuple):
    """What the network gave for an hf:// input: its checkpoint (listing and headers read)
    and config bytes, or the error that stopped it."""

    checkpoint: Any = None
    raw: bytes | None = None
    error: InputError | None = None


def fetch_remote(remote: str) -> RemoteFetch:
    """The network part of an hf:// input, writing no report: a worker thread of
    :mod:`spec_format.runner.fetch_ahead` runs it while earlier inputs are checked."""
    from spec_format.parsers.checkpoint import load_checkpoint

    try:
        checkpoint = load_checkpoint(remote)
    except InputError as e:
        return RemoteFetch(error=e)
    try:
        raw = checkpoint.read_config()
    except InputError as e:
        checkpoint.close()
        return RemoteFetch(error=e)
    return RemoteFetch(checkpoint, raw)


def load_remote(target: Target, report: FileReport, options: ValidateOptions, fetched: Any = None):
    """The listing, config.json and headers of an hf:// checkpoint: ``fetched`` (a
    :class:`~spec_format.runner.fetch_ahead.Fetch` of :func:`fetch_remote`, already under
    way) or fetched now."""
    from spec_format.parsers.checkpoint import RemoteName

    assert target.remote is not None
    checkpoint, raw, error = (
        fetched.result() if fetched is not None else fetch_remote(target.remote)
    )
    if error is not None:
        report.unreadable = True
        report.findings.append(
            input_rules.FileUnreadable.emit(
                target.remote, profile=options.profile, variant="remote", reason=error
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
    return checkpoint, documents.load(name, raw=raw)


def audit_safetensors_file(target: Target, options: ValidateOptions) -> FileReport:
    """A bare .safetensors path: the header audit alone. Unreadable (exit 3) when the
    header cannot be parsed at all, since nothing else can be checked."""
    from spec_format.parsers.checkpoint import issues_from_scan
    from spec_format.parsers.safetensors import scan_header

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
    report.findings = filtered(report.findings, options)
    return report
