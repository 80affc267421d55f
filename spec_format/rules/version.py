"""Version rules (M): which release wrote a config, and what that release got wrong.

Detection itself lives in :mod:`spec_format.facts.versions`; the writer-specific knowledge (builds
whose values mean something else, weights a config cannot repair) in
:mod:`spec_format.facts.writers`. These rules only turn both into findings, so ``validate``,
``migrate`` and ``fix`` never disagree about a file.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format.base.report import Severity
from spec_format.facts import catalog, versions, writers
from spec_format.rules.base import Context, Hit, Layer, Rule, shown


class _VersionRule(Rule):
    abstract = True
    layer = Layer.VERSION


def _detect(ctx: Context) -> versions.Detection:
    if ctx.detection is None:
        ctx.detection = versions.detect(ctx.config)
    return ctx.detection


def _migrate(ctx: Context, line: str) -> tuple[str, ...] | None:
    return ctx.command("migrate", "--to", line, "--in-place")


def _run(command: tuple[str, ...] | None, line: str) -> str:
    return shown(command) or f"`specfmt migrate --to {line}`"


def _problem_hits(ctx: Context, rule_id: str) -> Iterator[Hit]:
    problems = ctx.options.get("_writer_problems")  # M007 and M008 ask: once per config
    if problems is None:
        problems = ctx.options["_writer_problems"] = writers.known_problems(ctx.config)
    for p in problems:
        if p.rule == rule_id:
            yield Hit(p.message, pointer=p.pointer)


class VersionStringInvalid(_VersionRule):
    """`speculators_version` is not a version a speculators build writes."""

    id = "M001"
    name = "version-string-invalid"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        det = _detect(ctx)
        raw = ctx.config.get("speculators_version")
        if raw is None or (det.parsed is not None and det.declared_line is not None):
            return
        command = _migrate(ctx, det.line)
        yield Hit(
            f"speculators_version {raw!r} is not a speculators version "
            f"({'; '.join(det.problems) or 'unrecognised'}); the keys say format "
            f"{det.inferred_span}. {_run(command, det.line)} stamps a real one",
            pointer="/speculators_version",
            command=command,
        )


class VersionMissing(_VersionRule):
    """`speculators_version` is absent, so the format version is inferred from the keys."""

    id = "M002"
    name = "version-missing"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        if "speculators_version" in ctx.config:
            return
        det = _detect(ctx)
        command = _migrate(ctx, det.line)
        yield Hit(
            f"no speculators_version; the keys say format {det.inferred_span} "
            f"({'; '.join(e.describe() for e in det.evidence if e.strong) or 'no evidence'}). "
            f"{_run(command, det.line)} writes it",
            pointer="",
            command=command,
        )


class VersionDisagreesWithKeys(_VersionRule):
    """The declared `speculators_version` does not match the keys the file has."""

    id = "M003"
    name = "version-disagrees-with-keys"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        det = _detect(ctx)
        if det.declared_line is None or det.agrees:
            return
        command = _migrate(ctx, det.line)
        against = [e for e in det.evidence if not e.allows(det.declared_line)]
        strong = [e for e in against if e.strong]
        why = "; ".join(e.describe() for e in (strong or against))
        yield Hit(
            f"speculators_version {det.declared!r} names format {det.declared_line}, but the "
            f"keys say {det.inferred_span} ({why}); the file was probably re-saved by another "
            f"release, which never updates the stamp. specfmt uses {det.line}; "
            f"{_run(command, det.line)} re-stamps it",
            pointer="/speculators_version",
            command=command,
        )


class OlderFormat(_VersionRule):
    """The config is in an older format version than the latest."""

    id = "M004"
    name = "older-format"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        latest = catalog.latest_version()
        if ctx.format_version == latest:
            return
        newest = (catalog.versions_with_type(ctx.model_type) or (latest,))[-1]
        if newest == ctx.format_version:  # a retired type: nothing to migrate to (S003)
            yield Hit(
                f"format {ctx.format_version} is older than {latest}, and the newest format "
                f"with {ctx.model_type} drafts; no migration carries it further",
                pointer="/speculators_version" if "speculators_version" in ctx.config else "",
            )
            return
        command = _migrate(ctx, newest)
        last = "" if newest == latest else f" (the newest format with {ctx.model_type} drafts)"
        yield Hit(
            f"format {ctx.format_version} is older than {latest}; {_run(command, newest)}"
            f"{last} converts it and lists every change",
            pointer="/speculators_version" if "speculators_version" in ctx.config else "",
            command=command,
        )


class DSparkAnchorUnrecorded(_VersionRule):
    """A DSpark config has no `sample_from_anchor`; its writer meant false, readers assume true."""

    id = "M005"
    name = "dspark-anchor-unrecorded"
    since = "0.7.0"
    severity = Severity.WARNING
    applies_to = (writers.BUG_TYPE[id],)

    def check(self, ctx: Context) -> Iterator[Hit]:
        why = writers.dspark_anchor_missing(ctx.config)
        if why is not None:
            command = ctx.command("fix", "--in-place")
            yield Hit(
                f'sample_from_anchor is absent: {why}. Write "sample_from_anchor": false '
                f"({shown(command) or '`specfmt fix`'} does)",
                pointer="/sample_from_anchor",
                command=command,
            )


class DFlashTokensOffByOne(_VersionRule):
    """A DFlash config from 0.5.0.dev46-dev71 sets `speculative_tokens` to `block_size`."""

    id = "M006"
    name = "dflash-tokens-off-by-one"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = (writers.BUG_TYPE[id],)

    def check(self, ctx: Context) -> Iterator[Hit]:
        bug = writers.dflash_off_by_one(ctx.config)
        if bug is not None:
            i, written, right = bug
            command = _migrate(ctx, ctx.format_version)
            yield Hit(
                f"speculative_tokens is {written} = block_size, written by "
                f"{ctx.config.get('speculators_version')} (DFlash builds 0.5.0.dev46-dev71 were "
                f"off by one): block_size {written} without anchor sampling drafts {right} "
                f"tokens per step; set it to {right} ({_run(command, ctx.format_version)} "
                "does, in the same format version)",
                pointer=f"/speculators_config/proposal_methods/{i}/speculative_tokens",
                command=command,
            )


class ConverterLostDecoderLayer(_VersionRule):
    """An EAGLE-3 conversion from a release whose converter dropped the decoder layer."""

    id = "M007"
    name = "converter-lost-decoder-layer"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = (writers.BUG_TYPE[id],)
    references = ("vllm-project/speculators#1114", "vllm-project/speculators#358")

    def check(self, ctx: Context) -> Iterator[Hit]:
        yield from _problem_hits(ctx, self.id)


class HiddenStatesOffByOne(_VersionRule):
    """An EAGLE-3 draft trained on hidden states captured one layer late (0.3-0.4 data)."""

    id = "M008"
    name = "hidden-states-off-by-one"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO
    applies_to = (writers.BUG_TYPE[id],)

    def check(self, ctx: Context) -> Iterator[Hit]:
        yield from _problem_hits(ctx, self.id)
