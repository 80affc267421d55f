"""Reader rules (C layer): what the executed readers make of a config.

Every fact here comes from the reader table (``schema/readers/``, checked against each
reader release by the ``readers`` test group): which types a release serves, which
verifier forms and top-level keys it refuses, what it reads for each field. The engines are
the ones named with ``--engine`` (a pin, a range: every covered group in it, or a release
newer than the table, judged as the newest: C021); without it the newest release of each
covered engine is assumed (and the run's notes say so), what those refuse is reported as a
warning instead of an error, and a draft no covered vLLM release can load is an error
(C022).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache

from spec_format.base.jsonload import json_strings
from spec_format.base.report import Severity
from spec_format.facts import (
    catalog,
    disputes,
    readers,
    schemas,
    serving,
    sglang,
    unread,
    writers,
)
from spec_format.facts.effective import default_aux_ids
from spec_format.rules.base import Context, Hit, Layer, Rule, shown
from spec_format.rules.consumers import misspellings


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
    if ctx.options.get("engines"):
        return []
    return _assumed(ctx)[0].get(kind, [])


def _assumed(ctx: Context) -> tuple[dict[str, list], dict[int, tuple[dict, list]]]:
    """The assumed engines' refusals of the config by kind, and by engine table (the id
    of its data -> (the data, its refusals)): one look per config, which four rules and
    C022 (the newest vLLM group's table is the assumed vLLM's) share."""
    known = ctx.options.get("_assumed_refusals")
    if known is None:
        by_kind: dict[str, list] = {}
        by_table: dict[int, tuple[dict, list]] = {}
        for engine in disputes.assumed_engines():
            found = disputes.rejections(ctx.config, (engine,))
            by_table[id(engine.data)] = (engine.data, found)
            for r in found:
                by_kind.setdefault(r.kind, []).append(r)
        known = ctx.options["_assumed_refusals"] = (by_kind, by_table)
    return known


def _assumed_rejections(ctx: Context, release) -> list | None:
    """The refusals of ``release`` already worked out for an assumed engine with its table
    (None: none has it)."""
    found = _assumed(ctx)[1].get(id(release.data))
    return found[1] if found is not None and found[0] is release.data else None


def _refusal_hits(
    ctx: Context, kind: str, say: Callable[[str, list[disputes.Refusal]], str], *, each=False
) -> Iterator[Hit]:
    """The findings of the assumed engines' refusals of one kind (C007, C008, C011, C013):
    one per refused place, ``say(who, refusals)`` wording it, ``who`` every engine that
    refuses there; ``each``: one per refusal."""
    grouped: dict[object, list[disputes.Refusal]] = {}
    for r in _assumed_refusals(ctx, kind):
        grouped.setdefault(len(grouped) if each else r.pointer, []).append(r)
    for refusals in grouped.values():
        who = ", ".join(r.engine.id for r in refusals)
        yield Hit(say(who, refusals), pointer=refusals[0].pointer)


def _fix_command(ctx: Context, *args: str) -> tuple[str, ...] | None:
    named = [a for e in engines(ctx) for a in ("--engine", e.id)]
    return ctx.command("fix", *named, *args, "--in-place")


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
        writer, aux = _writer_and_aux(ctx.format_version, ctx.model_type)
        if writer is None:
            return
        config = ctx.config
        if aux and config.get(aux) is None:  # absent or null: maybe left to the readers
            meant = disputes.view(writer, ctx.model_type, aux, config)
            if meant is not None and meant.how in ("absent", "null") and meant.value is None:
                yield _aux_hit(ctx, aux, meant)
        judged = engines(ctx)
        if writers.dspark_anchor_missing(config) is not None:
            # what its writer meant is not the table's default (M005 reports it, and fix
            # writes it first): compare the readers on the config as fix will see it
            config = {**config, "sample_from_anchor": writers.DSPARK_ANCHOR_MEANT}
        found = disputes.disputes(config, ctx.model_type, writer, judged)
        if not found:
            return
        # a field whose misspelling is present is C014's: the author gave it a value
        meant_as: set[str] = set()
        if "C014" in ctx.options.get("running", ("C014",)):
            meant_as = {m.known[0] for m in misspellings(ctx) if m.parent == "" and m.target}
        readers = [writer, *judged]
        for d in found:
            if d.field in meant_as:
                continue
            state = "absent" if d.field not in config else f"{disputes.show(d.meant.value)}"
            done = disputes.reconcile(config, ctx.model_type, d.field, d.meant, readers)
            declared = schemas.resolve(ctx.format_version, ctx.model_type, (d.field,))
            command = _fix_command(ctx) if done.ok and declared else None
            if command:
                advice = (
                    f"{shown(command)} writes {d.field}: {json.dumps(done.value)}, under which "
                    f"every reader acts as {writer.id} does"
                )
            elif done.ok:
                advice = f"format {ctx.format_version} has no {d.field} to write; migrate it"
            else:
                advice = f"no value removes it: {done.why}"
            yield Hit(
                f"{d.headline(state)} ({d.describe()}); {advice}",
                pointer=d.pointer,
                command=command,
            )


@cache
def _writer_and_aux(line: str, model_type: str) -> tuple:
    """The speculators release that writes format ``line`` and the type's aux layer ids key."""
    return disputes.writer_of(line), catalog.aux_key(model_type)


def _aux_hit(ctx: Context, aux: str, meant: disputes.View) -> Hit:
    """Aux layer ids left to the readers: the layers they pick, and the command that writes
    them once the user confirms the draft was trained on them (``fix --aux-layer-ids``)."""
    others = [
        v
        for e in engines(ctx)
        if e.serves(ctx.model_type)
        and (v := disputes.view(e, ctx.model_type, aux, ctx.config)) is not None
    ]
    head = (
        f"{aux} is {meant.how}, so every reader picks the verifier layers itself "
        f"({disputes.describe([meant, *others])}: the default layers of the verifier)"
    )
    ids = default_aux_ids(ctx.model_type, ctx.format_version, ctx.verifier)
    if ids is None or ctx.verifier_path is None:
        how = ""
        if ctx.model_type in catalog.family("chain"):
            validate = shown(ctx.command("validate", "--verifier", "DIR"))
            how = (
                f" ({validate or '`specfmt validate --verifier DIR`'} shows the layers they "
                "use and the command that writes them; DIR: the verifier's directory)"
                if ctx.verifier is None
                else " (the verifier's config does not say how many layers it has)"
            )
        return Hit(f"{head}; write the ids the draft was trained with{how}", pointer=f"/{aux}")
    command = ctx.command("fix", "--aux-layer-ids", ",".join(map(str, ids)), "--in-place")
    return Hit(
        f"{head}: with this verifier they use {ids}; only the training run knows whether the "
        f"draft was trained on those: if it was, {shown(command)} writes them, otherwise write "
        "the ids it was trained with",
        pointer=f"/{aux}",
        command=command,
    )


class VerifierNotAHubId(_ReaderRule):
    """`verifier.name_or_path` is not a model repository id that engines accept."""

    id = "C007"
    name = "verifier-path-not-portable"
    severity = Severity.WARNING
    since = "0.1.0"
    references = ("vllm-project/speculators#1065",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        return _refusal_hits(
            ctx,
            "verifier",
            lambda who, refused: (
                f"verifier.name_or_path is not a model repository id: {who} "
                f"{'refuses' if len(refused) == 1 else 'refuse'} it ({refused[0].message}); "
                "write the verifier's Hugging Face id (ORG/NAME)"
            ),
        )


class TopLevelKeyRefused(_ReaderRule):
    """The config has a top-level key an engine refuses (`model_type`)."""

    id = "C008"
    name = "top-level-model-type"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        return _refusal_hits(
            ctx,
            "top-level",
            lambda who, refused: (
                f"top-level {refused[0].pointer[1:]} is refused by {who} ({refused[0].message}); "
                "remove it (the decoder family belongs in transformer_layer_config.model_type)"
            ),
        )


class TypeNotServed(_ReaderRule):
    """An engine does not serve this `speculators_model_type`."""

    id = "C011"
    name = "type-needs-recent-reader"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        refused = _assumed_refusals(ctx, "type")
        if not refused:
            return
        who = ", ".join(
            r.engine.id + (f" (the last release serving it: {last})" if last is not None else "")
            for r in refused
            for last in [_last_serving(r.engine, ctx.model_type)]
        )
        served = {r.engine.name: readers.serving(r.engine.name, ctx.model_type) for r in refused}
        if not any(served.values()):  # no covered release serves it: naming one cannot help
            since = ", ".join(readers.covered_range(n).split(" to ")[0] for n in served)
            yield Hit(
                f"{ctx.model_type} is not served by {who} nor by any release back to {since}; "
                "serve it with an engine that added it, or check speculators_model_type",
                pointer=refused[0].pointer,
            )
            return
        where = "; ".join(f"{n} {s}" for n, s in served.items() if s)
        yield Hit(
            f"{ctx.model_type} is not served by {who}, but by {where}; if you deploy one of "
            "those, name it with --engine NAME==VERSION to check the config against it",
            pointer=refused[0].pointer,
        )


def _last_serving(engine, model_type: str) -> str | None:
    """The newest covered release of ``engine``'s reader older than it that serves the type
    (vLLM 0.34 refuses peagle, which 0.22 to 0.33 serve), or None."""
    return _last_serving_before(engine.name, engine.representative, model_type)


@readers.per_table
def _last_serving_before(name: str, representative: str, model_type: str) -> str | None:
    last = None
    for rid in readers.representatives():  # sorted by version
        rel = readers.release(*rid.split("=="))
        if rel.name != name:
            continue
        if rel.representative == representative:
            break
        if rel.serves(model_type):
            last = f"{rel.name}=={rel.members[-1]}"
    return last


class EngineRejects(_ReaderRule):
    """A named engine refuses the config."""

    id = "C012"
    name = "engine-rejects"
    severity = Severity.ERROR
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        named = named_engines(ctx)
        if not named:
            return
        for r in disputes.rejections(ctx.config, named):
            yield Hit(f"{r.engine.id} refuses this config: {r.message}", pointer=r.pointer)


class AssumedEngineRejects(_ReaderRule):
    """An assumed engine refuses the config for a reason no other rule names."""

    id = "C013"
    name = "assumed-engine-rejects"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        return _refusal_hits(
            ctx, "other", lambda who, r: f"{who} refuses this config: {r[0].message}", each=True
        )


def _unread_hits(ctx: Context, judged: tuple) -> Iterator[Hit]:
    writer = disputes.writer_of(ctx.format_version)
    for u in unread.trained_flags_unread(ctx.config, ctx.model_type, writer, judged):
        yield Hit(
            f"{u.describe()}; no config value removes this (the draft was trained with it): "
            f"serve with a release that reads {u.field}",
            pointer=u.pointer,
        )
    for f in unread.layer_fields_unread(ctx.config, ctx.model_type, judged):
        serve = (
            f"serve with {f.serving[0]} or a later release that acts on it"
            if f.serving
            else f"no covered release reads {f.field}"
        )
        yield Hit(
            f"{f.describe()}; no config value removes this (the draft was trained with it): "
            f"{serve}",
            pointer=f.pointer,
        )


class EngineIgnoresTrainedFlag(_ReaderRule):
    """A named engine never reads a flag that changes what the draft was trained to compute."""

    id = "C015"
    name = "engine-ignores-trained-flag"
    severity = Severity.ERROR
    since = "0.1.0"
    references = ("vllm-project/vllm#38111", "vllm-project/vllm#46488")

    def check(self, ctx: Context) -> Iterator[Hit]:
        named = named_engines(ctx)
        if named:  # none named: C016 asks the assumed ones
            yield from _unread_hits(ctx, named)


class AssumedEngineIgnoresTrainedFlag(_ReaderRule):
    """An assumed engine (no ``--engine``) never reads a flag the draft was trained with."""

    id = "C016"
    name = "assumed-engine-ignores-trained-flag"
    severity = Severity.WARNING
    since = "0.1.0"
    references = ("vllm-project/vllm#38111", "vllm-project/vllm#46488")

    def check(self, ctx: Context) -> Iterator[Hit]:
        if not named_engines(ctx):
            yield from _unread_hits(ctx, disputes.assumed_engines())


class EngineNewerThanTable(_ReaderRule):
    """An engine release named with `--engine` is newer than the reader table."""

    id = "C021"
    name = "engine-newer-than-table"
    severity = Severity.WARNING
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        for spec in ctx.options.get("engines_newer") or ():
            yield Hit(spec.newer_message())


def no_release_loads(ctx: Context) -> list[tuple[str, list]] | None:
    """Without ``--engine``: (release, why it refuses) of every covered vLLM release group,
    oldest first, when none of them can load the draft and at least one serves the type
    (``None`` otherwise; a type no release serves is C011's). Asked newest first, it stops
    at the first release that loads the draft: most drafts cost one look. What it asks needs
    no tensor contract (:func:`serving.config_refusals`)."""
    if named_engines(ctx):
        return None
    groups = _vllm_groups()
    if not _some_group_serves(ctx.model_type):
        return None
    found = []
    for g in reversed(groups):
        why = serving.config_refusals(ctx.config, ctx.model_type, g, _assumed_rejections(ctx, g))
        if not why:
            return None
        found.append((g.id, why))
    return found[::-1]


@cache
def _vllm_groups() -> tuple:
    return serving.covered_groups("vllm")


@readers.per_table
def _some_group_serves(model_type: str) -> bool:
    return any(g.serves(model_type) for g in _vllm_groups())


class NoReleaseLoadsDraft(_ReaderRule):
    """No covered vLLM release can load the draft (without `--engine`)."""

    id = "C022"
    name = "no-release-loads-draft"
    severity = Severity.ERROR
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        found = no_release_loads(ctx)
        if found is None:
            return
        by_reason: dict[str, list[str]] = {}
        for release, why in found:
            first = why[0]
            said = f"{first.subject}: {first.text}"
            by_reason.setdefault(said, []).append(release)
        parts = [f"{', '.join(disputes.runs(who))}: {said}" for said, who in by_reason.items()]
        path = ctx.path_text if ctx.path_text not in ("-", "<stdin>") else "CKPT"
        yield Hit(
            f"no covered vLLM release can load this draft; {'; '.join(parts)}; "
            f"`specfmt serving {path}` lists every release's verdict",
            pointer=found[-1][1][0].pointer,  # what the newest release refuses
        )


class EngineReadsNoSpeculatorsConfig(_ReaderRule):
    """An engine named with `--engine` reads no speculators config (SGLang)."""

    id = "C023"
    name = "engine-reads-no-speculators-config"
    severity = Severity.ERROR
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        for release in ctx.options.get("sglang") or ():
            if sglang.reads_speculators(release.version):
                continue
            names = json_strings(ctx.config.get("architectures"))
            if any(sglang.registered(release.version, a) for a in names):
                continue  # it builds a class of its own from this config: not this rule's
            built = (
                f"config.json's architectures {names}, none of which its model registry has"
                if names
                else "config.json, which names no architecture its model registry has"
            )
            yield Hit(
                f"{release.id} reads no speculators config (no covered SGLang release does: "
                f"none reads speculators_model_type); it builds the draft from {built}, and "
                "stops at start-up ('Model architectures ... are not supported'); serve this "
                "draft with vLLM (`--engine vllm` says which releases read it)",
                pointer="/architectures" if names else "/speculators_model_type",
            )
