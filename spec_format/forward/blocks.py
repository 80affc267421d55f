"""Shared blocks of every draft's forward pass: RMSNorm, RoPE, eager attention, MLP and the
Llama / Qwen3 decoder layer, plus the attention masks the algorithms combine.

Read bottom-up, like nanoGPT's ``model.py``; the math is transformers' Llama/Qwen3 modeling
(``modeling_llama.py``, ``modeling_qwen3.py``, ``modeling_rope_utils.py``), written again
here so that the reference depends on torch alone. It is a reference, not a fast path:

* attention is eager (explicit scores, a boolean mask, softmax in float32);
* norms compute in float32 and cast back, as transformers does;
* RoPE ``(cos, sin)`` is computed once per forward by the model and passed to every layer.

Module attribute names are the checkpoint's tensor names, so ``state_dict()`` keys are the
keys of ``model.safetensors`` (``layers.0.self_attn.q_proj.weight`` ...). Shapes use the
tensor-contract symbols: H hidden, nH / nKV query / key-value heads, hd head_dim, I
intermediate, T positions.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from spec_format.forward.config import LayerSpec, RopeSpec
from spec_format.forward.errors import CheckpointError

# ----------------------------------------------------------------------------- norms


class RMSNorm(nn.Module):
    """``w * (x / rms(x))`` computed in float32, cast back to the input dtype (Llama/Qwen3)."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(dtype)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"


class Embedding(nn.Embedding):
    """``nn.Embedding`` without an initial fill: the loader assigns every weight, and the
    first ``normal_`` on the meta device costs a second of one-time setup in torch."""

    def reset_parameters(self) -> None:
        pass


# ----------------------------------------------------------------------------- RoPE


def rope_inv_freq(rope: RopeSpec, hd: int, seq_len: int) -> tuple[torch.Tensor, float]:
    """Inverse frequencies ``[rd/2]`` (float32, CPU) and the cos/sin scale for ``rope``.

    ``rd = int(hd * partial_rotary_factor)`` channels rotate; the rest pass through.
    ``seq_len`` (largest position + 1) matters only for ``dynamic``. Formulas are those of
    transformers' ``_compute_*_parameters`` functions, one branch per ``rope_type``.
    """
    dim = int(hd * rope.partial_rotary_factor)
    p = rope.params

    def plain(base: float) -> torch.Tensor:
        exponents = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
        return 1.0 / (base**exponents)

    if rope.rope_type == "default":
        return plain(rope.theta), 1.0

    if rope.rope_type == "linear":  # positions divided by factor
        return plain(rope.theta) / float(p["factor"]), 1.0

    if rope.rope_type == "dynamic":  # NTK: grow the base once T exceeds the trained length
        factor, trained = float(p["factor"]), rope.max_position_embeddings
        base = rope.theta
        if seq_len > trained:
            base = base * ((factor * seq_len / trained) - (factor - 1)) ** (dim / (dim - 2))
        return plain(base), 1.0

    if rope.rope_type == "llama3":  # low frequencies scaled, high kept, smooth in between
        inv_freq = plain(rope.theta)
        factor = float(p["factor"])
        low, high = float(p["low_freq_factor"]), float(p["high_freq_factor"])
        old_len = float(p["original_max_position_embeddings"])
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > old_len / low, inv_freq / factor, inv_freq)
        smooth = (old_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old_len / high) & ~(wavelen > old_len / low)
        return torch.where(medium, smoothed, scaled), 1.0

    if rope.rope_type == "yarn":
        return _yarn_inv_freq(rope, dim)

    raise AssertionError(f"unresolved rope_type {rope.rope_type!r}")  # config.py refuses


def _yarn_inv_freq(rope: RopeSpec, dim: int) -> tuple[torch.Tensor, float]:
    """YaRN: interpolate low frequencies, extrapolate high ones, ramp in between, and scale
    cos/sin by the attention factor (transformers' ``_compute_yarn_parameters``)."""
    p, base = rope.params, rope.theta
    original = float(p["original_max_position_embeddings"])
    factor = p.get("factor")
    factor = rope.max_position_embeddings / original if factor is None else float(factor)

    def mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention_factor = p.get("attention_factor")
    if attention_factor is None:
        if p.get("mscale") and p.get("mscale_all_dim"):
            attention_factor = mscale(factor, p["mscale"]) / mscale(factor, p["mscale_all_dim"])
        else:
            attention_factor = mscale(factor)
    beta_fast, beta_slow = p.get("beta_fast") or 32, p.get("beta_slow") or 1

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if p.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    extrapolation = 1 - ramp
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation) + (
        1.0 / pos_freqs
    ) * extrapolation
    return inv_freq, float(attention_factor)


class RotaryEmbedding(nn.Module):
    """Computes ``(cos, sin)`` ``[T, rd]`` for integer positions. No buffers, so a model
    built on the meta device needs nothing from the checkpoint for it."""

    def __init__(self, rope: RopeSpec, hd: int) -> None:
        super().__init__()
        self.rope, self.hd = rope, hd

    @torch.no_grad()
    def forward(
        self, positions: torch.Tensor, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        inv_freq, scale = rope_inv_freq(self.rope, self.hd, int(positions.max()) + 1)
        freqs = positions.float()[:, None] * inv_freq.to(positions.device)[None, :]  # (T, rd/2)
        emb = torch.cat([freqs, freqs], dim=-1)  # (T, rd)
        return (emb.cos() * scale).to(dtype), (emb.sin() * scale).to(dtype)

    def extra_repr(self) -> str:
        return f"{self.rope.rope_type}, theta={self.rope.theta}, hd={self.hd}"


def check_rope(layer: LayerSpec, positions: int) -> None:
    """Compute the RoPE frequencies once before anything is built: parameters that divide
    by zero or give non-finite frequencies are a :class:`CheckpointError` naming RoPE, not
    a crash or NaN logits later."""
    rope = layer.rope
    try:
        inv_freq, scale = rope_inv_freq(rope, layer.hd, positions)
        ok = bool(torch.isfinite(inv_freq).all()) and math.isfinite(scale)
    except (ArithmeticError, ValueError) as exc:
        ok, why = False, f" ({exc})"
    else:
        why = ": the frequencies are not finite"
    if not ok:
        raise CheckpointError(
            f"transformer_layer_config RoPE ({rope.rope_type}, theta {rope.theta}, "
            f"{rope.params}) cannot be computed{why}; check rope_parameters"
        )


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``(heads, T, hd)`` by ``cos``/``sin`` ``(T, rd)``; with partial rotary
    (``rd < hd``) only the first ``rd`` channels rotate (vLLM's partial neox, which
    speculators installs for training too)."""
    rd = cos.shape[-1]
    if rd == x.shape[-1]:
        return x * cos + rotate_half(x) * sin
    x_rot, x_pass = x[..., :rd], x[..., rd:]
    return torch.cat([x_rot * cos + rotate_half(x_rot) * sin, x_pass], dim=-1)


# ----------------------------------------------------------------------------- masks
# Boolean (Tq, Tk) masks, True where the query may attend to the key.


def causal_mask(n: int, sliding_window: int | None, device: torch.device) -> torch.Tensor:
    """Key ``j`` visible to query ``i`` iff ``j <= i`` (and ``j > i - window``)."""
    i = torch.arange(n, device=device)[:, None]
    j = torch.arange(n, device=device)[None, :]
    visible = j <= i
    if sliding_window is not None:
        visible &= j > i - sliding_window
    return visible


def anchored_block_mask(
    context: int, block: int, sliding_window: int | None, causal_block: bool, device: torch.device
) -> torch.Tensor:
    """Mask of a block of ``block`` queries anchored after ``context`` context keys; the
    keys are ``[context..., block...]``. Context key ``j`` is visible to every query
    (within ``sliding_window`` of the anchor when windowed); block slot ``s`` is visible to
    query slot ``q`` always, or only for ``s <= q`` when ``causal_block``."""
    j = torch.arange(context, device=device)
    ctx_visible = torch.ones(block, context, dtype=torch.bool, device=device)
    if sliding_window is not None:
        ctx_visible &= (j >= context - sliding_window)[None, :]
    blk_visible = torch.ones(block, block, dtype=torch.bool, device=device)
    if causal_block:
        blk_visible = torch.tril(blk_visible)
    return torch.cat([ctx_visible, blk_visible], dim=1)


# ----------------------------------------------------------------------------- attention


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(nKV, T, hd) -> (nKV * n_rep, T, hd); query head h reads key-value head h // n_rep."""
    return x if n_rep == 1 else x.repeat_interleave(n_rep, dim=0)


def eager_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scaling: float
) -> torch.Tensor:
    """softmax(q k^T * scaling, masked) v for q ``(nH, Tq, hd)``, k/v ``(nKV, Tk, hd)``,
    mask ``(Tq, Tk)``. Softmax in float32; returns ``(Tq, nH * hd)``."""
    n_rep = q.shape[0] // k.shape[0]
    k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
    scores = (q @ k.transpose(-1, -2)) * scaling  # (nH, Tq, Tk)
    scores = scores.masked_fill(~mask, float("-inf"))
    probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
    out = probs @ v  # (nH, Tq, hd)
    return out.transpose(0, 1).reshape(q.shape[1], -1)


KV = tuple[torch.Tensor, torch.Tensor]  # keys and values after RoPE, (nKV, T, hd) each


class Attention(nn.Module):
    """Llama / Qwen3 self-attention. Qwen3 adds per-head ``q_norm``/``k_norm`` before RoPE.

    ``in_features`` is H except where an algorithm widens the input (EAGLE-3 layer 0: 2H).
    """

    def __init__(
        self, spec: LayerSpec, in_features: int | None = None, qk_norm: bool | None = None
    ) -> None:
        super().__init__()
        in_features = in_features or spec.H
        bias = spec.attention_bias
        self.nH, self.nKV, self.hd = spec.nH, spec.nKV, spec.hd
        self.q_proj = nn.Linear(in_features, spec.nH * spec.hd, bias=bias)
        self.k_proj = nn.Linear(in_features, spec.nKV * spec.hd, bias=bias)
        self.v_proj = nn.Linear(in_features, spec.nKV * spec.hd, bias=bias)
        self.o_proj = nn.Linear(spec.nH * spec.hd, spec.H, bias=bias)
        if qk_norm if qk_norm is not None else spec.model_type == "qwen3":
            self.q_norm = RMSNorm(spec.hd, spec.eps)
            self.k_norm = RMSNorm(spec.hd, spec.eps)
        else:
            self.q_norm = self.k_norm = None

    def project_q(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(x).view(x.shape[0], self.nH, self.hd)  # (T, nH, hd)
        if self.q_norm is not None:
            q = self.q_norm(q)
        return apply_rotary(q.transpose(0, 1), cos, sin)  # (nH, T, hd)

    def project_kv(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> KV:
        k = self.k_proj(x).view(x.shape[0], self.nKV, self.hd)  # (T, nKV, hd)
        v = self.v_proj(x).view(x.shape[0], self.nKV, self.hd)
        if self.k_norm is not None:
            k = self.k_norm(k)
        return apply_rotary(k.transpose(0, 1), cos, sin), v.transpose(0, 1)  # (nKV, T, hd)

    def forward(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        mask: torch.Tensor,
        past: KV | None = None,
    ) -> tuple[torch.Tensor, KV]:
        """``x`` (T, in_features) at the positions of ``cos``/``sin``; ``past`` holds keys
        and values of earlier positions (a KV cache), prepended to this call's keys."""
        q = self.project_q(x, cos, sin)
        k, v = self.project_kv(x, cos, sin)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=1), torch.cat([past[1], v], dim=1)
        out = eager_attention(q, k, v, mask, self.hd**-0.5)  # (T, nH * hd)
        return self.o_proj(out), (k, v)


class MLP(nn.Module):
    """SwiGLU: ``down(silu(gate(x)) * up(x))``; biases only for Llama with ``mlp_bias``."""

    def __init__(self, spec: LayerSpec) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(spec.H, spec.I, bias=spec.mlp_bias)
        self.up_proj = nn.Linear(spec.H, spec.I, bias=spec.mlp_bias)
        self.down_proj = nn.Linear(spec.I, spec.H, bias=spec.mlp_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    """Pre-norm decoder layer (``LlamaDecoderLayer`` / ``Qwen3DecoderLayer``)."""

    attention_class: type[Attention] = Attention

    def __init__(self, spec: LayerSpec, attn_in_features: int | None = None) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(spec.H, spec.eps)
        self.self_attn = self.attention_class(spec, attn_in_features)
        self.post_attention_layernorm = RMSNorm(spec.H, spec.eps)
        self.mlp = MLP(spec)

    def forward(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        mask: torch.Tensor,
        past: KV | None = None,
    ) -> tuple[torch.Tensor, KV]:
        # Self Attention
        h, kv = self.self_attn(self.input_layernorm(x), cos, sin, mask, past)
        x = x + h
        # Fully Connected
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, kv


# ----------------------------------------------------------------------------- vocabulary


def draft_to_target(draft_ids: torch.Tensor, d2t: torch.Tensor | None) -> torch.Tensor:
    """Draft-vocabulary ids -> verifier ids: ``id + d2t[id]`` (identity without ``d2t``)."""
    return draft_ids if d2t is None else draft_ids + d2t[draft_ids]
