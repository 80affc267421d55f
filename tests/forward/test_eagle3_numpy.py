"""A single-layer EAGLE-3 written out step by step in numpy (float64, explicit loops over
positions and heads, no torch), which the torch reference must match.

Written from the math of speculators' ``Eagle3DraftModel`` (reference/forward-spec.md
§5.2), independently of spec_format.forward: norms, the 2H first layer, RoPE, GQA, the
causal mask, the SwiGLU MLP, the draft head, d2t, and one chained step with a KV cache.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from forward_helpers import build, load, tiny_config
from safetensors.numpy import load_file


def rms(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def rope(x: np.ndarray, position: int, theta: float) -> np.ndarray:
    """Rotate one head vector (hd,) at ``position`` (neox / rotate-half layout)."""
    hd = x.shape[0]
    half = hd // 2
    out = np.empty_like(x)
    for i in range(half):
        angle = position / theta ** (2 * i / hd)
        c, s = np.cos(angle), np.sin(angle)
        out[i] = x[i] * c - x[i + half] * s
        out[i + half] = x[i + half] * c + x[i] * s
    return out


class NumpyEagle3:
    def __init__(self, w: dict[str, np.ndarray], config: dict) -> None:
        self.w = {k: v.astype(np.float64) if v.dtype.kind == "f" else v for k, v in w.items()}
        layer = config["transformer_layer_config"]
        self.eps, self.theta = layer["rms_norm_eps"], layer["rope_theta"]
        self.nH, self.nKV, self.hd = (
            layer["num_attention_heads"],
            layer["num_key_value_heads"],
            layer["head_dim"],
        )
        self.qwen3 = layer["model_type"] == "qwen3"
        self.norm_before_residual = config["norm_before_residual"]
        self.keys: list[np.ndarray] = []  # per position: (nKV, hd) after RoPE
        self.values: list[np.ndarray] = []

    def layer(self, embed: np.ndarray, hidden: np.ndarray, position: int) -> np.ndarray:
        """Layer 0 for one position; appends its key/value to the cache, attends to all."""
        w, p = self.w, "layers.0."
        e = rms(embed, w[p + "input_layernorm.weight"], self.eps)
        g = rms(hidden, w[p + "hidden_norm.weight"], self.eps)
        residual = g if self.norm_before_residual else hidden
        a = np.concatenate([e, g])  # embeddings first
        q = (w[p + "self_attn.q_proj.weight"] @ a).reshape(self.nH, self.hd)
        k = (w[p + "self_attn.k_proj.weight"] @ a).reshape(self.nKV, self.hd)
        v = (w[p + "self_attn.v_proj.weight"] @ a).reshape(self.nKV, self.hd)
        if self.qwen3:
            q = np.stack([rms(h, w[p + "self_attn.q_norm.weight"], self.eps) for h in q])
            k = np.stack([rms(h, w[p + "self_attn.k_norm.weight"], self.eps) for h in k])
        q = np.stack([rope(h, position, self.theta) for h in q])
        k = np.stack([rope(h, position, self.theta) for h in k])
        self.keys.append(k)
        self.values.append(v)
        out = np.empty((self.nH, self.hd))
        group = self.nH // self.nKV
        for h in range(self.nH):
            kv = h // group
            scores = np.array([q[h] @ key[kv] / np.sqrt(self.hd) for key in self.keys])
            probs = np.exp(scores - scores.max())
            probs /= probs.sum()
            out[h] = sum(pr * val[kv] for pr, val in zip(probs, self.values, strict=True))
        x = residual + w[p + "self_attn.o_proj.weight"] @ out.reshape(-1)
        m = rms(x, w[p + "post_attention_layernorm.weight"], self.eps)
        gate, up = w[p + "mlp.gate_proj.weight"] @ m, w[p + "mlp.up_proj.weight"] @ m
        silu = gate / (1 + np.exp(-gate))
        return x + w[p + "mlp.down_proj.weight"] @ (silu * up)

    def logits(self, x: np.ndarray) -> np.ndarray:
        return self.w["lm_head.weight"] @ rms(x, self.w["norm.weight"], self.eps)

    def target(self, draft_id: int) -> int:
        d2t = self.w.get("d2t")
        return draft_id + int(d2t[draft_id]) if d2t is not None else draft_id


@pytest.mark.parametrize(
    "layer_type,norm_before_residual",
    [
        ("llama", True),
        ("llama", False),
        ("qwen3", True),
    ],
)
def test_single_layer_eagle3_matches_numpy(tmp_path, layer_type, norm_before_residual):
    config = tiny_config(
        "eagle3",
        {
            "transformer_layer_config.model_type": layer_type,
            "norm_before_residual": norm_before_residual,
        },
    )
    path = build(tmp_path / "e", config, seed=3)
    weights = load_file(str(path / "model.safetensors"))
    T, A, H = 7, 3, 64
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 256, T)
    aux = rng.standard_normal((T, A * H)).astype(np.float32)

    ref = NumpyEagle3(weights, config)
    g = aux.astype(np.float64) @ ref.w["fc.weight"].T  # (T, H); no fc norms in this config
    expected = []
    for t in range(T):  # step 0, position by position (each sees keys 0..t)
        x = ref.layer(ref.w["embed_tokens.weight"][ids[t]], g[t], t)
        expected.append(ref.logits(x))
    expected = np.stack(expected)
    # one chained step: hidden = last row's pre-norm output, token = its draft as target id
    token = ref.target(int(expected[-1].argmax()))
    x_chain = ref.layer(ref.w["embed_tokens.weight"][token], x, T)
    expected_chain = ref.logits(x_chain)

    model = load(path)
    with torch.inference_mode():
        out = model.draft(torch.as_tensor(ids), torch.as_tensor(aux), steps=1)
    np.testing.assert_allclose(out.logits.numpy(), expected, atol=2e-5, rtol=0)
    np.testing.assert_allclose(out.chain_logits[0].numpy(), expected_chain, atol=2e-5, rtol=0)
    assert out.token_ids.tolist() == [ref.target(int(r.argmax())) for r in expected]
    assert out.proposal == [token, ref.target(int(expected_chain.argmax()))]
