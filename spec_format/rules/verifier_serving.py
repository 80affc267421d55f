"""Whether a named vLLM or SGLang release can run the verifier's model class beside this draft.

EAGLE-3, P-EAGLE, DFlash, DFlash2 and DSpark drafts read hidden states of chosen verifier
layers. vLLM's model runner turns on the verifier's aux hidden-state outputs for them and
refuses, at start-up, a verifier class that does not implement ``SupportsEagle3``. Which
architectures implement it grew release by release; the facts are each release group's
model registry and classes (``schema/readers/reads/vllm-<group>.json``,
``verifier_architectures``; read from the release's source, ``supports_eagle3`` executed for
the test verifiers). The verifier's architecture is the first of its ``architectures`` that
the release's registry knows.

SGLang's model runner calls the verifier class's capture method at start-up
(``set_eagle3_layers_to_capture``; DFlash and DSpark: ``set_dflash_layers_to_capture`` or
``set_dspark_layers_to_capture``); which classes have it, per release, is
``schema/readers/sglang/sglang.json`` (:mod:`spec_format.facts.sglang`, derived from each
release's wheel).
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format.base.report import Severity
from spec_format.facts import catalog, reads, sglang
from spec_format.rules.base import Context, Hit, Layer, Rule, Stability
from spec_format.rules.engines import named_engines
from spec_format.rules.verifier import verifier_info


class _ServingRule(Rule):
    abstract = True
    layer = Layer.VERIFIER
    requires = frozenset({"verifier"})
    applies_to = reads.AUX_TYPES
    status = Stability.PREVIEW


def _answers(ctx: Context) -> Iterator[tuple[object, str | None, reads.Serving | None]]:
    """(named vLLM release serving the type, the verifier architecture its registry knows
    or the first one named, that release's answer for it)."""
    archs = verifier_info(ctx).architectures or []
    for engine in named_engines(ctx):
        if engine.name != "vllm" or not engine.serves(ctx.model_type) or not archs:
            continue
        if reads.groups().get(engine.representative) is None:
            continue  # no recording of that group
        answers = [(a, reads.serving(engine.representative, a)) for a in archs]
        known = [(a, s) for a, s in answers if s is not None and s.known]
        arch, found = known[0] if known else answers[0]
        yield engine, arch, found


def _sglang_answers(ctx: Context) -> Iterator[tuple[object, str, str, bool | None]]:
    """(named SGLang release, the verifier architecture its registry has or the first one
    named, the capture family the draft needs, whether the class has its method: None when
    the registry has none of the architectures)."""
    family = sglang.capture_family(ctx.model_type)
    archs = verifier_info(ctx).architectures or []
    if family is None or not archs:
        return
    for release in ctx.options.get("sglang") or ():
        known = [a for a in archs if sglang.registered(release.version, a)]
        arch = known[0] if known else archs[0]
        yield release, arch, family, sglang.captures(release.version, arch, family)


class VerifierCannotServeDraft(_ServingRule):
    """The named vLLM or SGLang release's class for the verifier cannot hand this draft the
    aux hidden states it reads."""

    id = "V017"
    name = "verifier-cannot-serve-draft"
    since = "0.9.0"
    severity = Severity.ERROR

    def check(self, ctx: Context) -> Iterator[Hit]:
        for engine, arch, found in _answers(ctx):
            if found is None or not found.known or found.serves is not False:
                continue
            first = reads.first_serving(ctx.model_type, arch)
            later = (
                f"the first covered release that can is {first}"
                if first
                else "no covered release can"
            )
            yield Hit(
                f"{engine.id}'s model class for the verifier's {arch} does not implement "
                f"SupportsEagle3, which its model runner requires to hand a "
                f"{ctx.model_type} draft the verifier's aux hidden states: serving fails at "
                f"start-up ('Model does not support EAGLE3 interface'); {later}",
                pointer="/speculators_config/verifier/architectures",
            )
        for release, arch, family, found in _sglang_answers(ctx):
            if found is not False:
                continue
            first = sglang.first_capturing(arch, family, after=release.version)
            later = (
                f"the first covered SGLang release whose class has it is {sglang.ENGINE}=={first}"
                if first
                else "no covered SGLang release's class has it"
            )
            yield Hit(
                f"{release.id}'s model class for the verifier's {arch} has no "
                f"{sglang.capture_method(family)}, which its model runner calls at start-up to "
                f"capture the aux hidden states this {ctx.model_type} draft reads: serving "
                f"fails before the first request; {later}",
                pointer="/speculators_config/verifier/architectures",
            )


class VerifierArchitectureUnknownToEngine(_ServingRule):
    """The named vLLM or SGLang release's registry does not settle whether the verifier's
    architecture can hand this draft its aux hidden states."""

    id = "V018"
    name = "verifier-architecture-unknown-to-engine"
    since = "0.9.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        for engine, arch, found in _answers(ctx):
            if found is None or found.serves is not None:
                continue
            why = (
                "picks that class at run time"
                if found.known
                else "has no generation architecture of that name"
            )
            yield Hit(
                f"{engine.id}'s model registry {why}: whether it can hand a "
                f"{ctx.model_type} draft the aux hidden states of a {arch} verifier is "
                "unknown, so this pairing is not checked",
                pointer="/speculators_config/verifier/architectures",
            )
        for release, arch, _, found in _sglang_answers(ctx):
            if found is not None:
                continue
            why = (
                f"class for {arch} forwards its attributes to a model it picks at run time"
                if sglang.delegates(release.version, arch)
                else f"registry has no architecture named {arch!r}: it cannot build the verifier"
            )
            yield Hit(
                f"{release.id}'s model {why}, and whether it could hand a {ctx.model_type} "
                "draft the aux hidden states is unknown, so this pairing is not checked",
                pointer="/speculators_config/verifier/architectures",
            )


class VerifierModelTypeRefused(_ServingRule):
    """The named vLLM release refuses an EAGLE-3 draft for a verifier of this model_type."""

    id = "V019"
    name = "verifier-model-type-refused"
    since = "0.9.0"
    severity = Severity.ERROR
    #: vLLM serves a speculators draft with the method its speculators_model_type names, and
    #: only the method "eagle3" meets the target check: the types served as EAGLE-3
    applies_to = catalog.with_feature("eagle3-serving")

    def check(self, ctx: Context) -> Iterator[Hit]:
        model_type = verifier_info(ctx).get("model_type")
        if not isinstance(model_type, str):
            return
        for engine in named_engines(ctx):
            if engine.name != "vllm" or not engine.serves(ctx.model_type):
                continue
            allowed = reads.eagle3_target_types(engine.representative)
            if allowed is None or any(item in model_type for item in allowed):
                continue
            first = reads.first_accepting_target(model_type)
            later = f"the first covered release that accepts it is {first}" if first else ""
            yield Hit(
                f"{engine.id} serves EAGLE-3 only for verifiers whose text model_type contains "
                f"one of {', '.join(repr(a) for a in allowed)}; this verifier's is "
                f"{model_type!r}: serving stops at start-up ('Eagle3 is only supported for "
                f"... models'); {later or 'no covered release accepts it'}",
                pointer="/speculators_config/verifier/architectures",
            )
