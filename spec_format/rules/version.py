"""Version rules (M): which release wrote a config, and what that release got wrong.

Detection itself lives in :mod:`spec_format.facts.versions`; the writer-specific knowledge (builds
whose values mean something else, weights a config cannot repair) in
:mod:`spec_format.facts.writers`. These rules only turn both into findings, so ``validate``,
``migrate`` and ``fix`` never disagree about a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from spec_format.base.report import Edit, Severity
from spec_format.facts import catalog, versions, writers
from spec_format.rules.base import Context, Hit, Layer, Rule, shown

NO_HITS: tuple[Hit, ...] = ()


class _VersionRule(Rule):
    abstract = True
    layer = Layer.VERSION


def _detect(ctx: Context) -> versions.Detection:
    if ctx.detection is None:
        ctx.detection = versions.detect(ctx.config)
    return ctx.detection


@cache
def _migrate_args(line: str) -> tuple[tuple[str, ...], str]:
    """``migrate --to LINE --in-place`` and ``specfmt`` with them quoted, once per line."""
    import shlex  # only where a finding quotes a command: not at start-up

    args = ("migrate", "--to", line, "--in-place")
    return args, shlex.join(("specfmt", *args))


def _migration(ctx: Context, line: str) -> tuple[tuple[str, ...] | None, str]:
    """The command that migrates the config to ``line`` in place (None where no command
    rewrites it) and how a message quotes it (:func:`shown`, else the command without the
    path)."""
    args, quoted = _migrate_args(line)
    command = ctx.command(*args)
    if command is None:
        return None, f"`specfmt migrate --to {line}`"
    import shlex  # as above

    return command, f"`{quoted} {shlex.quote(command[-1])}`"


def _rewrite(ctx: Context, line: str) -> tuple[tuple[str, ...] | None, str]:
    """The command that brings the config to ``line`` in place: ``fix`` within its own
    format version (it stamps, drops noise and corrects known writer values), ``migrate``
    across versions; and how a message quotes it."""
    if line != ctx.format_version:
        return _migration(ctx, line)
    command = ctx.command("fix", "--in-place")
    return command, shown(command) or "`specfmt fix --in-place`"


def _problem_hits(ctx: Context, rule_id: str) -> list[Hit]:
    problems = ctx.options.get("_writer_problems")  # M007 and M008 ask: once per config
    if problems is None:
        problems = ctx.options["_writer_problems"] = writers.known_problems(ctx.config)
    if not problems:  # the usual case
        return NO_HITS
    return [Hit(p.message, pointer=p.pointer) for p in problems if p.rule == rule_id]


_UNASKED = object()


def dflash_bug(ctx: Context) -> tuple[int, int, int] | None:
    """:func:`writers.dflash_off_by_one` of the context's config, worked out once per config
    (M006 reports it; X003 defers to it)."""
    bug = ctx.options.get("_dflash_off_by_one", _UNASKED)
    if bug is _UNASKED:
        bug = ctx.options["_dflash_off_by_one"] = writers.dflash_off_by_one(ctx.config)
    return bug


@cache
def _older(model_type: str, format_version: str) -> tuple[str, str | None, str] | None:
    """What M004 says of a (type, format version) pair, worked out once per pair: None for
    the latest format; else the newest format with the type (None for a retired type that
    no migration carries further) and the message's words around the command."""
    latest = catalog.latest_version()
    if format_version == latest:
        return None
    newest = (catalog.versions_with_type(model_type) or (latest,))[-1]
    if newest == format_version:  # a retired type: nothing to migrate to (S003)
        return (
            "",
            None,
            f"format {format_version} is older than {latest}, and the newest format "
            f"with {model_type} drafts; no migration carries it further",
        )
    last = "" if newest == latest else f" (the newest format with {model_type} drafts)"
    return (
        f"format {format_version} is older than {latest}; ",
        newest,
        f"{last} converts it and lists every change",
    )


class VersionStringInvalid(_VersionRule):
    """`speculators_version` is not a version a speculators build writes."""

    id = "M001"
    name = "version-string-invalid"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Sequence[Hit]:
        raw = ctx.config.get("speculators_version")
        if raw is None:
            return NO_HITS
        det = _detect(ctx)
        if det.parsed is not None and det.declared_line is not None:
            return NO_HITS
        command, run = _rewrite(ctx, det.line)
        return (
            Hit(
                f"speculators_version {raw!r} is not a speculators version "
                f"({'; '.join(det.problems) or 'unrecognised'}); the keys say format "
                f"{det.inferred_span}. {run} stamps a real one",
                pointer="/speculators_version",
                command=command,
            ),
        )


class VersionMissing(_VersionRule):
    """`speculators_version` is absent, so the format version is inferred from the keys."""

    id = "M002"
    name = "version-missing"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Sequence[Hit]:
        if "speculators_version" in ctx.config:
            return NO_HITS
        det = _detect(ctx)
        command, run = _rewrite(ctx, det.line)
        return (
            Hit(
                f"no speculators_version; the keys say format {det.inferred_span} "
                f"({'; '.join(e.describe() for e in det.evidence if e.strong) or 'no evidence'}"
                f"). {run} writes it",
                pointer="",
                command=command,
            ),
        )


class VersionDisagreesWithKeys(_VersionRule):
    """The declared `speculators_version` does not match the keys the file has."""

    id = "M003"
    name = "version-disagrees-with-keys"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Sequence[Hit]:
        det = _detect(ctx)
        if det.declared_line is None or det.agrees:
            return NO_HITS
        command, run = _rewrite(ctx, det.line)
        against = [e for e in det.evidence if not e.allows(det.declared_line)]
        strong = [e for e in against if e.strong]
        why = "; ".join(e.describe() for e in (strong or against))
        return (
            Hit(
                f"speculators_version {det.declared!r} names format {det.declared_line}, but "
                f"the keys say {det.inferred_span} ({why}); the file was probably re-saved by "
                f"another release, which never updates the stamp. specfmt uses {det.line}; "
                f"{run} re-stamps it",
                pointer="/speculators_version",
                command=command,
            ),
        )


class OlderFormat(_VersionRule):
    """The config is in an older format version than the latest."""

    id = "M004"
    name = "older-format"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Sequence[Hit]:
        older = _older(ctx.model_type, ctx.format_version)
        if older is None:
            return NO_HITS
        before, newest, after = older
        pointer = "/speculators_version" if "speculators_version" in ctx.config else ""
        if newest is None:
            return (Hit(after, pointer=pointer),)
        command, run = _migration(ctx, newest)
        return (Hit(f"{before}{run}{after}", pointer=pointer, command=command),)


class DSparkAnchorUnrecorded(_VersionRule):
    """A DSpark config has no `sample_from_anchor`; its writer meant false, readers assume true."""

    id = "M005"
    name = "dspark-anchor-unrecorded"
    since = "0.7.0"
    severity = Severity.WARNING
    applies_to = (writers.BUG_TYPE[id],)

    def check(self, ctx: Context) -> Sequence[Hit]:
        why = writers.dspark_anchor_missing(ctx.config)
        if why is None:
            return NO_HITS
        command = ctx.command("fix", "--in-place")
        return (
            Hit(
                f'sample_from_anchor is absent: {why}. Write "sample_from_anchor": false '
                f"({shown(command) or '`specfmt fix`'} does)",
                pointer="/sample_from_anchor",
                command=command,
            ),
        )


class DFlashTokensOffByOne(_VersionRule):
    """A DFlash config from 0.5.0.dev46-dev71 sets `speculative_tokens` to `block_size`."""

    id = "M006"
    name = "dflash-tokens-off-by-one"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = (writers.BUG_TYPE[id],)

    def check(self, ctx: Context) -> Sequence[Hit]:
        bug = dflash_bug(ctx)
        if bug is None:
            return NO_HITS
        i, written, right = bug
        command, run = _rewrite(ctx, ctx.format_version)
        return (
            Hit(
                f"speculative_tokens is {written} = block_size, written by "
                f"{ctx.config.get('speculators_version')} (DFlash builds 0.5.0.dev46-dev71 "
                f"were off by one): block_size {written} without anchor sampling drafts "
                f"{right} tokens per step; set it to {right} "
                f"({run} does, in {ctx.version_kept})",
                pointer=f"/speculators_config/proposal_methods/{i}/speculative_tokens",
                command=command,
                edit=(
                    Edit.set(f"/speculators_config/proposal_methods/{i}/speculative_tokens", right),
                ),
            ),
        )


class ConverterLostDecoderLayer(_VersionRule):
    """An EAGLE-3 conversion from a release whose converter dropped the decoder layer."""

    id = "M007"
    name = "converter-lost-decoder-layer"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = (writers.BUG_TYPE[id],)
    references = ("vllm-project/speculators#1114", "vllm-project/speculators#358")

    def check(self, ctx: Context) -> Sequence[Hit]:
        return _problem_hits(ctx, self.id)


class HiddenStatesOffByOne(_VersionRule):
    """An EAGLE-3 draft trained on hidden states captured one layer late (0.3-0.4 data)."""

    id = "M008"
    name = "hidden-states-off-by-one"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO
    applies_to = (writers.BUG_TYPE[id],)

    def check(self, ctx: Context) -> Sequence[Hit]:
        return _problem_hits(ctx, self.id)
