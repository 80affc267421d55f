"""Relations between values that the engines and the training library rely on and no
other rule checks: each value is valid alone, the pair is wrong.

* W014: ``tie_word_embeddings`` true while the checkpoint's ``lm_head`` cannot be
  ``embed_tokens`` (another number of rows). vLLM's EAGLE-3 and DFlash classes ignore the
  flag; SGLang's EAGLE-3 class makes ``embed_tokens`` the head when it is set.
* D005: vocabulary maps that are valid but select the first ``draft_vocab_size`` verifier
  ids (a ``d2t`` of zeros: what the buffer starts as, and what vLLM uses when ``d2t`` is
  missing), not the most frequent ones.
* V015: a ``mask_token_id`` that is the verifier's end-of-sequence or padding id (read from
  its ``generation_config.json`` too).
* V016: the dtype the engine runs the draft in (vLLM: the verifier's, resolved as
  ``--dtype auto`` resolves it) is not the dtype the draft was trained in, where V011
  (both configs state a 16-bit dtype) does not already say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from spec_format.base.jsonload import json_int
from spec_format.base.report import Severity
from spec_format.facts import catalog, pairing
from spec_format.parsers.special_ids import special_ids
from spec_format.rules.base import Context, Hit
from spec_format.rules.verifier import _VerifierRule, verifier_info
from spec_format.rules.vocab import _VocabRule, vocab_maps
from spec_format.rules.weights import WeightsRule, expectations, fmt, tensor_hit

_HALF = ("bfloat16", "float16")
#: safetensors dtype -> the config spelling of the same dtype
_STORED = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


# -- W014 -------------------------------------------------------------------------------


def _tie_flags(ctx: Context) -> list[tuple[str, str]]:
    """(key as messages name it, JSON pointer) of each explicit ``tie_word_embeddings: true``."""
    out = []
    if ctx.config.get("tie_word_embeddings") is True:
        out.append(("tie_word_embeddings", "/tie_word_embeddings"))
    if ctx.layer_config.get("tie_word_embeddings") is True:
        out.append(
            (
                "transformer_layer_config.tie_word_embeddings",
                "/transformer_layer_config/tie_word_embeddings",
            )
        )
    return out


class TiedHeadShapeDiffers(WeightsRule):
    """`tie_word_embeddings` is true, but the checkpoint's `lm_head` has another number of
    rows than `embed_tokens`."""

    id = "W014"
    name = "tied-head-shape-differs"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("sgl-project/SpecForge#140",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        flags = _tie_flags(ctx)
        head = ctx.checkpoint.tensors.get("lm_head.weight")
        if not flags or head is None or not head.shape:
            return
        embed = ctx.checkpoint.tensors.get("embed_tokens.weight")
        if embed is not None and embed.shape:
            rows, what = embed.shape[0], f"embed_tokens.weight is {fmt(embed.shape)}"
        else:
            exp = expectations(ctx)
            V = exp.symbols.get("V") if exp is not None else None
            if not isinstance(V, int):
                return
            rows, what = V, f"the embedding has {V} rows (transformer_layer_config.vocab_size)"
        if head.shape[0] == rows:
            return
        for key, pointer in flags:
            yield Hit(
                f"{key} is true, but lm_head.weight is {fmt(head.shape)} and {what}: one "
                "tensor cannot be both; vLLM ignores the flag, but an engine that honours it "
                "(SGLang's EAGLE-3 draft class, transformers' from_pretrained, SpecForge) makes "
                f"embed_tokens the head, drops the trained lm_head and scores {rows} ids that "
                f"the {head.shape[0]}-entry draft vocabulary cannot place, so every draft is "
                f"wrong there; set {key} to false (the draft has a head of its own)",
                pointer=pointer,
                tensor="lm_head.weight",
            )


# -- D005 -------------------------------------------------------------------------------


def _end_ids_beyond(ctx: Context, D: int) -> str:
    """`` (the verifier's end-of-sequence ids 128001, 128009 among them: ...)`` when the
    verifier is given and some of its end-of-sequence ids are past the first ``D``."""
    if ctx.verifier_path is None and ctx.verifier is None:
        return ""
    info = verifier_info(ctx)
    ends = sorted(
        {s.value for s in special_ids(info.config, info.path) if s.role == "end-of-sequence"}
    )
    past = [i for i in ends if i >= D]
    if not past:
        return ""
    shown = ", ".join(str(i) for i in past[:4]) + (", ..." if len(past) > 4 else "")
    return (
        f" (the verifier's end-of-sequence id{'s' if len(past) > 1 else ''} {shown} among "
        "them: it never proposes the end of a reply)"
    )


class DraftVocabFirstIds(_VocabRule):
    """The draft vocabulary is the first `draft_vocab_size` verifier ids (a `d2t` of zeros),
    not the most frequent ones."""

    id = "D005"
    name = "draft-vocab-first-ids"
    since = "0.1.0"
    severity = Severity.WARNING
    references = ("SafeAILab/EAGLE#222", "verl-project/verl-SpeCo#66")

    def check(self, ctx: Context) -> Iterator[Hit]:
        import numpy as np

        maps = vocab_maps(ctx)
        D, V = maps.D, maps.V
        if D is None or V is None or not 0 < D < V:
            return
        zeros = maps.d2t is not None and len(maps.d2t) == D and not np.any(maps.d2t)
        first = maps.t2d is not None and _first(maps.t2d, D)
        if zeros:
            name, says = "d2t", "d2t is all zeros: draft id i maps to verifier id i"
            if first:
                says += ", and t2d agrees"
        elif first:  # the selection the draft's head was trained on, whatever d2t says
            name, says = "t2d", f"t2d selects exactly verifier ids 0 to {D - 1}"
        else:
            return
        yield tensor_hit(
            ctx,
            name,
            f"the draft vocabulary is the first {D} of the verifier's {V} ids, not the {D} "
            f"most frequent ones ({says}); speculators selects by token frequency, and zeros "
            "are what a d2t buffer starts as (and what vLLM uses when d2t is missing): the "
            "maps were most likely never built, or built from empty counts; the draft cannot "
            f"propose ids {D} and above{_end_ids_beyond(ctx, D)}, and acceptance falls "
            "wherever the text uses them; build t2d and d2t again from the token frequencies "
            "of the training data (lm_head = the verifier's lm_head rows t2d selects) and "
            "retrain or re-export the draft with them",
        )


def _first(t2d, D: int) -> bool:
    """``t2d`` is true for exactly its first ``D`` entries."""
    return len(t2d) > D and bool(t2d[:D].all()) and not bool(t2d[D:].any())


# -- V015 -------------------------------------------------------------------------------


class MaskTokenIsSpecial(_VerifierRule):
    """`mask_token_id` is one of the verifier's end-of-sequence or padding ids."""

    id = "V015"
    name = "mask-token-is-special"
    since = "0.5.0"
    severity = Severity.WARNING
    applies_to = catalog.mask_token_types()
    references = ("NVIDIA-NeMo/Automodel#2461",)

    def check(self, ctx: Context) -> Iterator[Hit]:
        mask = json_int(ctx.config.get("mask_token_id"), low=0)
        if mask is None:
            return
        info = verifier_info(ctx)
        found = [s for s in special_ids(info.config, info.path) if s.value == mask]
        if not found:
            return
        roles = " and ".join(dict.fromkeys(s.role for s in found))
        where = "; ".join(f"{s.where}" for s in found)
        folder = getattr(info.path, "parent", info.path)
        vocab = json_int(ctx.layer_config.get("vocab_size"), low=1) or info.vocab_size
        unused = f"len(tokenizer) <= id < {vocab}" if vocab else "len(tokenizer) <= id < vocab_size"
        yield Hit(
            f"mask_token_id {mask} is the verifier's {roles} id ({where}, in {folder}); "
            f"every mask slot of a draft block is then embedded as that {roles} token; "
            "speculators falls back to it only when the tokenizer has no mask token and the "
            "embedding no unused row, and warns; a draft trained with a mask token of its "
            "own but configured with this id sees the wrong input in every slot, and "
            "acceptance falls after the first drafted token; set mask_token_id to the id "
            "the draft was trained with (the tokenizer's mask token, or an unused embedding "
            f"row: {unused})",
            pointer="/mask_token_id",
        )


# -- V016 -------------------------------------------------------------------------------


def _draft_dtype(ctx: Context) -> tuple[str | None, str, bool]:
    """The dtype the draft was trained in, and where it was read: the config's ``dtype`` /
    ``torch_dtype`` (top level, then the layer config), else the dtype most of its float
    weights are stored in; the last item says whether the config stated it. ``None`` for
    a float32 config (the 0.2-era storage dtype, not a training dtype) or when nothing says."""
    ours, key = pairing.dtype_of(ctx.config)
    if ours is None:
        ours, key = pairing.dtype_of(ctx.layer_config)
        key = f"transformer_layer_config.{key}"
    if ours is not None:
        return (ours if ours in _HALF else None), key, True
    ckpt = ctx.checkpoint
    if ckpt is None:
        return None, "", False
    counts = Counter(t.dtype for t in ckpt.tensors.values() if t.dtype in _STORED)
    if not counts:
        return None, "", False
    stored, n = counts.most_common(1)[0]
    dtype = _STORED[stored]
    where = f"{n} of its float weights are {stored}; the config states no dtype"
    return (dtype if dtype in _HALF else None), where, False


def run_dtype(verifier_dtype: str | None) -> tuple[str | None, str]:
    """The dtype vLLM runs a verifier (and so its draft) in under ``--dtype auto``, and why:
    its 16-bit config dtype as it is; float32 downcast to the platform's first choice
    (bfloat16 on GPUs of compute capability 8.0 and later, float16 before); ``None`` when
    the config states none (vLLM then reads the verifier's weights) or something else."""
    if verifier_dtype in _HALF:
        return verifier_dtype, ""
    if verifier_dtype == "float32":
        return "bfloat16", (
            "vLLM's --dtype auto downcasts a float32 verifier to bfloat16 (float16 on GPUs "
            "older than compute capability 8.0)"
        )
    return None, ""


class DraftRunDtypeDiffers(_VerifierRule):
    """The engine runs the draft in another 16-bit dtype than it was trained in."""

    id = "V016"
    name = "draft-run-dtype-differs"
    since = "0.1.0"
    severity = Severity.WARNING
    applies_to = catalog.current_types()
    references = ("vllm-project/vllm#55250", "sgl-project/sglang#27883", "InternLM/lmdeploy#4991")

    def check(self, ctx: Context) -> Iterator[Hit]:
        ours, where, stated = _draft_dtype(ctx)
        if ours is None:
            return
        info = verifier_info(ctx)
        theirs, their_key = pairing.dtype_of(info.config)
        if stated and theirs in _HALF:
            return  # V011 compares two stated 16-bit dtypes
        runs, why = run_dtype(theirs)
        if runs is None or runs == ours:
            return
        verifier_says = f"{info.where(their_key)} {theirs} in {info.path}"
        how = f"; {why}" if why else ""
        risk = (
            "bfloat16 activations past float16's range (65504) become inf and then NaN, "
            "and the drafts are rejected"
            if runs == "float16"
            else "float16 weights and activations lose precision in bfloat16, which lowers "
            "acceptance"
        )
        yield Hit(
            f"the draft was trained in {ours} ({where}), but vLLM runs a draft in its "
            f"verifier's dtype, here {runs} ({verifier_says}{how}): {risk}; serve both in "
            f"{ours} (vLLM: --dtype {ours}), or state the draft's dtype in its config if "
            f"{ours} is not what it was trained in",
            pointer=_dtype_pointer(ctx) if stated else None,
        )


def _dtype_pointer(ctx: Context) -> str:
    for key in ("dtype", "torch_dtype"):
        if isinstance(ctx.config.get(key), str):
            return f"/{key}"
    for key in ("dtype", "torch_dtype"):
        if isinstance(ctx.layer_config.get(key), str):
            return f"/transformer_layer_config/{key}"
    return "/torch_dtype"
