"""z-lab DFlash checkpoints (``dflash_config``, ``DFlashDraftModel``) -> speculators ``dflash``.

The reference is speculators' own ``DFlashConverter`` (0.7.0-0.9.0): the source config
minus the z-lab keys becomes ``transformer_layer_config``, ``draft_vocab_size`` is its
``vocab_size``, ``block_size`` is read at the top level or inside ``dflash_config``,
``speculative_tokens = block_size - 1`` (z-lab drafts the block after the anchor) and the
z-lab ``target_layer_ids`` (the layers whose *output* is tapped) become aux ids by the
catalog's offset for the type. The draft body keeps its tensor names; embeddings, head and
vocabulary maps come from the verifier. Where specfmt departs from a release it says so in
the plan's notes (see docs/guide/convert.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spec_format.base.jsonload import json_int
from spec_format.convert.numbers import refuse_non_integers
from spec_format.convert.plan import ConvertRefused, Plan, Request, Source
from spec_format.convert.sources._shared import (
    Draft,
    Kind,
    check_shape,
    hidden_size_agrees,
    target_line,
)
from spec_format.facts import catalog
from spec_format.facts.contract import expected_tensors
from spec_format.runner.validation import third_party_kind

NAME = "zlab-dflash"
DESCRIPTION = "z-lab DFlash drafts (dflash_config, DFlashDraftModel) -> dflash"
MODEL_TYPE = "dflash"

#: source config keys that describe the z-lab wrapper, not the draft's decoder layers
#: (the converter's ``_NON_TRANSFORMER_KEYS``)
ZLAB_KEYS = ("architectures", "auto_map", "block_size", "dflash_config", "num_target_layers")
_FULL_VOCAB = (
    "the draft keeps the verifier's full vocabulary (draft_vocab_size = vocab_size), as "
    "speculators' converter does"
)
#: tensor roles the draft takes from the verifier: a source copy is not carried
_VERIFIER_ROLES = {
    "embed": "DFlash drafts share the verifier's embeddings; readers load the verifier's",
    "lm_head": "a full-vocabulary DFlash draft uses the verifier's head; readers load it",
    "t2d": _FULL_VOCAB,
    "d2t": _FULL_VOCAB,
}


def detect(config: Mapping[str, Any], tensor_names: frozenset[str]) -> bool:
    if "speculators_model_type" in config:
        return False
    return third_party_kind(dict(config)) == "z-lab-dflash"


def plan(source: Source, request: Request) -> Plan:
    line = target_line(request, MODEL_TYPE)
    cfg = source.config
    zcfg = cfg.get("dflash_config", {})
    if not isinstance(zcfg, Mapping):
        raise ConvertRefused("dflash_config: not an object; the source config is damaged")
    d = Draft(NAME, MODEL_TYPE, line)
    d.header()

    layer = {k: v for k, v in cfg.items() if k not in ZLAB_KEYS}
    hidden_size_agrees(json_int(layer.get("hidden_size")), request, "hidden_size")
    for key, value in layer.items():
        d.set(("transformer_layer_config", key), value, "source", key)

    vocab = json_int(layer.get("vocab_size"))
    if vocab is None:
        raise ConvertRefused(
            "vocab_size: missing from the source config; it is the draft vocabulary"
        )
    d.set(("draft_vocab_size",), vocab, "source", "vocab_size (the full vocabulary)")

    block, block_from = _block_size(cfg, zcfg)
    d.set(("block_size",), block, "source", block_from)
    _aux_ids(d, cfg, zcfg, request)
    mask, where = _mask_token(cfg, zcfg)
    d.set(("mask_token_id",), mask, "source", where)
    d.set(
        ("sample_from_anchor",),
        False,
        "derived",
        "z-lab drafts the block after the anchor token (as every speculators converter writes)",
    )
    d.greedy(block - 1, "derived", f"{block_from} - 1 (the anchor is not drafted)")
    verifier = request.verifier
    d.verifier(request, verifier.architectures if verifier else None)
    if verifier is None:
        d.notes.append(
            "no --verifier: verifier.name_or_path is null, its architectures empty, and the "
            "hidden size and layer ids are not checked against it"
        )

    refuse_non_integers(d.config, line, "config.json")
    expected = expected_tensors(d.config)
    _map_tensors(d, source, request, expected)
    d.dtype([source.tensors[m.sources[0]] for m in d.moves if m.op == "copy"])
    d.defaults()
    return d.plan()


KIND = Kind(NAME, DESCRIPTION, detect, plan)


def _block_size(cfg: Mapping[str, Any], zcfg: Mapping[str, Any]) -> tuple[int, str]:
    top, inner = cfg.get("block_size"), zcfg.get("block_size")
    if top is not None and inner is not None and top != inner:
        raise ConvertRefused(
            f"block_size is {top} but dflash_config.block_size is {inner}; correct the one "
            "the draft was not trained with"
        )
    value, where = (top, "block_size") if top is not None else (inner, "dflash_config.block_size")
    if json_int(value) is None or value < 2:
        raise ConvertRefused(
            "block_size: the source config has no block size of at least 2 (looked at "
            "block_size and dflash_config.block_size); add the one the draft was trained with"
        )
    return value, where


def _mask_token(cfg: Mapping[str, Any], zcfg: Mapping[str, Any]) -> tuple[int, str]:
    # older z-lab configs keep it at the top level (InternLM/lmdeploy#4991)
    for value, where in (
        (zcfg.get("mask_token_id"), "dflash_config.mask_token_id"),
        (cfg.get("mask_token_id"), "mask_token_id"),
    ):
        if json_int(value) is not None:
            return value, where
    raise ConvertRefused(
        "dflash_config.mask_token_id: missing (also at the top level); engines fill the "
        "draft block with it, so add the id the draft was trained with to the source config"
    )


def _aux_ids(d: Draft, cfg: Mapping[str, Any], zcfg: Mapping[str, Any], request: Request) -> None:
    rec = catalog.record(MODEL_TYPE)
    key = rec.aux_key
    verifier = request.verifier
    layers = verifier.num_hidden_layers if verifier else None
    trained_for = json_int(cfg.get("num_target_layers"))
    if layers is not None and trained_for is not None and trained_for != layers:
        raise ConvertRefused(
            f"num_target_layers is {trained_for}, but the verifier has {layers} layers "
            f"({verifier.where('num_hidden_layers')}): the draft taps another model's layers; "
            "pass --verifier with its own verifier"
        )
    if request.aux_layer_ids is not None:
        d.set((key,), list(request.aux_layer_ids), "flag", "--aux-layer-ids")
        return
    ids = zcfg.get("target_layer_ids")
    if not isinstance(ids, list) or not ids or any(json_int(i) is None for i in ids):
        raise ConvertRefused(
            "dflash_config.target_layer_ids: missing or not a list of layer numbers; the "
            "verifier layers the draft taps cannot be guessed: pass --aux-layer-ids "
            f"(speculators numbering: a z-lab id i is {key} i + {rec.aux_offset})"
        )
    aux = [i + rec.aux_offset for i in ids]
    d.set(
        (key,),
        aux,
        "source",
        f"dflash_config.target_layer_ids + {rec.aux_offset} (z-lab numbers the tapped layer's "
        "output from 0, speculators counts the embeddings as 0)",
    )
    if layers is not None and layers in aux:
        d.notes.append(
            f"{key} keeps {layers}, the verifier's final layer output (z-lab id {layers - 1}): "
            "the converter of speculators >= 0.8 drops it (and then cannot load fc.weight, whose "
            "columns for that layer remain); specfmt keeps every column's input (V004 warns)"
        )


def _map_tensors(d: Draft, source: Source, request: Request, expected) -> None:
    fc_why = f" (A = {len(d.config[catalog.aux_key(MODEL_TYPE)])} aux layer ids)"
    for tensor in sorted(source.tensors):
        record = source.tensors[tensor]
        if ".qkv_proj." in tensor:
            raise ConvertRefused(
                f"{tensor}: a fused q/k/v projection (Laguna-style DFlash); the speculators "
                "format stores q_proj, k_proj and v_proj, and specfmt copies bytes without "
                "splitting tensors: convert it with speculators >= 0.9 (`DFlashConverter`)"
            )
        exp = expected.match(tensor)
        if exp is not None and exp.role in _VERIFIER_ROLES:
            d.drop(tensor, _VERIFIER_ROLES[exp.role])
        elif exp is not None:
            check_shape(tensor, record, exp, fc_why if exp.role == "fc" else "")
            d.copy(tensor, tensor, "same name and layout in the speculators format")
        elif tensor in expected.absent:
            cond = expected.absent[tensor].condition
            d.unknown(tensor, request, f"the converted config rules it out ({cond} is false)")
        else:
            d.unknown(tensor, request, "not a tensor of the DFlash draft the format describes")
    for exp in expected.required:
        if exp.name not in source.tensors and exp.role not in _VERIFIER_ROLES:
            raise ConvertRefused(
                f"{exp.name}: missing from the source; the draft needs it "
                f"{exp.describe_shape()} (transformer_layer_config.num_hidden_layers is "
                f"{d.config['transformer_layer_config'].get('num_hidden_layers')})"
            )
