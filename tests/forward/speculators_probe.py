"""Runs inside the speculators 0.9 interop environment (never imported by specfmt or by the
normal test run): compares the reference forward with the library's training model.

Both sides load the same tiny checkpoint in float32, the library with eager attention.
Prints one JSON list: ``{"case": ..., "max_abs_diff": float}`` or ``{"case", "error"}``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))
# specfmt's own dependencies (jsonschema, ...) that the release environment lacks: searched
# last, so every package the environment has (torch, speculators, transformers) wins.
sys.path.extend(p for p in os.environ.get("SPECFMT_PROBE_FALLBACK_PATH", "").split(os.pathsep) if p)

import torch  # noqa: E402
from forward_helpers import build, inputs, load, tiny_config  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from speculators import SpeculatorModelConfig  # noqa: E402

WORK = Path(tempfile.mkdtemp(prefix="specfmt-forward-probe-"))


def library_model(class_path: str, config: dict, path: Path):
    module, name = class_path.rsplit(".", 1)
    model_class = getattr(__import__(module, fromlist=[name]), name)
    cfg = SpeculatorModelConfig.from_dict(copy.deepcopy(config))
    cfg.transformer_layer_config._attn_implementation = "eager"
    model = model_class(cfg)
    _, unexpected = model.load_state_dict(load_file(str(path / "model.safetensors")), strict=False)
    if unexpected:
        raise AssertionError(f"the library does not know {unexpected}")
    return model.eval()


def lm_head_outputs(model) -> list[torch.Tensor]:
    outputs: list[torch.Tensor] = []
    model.lm_head.register_forward_hook(lambda mod, args, out: outputs.append(out.detach()))
    return outputs


def diff(a: torch.Tensor, b: torch.Tensor) -> float:
    if a.shape != b.shape:
        raise AssertionError(f"shapes {list(a.shape)} vs {list(b.shape)}")
    return float((a - b).abs().max())


# ----------------------------------------------------------------------------- cases


def eagle3(overrides: dict) -> float:
    config = tiny_config("eagle3", overrides)
    path = build(WORK / f"eagle3-{len(list(WORK.iterdir()))}", config)
    ours = load(path)
    ref = library_model("speculators.models.eagle3.core.Eagle3DraftModel", config, path)
    T, K = 10, 3
    ids, hidden = inputs(ours, T)
    seen = lm_head_outputs(ref)
    with torch.no_grad():
        ref(hidden[None], ids[None], torch.zeros(1, T, dtype=torch.long), ttt_steps=K + 1)
    # training feeds padding (token 0) to the last row in steps >= 1; so does this run
    ours.to_target = lambda draft_ids: torch.zeros_like(draft_ids)
    with torch.no_grad():
        out = ours.draft(ids, hidden, steps=K)
    worst = diff(out.logits, seen[0][0])
    for k in range(1, K + 1):
        worst = max(worst, diff(out.chain_logits[k - 1], seen[k][0, -1]))
    return worst


DFLASH_CLASSES = {
    "dflash": "speculators.models.dflash.core.DFlashDraftModel",
    "dspark": "speculators.models.dspark.core.DSparkDraftModel",
    "dflash2": "speculators.models.dflash2.core.DFlash2DraftModel",
    "xpress": "speculators.models.xpress.core.XPressDraftModel",
}


def dflash_family(model_type: str, overrides: dict) -> float:
    config = tiny_config(model_type, overrides)
    path = build(WORK / f"{model_type}-{len(list(WORK.iterdir()))}", config)
    ours = load(path)
    ref = library_model(DFLASH_CLASSES[model_type], config, path)
    T, anchor = 14, 6
    ids, hidden = inputs(ours, T)
    loss_mask = torch.zeros(1, T)
    loss_mask[0, anchor] = 1  # the only valid anchor: training picks exactly this block
    with torch.no_grad():
        ref_hidden, ref_logits, *_ = ref._backbone_forward(
            hidden[None],
            ids[None],
            loss_mask,
            torch.randn(1, T, ours.spec.H),
            torch.zeros(1, T, dtype=torch.long),
            max_anchors=1,
        )
        hid, logits = ours.backbone(ids, hidden, anchor)
    worst = max(diff(logits, ref_logits[0]), diff(hid, ref_hidden[0]))

    block = ours.block_size
    prev = torch.randint(0, ours.spec.V, (block,), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        if model_type == "dspark":
            bias = ref.markov_head.block_bias(prev_token_ids=prev[None], hidden_states=hid[None])
            state = hid.new_zeros(ours.markov_head.rank)
            mine = []
            for s in range(block):
                step_bias, _, state = ours.markov_head.step(prev[s], hid[s], state)
                mine.append(step_bias)
            worst = max(worst, diff(torch.stack(mine), bias[0]))
        if model_type == "xpress":
            bias = ref.refiner_head.block_bias(prev[None], hidden_states=hid[None])[0]
            worst = max(
                worst, diff(ours.refiner_head.bias(prev, ours.refiner_head.hidden_cache(hid)), bias)
            )
        if model_type == "dflash2":
            candidates = logits.topk(ours.candidate_selector.top_k, -1).indices
            scores = ref.candidate_selector.score_candidates(
                logits[None], hid[None], prev[None], candidates[None]
            )[0]
            expected = candidates.gather(-1, scores.argmax(-1, keepdim=True)).squeeze(-1)
            mine = [
                int(ours.candidate_selector.select(logits[s], hid[s], int(prev[s])))
                for s in range(block)
            ]
            if mine != expected.tolist():
                raise AssertionError(f"selector chose {mine}, the library {expected.tolist()}")
    return worst


def peagle() -> float:
    import speculators.models.peagle.core as peagle_core

    config = tiny_config("peagle")
    path = build(WORK / "peagle", config)
    ours = load(path)
    ref = library_model("speculators.models.peagle.core.PEagleDraftModel", config, path)
    T, K = 9, 3
    ids, hidden = inputs(ours, T + K)
    anchors = torch.cat([torch.arange(T), torch.full((K,), T - 1)])
    depths = torch.cat([torch.zeros(T, dtype=torch.long), torch.arange(1, K + 1)])
    peagle_core.generate_cod_sample_indices = lambda **kwargs: (anchors, depths)
    seen = lm_head_outputs(ref)
    with torch.no_grad(), contextlib.suppress(Exception):  # only the logits matter; the
        ref(
            hidden[None],
            ids[None],
            torch.zeros(1, T + K, dtype=torch.long),  # loss may fail
            verifier_last_hidden_states=torch.randn(1, T + K, ours.spec.H),
            num_depths=K + 1,
        )
    with torch.no_grad():
        out = ours.draft(ids[:T], hidden[:T], steps=K)
    return max(diff(out.logits, seen[0][0, :T]), diff(out.chain_logits, seen[0][0, T:]))


def mtp() -> float:
    config = tiny_config("mtp")
    path = build(WORK / "mtp", config)
    ours = load(path)  # embed_tokens / lm_head: seeded random (no verifier)
    config.pop("draft_vocab_size", None)  # a read-only property of the library's MTP config
    ref = library_model("speculators.models.mtp.core.MTPDraftModel", config, path)
    T = 10
    ids, hidden = inputs(ours, T)
    with torch.no_grad():
        ref.embed_tokens.weight.copy_(ours.embed_tokens.weight)
        ref.lm_head.weight.copy_(ours.lm_head.weight)
        ref_logits, *_ = ref(ids[None], hidden[None])
        rows = ref_logits[0].shape[1]
        out = ours.draft(ids[1 : 1 + rows], hidden[:rows])  # ours: row t pairs h[t] with x[t+1]
    return diff(out.logits, ref_logits[0][0])


SLIDING = {
    "transformer_layer_config.use_sliding_window": True,
    "transformer_layer_config.sliding_window": 3,
}
CASES = {
    "eagle3-llama": lambda: eagle3({}),
    "eagle3-qwen3-2layers-fcnorm-normout": lambda: eagle3(
        {
            "norm_before_residual": False,
            "transformer_layer_config.model_type": "qwen3",
            "transformer_layer_config.num_hidden_layers": 2,
            "fc_norm": True,
            "norm_output": True,
        }
    ),
    "eagle3-sliding-normbeforefc": lambda: eagle3(
        {
            "norm_before_fc": True,
            "transformer_layer_config.layer_types": ["sliding_attention"],
            "transformer_layer_config.sliding_window": 4,
        }
    ),
    "dflash-full": lambda: dflash_family("dflash", {}),
    "dflash-sliding-causal": lambda: dflash_family(
        "dflash",
        {
            **SLIDING,
            "transformer_layer_config.layer_types": ["sliding_attention", "full_attention"],
        },
    ),
    "dflash-sliding-noncausal-from-anchor": lambda: dflash_family(
        "dflash",
        {
            **SLIDING,
            "sample_from_anchor": True,
            "sliding_window_non_causal": True,
            "transformer_layer_config.layer_types": ["sliding_attention", "sliding_attention"],
        },
    ),
    "dspark-vanilla": lambda: dflash_family("dspark", {}),
    "dspark-gated": lambda: dflash_family("dspark", {"markov_head_type": "gated"}),
    "dspark-rnn": lambda: dflash_family("dspark", {"markov_head_type": "rnn"}),
    "dflash2": lambda: dflash_family("dflash2", {}),
    "xpress": lambda: dflash_family("xpress", {}),
    "peagle": peagle,
    "mtp": mtp,
}


def main() -> None:
    results = []
    for name, case in CASES.items():
        try:
            results.append({"case": name, "max_abs_diff": case()})
        except Exception:  # report, do not stop: each case is its own test
            results.append({"case": name, "error": traceback.format_exc(limit=4)})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
