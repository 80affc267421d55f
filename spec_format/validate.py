"""The validation engine behind ``specfmt validate`` and ``spec_format.validate``.

For each input: find the config (a ``config.json`` path, or a checkpoint directory that
holds one), read it strictly, dispatch on ``speculators_model_type``, validate against the
type's JSON Schema for the format version, then run the rule layers in order. One input
that cannot be read never stops the others.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_format import schemas
from spec_format.jsonload import Loaded, load_json
from spec_format.report import FileReport, Finding, Report
from spec_format.rules import input as input_rules
from spec_format.rules import schema as schema_rules
from spec_format.rules.base import Context, Layer, Profile, Rule, run_rule
from spec_format.rules.registry import checks_for

CONFIG_NAME = "config.json"

#: rule layers that look at the config alone, in the order they run
CONFIG_LAYERS = (Layer.CROSS_FIELD, Layer.CONSUMER)


@dataclass(frozen=True)
class ValidateOptions:
    """What ``specfmt validate`` was asked to do (the CLI fills this and nothing else)."""

    profile: Profile = Profile.CURRENT
    format_version: str | None = None  # None: the version the config was written for
    recursive: bool = False
    select: frozenset[str] = frozenset()  # only these rule ids (empty: all)
    ignore: frozenset[str] = frozenset()  # never these rule ids


@dataclass
class Target:
    """One thing to validate: a config file, and the checkpoint directory when one was given."""

    shown: str  # the path as the user wrote it (or as found by --recursive)
    config_path: Path
    checkpoint_dir: Path | None


def validate(paths: Iterable[str | os.PathLike], options: ValidateOptions | None = None) -> Report:
    """Validate every path (config.json files or checkpoint directories) into one report."""
    options = options or ValidateOptions()
    report = Report()
    for target_or_report in _expand(paths, options):
        if isinstance(target_or_report, FileReport):
            report.files.append(target_or_report)
        else:
            report.files.append(validate_target(target_or_report, options))
    return report


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
    for raw in paths:
        shown = os.fspath(raw)
        path = Path(shown)
        if not path.exists():
            report = FileReport(path=shown, unreadable=True)
            report.findings.append(
                input_rules.PathNotFound.finding(
                    f"{shown}: no such file or directory", shown, profile=options.profile
                )
            )
            yield report
        elif path.is_dir():
            if options.recursive:
                found = sorted(_walk_configs(path))
                if not found:
                    yield _no_config(shown, options, recursive=True)
                for config_path in found:
                    yield Target(str(config_path.parent), config_path, config_path.parent)
            elif (path / CONFIG_NAME).is_file():
                yield Target(shown, path / CONFIG_NAME, path)
            else:
                yield _no_config(shown, options, recursive=False)
        else:
            yield Target(shown, path, None)


def _walk_configs(root: Path) -> Iterator[Path]:
    """Every config.json below ``root`` that looks like a draft (not a plain model config)."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if CONFIG_NAME in filenames:
            candidate = Path(dirpath) / CONFIG_NAME
            if _looks_like_draft(candidate):
                yield candidate


def _looks_like_draft(path: Path) -> bool:
    # cheap pre-filter for --recursive: plain model configs (verifiers) are skipped
    try:
        head = path.read_bytes()[: 1 << 20]
    except OSError:
        return True  # let the real read report it
    return any(s in head for s in (b"speculators", b"Eagle3", b"dflash_config", b"eagle_config"))


def _no_config(shown: str, options: ValidateOptions, *, recursive: bool) -> FileReport:
    report = FileReport(path=shown, unreadable=True)
    what = "no draft config.json anywhere below it" if recursive else "no config.json in it"
    hint = "" if recursive else "; pass the checkpoint directory itself, or use --recursive"
    report.findings.append(
        input_rules.NoConfigInDirectory.finding(
            f"{shown} is a directory with {what}{hint}", shown, profile=options.profile
        )
    )
    return report


def validate_target(target: Target, options: ValidateOptions) -> FileReport:
    report = FileReport(path=target.shown)
    loaded = load_json(target.config_path)
    for problem in loaded.problems:
        rule = input_rules.BY_PROBLEM_KIND[problem.kind]
        report.findings.append(
            rule.finding(
                problem.message,
                target.config_path,
                profile=options.profile,
                pointer=problem.pointer,
                line=problem.line,
                column=problem.column,
            )
        )
    if not loaded.ok:
        report.unreadable = True
        return report
    _check_config(loaded, report, options)
    report.findings = _filtered(report.findings, options)
    return report


def _check_config(loaded: Loaded, report: FileReport, options: ValidateOptions) -> Context | None:
    """Dispatch, schema and config-only rule layers; returns the context for later layers."""
    config = loaded.data
    file = str(loaded.path)
    version, source = _format_version(config, options)
    report.format_version, report.version_source = version, source
    dispatched = _dispatch(config, version, file, options)
    if isinstance(dispatched, Finding):
        report.findings.append(dispatched)
        report.model_type = (
            config.get("speculators_model_type")
            if isinstance(config.get("speculators_model_type"), str)
            else None
        )
        _add_lines(report.findings, loaded)
        return None
    model_type = dispatched
    report.model_type = model_type
    findings: list[Finding] = []
    for rule, hit in schema_rules.schema_findings(config, version, model_type):
        findings.append(
            rule.finding(hit.message, file, profile=options.profile, pointer=hit.pointer)
        )
    ctx = Context(
        config=config,
        config_path=loaded.path,
        model_type=model_type,
        format_version=version,
        speculators_version=config.get("speculators_version")
        if isinstance(config.get("speculators_version"), str)
        else None,
    )
    for layer in CONFIG_LAYERS:
        for rule in checks_for(layer):
            if _runs(rule, ctx, options):
                findings.extend(run_rule(rule, ctx, options.profile))
    _add_lines(findings, loaded)
    report.findings.extend(findings)
    return ctx


def _runs(rule: type[Rule], ctx: Context, options: ValidateOptions) -> bool:
    if options.select and rule.id not in options.select:
        return False
    if rule.id in options.ignore:
        return False
    return rule.applies(ctx.model_type, ctx.format_version)


def _filtered(findings: list[Finding], options: ValidateOptions) -> list[Finding]:
    if not options.select and not options.ignore:
        return findings
    return [
        f
        for f in findings
        if f.rule not in options.ignore and (not options.select or f.rule in options.select)
    ]


def _add_lines(findings: list[Finding], loaded: Loaded) -> None:
    if not loaded.text:
        return
    file = str(loaded.path)
    for i, f in enumerate(findings):
        if f.file == file and f.pointer is not None and f.line is None:
            line, col = loaded.locate(f.pointer)
            if line is not None:
                findings[i] = Finding(**{**f.__dict__, "line": line, "column": col})


def _format_version(config: dict[str, Any], options: ValidateOptions) -> tuple[str, str]:
    """The format version to validate against and where it came from."""
    if options.format_version:
        schemas.version_entry(options.format_version)  # raises UsageError when unknown
        return options.format_version, "requested"
    return schemas.latest_version(), "latest"


# -- dispatch ------------------------------------------------------------------------------


def _dispatch(
    config: dict[str, Any], version: str, file: str, options: ValidateOptions
) -> str | Finding:
    """The config's type, or the finding that explains why it has none we can check."""
    profile = options.profile
    model_type = config.get("speculators_model_type")
    if model_type is None:
        third_party = _third_party(config)
        if third_party:
            return schema_rules.ThirdPartyConfig.finding(
                third_party, file, profile=profile, pointer=""
            )
        return schema_rules.MissingModelType.finding(
            "speculators_model_type is missing, so this is not a speculators draft config; "
            f"add it (one of {', '.join(schemas.known_types())})",
            file,
            profile=profile,
            pointer="",
        )
    if not isinstance(model_type, str):
        return schema_rules.MissingModelType.finding(
            f"speculators_model_type must be a string, not {type(model_type).__name__}",
            file,
            profile=profile,
            pointer="/speculators_model_type",
        )
    entry = schemas.version_entry(version)
    if model_type in entry.types:
        return model_type
    retired = schemas.retired_types()
    if model_type in retired:
        r = retired[model_type]
        return schema_rules.RetiredModelType.finding(
            f"speculators_model_type {model_type!r} ({r.what}) was last readable by "
            f"speculators {r.last_version} ({r.note}); validate it with --format-version "
            f"{r.last_version}, or see `specfmt migrate` for what carries over",
            file,
            profile=profile,
            pointer="/speculators_model_type",
        )
    if model_type in schemas.known_types():
        since = next(v for v, e in schemas.versions().items() if model_type in e.types)
        return schema_rules.TypeNotInVersion.finding(
            f"speculators_model_type {model_type!r} does not exist in format version {version} "
            f"(it arrived in {since}); readers of {version} refuse it",
            file,
            profile=profile,
            pointer="/speculators_model_type",
        )
    known = list(schemas.known_types()) + list(retired)
    close = difflib.get_close_matches(model_type, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return schema_rules.UnknownModelType.finding(
        f"unknown speculators_model_type {model_type!r}{hint}; known types: {', '.join(known)}",
        file,
        profile=profile,
        pointer="/speculators_model_type",
    )


def _third_party(config: dict[str, Any]) -> str | None:
    """Recognise draft configs of other projects; returns an explanation or None."""
    archs = config.get("architectures")
    archs = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    if "dflash_config" in config or any("DFlash" in a for a in archs):
        return (
            "this is a z-lab DFlash config (dflash_config / DFlash architecture), not the "
            "speculators format; convert it with `speculators convert --algorithm dflash`, "
            "which also shifts target_layer_ids by +1"
        )
    if any(a.endswith("Eagle3") or "Eagle3" in a for a in archs) or "eagle_config" in config:
        return (
            f"this is a SafeAILab/NVIDIA-style EAGLE-3 config ({', '.join(archs) or 'eagle_config'}),"
            " not the speculators format; convert it with `speculators convert --algorithm "
            "eagle3`, and check its aux layer ids (eagle_config.eagle_aux_hidden_state_layer_ids)"
        )
    if {"speculators_algorithm", "draft_model"} <= config.keys():
        return (
            "this is the pre-0.1 speculators draft format (speculators_algorithm + "
            "draft_model); no release reads it: re-export the draft with a current release"
        )
    if any("Eagle" in a or "EAGLE" in a for a in archs):
        return (
            f"this looks like an EAGLE-1/2 config ({', '.join(archs)}), not the speculators "
            "format; EAGLE-1 drafts (speculators type 'eagle') are only readable by speculators "
            "0.1-0.4"
        )
    return None
