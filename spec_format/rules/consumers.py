"""Consumer rules (C) that are not reader-table rows: nested keys speculators drops,
verifier blocks old trainers wrote wrong, obsolete keys, runtime support notes.

What each reader release reads, ignores or refuses is the reader table's (rules in
:mod:`spec_format.rules.engines`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from spec_format.base.report import Severity
from spec_format.facts import catalog, disputes, misspell, readers, versions
from spec_format.rules.base import Context, Hit, Layer, Rule, Stability, shown


class _ConsumerRule(Rule):
    abstract = True
    layer = Layer.CONSUMER


class LayerModelTypeMissing(_ConsumerRule):
    """`transformer_layer_config.model_type` is missing."""

    id = "C002"
    name = "layer-model-type-missing"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("vllm-project/speculators#620", "vllm-project/vllm#43132")

    def check(self, ctx: Context) -> Iterator[Hit]:
        layer = ctx.config.get("transformer_layer_config")
        if isinstance(layer, dict) and layer and "model_type" not in layer:
            options = catalog.buildable_layers(ctx.model_type) or ("qwen3",)
            # what each reader builds instead: the catalog (speculators releases) and the
            # reader table (engines)
            rec = catalog.record(ctx.model_type)
            pairs = rec.default_layer if rec else ()
            built = ", ".join(f"{cls} layers from {since}" for since, cls in pairs)
            readers = [
                f"speculators builds {built}" if built else "speculators cannot build the layers",
                disputes.absent_layer_class(ctx.model_type),
            ]
            yield Hit(
                f"transformer_layer_config.model_type is missing: {', '.join(filter(None, readers))}"
                f"; write the decoder family the draft was trained with ({' or '.join(options)})",
                pointer="/transformer_layer_config/model_type",
            )


_NESTED = {
    "/speculators_config": ("algorithm", "proposal_methods", "default_proposal_method", "verifier"),
    "/speculators_config/verifier": ("name_or_path", "architectures"),
}
_PROPOSAL_KEYS = ("proposal_type", "speculative_tokens", "verifier_accept_k", "accept_tolerance")
_KNOWN_SPEC = frozenset(_NESTED["/speculators_config"])
_KNOWN_VERIFIER = frozenset(_NESTED["/speculators_config/verifier"])
_KNOWN_PROPOSAL = frozenset(_PROPOSAL_KEYS)


class NestedKeyDropped(_ConsumerRule):
    """`speculators_config`, its `verifier` or a proposal method carries a key that
    speculators silently drops."""

    id = "C003"
    name = "nested-key-dropped"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        spec = ctx.config.get("speculators_config")
        if not isinstance(spec, dict):
            return
        if _all_known(spec):  # most configs: nothing to report
            return
        verifier = spec.get("verifier")
        objects: list[tuple[str, Any, tuple[str, ...]]] = [
            ("/speculators_config", spec, _NESTED["/speculators_config"]),
            ("/speculators_config/verifier", verifier, _NESTED["/speculators_config/verifier"]),
        ]
        objects += [
            (f"/speculators_config/proposal_methods/{i}", m, _PROPOSAL_KEYS)
            for i, m in enumerate(ctx.proposal_methods)
        ]
        typos = None
        for where, obj, known in objects:
            if not isinstance(obj, dict):
                continue
            for key in obj:
                if key in known:
                    continue
                if typos is None:  # C014 names the key that was meant
                    typos = misspelled_pointers(ctx)
                if f"{where}/{key}" not in typos:
                    yield Hit(
                        f"{where[1:]}.{key} is not a field of that object: speculators drops "
                        "it silently on load; move it where it belongs or remove it",
                        pointer=f"{where}/{key}",
                    )


def _all_known(spec: dict[str, Any]) -> bool:
    """Whether every key of ``speculators_config``, its verifier and its proposal methods
    is a field of that object."""
    if not _KNOWN_SPEC.issuperset(spec):
        return False
    verifier = spec.get("verifier")
    if isinstance(verifier, dict) and not _KNOWN_VERIFIER.issuperset(verifier):
        return False
    methods = spec.get("proposal_methods")
    if isinstance(methods, list):
        for m in methods:
            if isinstance(m, dict) and not _KNOWN_PROPOSAL.issuperset(m):
                return False
    return True


class AuxLayerCountNotThree(_ConsumerRule):
    """An EAGLE-3 draft taps a number of verifier layers other than three."""

    id = "C004"
    name = "aux-layer-count-not-three"
    since = "0.1.0"
    severity = Severity.INFO
    applies_to = catalog.family("chain")
    references = ("vllm-project/vllm#54526", "vllm-project/vllm#54598")

    def check(self, ctx: Context) -> Iterator[Hit]:
        ids = ctx.config.get("eagle_aux_hidden_state_layer_ids")
        if not (isinstance(ids, list) and ids and len(ids) != 3):
            return
        refusing, sizes = readers.fc_mismatch(ctx.model_type, ctx.config, len(ids))
        if refusing:  # the reader table's releases that size fc for another count
            yield Hit(
                f"{len(ids)} aux layers: vLLM {refusing} size fc for "
                f"{' or '.join(map(str, sizes))} aux hidden states and cannot load this fc; "
                "check the engine you deploy with --engine",
                pointer="/eagle_aux_hidden_state_layer_ids",
            )


_OLD_ARCH_RELEASES = (
    "speculators 0.4-0.6 training wrote [] (0.3 wrote LlamaForCausalLM for every verifier)"
)


class VerifierArchitecturesEmpty(_ConsumerRule):
    """`speculators_config.verifier.architectures` is empty."""

    id = "C006"
    name = "verifier-architectures-empty"
    since = "0.1.0"
    severity = Severity.WARNING
    legacy_severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        spec = ctx.config.get("speculators_config")
        verifier = spec.get("verifier") if isinstance(spec, dict) else None
        if isinstance(verifier, dict) and verifier.get("architectures") == []:
            head = (
                "verifier.architectures is empty, so no reader can check the draft's target "
                f"({_OLD_ARCH_RELEASES})"
            )
            given = (ctx.verifier or {}).get("architectures")
            command = None
            if ctx.verifier_path is not None and isinstance(given, list) and given:
                command = ctx.command("fix", "--verifier", ctx.verifier_given, "--in-place")
            if command:
                advice = f"{shown(command)} writes the verifier's {json.dumps(given)}"
            else:  # the verifier is unknown (DIR), the config is not (unless it is remote)
                # -i (--in-place): the command stays within 80 columns after `help:`
                example = ctx.command("fix", "--verifier", "DIR", "-i")
                advice = (
                    f"{shown(example)} fills it from the verifier's config.json (DIR: the "
                    "verifier's directory)"
                    if example
                    else "fill it from the verifier's config.json (`specfmt fix --verifier DIR "
                    "--in-place` on a local copy does)"
                )
            yield Hit(
                f"{head}; {advice}",
                pointer="/speculators_config/verifier/architectures",
                command=command,
            )


_LOCAL_PATH = re.compile(r"^(/|\./|\.\./|~|[A-Za-z]:\\|s3://|gs://|file://)")


class ObsoleteKey(_ConsumerRule):
    """The config carries a key that no current reader uses."""

    id = "C009"
    name = "obsolete-key"
    since = "0.1.0"
    severity = Severity.INFO

    def check(self, ctx: Context) -> Iterator[Hit]:
        if _obsolete_keys(ctx.model_type).isdisjoint(ctx.config):
            return  # most configs: none of those keys
        for key, noise in catalog.noise_keys().items():
            if key in ctx.config:
                same = ctx.command("fix", "--in-place")
                yield Hit(
                    f"{key} is {noise.why}; {shown(same) or '`specfmt fix --in-place`'} drops it",
                    pointer=f"/{key}",
                    command=same,
                )
        for key, until in versions.removed_fields(ctx.model_type).items():
            if key in ctx.config:
                # migrating drops it only across the step that removed it
                past = None
                if versions.line_index(ctx.format_version) <= versions.line_index(until):
                    past = ctx.command("migrate", "--to", catalog.latest_version(), "--in-place")
                advice = f"{shown(past)} drops it" if past else "remove it"
                yield Hit(
                    f"{key} is a field of {ctx.model_type} up to format {until}, removed after "
                    f"it; no current reader uses it; {advice}",
                    pointer=f"/{key}",
                    command=past,
                )


@cache
def _obsolete_keys(model_type: str) -> frozenset[str]:
    """The keys C009 reports for a type: the serialization noise and the removed fields."""
    return frozenset((*catalog.noise_keys(), *versions.removed_fields(model_type)))


class AnchorSamplingSupport(_ConsumerRule):
    """A DFlash draft samples from the anchor position, which most readers do not support."""

    id = "C010"
    name = "anchor-sampling-support"
    since = "0.7.0"
    severity = Severity.WARNING
    applies_to = catalog.with_feature("anchor-sampling-unsupported")
    references = ("vllm-project/vllm#48639", "vllm-project/vllm#54154")

    def check(self, ctx: Context) -> Iterator[Hit]:
        if ctx.config.get("sample_from_anchor") is not True:
            return

        def reads(release: readers.Release) -> bool | None:
            if not release.serves(ctx.model_type):
                return None
            return (
                release.reading(ctx.model_type, "sample_from_anchor", ctx.config).how != "ignored"
            )

        ignoring = readers.spans("vllm", lambda r: reads(r) is False)
        reading = readers.spans("vllm", lambda r: reads(r) is True)
        ignored = (
            f"vLLM {ignoring} ignore it and draft without anchor sampling, a layout the draft "
            "was not trained for; "
            if ignoring
            else ""
        )
        served = (
            f"serve it with vLLM {reading}, which read it"
            if reading
            else ("no covered vLLM release reads it")
        )
        yield Hit(
            f"sample_from_anchor is true: {ignored}{served}, and check acceptance after deploying",
            pointer="/sample_from_anchor",
        )


class MisspelledKey(_ConsumerRule):
    """A key no reader reads is a slip away from one that readers read."""

    id = "C014"
    name = "misspelled-key"
    since = "0.1.0"
    severity = Severity.WARNING
    status = Stability.PREVIEW

    def check(self, ctx: Context) -> Iterator[Hit]:
        for m in misspellings(ctx):
            where = m.parent.strip("/").replace("/", ".")
            place = f"{where}.{m.key}" if where else m.key
            if m.target is not None:
                command = ctx.command("fix", "--in-place")
                advice = (
                    f"rename it to {m.known[0]} ({shown(command) or '`specfmt fix`'} does, "
                    "keeping the value)"
                )
            elif m.present:
                command, advice = None, f"{m.known[0]} is there too: remove {m.key}"
            else:
                command, advice = None, f"rename it to the one meant ({' or '.join(m.known)})"
            yield Hit(
                f"{place} is not a key readers read (did you mean {' or '.join(m.known)}?): "
                f"its value is ignored, as if it were not there; {advice}",
                pointer=m.pointer,
                command=command,
            )


def misspellings(ctx: Context) -> list:
    """The misspelled keys of the config, found once per config (C001, C003 and C014 ask)."""
    if "_misspelled" not in ctx.options:
        ctx.options["_misspelled"] = misspell.find(ctx.config, ctx.model_type, ctx.format_version)
    return ctx.options["_misspelled"]


def misspelled_pointers(ctx: Context) -> frozenset[str]:
    """Pointers C014 reports (empty when it does not run): the symptoms defer to it."""
    if "C014" not in ctx.options.get("running", ("C014",)):
        return frozenset()
    return frozenset(m.pointer for m in misspellings(ctx))
