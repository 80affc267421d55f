"""Native MTP heads (a verifier checkpoint with ``mtp.*`` tensors) -> speculators ``mtp``.

The reference is speculators' ``MTPConverter`` (0.6.0-0.9.0, unchanged across them): only
the ``mtp.*`` tensors are taken, from whichever shard holds them; their names are remapped
(exact names first, then prefixes) and per-expert MoE weights are fused into the packed
tensors transformers' MoE blocks hold (``experts.gate_up_proj`` = per expert, gate rows then
up rows; ``experts.down_proj``), by joining the source bytes, never re-casting them. The
source's (text) config becomes ``transformer_layer_config`` unchanged; ``speculative_tokens``
is the converter's default number of MTP steps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from spec_format.base.jsonload import json_int
from spec_format.convert.numbers import refuse_non_integers
from spec_format.convert.plan import ConvertRefused, Plan, Request, Source, TensorMove
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

NAME = "native-mtp"
DESCRIPTION = "native MTP layers of a verifier checkpoint (mtp.*, e.g. Qwen3-Next, Qwen3.5) -> mtp"
MODEL_TYPE = "mtp"

SOURCE_PREFIX = "mtp."
#: the converter's ``MTP_EXACT_REMAP`` and ``MTP_PREFIX_REMAP`` (checked in that order)
EXACT = {
    "mtp.fc.weight": "mtp_layers.0.input_proj.weight",
    "mtp.norm.weight": "mtp_layers.0.final_layernorm.weight",
}
PREFIXES = (
    ("mtp.pre_fc_norm_hidden.", "mtp_layers.0.hidden_layernorm."),
    ("mtp.pre_fc_norm_embedding.", "mtp_layers.0.token_layernorm."),
    ("mtp.layers.0.", "mtp_layers.0."),
)
#: speculators' default ``num_speculative_steps`` (MTPConverter.convert)
SPECULATIVE_STEPS = 3
_LAYER = re.compile(r"^mtp\.layers\.(\d+)\.")
_EXPERT = re.compile(r"^(.+\.experts)\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight$")


def detect(config: Mapping[str, Any], tensor_names: frozenset[str]) -> bool:
    if "speculators_model_type" in config or third_party_kind(dict(config)) is not None:
        return False
    return any(n.startswith(SOURCE_PREFIX) for n in tensor_names)


def remap(tensor: str) -> str | None:
    """The speculators name of a source ``mtp.*`` tensor (None: no rule maps it)."""
    if tensor in EXACT:
        return EXACT[tensor]
    for old, new in PREFIXES:
        if tensor.startswith(old):
            return new + tensor[len(old) :]
    return None


def plan(source: Source, request: Request) -> Plan:
    line = target_line(request, MODEL_TYPE)
    if request.aux_layer_ids is not None:
        raise ConvertRefused(
            "--aux-layer-ids: an MTP head taps no aux layers (it reads the verifier's last "
            "hidden state); leave the flag out"
        )
    cfg = source.config
    text = cfg.get("text_config")
    layer, where = (text, "text_config.") if isinstance(text, Mapping) else (cfg, "")
    rec = catalog.record(MODEL_TYPE)
    family = layer.get("model_type")
    if family not in rec.layer_families:
        raise ConvertRefused(
            f"{where}model_type is {family!r}: speculators builds MTP layers for "
            f"{', '.join(rec.layer_families)} only"
        )
    hidden_size_agrees(json_int(layer.get("hidden_size")), request, f"{where}hidden_size")
    extra = sorted({m.group(1) for n in source.tensors if (m := _LAYER.match(n))} - {"0"})
    if extra:
        raise ConvertRefused(
            f"mtp.layers.{extra[0]}.*: the source has {len(extra) + 1} MTP layers; the format "
            "carries one (num_nextn_predict_layers must be 1 for every speculators release)"
        )

    d = Draft(NAME, MODEL_TYPE, line)
    d.header()
    for key, value in layer.items():
        d.set(("transformer_layer_config", key), value, "source", where + key)
    d.set(("num_nextn_predict_layers",), 1, "derived", "the source's one MTP layer (mtp.layers.0)")
    d.greedy(
        SPECULATIVE_STEPS,
        "default",
        f"speculators' MTPConverter default num_speculative_steps ({SPECULATIVE_STEPS})",
    )
    verifier = request.verifier
    if verifier is not None:
        d.verifier(request, verifier.architectures)
    else:
        archs = cfg.get("architectures")
        archs = archs if isinstance(archs, list) else []
        d.verifier(request, archs, "source", "architectures (the source is the verifier)")
        d.notes.append(
            "no --verifier: verifier.name_or_path is null; pass --verifier (the checkpoint "
            "itself, e.g. hf://ORG/NAME) so readers can load its embeddings and head"
        )

    refuse_non_integers(d.config, line, "config.json")
    expected = expected_tensors(d.config)
    _map_tensors(d, source, request, expected, family)
    copied = [source.tensors[s] for m in d.moves if m.target for s in m.sources]
    d.dtype(copied)
    d.defaults()
    return d.plan()


KIND = Kind(NAME, DESCRIPTION, detect, plan)


def _map_tensors(d: Draft, source: Source, request: Request, expected, family: str) -> None:
    experts: dict[str, dict[int, dict[str, str]]] = {}
    for tensor in sorted(source.tensors):
        if not tensor.startswith(SOURCE_PREFIX):
            d.drop(tensor, "the verifier's own weight, not its MTP head")
            continue
        target = remap(tensor)
        if target is None:
            d.unknown(tensor, request, "an mtp.* tensor no rule of speculators' MTPConverter maps")
            continue
        m = _EXPERT.match(target)
        if m:
            experts.setdefault(m.group(1), {}).setdefault(int(m.group(2)), {})[m.group(3)] = tensor
            continue
        exp = expected.match(target)
        if exp is None:
            d.unknown(tensor, request, f"{target} is not a tensor of a {family} MTP layer")
            continue
        check_shape(tensor, source.tensors[tensor], exp)
        d.copy(tensor, target, "renamed as speculators' MTPConverter does")
    for prefix, by_index in experts.items():
        _fuse(d, source, prefix, by_index)
    for exp in expected.required:
        if not any(m.target == exp.name for m in d.moves):
            raise ConvertRefused(
                f"{exp.name}: missing (no source tensor maps to it); the MTP layer needs it "
                f"{exp.describe_shape()}"
            )


def _fuse(d: Draft, source: Source, prefix: str, by_index: dict[int, dict[str, str]]) -> None:
    """Per-expert gate/up/down weights -> ``{prefix}.gate_up_proj`` [E, 2I, H] and
    ``{prefix}.down_proj`` [E, H, I], experts in index order."""
    count = max(by_index) + 1
    if sorted(by_index) != list(range(count)):
        raise ConvertRefused(
            f"{prefix}: expert indices {sorted(by_index)} are not 0..{count - 1}; the fused "
            "tensors need every expert"
        )
    first = by_index[0]
    for i in range(count):
        for proj in ("gate_proj", "up_proj", "down_proj"):
            if proj not in by_index[i]:
                raise ConvertRefused(f"{prefix}.{i}.{proj}.weight: missing; every expert needs it")
            ref = source.tensors[first[proj]]
            got = source.tensors[by_index[i][proj]]
            if (got.shape, got.dtype) != (ref.shape, ref.dtype):
                raise ConvertRefused(
                    f"{by_index[i][proj]}: {got.dtype} {list(got.shape)}, but the mapping expects "
                    f"{ref.dtype} {list(ref.shape)} like expert 0 (experts are fused into one tensor)"
                )
    gate, up = source.tensors[first["gate_proj"]].shape, source.tensors[first["up_proj"]].shape
    if len(gate) != 2 or gate[1:] != up[1:]:
        raise ConvertRefused(
            f"{first['up_proj']}: shape {list(up)}, but the mapping expects [I, {gate[-1]}] "
            f"like {first['gate_proj']} {list(gate)}"
        )
    why = f"{count} experts fused as speculators' MTPConverter does (bytes joined, not re-cast)"
    pairs = tuple(by_index[i][p] for i in range(count) for p in ("gate_proj", "up_proj"))
    d.moves.append(
        TensorMove(
            pairs, f"{prefix}.gate_up_proj", "cat", why, shape=(count, gate[0] + up[0], gate[1])
        )
    )
    downs = tuple(by_index[i]["down_proj"] for i in range(count))
    d.moves.append(TensorMove(downs, f"{prefix}.down_proj", "stack", why))
