"""The tensors convert rebuilds from their partner (t2d from d2t, d2t from t2d): exact
bytes for a valid map, and a refusal naming the entry for one that is not strictly
increasing or leaves the vocabulary (nothing is written then)."""

from __future__ import annotations

import struct

import pytest

from spec_format.convert.derive import DERIVERS
from spec_format.convert.plan import ConvertRefused

CONFIG = {"transformer_layer_config": {"vocab_size": 8}, "draft_vocab_size": 3}


def _d2t(*offsets: int) -> bytes:
    return struct.pack(f"<{len(offsets)}q", *offsets)


def test_t2d_marks_exactly_the_mapped_targets():
    # draft ids 0, 1, 2 -> target ids 0, 3, 7 (the last id of the vocabulary)
    got = DERIVERS["t2d_from_d2t"].compute(CONFIG, {"d2t": _d2t(0, 2, 5)})
    assert got == bytes([1, 0, 0, 1, 0, 0, 0, 1])
    back = DERIVERS["d2t_from_t2d"].compute(CONFIG, {"t2d": got})
    assert back == _d2t(0, 2, 5)


@pytest.mark.parametrize(
    ("offsets", "said"),
    [
        (
            (0, 0, -1),
            "d2t[2] = -1 maps draft id 2 to target id 1, which is not after the previous one",
        ),
        (
            (0, 1, 0),
            "d2t[2] = 0 maps draft id 2 to target id 2, which is not after the previous one",
        ),
        ((0, 0, 6), "d2t[2] = 6 maps draft id 2 to target id 8, which is outside [0, 8)"),
        ((-1, 0, 0), "d2t[0] = -1 maps draft id 0 to target id -1, which is outside [0, 8)"),
    ],
)
def test_a_map_that_is_not_strictly_increasing_or_leaves_the_vocabulary_is_refused(offsets, said):
    with pytest.raises(ConvertRefused) as refused:
        DERIVERS["t2d_from_d2t"].compute(CONFIG, {"d2t": _d2t(*offsets)})
    assert str(refused.value).startswith(said)
    assert str(refused.value).endswith("t2d cannot be rebuilt from it (nothing was written)")
