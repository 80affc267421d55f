"""Invariants of the reference forward, each with a hand-computed expectation."""

from __future__ import annotations

import pytest
import torch
from forward_helpers import build, inputs, load, tiny_config

from spec_format.facts import catalog

SLIDING_DFLASH = {
    "transformer_layer_config.layer_types": ["sliding_attention", "sliding_attention"],
    "transformer_layer_config.use_sliding_window": True,
    "transformer_layer_config.sliding_window": 8,
}


def run(model, ids, hidden, **kwargs):
    with torch.inference_mode():
        return model.draft(ids, hidden, **kwargs)


# ----------------------------------------------------------------------------- EAGLE-3


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {
            "transformer_layer_config.model_type": "qwen3",
            "transformer_layer_config.num_hidden_layers": 2,
            "fc_norm": True,
            "norm_output": True,
        },
        {
            "eagle_aux_hidden_state_layer_ids": [1, 2, 4, 5],
            "norm_before_fc": True,
            "transformer_layer_config.layer_types": ["sliding_attention"],
            "transformer_layer_config.sliding_window": 4,
        },
    ],
    ids=["llama", "qwen3-2layers-fcnorm", "sliding-A4"],
)
def test_eagle3_is_causal(tmp_path, overrides):
    """Changing the tokens and hidden states of positions > t never changes rows <= t."""
    model = load(build(tmp_path / "e", tiny_config("eagle3", overrides)))
    ids, hidden = inputs(model, 12)
    base = run(model, ids, hidden).logits
    t = 6
    ids2, hidden2 = ids.clone(), hidden.clone()
    ids2[t + 1 :] = (ids2[t + 1 :] + 17) % 256
    hidden2[t + 1 :] += torch.randn_like(hidden2[t + 1 :])
    changed = run(model, ids2, hidden2).logits
    torch.testing.assert_close(changed[: t + 1], base[: t + 1], rtol=0, atol=0)
    assert not torch.allclose(changed[t + 1 :], base[t + 1 :])


def test_eagle3_sliding_window_forgets_old_positions(tmp_path):
    """With a window of 4, row t is blind to rows <= t - 4 (and sees t - 3)."""
    config = tiny_config(
        "eagle3",
        {
            "transformer_layer_config.layer_types": ["sliding_attention"],
            "transformer_layer_config.sliding_window": 4,
        },
    )
    model = load(build(tmp_path / "e", config))
    ids, hidden = inputs(model, 10)
    base = run(model, ids, hidden).logits
    hidden2 = hidden.clone()
    hidden2[2] += 1.0
    changed = run(model, ids, hidden2).logits
    same = (changed - base).abs().amax(-1) == 0
    # rows 0-1 precede the change, rows 2-5 see position 2, rows >= 6 are outside the window
    assert same.tolist() == [True, True, False, False, False, False, True, True, True, True]


def test_norm_output_changes_only_the_chain(tmp_path):
    plain = tiny_config("eagle3", {"norm_output": False})
    normed = tiny_config("eagle3", {"norm_output": True})
    a = load(build(tmp_path / "a", plain, seed=5))
    b = load(build(tmp_path / "b", normed, seed=5))
    ids, hidden = inputs(a, 8)
    out_a, out_b = run(a, ids, hidden, steps=2), run(b, ids, hidden, steps=2)
    torch.testing.assert_close(out_a.logits, out_b.logits, rtol=0, atol=0)
    assert not torch.allclose(out_a.chain_logits, out_b.chain_logits)


def test_d2t_maps_draft_ids_into_the_verifier_vocabulary(tmp_path):
    model = load(build(tmp_path / "e", tiny_config("eagle3")))  # D=64 < V=256
    ids, hidden = inputs(model, 8)
    out = run(model, ids, hidden, steps=2)
    d2t, t2d = model.d2t, model.t2d
    assert out.logits.shape == (8, 64)
    assert out.draft_ids.max() < 64
    expected = out.draft_ids + d2t[out.draft_ids]  # target = draft + d2t[draft]
    assert out.token_ids.tolist() == expected.tolist()
    assert bool(t2d[out.token_ids].all())  # every mapped id is a kept verifier token
    assert out.proposal == [int(out.token_ids[-1]), *out.chain_token_ids.tolist()]


def test_chain_step_equals_recomputing_the_extended_sequence(tmp_path):
    """Chain step 1 (KV cache, one query) equals a full causal pass over T+1 rows whose last
    row carries the mapped draft token and the last row's output as its hidden state."""
    from spec_format.forward.blocks import causal_mask

    config = tiny_config(
        "eagle3",
        {
            "transformer_layer_config.model_type": "qwen3",
            "transformer_layer_config.num_hidden_layers": 2,
        },
    )
    model = load(build(tmp_path / "e", config))
    T = 6
    ids, hidden = inputs(model, T)
    out = run(model, ids, hidden, steps=1)
    with torch.inference_mode():
        g = model.combine_aux(hidden)
        cos, sin = model.rotary_emb(torch.arange(T + 1), torch.float32)
        masks = [causal_mask(T, None, ids.device)] * 2
        x, _ = model.run_layers(model.embed_tokens(ids), g, cos[:T], sin[:T], masks)
        embeds = model.embed_tokens(torch.cat([ids, out.token_ids[-1:]]))
        x2, _ = model.run_layers(
            embeds, torch.cat([g, x[-1:]]), cos, sin, [causal_mask(T + 1, None, ids.device)] * 2
        )
        expected = model.lm_head(model.norm(x2[-1:]))
    torch.testing.assert_close(out.chain_logits, expected, rtol=0, atol=1e-6)
    torch.testing.assert_close(out.logits, model.lm_head(model.norm(x2[:T])), rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------- DFlash


def _dflash(tmp_path, overrides=None, model_type="dflash"):
    config = tiny_config(model_type, overrides or {})
    return load(build(tmp_path / model_type, config))


def test_dflash_full_attention_is_bidirectional_in_the_block(tmp_path):
    """Perturbing block slot j's input changes every slot, earlier ones included."""
    model = _dflash(tmp_path)
    ids, hidden = inputs(model, 10)
    anchor = 6
    with torch.inference_mode():
        _, base = model.backbone(ids, hidden, anchor)
        ids2 = ids.clone()
        ids2[anchor] = (ids2[anchor] + 1) % 256  # the anchor token is block slot 0's input
        _, changed = model.backbone(ids2, hidden, anchor)
    assert ((changed - base).abs().amax(-1) > 0).all()


def test_dflash_sliding_layers_are_causal_in_the_block(tmp_path):
    """On sliding (causal) layers, slot j never depends on the inputs of slots > j."""
    model = _dflash(tmp_path, SLIDING_DFLASH)
    ids, hidden = inputs(model, 10)
    anchor, block = 6, model.block_size
    x = model.embed_tokens(torch.full((block,), 255))
    x[0] = model.embed_tokens(ids[anchor])
    ctx = model.hidden_norm(model.fc(hidden[:anchor]))
    cos, sin = model.rotary_emb(torch.arange(anchor + block), torch.float32)

    def through_layers(x):
        for i, layer in enumerate(model.layers):
            x = layer(
                x,
                ctx,
                (cos[:anchor], sin[:anchor]),
                (cos[anchor:], sin[anchor:]),
                model.block_mask(i, anchor, x.device),
            )
        return x

    with torch.inference_mode():
        base = through_layers(x)
        x2 = x.clone()
        x2[2] += 1.0
        changed = through_layers(x2)
    moved = ((changed - base).abs().amax(-1) > 0).tolist()
    assert moved == [False, False, True, True]


def test_dflash_non_causal_sliding_flag_makes_the_block_bidirectional(tmp_path):
    model = _dflash(tmp_path, {**SLIDING_DFLASH, "sliding_window_non_causal": True})
    mask = model.block_mask(0, context=5, device=torch.device("cpu"))
    assert mask[:, 5:].all()
    causal = _dflash(tmp_path / "c", SLIDING_DFLASH).block_mask(0, 5, torch.device("cpu"))
    assert causal[:, 5:].tolist() == torch.ones(4, 4, dtype=torch.bool).tril().tolist()


def test_dflash_sees_only_context_before_the_anchor(tmp_path):
    """Hidden states at positions >= anchor and tokens other than the anchor's are unused."""
    model = _dflash(tmp_path)
    ids, hidden = inputs(model, 12)
    anchor = 5
    base = run(model, ids, hidden, anchor=anchor).logits
    ids2, hidden2 = ids.clone(), hidden.clone()
    hidden2[anchor:] += 3.0
    ids2[:anchor] = 7
    ids2[anchor + 1 :] = 9
    torch.testing.assert_close(
        run(model, ids2, hidden2, anchor=anchor).logits, base, rtol=0, atol=0
    )
    hidden2[anchor - 1] += 1.0  # the last context position does matter
    assert not torch.allclose(run(model, ids2, hidden2, anchor=anchor).logits, base)


def test_dflash_sliding_window_is_measured_from_the_anchor(tmp_path):
    model = _dflash(tmp_path, {**SLIDING_DFLASH, "transformer_layer_config.sliding_window": 3})
    mask = model.block_mask(0, context=6, device=torch.device("cpu"))
    # every query sees context positions 3, 4, 5 (anchor 6 minus window 3), none before
    assert mask[:, :6].tolist() == [[False, False, False, True, True, True]] * 4


@pytest.mark.parametrize("model_type", catalog.family("block"))
def test_sample_from_anchor_changes_the_number_of_drafted_positions(tmp_path, model_type):
    B = 4
    counts = {}
    for flag in (False, True):
        model = _dflash(tmp_path / str(flag), {"sample_from_anchor": flag}, model_type)
        ids, hidden = inputs(model, 9)
        out = run(model, ids, hidden, anchor=5)
        counts[flag] = (out.logits.shape[0], out.slots, len(out.proposal))
    assert counts[False] == (B - 1, [1, 2, 3], B - 1)
    assert counts[True] == (B, [0, 1, 2, 3], B)


# ----------------------------------------------------------------------------- P-EAGLE


def test_peagle_depth0_rows_ignore_the_mask_rows(tmp_path):
    """Adding parallel mask rows never changes the ordinary (depth-0) rows."""
    model = load(build(tmp_path / "p", tiny_config("peagle")))
    ids, hidden = inputs(model, 8)
    alone = run(model, ids, hidden, steps=0)
    with_mask_rows = run(model, ids, hidden, steps=3)
    # more rows make another matrix shape, and a CPU's BLAS may block it otherwise: float32
    # rounding (2e-7 seen on one machine), far below what a mask row leaking into the
    # attention of an ordinary row changes
    torch.testing.assert_close(with_mask_rows.logits, alone.logits, rtol=1e-5, atol=1e-6)
    assert with_mask_rows.chain_logits.shape == (3, 64)
    assert len(with_mask_rows.proposal) == 4


# ----------------------------------------------------------------------------- all types


ALL_TYPES = list(catalog.forward_types())


@pytest.mark.parametrize("model_type", ALL_TYPES)
def test_same_seed_same_output_float32_bitwise(tmp_path, model_type):
    path = build(tmp_path / model_type, tiny_config(model_type))
    outs = []
    for _ in range(2):
        model = load(path)
        ids, hidden = inputs(model, 9, seed=11)
        outs.append(
            run(
                model,
                ids,
                hidden,
                steps=0,
                anchor=5 if model.spec.model_type in catalog.family("block") else None,
            )
        )
    assert torch.equal(outs[0].logits, outs[1].logits)
    assert outs[0].proposal == outs[1].proposal
    ids_b, _ = inputs(load(path), 9, seed=12)
    assert not torch.equal(ids, ids_b)


#: float32 vs bfloat16 on the same weights (stored in float32). The logits of these tiny
#: models are O(0.5); through 1-3 bfloat16 layers they moved by at most 0.0052 when this was
#: written, so 0.02 bounds the difference with a 4x margin, while a wrong op order, mask or
#: norm moves logits by the order of the logits themselves.
BF16_ATOL = 0.02


@pytest.mark.parametrize("model_type", ALL_TYPES)
def test_float32_and_bfloat16_agree(tmp_path, model_type):
    path = build(tmp_path / model_type, tiny_config(model_type), seed=2)
    anchor = 5 if model_type in catalog.family("block") else None
    outs = {}
    for dtype in (torch.float32, torch.bfloat16):
        model = load(path, dtype=dtype)
        ids, hidden = inputs(model, 9)
        outs[dtype] = run(model, ids, hidden.to(dtype), anchor=anchor).logits.float()
    diff = (outs[torch.float32] - outs[torch.bfloat16]).abs().max()
    assert diff < BF16_ATOL, f"max |fp32 - bf16| = {diff}"
    assert outs[torch.float32].abs().max() > 10 * diff  # the logits are not all ~0
