"""Tensors a conversion computes instead of copying: one vocabulary map rebuilt from the
other (``TensorMove(op="derive")``). Each deriver states the output's dtype and shape from
the config and the source headers (the plan is checked before anything is read), then
computes the bytes from the source values, refusing values that do not form a valid map.

The maps (the eagle3 tensor contract): ``d2t`` int64 [D], ``target = i + d2t[i]``, strictly
increasing and inside the verifier vocabulary; ``t2d`` bool [V], true for the D kept ids.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from spec_format.convert.plan import ConvertRefused
from spec_format.parsers.checkpoint import TensorRecord


class Deriver(NamedTuple):
    #: (config, source records) -> (dtype, shape) of the output
    header: Callable[[Mapping[str, Any], Mapping[str, TensorRecord]], tuple[str, tuple[int, ...]]]
    #: (config, {source name: bytes}) -> the output's bytes
    compute: Callable[[Mapping[str, Any], Mapping[str, bytes]], bytes]


def _vocab(config: Mapping[str, Any]) -> int:
    return int(config["transformer_layer_config"]["vocab_size"])


def _t2d_header(config, records):
    return "BOOL", (_vocab(config),)


def _t2d_from_d2t(config, data) -> bytes:
    raw = data["d2t"]
    V = _vocab(config)
    offsets = struct.unpack(f"<{len(raw) // 8}q", raw)
    out = bytearray(V)
    last = -1
    for i, offset in enumerate(offsets):
        target = i + offset
        if not last < target < V:
            raise ConvertRefused(
                f"d2t[{i}] = {offset} maps draft id {i} to target id {target}, which is "
                f"{f'outside [0, {V})' if not 0 <= target < V else 'not after the previous one'}; "
                "t2d cannot be rebuilt from it (nothing was written)"
            )
        out[target] = 1
        last = target
    return bytes(out)


def _d2t_header(config, records):
    return "I64", (int(config["draft_vocab_size"]),)


def _d2t_from_t2d(config, data) -> bytes:
    kept = [i for i, b in enumerate(data["t2d"]) if b]
    D = int(config["draft_vocab_size"])
    if len(kept) != D:
        raise ConvertRefused(
            f"t2d keeps {len(kept)} target ids but draft_vocab_size is {D}; d2t cannot be "
            "rebuilt from it (nothing was written)"
        )
    return struct.pack(f"<{D}q", *(t - i for i, t in enumerate(kept)))


DERIVERS: dict[str, Deriver] = {
    "t2d_from_d2t": Deriver(_t2d_header, _t2d_from_d2t),
    "d2t_from_t2d": Deriver(_d2t_header, _d2t_from_t2d),
}
#: the most source bytes a deriver reads (the maps of a 1M-token vocabulary)
MAX_INPUT_BYTES = 64 << 20
