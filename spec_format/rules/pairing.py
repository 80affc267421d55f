"""Pairing rules (V008-V013): facts of the verifier that silently cost acceptance.

The draft loads and serves with each of them; only the acceptance rate shows the damage.
Facts are read by :mod:`spec_format.facts.pairing` (both transformers spellings, the model type's
defaults, the quantization block).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from spec_format.base.report import Severity
from spec_format.facts import catalog, pairing
from spec_format.parsers.verifier import VerifierInfo
from spec_format.rules.base import Context, Hit
from spec_format.rules.verifier import (
    _VerifierRule,
    draft_model_type,
    verifier_info,
)

_HALF = ("bfloat16", "float16")


def _named(ctx: Context) -> str | None:
    block = ctx.spec_config.get("verifier")
    name = block.get("name_or_path") if isinstance(block, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def _is_named_checkpoint(ctx: Context, info: VerifierInfo) -> bool:
    """The --verifier is the checkpoint speculators_config.verifier names (so the draft was
    trained against it as it is, quantized or not): by its config's ``_name_or_path``
    (what ``save_pretrained`` records) or its folder, or a model released quantized (its
    ``model_type`` and method are the release's: gpt-oss in MXFP4) of the family the draft
    names, wherever the folder is and whatever it is called."""
    named = _named(ctx)
    recorded = info.config.get("_name_or_path")
    if pairing.same_checkpoint(named, pairing.identity(info.path)):
        return True
    if isinstance(recorded, str) and pairing.same_checkpoint(named, recorded):
        return True
    return pairing.released_quantized(info.config, named)


class DraftPositionsShorter(_VerifierRule):
    """The draft's positional range is shorter than the verifier's."""

    id = "V008"
    name = "draft-positions-shorter"
    since = "0.1.0"
    severity = Severity.WARNING
    #: retired types too: an EAGLE-1 draft (format 0.4, or a third-party layout seen as it)
    #: has a rotary table of its own
    applies_to = catalog.known_types()

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        ours, how = pairing.positional_range(ctx.layer_config, draft_model_type(ctx))
        theirs, their_how = pairing.positional_range(info.config)
        if ours is None or theirs is None or ours >= theirs:
            return
        key = how.split(" ")[0]
        head, _, rest = their_how.partition(" ")
        yield Hit(
            f"the draft's positional range is {ours} (transformer_layer_config.{how}), the "
            f"verifier's {theirs} ({info.where(head)} {rest} in {info.path}); an engine "
            f"serves the verifier's range, and past position {ours} the draft's rotary table "
            "ends (positions it was "
            "never built or trained for), so acceptance falls on long prompts; serve with "
            f"--max-model-len {ours}, or set the draft's {key} to cover {theirs} only if the "
            "draft was trained for that range",
            pointer=f"/transformer_layer_config/{key}"
            if key in ctx.layer_config
            else "/transformer_layer_config",
        )


class VerifierQuantized(_VerifierRule):
    """The verifier is a quantized export of the model the draft was trained against."""

    id = "V009"
    name = "verifier-quantized"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("vllm-project/vllm#9534", "vllm-project/vllm#25883")

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        quant = pairing.quantization_of(info.config)
        if quant is None or not quant.known or _is_named_checkpoint(ctx, info):
            return
        named = _named(ctx) or "the unquantized verifier"
        runs, _ = pairing.dtype_of(info.config)
        yield Hit(
            f"the verifier is quantized: {quant.key}.quant_method {quant.describe()} in "
            f"{info.path}, while the draft names {named}; hidden states of a quantized target "
            "differ from the ones the draft was trained on, which lowers acceptance (by how "
            f"much depends on the method); the engine runs the draft unquantized, in "
            f"{runs or 'the verifier dtype'} (the draft's own config has no quantization); "
            "use the verifier the draft was trained against, or train the draft on this "
            "checkpoint's hidden states and name it in speculators_config.verifier.name_or_path "
            "(a model released quantized, such as gpt-oss in MXFP4, is not reported: its "
            "config's model_type and method say it is the release the draft names)",
            pointer="/speculators_config/verifier/name_or_path",
        )


class VerifierQuantizationUnknown(_VerifierRule):
    """The verifier's quantization block names a method specfmt does not know."""

    id = "V010"
    name = "verifier-quantization-unknown"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        quant = pairing.quantization_of(info.config)
        if quant is None or quant.known:
            return
        known = ", ".join(sorted(pairing.table()["quantization"]))
        yield Hit(
            f"the verifier's {quant.key} has quant_method {quant.describe()} ({info.path}); "
            "specfmt cannot tell what it does to the hidden states the draft reads, nor "
            "whether the draft was trained on them; check the method with its engine, and "
            "use the draft with the checkpoint it was trained against "
            f"(known methods: {known})",
            pointer="/speculators_config/verifier/name_or_path",
        )


class VerifierDtypeDiffers(_VerifierRule):
    """The verifier is served in another 16-bit dtype than the draft was trained in."""

    id = "V011"
    name = "verifier-dtype-differs"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("InternLM/lmdeploy#4991",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        ours, key = pairing.dtype_of(ctx.config)
        pointer = f"/{key}"
        if ours is None:
            ours, key = pairing.dtype_of(ctx.layer_config)
            pointer, key = f"/transformer_layer_config/{key}", f"transformer_layer_config.{key}"
        theirs, their_key = pairing.dtype_of(info.config)
        if ours not in _HALF or theirs not in _HALF or ours == theirs:
            return
        yield Hit(
            f"the draft was saved in {ours} ({key}), the verifier in {theirs} "
            f"({info.where(their_key)} in {info.path}); vLLM runs the draft in the "
            f"verifier's dtype, so this draft runs in {theirs}: hidden states outside "
            f"{theirs}'s range or precision shift its predictions (lmdeploy#4991: a float16 "
            "target with a bfloat16 draft accepted 0.06 of 15 tokens); SGLang releases whose "
            f"draft does not inherit the target's dtype build it in its own {ours} beside the {theirs} target whose "
            "embedding, head and aux hidden states it takes, and strict kernels (flashinfer's "
            f"RMSNorm) refuse the mixed dtypes; serve both in {ours} (vLLM: --dtype {ours}) or "
            f"use the verifier saved in {ours}",
            pointer=pointer,
        )


class VerifierRotated(_VerifierRule):
    """The verifier's residual stream is rotated (QuaRot/SpinQuant-style export)."""

    id = "V012"
    name = "verifier-rotated"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("vllm-project/vllm-ascend#5974",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        why = pairing.rotation_of(info.config, pairing.identity(info.path))
        if why is None or _is_named_checkpoint(ctx, info):
            return
        yield Hit(
            f"the verifier looks like a rotated export ({why}; {info.path}); its hidden "
            "states are the original ones times a rotation, so the draft's fc sees them in "
            "another basis and acceptance collapses; use the unrotated verifier "
            f"({_named(ctx) or 'the one the draft was trained against'}), or train the draft "
            "on this checkpoint",
            pointer="/speculators_config/verifier/name_or_path",
        )


class NamedVerifierDiffers(_VerifierRule):
    """The verifier given with --verifier is not the one speculators_config.verifier names."""

    id = "V013"
    name = "named-verifier-differs"
    since = "0.1.0"
    severity = Severity.WARNING

    def check(self, ctx: Context) -> Iterator[Hit]:
        info = verifier_info(ctx)
        named = _named(ctx)
        if named is None:
            return
        pointer = "/speculators_config/verifier/name_or_path"
        local = _local_config(named, info)
        if local is not None:
            diffs = _differences(local, info)
            if diffs:
                yield Hit(
                    f"speculators_config.verifier.name_or_path is {named!r} ({local.path}), "
                    f"but --verifier {info.path} differs from it: {'; '.join(diffs)}; each "
                    "changes the hidden states the draft reads; pass the verifier the draft "
                    "names, or name the one you serve in name_or_path",
                    pointer=pointer,
                )
            return
        given = pairing.identity(info.path)
        a, b = pairing.size_tag(named), pairing.size_tag(given)
        if a and b and a != b:
            yield Hit(
                f"speculators_config.verifier.name_or_path is {named!r} ({a.upper()}), but "
                f"--verifier {info.path} is {given!r} ({b.upper()}): another size of the "
                "family has other hidden states (and usually another hidden size or layer "
                "count); use the draft with the model it names, or correct name_or_path",
                pointer=pointer,
            )


def _local_config(named: str, info: VerifierInfo) -> VerifierInfo | None:
    """The named verifier's config when ``name_or_path`` is a local folder or config.json
    (and not the file given with --verifier)."""
    from spec_format.base.errors import SpecfmtError
    from spec_format.parsers.verifier import load_verifier

    if named.startswith("hf://") or "\0" in named:
        return None
    path = Path(named)
    try:
        config = path / "config.json" if path.is_dir() else path
        if not config.is_file() or config.suffix != ".json":
            return None
        if Path(str(info.path)).resolve() == config.resolve():
            return None
        return load_verifier(config)
    except (OSError, ValueError, SpecfmtError):
        return None


def _differences(named: VerifierInfo, given: VerifierInfo) -> list[str]:
    out = []
    a, b = named.architectures, given.architectures
    if a and b and not set(a) & set(b):
        out.append(f"architectures {a} vs {b}")
    for key in ("num_hidden_layers", "hidden_size", "vocab_size"):
        x, y = getattr(named, key), getattr(given, key)
        if x is not None and y is not None and x != y:
            out.append(f"{key} {x} vs {y}")
    qa, qb = pairing.quantization_of(named.config), pairing.quantization_of(given.config)
    if (qa and qa.method) != (qb and qb.method):
        describe = lambda q: q.describe() if q else "unquantized"  # noqa: E731
        out.append(f"quantization {describe(qa)} vs {describe(qb)}")
    return out


class EngineQuantizesDraft(_VerifierRule):
    """The named engine release builds the draft with the quantized verifier's quantization."""

    id = "V014"
    name = "engine-quantizes-draft"
    since = "0.1.0"
    references = ("vllm-project/vllm#25883", "vllm-project/vllm#9534")

    def check(self, ctx: Context) -> Iterator[Hit]:
        from packaging.version import InvalidVersion, Version

        from spec_format.rules.engines import named_engines

        info = verifier_info(ctx)
        quant = pairing.quantization_of(info.config)
        if quant is None:
            return
        for entry in pairing.table()["draft_built_with_verifier_quantization"]:
            if ctx.model_type not in entry["types"]:
                continue
            for engine in named_engines(ctx):
                try:
                    version = Version(engine.version)
                except InvalidVersion:
                    continue
                affected = Version(entry["from"]) <= version < Version(entry["before"])
                if engine.name != entry["engine"] or not affected:
                    continue
                yield Hit(
                    f"{engine.id} builds this draft's layers with the verifier's quantization "
                    f"({quant.describe()} in {info.path}): {entry['where']}; the draft's "
                    "unquantized weights then fail to load or load into quantized parameters "
                    f"without their scales; serve with {entry['engine']}>={entry['before']}, "
                    "or use an unquantized verifier",
                    pointer="/speculators_config/verifier/name_or_path",
                )
