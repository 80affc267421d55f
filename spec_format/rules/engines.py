"""Reader rules (C layer): what the executed readers make of a config.

Every fact here comes from the reader table (``schema/readers/``, checked against each
reader release by the ``readers`` test group): which types a release serves, which
verifier forms and top-level keys it refuses, what it reads for each field. The engines are
the ones named with ``--engine NAME==VERSION``; without it the newest release of each
covered engine is assumed (and the run's notes say so), and what those refuse is reported
as a warning instead of an error.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format import catalog, disputes
from spec_format.report import Severity
from spec_format.rules.base import Context, Hit, Layer, Rule


class _ReaderRule(Rule):
    abstract = True
    layer = Layer.CONSUMER


def named_engines(ctx: Context) -> tuple:
    return tuple(ctx.options.get("engines") or ())


def engines(ctx: Context) -> tuple:
    """The engines the draft is judged against: the named ones, else the assumed ones."""
    return named_engines(ctx) or disputes.assumed_engines()


def _assumed_refusals(ctx: Context, kind: str) -> list[disputes.Refusal]:
    """Refusals of one kind by the assumed engines (none when engines are named: C012)."""
    if named_engines(ctx):
        return []
    key = "_assumed_refusals"  # four rules share one look, once per config
    if key not in ctx.options:
        ctx.options[key] = disputes.rejections(ctx.config, disputes.assumed_engines())
    return [r for r in ctx.options[key] if r.kind == kind]


def _fix_hint(ctx: Context) -> str:
    named = " ".join(f"--engine {e.id}" for e in engines(ctx))
    return f"`specfmt fix {named} {ctx.config_path}`"


class ReadersDisagree(_ReaderRule):
    """The writer and an engine read a field differently."""

    id = "C001"
    name = "implicit-default-disagreement"
    severity = Severity.WARNING
    since = "0.1.0"
    references = (
        "vllm-project/vllm#50170",
        "lightseekorg/tokenspeed#526",
        "vllm-project/speculators#760",
        "sgl-project/sglang-jax#1619",
    )

    def check(self, ctx: Context) -> Iterator[Hit]:
        writer = disputes.writer_of(ctx.format_version)
        if writer is None:
            return
        aux = catalog.aux_key(ctx.model_type)
        meant = disputes.view(writer, ctx.model_type, aux, ctx.config) if aux else None
        if meant is not None and meant.how in ("absent", "null") and meant.value is None:
            others = [
                v
                for e in engines(ctx)
                if e.serves(ctx.model_type)
                and (v := disputes.view(e, ctx.model_type, aux, ctx.config)) is not None
            ]
            yield Hit(
                f"{aux} is {meant.how}, so every reader picks the verifier layers itself "
                f"({disputes.describe([meant, *others])}: the default layers of the "
                "verifier); write the ids the draft was trained with "
                f"(`specfmt fix --verifier DIR {ctx.config_path}` writes the default ones)",
                pointer=f"/{aux}",
            )
        for d in disputes.disputes(ctx.config, ctx.model_type, writer, engines(ctx)):
            state = "absent" if d.field not in ctx.config else f"{disputes.show(d.meant.value)}"
            yield Hit(
                f"{d.field} is {state} and readers act differently on it ({d.describe()}); "
                f"{_fix_hint(ctx)} writes the value every reader reads the same, or names "
                "the disagreement no value removes",
                pointer=d.pointer,
            )


class VerifierNotAHubId(_ReaderRule):
    """`verifier.name_or_path` is not a model repository id that engines accept."""

    id = "C007"
    name = "verifier-path-not-portable"
    severity = Severity.WARNING
    since = "0.1.0"
    references = ("vllm-project/speculators#1065",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        refused = _assumed_refusals(ctx, "verifier")
        if refused:
            who = ", ".join(r.engine.id for r in refused)
            verb = "refuses" if len(refused) == 1 else "refuse"
            yield Hit(
                f"verifier.name_or_path is not a model repository id: {who} {verb} it "
                f"({refused[0].message}); write the verifier's Hugging Face id (ORG/NAME)",
                pointer=refused[0].pointer,
            )


class TopLevelKeyRefused(_ReaderRule):
    """The config has a top-level key an engine refuses (`model_type`)."""

    id = "C008"
    name = "top-level-model-type"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        by_pointer: dict[str, list[disputes.Refusal]] = {}
        for refusal in _assumed_refusals(ctx, "top-level"):
            by_pointer.setdefault(refusal.pointer, []).append(refusal)
        for pointer, refusals in by_pointer.items():
            who = ", ".join(r.engine.id for r in refusals)
            yield Hit(
                f"top-level {pointer[1:]} is refused by {who} ({refusals[0].message}); remove "
                "it (the decoder family belongs in transformer_layer_config.model_type)",
                pointer=pointer,
            )


class TypeNotServed(_ReaderRule):
    """An engine does not serve this `speculators_model_type`."""

    id = "C011"
    name = "type-needs-recent-reader"
    severity = Severity.INFO
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        refused = _assumed_refusals(ctx, "type")
        if refused:
            yield Hit(
                f"{ctx.model_type} is not served by {', '.join(r.engine.id for r in refused)}; "
                "name the engine you deploy with --engine NAME==VERSION to check it",
                pointer=refused[0].pointer,
            )


class EngineRejects(_ReaderRule):
    """A named engine refuses the config."""

    id = "C012"
    name = "engine-rejects"
    severity = Severity.ERROR
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        for r in disputes.rejections(ctx.config, named_engines(ctx)):
            yield Hit(f"{r.engine.id} refuses this config: {r.message}", pointer=r.pointer)


class AssumedEngineRejects(_ReaderRule):
    """An assumed engine refuses the config for a reason no other rule names."""

    id = "C013"
    name = "assumed-engine-rejects"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        for r in _assumed_refusals(ctx, "other"):
            yield Hit(f"{r.engine.id} refuses this config: {r.message}", pointer=r.pointer)


class FeatureIgnoredByOldReaders(_ReaderRule):
    """A flag is enabled that some reader releases ignore without a warning."""

    id = "C005"
    name = "feature-ignored-by-old-readers"
    severity = Severity.INFO
    since = "0.1.0"
    references = ("vllm-project/vllm#38111", "vllm-project/vllm#46488")

    def check(self, ctx: Context) -> Iterator[Hit]:
        for key, ignoring in disputes.ignored_fields(ctx.model_type, disputes.covered()).items():
            if ctx.config.get(key) is True:
                yield Hit(
                    f"{key} is true, but {', '.join(ignoring)} never read it and run the draft "
                    "without it; serve with a release that reads it",
                    pointer=f"/{key}",
                )
