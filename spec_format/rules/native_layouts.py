"""What a named engine release makes of a third-party draft it reads as it is (SafeAILab /
SpecForge EAGLE-3, z-lab DFlash, seen through), from facts executed from each release's own
code: for SGLang (:mod:`spec_format.facts.sglang`) whether its registry has the draft's class
and the class builds its layer count (C012) and whether its head is filled (W025); for SGLang
and vLLM (:mod:`spec_format.facts.vllm_native`) whether ``fc`` is built for as many hidden
states as ``fc.weight`` takes (C020). The engines read the source layout, not the
speculators view, so these run on the source config (``spec_format.runner.converted``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from spec_format.base.jsonload import json_int, json_strings
from spec_format.base.report import Finding
from spec_format.facts import sglang, vllm_native
from spec_format.rules.base import Profile
from spec_format.rules.engine_weights import EngineCannotLoadDraft, EngineCannotLoadTensors
from spec_format.rules.engines import EngineRejects


def findings(
    config: Mapping[str, Any], tensors, sglang_releases, vllm_releases, profile: Profile, file: str
):
    """Every finding of the named SGLang and vLLM releases on the source config and its
    tensor headers (``tensors``: None without weights)."""
    return [
        *refusals(config, sglang_releases, profile, file),
        *unfilled_head(config, tensors, sglang_releases, profile, file),
        *fc_width(config, tensors, (*sglang_releases, *vllm_releases), profile, file),
    ]


def refusals(config: Mapping[str, Any], releases, profile: Profile, file: str) -> list[Finding]:
    """C012 for each named SGLang release whose model registry has none of the classes the
    source config's ``architectures`` name: it cannot build the draft at all."""

    names = json_strings(config.get("architectures"))
    layers = json_int(config.get("num_hidden_layers"), low=2)
    out = []
    for release in releases if names else ():
        refusal = sglang.layer_refusal(release.version, names[0])
        if refusal and layers is not None:
            first = sglang.first(
                lambda v: sglang.layer_refusal(v, names[0]) is None, after=release.version
            )
            out.append(
                EngineRejects.finding(
                    f"{release.id} refuses this config: its {names[0]} raises '{refusal}' "
                    f"for num_hidden_layers {layers}; "
                    + (
                        f"the first covered SGLang release that builds {layers} layers is "
                        f"{sglang.ENGINE}=={first}"
                        if first
                        else "no covered SGLang release builds more than one"
                    ),
                    file,
                    profile=profile,
                    pointer="/num_hidden_layers",
                )
            )
        if any(sglang.registered(release.version, a) for a in names):
            continue
        first = sglang.first(lambda v: sglang.registered(v, names[0]))
        later = (
            f"the first covered SGLang release that has it is {sglang.ENGINE}=={first}"
            if first
            else "no covered SGLang release has it"
        )
        out.append(
            EngineRejects.finding(
                f"{release.id} refuses this config: its model registry has no {names[0]} "
                f"(the class config.json's architectures name), so it cannot build the draft "
                f"('Model architectures {names} are not supported'); {later}",
                file,
                profile=profile,
                pointer="/architectures",
            )
        )
    return out


def unfilled_head(config, tensors, releases, profile: Profile, file: str) -> list[Finding]:
    """W025 for each named SGLang release whose EAGLE-3 class builds this draft a fresh
    ``lm_head`` that the checkpoint, lacking ``lm_head.weight``, never fills (executed from
    the class's ``__init__``: ``sglang.eagle3_head``)."""

    if tensors is None or "lm_head.weight" in tensors:
        return []
    cls = next(
        (a for a in json_strings(config.get("architectures")) if a in sglang.head_classes()), None
    )
    if cls is None:
        return []
    tied = config.get("tie_word_embeddings") is True
    draft_vocab, vocab = config.get("draft_vocab_size"), config.get("vocab_size")
    out = []
    for release in releases:
        if sglang.eagle3_head(release.version, cls, tied, draft_vocab is not None) != "fresh":
            continue
        shares = sglang.eagle3_head(release.version, cls, tied, False) == "target"
        if draft_vocab is not None and draft_vocab == vocab and shares:
            fix = (
                f"its vocabulary is the verifier's ({vocab} ids): remove draft_vocab_size from "
                f"config.json, and {release.id} installs the verifier's head"
            )
        elif draft_vocab is not None and draft_vocab != vocab:
            fix = (
                f"a reduced vocabulary ({draft_vocab} of {vocab} ids) cannot take the "
                "verifier's head: the checkpoint needs its trained lm_head.weight"
            )
        else:
            first = sglang.first(lambda v: sglang.eagle3_head(v, cls, tied, False) == "target")
            fix = (
                f"serve it with {sglang.ENGINE}=={first} or later, which installs the verifier's "
                "head when config.json declares no draft_vocab_size, or add the trained "
                "lm_head.weight"
                if first
                else "add the trained lm_head.weight"
            )
        said = (
            f"declares draft_vocab_size {draft_vocab}"
            if draft_vocab is not None
            else "declares no draft_vocab_size, which this release does not act on"
        )
        out.append(
            EngineCannotLoadTensors.finding(
                f"{release.id} builds this draft a fresh lm_head that nothing fills: the "
                f"checkpoint has no lm_head.weight, and its {cls} takes the "
                "verifier's head only when config.json does not tie the embeddings and declares "
                f"no draft_vocab_size (this one {said}), so the draft proposes from an "
                f"initial-value head and acceptance collapses; {fix}",
                file,
                profile=profile,
                pointer="/draft_vocab_size" if draft_vocab is not None else "/architectures",
            )
        )
    return out


class _Engine(NamedTuple):
    """One engine's facts about the EAGLE-3 class it builds for a source config."""

    label: str  # "SGLang", "vLLM"
    facts: Any  # spec_format.facts.sglang or .vllm_native
    classes: tuple[str, ...]
    load_error: Callable[[Any], str]  # release -> the words its load fails with on a shape
    skips_fc: Callable[[str, str], bool]  # (version, class): fc.* skipped when no fc is built
    no_aux: Callable[[Any, str], str]  # (config, version) -> its use_aux_hidden_state false


def _sglang() -> _Engine:
    return _Engine(
        "SGLang",
        sglang,
        sglang.head_classes(),
        lambda release: "Attempted to load weight ... into parameter ...",
        lambda v, c: False,
        _sglang_no_aux,
    )


def _vllm() -> _Engine:
    return _Engine(
        "vLLM",
        vllm_native,
        (vllm_native.architecture(),),
        _vllm_shape_error,
        vllm_native.skips_fc_without_aux,
        _vllm_no_aux,
    )


def _vllm_shape_error(release) -> str:
    """How the release's load fails on a shape (the reader table's EAGLE-3 weights block)."""
    weights = release.data.get("models", {}).get("eagle3", {}).get("weights") or {}
    return weights.get("shape_error", "a shape mismatch")


def fc_width(config, tensors, releases, profile: Profile, file: str) -> list[Finding]:
    """C020 for each named SGLang or vLLM release whose EAGLE-3 class, built for the source
    config, makes ``fc`` for another number of hidden states than ``fc.weight`` takes (or
    builds none and still loads it): ``load_weights`` fails on its shape."""
    fc = tensors.get("fc.weight") if tensors is not None else None
    width = json_int(config.get("target_hidden_size"), low=1) or json_int(
        config.get("hidden_size"), low=1
    )
    if fc is None or width is None or len(fc.shape) != 2:
        return []
    names = json_strings(config.get("architectures"))
    out = []
    for release in releases:
        engine = _sglang() if release.name == sglang.ENGINE else _vllm()
        if engine.facts is vllm_native and not vllm_native.covered(release.version):
            continue
        cls = next((a for a in names if a in engine.classes), None)
        if cls is None:
            continue

        def loads(version: str, built: int | None, engine=engine, cls=cls) -> bool:
            return built is not None and (
                built * width == fc.shape[1] or (built == 0 and engine.skips_fc(version, cls))
            )

        built = engine.facts.fc_states(release.version, cls, config)
        if built is None or loads(release.version, built):
            continue
        fits = engine.facts.first(
            lambda v, engine=engine, cls=cls: loads(v, engine.facts.fc_states(v, cls, config)),
            after=release.version,
        )
        advice = (
            f"the first covered {engine.label} release that loads it for this config is "
            f"{engine.facts.ENGINE}=={fits}"
            if fits
            else _fc_advice(engine, config, cls, fc.shape[1] / width, release.version)
        )
        what = (
            "builds no fc but loads fc.weight"
            if built == 0
            else f"builds fc for {built} hidden state{'s' * (built != 1)} of {width} "
            f"({built * width} inputs), but fc.weight {list(fc.shape)} takes {fc.shape[1]}"
        )
        out.append(
            EngineCannotLoadDraft.finding(
                f"{release.id}'s {cls} {what}{engine.no_aux(config, release.version)}: "
                f"load_weights fails on its shape ({engine.load_error(release)}); {advice}",
                file,
                profile=profile,
                tensor="fc.weight",
            )
        )
    return out


def _fc_advice(engine: _Engine, config, cls: str, takes: float, version: str) -> str:
    """What makes a later release build ``fc`` for the ``takes`` states ``fc.weight`` takes:
    for a head without aux states, ``num_aux_hidden_states`` (SGLang's runner then captures
    none and never applies fc); for others, the aux layer ids the draft was trained on,
    which also tell the runner what to capture."""
    none = f"no covered {engine.label} release loads it for this config"
    if not takes.is_integer():
        return f"{none}: fc.weight's width is no whole number of hidden states of this size"
    k = int(takes)
    no_aux = _declares_no_aux(config)
    facts = engine.facts

    def reading(key: str):
        return facts.first(lambda v: key in facts.sizes_fc_from(v, cls), after=version)

    if no_aux and k == 1 and facts is sglang:
        count = reading("num_aux_hidden_states")
        runner = sglang.first(sglang.runner_reads_use_aux)
        if count and runner:
            at = max(count, runner, key=sglang.versions().index)
            return (
                f"{none}; from {sglang.ENGINE}=={at} {cls} sizes fc from num_aux_hidden_states "
                "and the runner reads use_aux_hidden_state: add num_aux_hidden_states: 1 to "
                f"config.json and serve it with {sglang.ENGINE}=={at} or later"
            )
    ids = reading("eagle_config.eagle_aux_hidden_state_layer_ids")
    if ids and not no_aux:
        return (
            f"{none}; from {facts.ENGINE}=={ids} {cls} sizes fc from "
            f"eagle_config.eagle_aux_hidden_state_layer_ids: write there the {k} verifier "
            "layers the draft was trained on"
        )
    return none


_NO_AUX = (
    " (eagle_config.use_aux_hidden_state is false: the head reads the verifier's last hidden "
    "state, not aux states; {})"
)


def _declares_no_aux(config) -> bool:
    nested = config.get("eagle_config")
    return isinstance(nested, dict) and nested.get("use_aux_hidden_state") is False


def _sglang_no_aux(config, version: str) -> str:
    """What an SGLang release makes of a head that declares it reads no aux hidden state."""
    if not _declares_no_aux(config):
        return ""
    first = sglang.first(sglang.runner_reads_use_aux)
    if sglang.runner_reads_use_aux(version):
        return _NO_AUX.format("its model runner reads the flag and captures no aux state")
    if first:
        return _NO_AUX.format(
            f"its model runner does not read the flag (SGLang reads it from {first})"
        )
    return _NO_AUX.format("its model runner does not read the flag")


def _vllm_no_aux(config, version: str) -> str:
    """What a vLLM release makes of a head that declares it reads no aux hidden state."""
    cls = vllm_native.architecture()
    if not _declares_no_aux(config) or vllm_native.reads_use_aux(version, cls):
        return ""
    first = vllm_native.first(lambda v: vllm_native.reads_use_aux(v, cls))
    later = (
        f"vLLM reads it from {first}, builds no fc and skips fc.weight"
        if first and vllm_native.skips_fc_without_aux(first, cls)
        else f"vLLM reads it from {first}"
        if first
        else "no covered vLLM release reads it"
    )
    return _NO_AUX.format(f"this release does not read the flag; {later}")
