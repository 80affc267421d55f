"""The reference forward against the released speculators library (its training model).

Skipped unless ``speculators`` (0.9, with transformers) imports; see
reference/speculators-install.md. Both sides load the same tiny checkpoint in float32 with
eager attention; logits must agree to float32 rounding.
"""

from __future__ import annotations

import contextlib
import copy
import os

import pytest
import torch
from forward_helpers import build, inputs, load, tiny_config
from safetensors.torch import load_file

pytestmark = pytest.mark.interop
os.environ.setdefault("HF_HUB_OFFLINE", "1")
speculators = pytest.importorskip("speculators")

ATOL = 1e-5


def library_model(model_class, config, path):
    from speculators import SpeculatorModelConfig

    cfg = SpeculatorModelConfig.from_dict(copy.deepcopy(config))
    cfg.transformer_layer_config._attn_implementation = "eager"
    model = model_class(cfg)
    _, unexpected = model.load_state_dict(load_file(str(path / "model.safetensors")),
                                          strict=False)
    assert not unexpected
    return model.eval()


def lm_head_outputs(model):
    outputs = []
    model.lm_head.register_forward_hook(lambda mod, args, out: outputs.append(out.detach()))
    return outputs


@pytest.mark.parametrize("overrides", [
    {},
    {"norm_before_residual": False, "transformer_layer_config.model_type": "qwen3",
     "transformer_layer_config.num_hidden_layers": 2, "fc_norm": True, "norm_output": True},
    {"norm_before_fc": True, "transformer_layer_config.layer_types": ["sliding_attention"],
     "transformer_layer_config.sliding_window": 4},
], ids=["llama", "qwen3-fcnorm-normout", "sliding"])
def test_eagle3_step0_and_chain(tmp_path, overrides):
    from speculators.models.eagle3.core import Eagle3DraftModel

    config = tiny_config("eagle3", overrides)
    path = build(tmp_path / "e", config)
    ours = load(path)
    ref = library_model(Eagle3DraftModel, config, path)
    T, K = 10, 3
    ids, hidden = inputs(ours, T)
    seen = lm_head_outputs(ref)
    with torch.no_grad():
        ref(hidden[None], ids[None], torch.zeros(1, T, dtype=torch.long), ttt_steps=K + 1)
    # training feeds padding (token 0) to the last row in steps >= 1; do the same here
    ours.to_target = lambda draft_ids: torch.zeros_like(draft_ids)
    with torch.no_grad():
        out = ours.draft(ids, hidden, steps=K)
    torch.testing.assert_close(out.logits, seen[0][0], rtol=0, atol=ATOL)
    for k in range(1, K + 1):
        torch.testing.assert_close(out.chain_logits[k - 1], seen[k][0, -1], rtol=0, atol=ATOL)


@pytest.mark.parametrize("model_type,overrides", [
    ("dflash", {}),
    ("dflash", {"transformer_layer_config.layer_types": ["sliding_attention", "full_attention"],
                "transformer_layer_config.use_sliding_window": True,
                "transformer_layer_config.sliding_window": 3}),
    ("dflash", {"sample_from_anchor": True, "sliding_window_non_causal": True,
                "transformer_layer_config.layer_types": ["sliding_attention", "sliding_attention"],
                "transformer_layer_config.use_sliding_window": True,
                "transformer_layer_config.sliding_window": 3}),
    ("dspark", {}),
    ("dflash2", {}),
    ("xpress", {}),
])
def test_dflash_family_backbone(tmp_path, model_type, overrides):
    from speculators.models.dflash.core import DFlashDraftModel
    from speculators.models.dflash2.core import DFlash2DraftModel
    from speculators.models.dspark.core import DSparkDraftModel
    from speculators.models.xpress.core import XPressDraftModel

    classes = {"dflash": DFlashDraftModel, "dspark": DSparkDraftModel,
               "dflash2": DFlash2DraftModel, "xpress": XPressDraftModel}
    config = tiny_config(model_type, overrides)
    path = build(tmp_path / model_type, config)
    ours = load(path)
    ref = library_model(classes[model_type], config, path)
    T, anchor = 14, 6
    ids, hidden = inputs(ours, T)
    loss_mask = torch.zeros(1, T)
    loss_mask[0, anchor] = 1  # the only valid anchor: training picks exactly this block
    with torch.no_grad():
        ref_hidden, ref_logits, *_ = ref._backbone_forward(
            hidden[None], ids[None], loss_mask, torch.randn(1, T, 64),
            torch.zeros(1, T, dtype=torch.long), max_anchors=1)
        hid, logits = ours.backbone(ids, hidden, anchor)
    torch.testing.assert_close(logits, ref_logits[0], rtol=0, atol=ATOL)
    torch.testing.assert_close(hid, ref_hidden[0], rtol=0, atol=ATOL)

    prev = torch.randint(0, 256, (ours.block_size,), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        if model_type == "dspark":
            bias = ref.markov_head.block_bias(prev_token_ids=prev[None], hidden_states=hid[None])
            mine = torch.stack([ours.markov_head.step(prev[s], hid[s], None)[0]
                                for s in range(ours.block_size)])
            torch.testing.assert_close(mine, bias[0], rtol=0, atol=ATOL)
        if model_type == "xpress":
            bias = ref.refiner_head.block_bias(prev[None], hidden_states=hid[None])[0]
            mine = ours.refiner_head.bias(prev, ours.refiner_head.hidden_cache(hid))
            torch.testing.assert_close(mine, bias, rtol=0, atol=ATOL)
        if model_type == "dflash2":
            candidates = logits.topk(ours.candidate_selector.top_k, -1).indices
            scores = ref.candidate_selector.score_candidates(logits[None], hid[None], prev[None],
                                                             candidates[None])[0]
            expected = candidates.gather(-1, scores.argmax(-1, keepdim=True)).squeeze(-1)
            mine = [int(ours.candidate_selector.select(logits[s], hid[s], int(prev[s])))
                    for s in range(ours.block_size)]
            assert mine == expected.tolist()


def test_peagle_parallel_rows(tmp_path, monkeypatch):
    import speculators.models.peagle.core as peagle_core
    from speculators.models.peagle.core import PEagleDraftModel

    config = tiny_config("peagle")
    path = build(tmp_path / "p", config)
    ours = load(path)
    ref = library_model(PEagleDraftModel, config, path)
    T, K = 9, 3
    ids, hidden = inputs(ours, T + K)
    anchors = torch.cat([torch.arange(T), torch.full((K,), T - 1)])
    depths = torch.cat([torch.zeros(T, dtype=torch.long), torch.arange(1, K + 1)])
    monkeypatch.setattr(peagle_core, "generate_cod_sample_indices",
                        lambda **kwargs: (anchors, depths))
    seen = lm_head_outputs(ref)
    with torch.no_grad(), contextlib.suppress(Exception):  # only the logits matter here;
        ref(hidden[None], ids[None], torch.zeros(1, T + K, dtype=torch.long),  # its loss may
            verifier_last_hidden_states=torch.randn(1, T + K, 64), num_depths=K + 1)  # fail
    with torch.no_grad():
        out = ours.draft(ids[:T], hidden[:T], steps=K)
    torch.testing.assert_close(out.logits, seen[0][0, :T], rtol=0, atol=ATOL)
    torch.testing.assert_close(out.chain_logits, seen[0][0, T:], rtol=0, atol=ATOL)


def test_mtp_step0(tmp_path):
    from speculators.models.mtp.core import MTPDraftModel

    config = tiny_config("mtp")
    path = build(tmp_path / "m", config)
    ours = load(path)  # embed_tokens / lm_head: seeded random (no verifier)
    config.pop("draft_vocab_size", None)  # a read-only property of the library's MTP config
    ref = library_model(MTPDraftModel, config, path)
    with torch.no_grad():
        ref.embed_tokens.weight.copy_(ours.embed_tokens.weight)
        ref.lm_head.weight.copy_(ours.lm_head.weight)
        T = 10
        ids, hidden = inputs(ours, T)
        ref_logits, *_ = ref(ids[None], hidden[None])
        rows = ref_logits[0].shape[1]
        out = ours.draft(ids[1:1 + rows], hidden[:rows])  # ours: row t pairs h[t] with x[t+1]
    torch.testing.assert_close(out.logits, ref_logits[0][0], rtol=0, atol=ATOL)
