"""Resolve a draft's ``config.json`` into the numbers the reference forward needs.

No torch here: this module only reads the JSON document. Symbols follow the tensor contract
(H, V, D, A, Ht, L, I, nH, nKV, hd, B). Where a field is absent, the value is the one
speculators' training model ends up with (transformers' config-class defaults and the
speculators 0.9 class defaults); each such fallback that serving engines read differently
is recorded in ``notes`` so the result can say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spec_format.forward.errors import CheckpointError, UnsupportedError

EAGLE_FAMILY = ("eagle3", "peagle")
DFLASH_FAMILY = ("dflash", "dflash2", "dspark", "xpress")
SUPPORTED_TYPES = (*EAGLE_FAMILY, *DFLASH_FAMILY, "mtp")

#: rope_type values with a port in ``blocks.rope_inv_freq``. "mrope" is multimodal RoPE,
#: which for text-only inputs (three equal position components) is 1-D default RoPE.
SUPPORTED_ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "mrope")

# transformers' LlamaConfig / Qwen3Config defaults for the fields the forward reads. The
# training library builds its layer config through these classes, so an absent field takes
# these values there (vLLM builds its draft config without class defaults).
_LAYER_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {
        "vocab_size": 32000,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": None,
        "head_dim": None,
        "hidden_act": "silu",
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6,
        "attention_bias": False,
        "mlp_bias": False,
    },
    "qwen3": {
        "vocab_size": 151936,
        "hidden_size": 4096,
        "intermediate_size": 22016,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "head_dim": 128,
        "hidden_act": "silu",
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "attention_bias": False,
        "mlp_bias": False,
    },
}
_DEFAULT_ROPE_THETA = 10000.0  # transformers' default_theta for Llama and Qwen3

# speculators 0.9 class defaults of the algorithm fields the forward reads.
_ALGO_DEFAULTS: dict[str, dict[str, Any]] = {
    "eagle3": {
        "draft_vocab_size": 32000,
        "norm_before_residual": False,
        "target_hidden_size": None,
        "eagle_aux_hidden_state_layer_ids": None,
        "norm_before_fc": False,
        "fc_norm": False,
        "norm_output": False,
    },
    "dflash": {
        "draft_vocab_size": 32000,
        "block_size": 8,
        "target_hidden_size": None,
        "aux_hidden_state_layer_ids": None,
        "mask_token_id": None,
        "sliding_window_non_causal": False,
        "sample_from_anchor": False,
    },
}
_ALGO_DEFAULTS["peagle"] = {**_ALGO_DEFAULTS["eagle3"], "mask_token_id": None}
_ALGO_DEFAULTS["dflash2"] = {
    **_ALGO_DEFAULTS["dflash"],
    "sliding_window_non_causal": True,
    "conv_kernel_size": 2,
    "conv_group_size": 16,
    "selector_rank": 256,
    "selector_top_k": 16,
}
_ALGO_DEFAULTS["dspark"] = {
    **_ALGO_DEFAULTS["dflash"],
    "sample_from_anchor": True,
    "markov_rank": 256,
    "markov_head_type": "vanilla",
    "enable_confidence_head": True,
    "confidence_head_with_markov": True,
}
_ALGO_DEFAULTS["xpress"] = {
    **_ALGO_DEFAULTS["dflash"],
    "xpress_rank": 256,
    "xpress_mlp_ratio": 2,
    "num_jacobi_passes": 6,
}
_ALGO_DEFAULTS["mtp"] = {"num_nextn_predict_layers": 1}


@dataclass(frozen=True)
class RopeSpec:
    """RoPE as the training model computes it (transformers' rope parameter functions)."""

    rope_type: str  # one of SUPPORTED_ROPE_TYPES, "mrope" already folded into "default"
    theta: float
    partial_rotary_factor: float
    max_position_embeddings: int
    params: dict[str, Any] = field(default_factory=dict)  # factor, low_freq_factor, ...


@dataclass(frozen=True)
class LayerSpec:
    """The draft decoder layers (``transformer_layer_config``)."""

    model_type: str
    H: int
    I: int  # noqa: E741 - the contract's symbol for intermediate_size
    nH: int
    nKV: int
    hd: int
    V: int
    L: int
    eps: float
    hidden_act: str
    attention_bias: bool
    mlp_bias: bool
    layer_types: tuple[str, ...]
    sliding_window: int | None
    rope: RopeSpec

    def is_sliding(self, index: int) -> bool:
        return self.sliding_window is not None and self.layer_types[index] == "sliding_attention"


@dataclass
class DraftSpec:
    """Everything the forward needs from one config.json, resolved once."""

    model_type: str  # speculators_model_type
    layer: LayerSpec
    D: int  # draft vocabulary (rows of lm_head)
    A: int  # number of aux hidden states (0 for MTP)
    Ht: int  # hidden size of each aux hidden state
    algo: dict[str, Any]  # the algorithm fields above, defaults filled
    speculative_tokens: int | None
    notes: list[str] = field(default_factory=list)

    @property
    def V(self) -> int:  # noqa: N802 - contract symbol
        return self.layer.V

    @property
    def H(self) -> int:  # noqa: N802 - contract symbol
        return self.layer.H

    @property
    def uses_vocab_map(self) -> bool:
        return self.D != self.V

    def flag(self, name: str) -> Any:
        return self.algo[name]


def resolve(config: dict[str, Any]) -> DraftSpec:
    """Turn a parsed config.json into a :class:`DraftSpec`, or raise naming the field."""
    if not isinstance(config, dict):
        raise CheckpointError("config.json is not a JSON object")
    model_type = config.get("speculators_model_type")
    if model_type not in SUPPORTED_TYPES:
        raise UnsupportedError(
            f"speculators_model_type {model_type!r} has no reference forward; "
            f"supported: {', '.join(SUPPORTED_TYPES)}"
        )
    notes: list[str] = []
    tlc = config.get("transformer_layer_config")
    if not isinstance(tlc, dict):
        raise CheckpointError("transformer_layer_config is missing or not an object")

    algo = {name: config.get(name, default) for name, default in _ALGO_DEFAULTS[model_type].items()}

    layer = _resolve_layer(model_type, tlc, notes)
    D, A, Ht = _resolve_vocab_and_aux(model_type, config, algo, layer, notes)
    _check_algorithm_fields(model_type, algo, layer, D)
    _train_serve_notes(model_type, config, algo, layer, A, notes)

    speculative_tokens = None
    methods = (config.get("speculators_config") or {}).get("proposal_methods") or []
    if methods and isinstance(methods[0], dict):
        value = methods[0].get("speculative_tokens")
        speculative_tokens = value if isinstance(value, int) and value >= 1 else None

    return DraftSpec(model_type, layer, D, A, Ht, algo, speculative_tokens, notes)


def _resolve_layer(model_type: str, tlc: dict[str, Any], notes: list[str]) -> LayerSpec:
    layer_type = tlc.get("model_type")
    if model_type in EAGLE_FAMILY:
        if layer_type is None:
            layer_type = "qwen3"
            notes.append(
                "transformer_layer_config.model_type is absent: speculators builds Qwen3 "
                "layers (used here), vLLM assumes llama; write it explicitly"
            )
        if layer_type not in ("llama", "qwen3"):
            raise UnsupportedError(
                f"transformer_layer_config.model_type {layer_type!r} is not a draft layer "
                f"type for {model_type}: speculators has layer classes for 'llama' and "
                "'qwen3' only"
            )
    elif model_type == "mtp" and layer_type != "qwen3":
        raise UnsupportedError(
            f"transformer_layer_config.model_type {layer_type!r} is not supported for "
            "mtp by the reference forward: only 'qwen3' MTP layers are implemented "
            "(Qwen3-Next / Qwen3.5 MTP layers use gated attention and (1+w) norms)"
        )
    # The DFlash family always builds Qwen3-style layers (q_norm/k_norm), whatever
    # model_type says; the config class (defaults, sliding window) still follows model_type.
    config_class = layer_type if layer_type in _LAYER_DEFAULTS else "qwen3"
    if model_type in DFLASH_FAMILY:
        layer_type = "qwen3"
    defaults = _LAYER_DEFAULTS[config_class]

    def get(name: str) -> Any:
        value = tlc.get(name)
        return defaults[name] if value is None else value

    for name in ("hidden_size", "num_attention_heads", "num_hidden_layers", "vocab_size"):
        if tlc.get(name) is None:
            raise CheckpointError(f"transformer_layer_config.{name} is missing; set it explicitly")
    H, nH, L, V = (
        int(get(n))
        for n in ("hidden_size", "num_attention_heads", "num_hidden_layers", "vocab_size")
    )
    nKV = int(get("num_key_value_heads") or nH)
    hd = get("head_dim")
    if hd is None:
        hd = H // nH
    hd = int(hd)
    resolved = {
        "intermediate_size": get("intermediate_size"),
        "head_dim": hd,
        "rms_norm_eps": get("rms_norm_eps"),
        "num_key_value_heads": nKV,
    }
    for name, value in resolved.items():
        if tlc.get(name) is None:
            notes.append(
                f"transformer_layer_config.{name} is absent: used {value}, as transformers' "
                f"{config_class} config class does; vLLM applies no class defaults, write it "
                "explicitly"
            )
    if nH % nKV:
        raise CheckpointError(
            f"num_attention_heads ({nH}) is not a multiple of num_key_value_heads ({nKV})"
        )
    hidden_act = str(get("hidden_act"))
    if hidden_act not in ("silu", "swish"):
        raise UnsupportedError(
            f"transformer_layer_config.hidden_act {hidden_act!r} is not supported "
            "(the reference implements silu)"
        )

    sliding_window = tlc.get("sliding_window")
    if config_class == "qwen3" and not tlc.get("use_sliding_window", False):
        sliding_window = None  # Qwen3Config drops the window unless use_sliding_window
    layer_types = tlc.get("layer_types")
    if layer_types is None:
        first_sliding = int(tlc.get("max_window_layers", 28))
        layer_types = [
            "sliding_attention"
            if config_class == "qwen3" and sliding_window is not None and i >= first_sliding
            else "full_attention"
            for i in range(L)
        ]
    if len(layer_types) < L:
        raise CheckpointError(
            f"transformer_layer_config.layer_types has {len(layer_types)} entries for "
            f"{L} draft layers"
        )
    layer_types = tuple(str(t) for t in layer_types[:L])
    for i, kind in enumerate(layer_types):
        if kind not in ("full_attention", "sliding_attention"):
            raise UnsupportedError(
                f"transformer_layer_config.layer_types[{i}] is {kind!r}; the reference "
                "implements 'full_attention' and 'sliding_attention'"
            )
    if "sliding_attention" in layer_types and not sliding_window:
        notes.append(
            "layer_types has sliding_attention layers but no effective sliding_window "
            "(qwen3 drops it unless use_sliding_window=true): the training model runs "
            "them without a window, and so does this forward"
        )

    return LayerSpec(
        model_type=layer_type,
        H=H,
        I=int(get("intermediate_size")),
        nH=nH,
        nKV=nKV,
        hd=hd,
        V=V,
        L=L,
        eps=float(get("rms_norm_eps")),
        hidden_act=hidden_act,
        attention_bias=bool(get("attention_bias")),
        mlp_bias=bool(get("mlp_bias")) if layer_type == "llama" else False,  # Qwen3MLP: none
        layer_types=layer_types,
        sliding_window=int(sliding_window) if sliding_window else None,
        rope=_resolve_rope(tlc, int(get("max_position_embeddings")), notes),
    )


def _resolve_rope(tlc: dict[str, Any], max_positions: int, notes: list[str]) -> RopeSpec:
    """Read RoPE from ``rope_parameters`` (transformers 5) or ``rope_scaling`` +
    ``rope_theta`` (transformers 4), the way transformers standardises them."""
    params = tlc.get("rope_scaling") or tlc.get("rope_parameters") or {}
    if not isinstance(params, dict):
        raise CheckpointError("transformer_layer_config.rope_parameters is not an object")
    if "sliding_attention" in params or "full_attention" in params:
        # Per-layer-type RoPE: speculators flattens it to the sliding_attention entry.
        params = params.get("sliding_attention") or params.get("full_attention") or {}
    params = dict(params)
    rope_type = params.pop("rope_type", None) or params.pop("type", None) or "default"
    theta = params.pop("rope_theta", None)
    if theta is None:
        theta = tlc.get("rope_theta")
    if theta is None:
        theta = _DEFAULT_ROPE_THETA
        notes.append(
            "rope theta is absent: transformers (training) uses 10000, vLLM's DFlash and "
            "older Qwen3 layers use 1e6; used 10000 here, write rope_theta explicitly"
        )
    partial = params.pop("partial_rotary_factor", None)
    if partial is None:
        partial = tlc.get("partial_rotary_factor", 1.0)
    if rope_type not in SUPPORTED_ROPE_TYPES:
        raise UnsupportedError(
            f"rope_type {rope_type!r} is not supported by the reference forward; supported: "
            f"{', '.join(SUPPORTED_ROPE_TYPES)}"
        )
    if rope_type == "mrope" or "mrope_section" in params:
        notes.append(
            "multimodal RoPE (mrope_section) treated as 1-D RoPE: equal for text-only "
            "inputs, where the three position components coincide"
        )
        params.pop("mrope_section", None)
        params.pop("mrope_interleaved", None)
        if rope_type == "mrope":
            rope_type = "default"
    if rope_type == "default" and float(partial) < 1.0:
        # transformers 5's Llama/Qwen3 default RoPE ignores partial_rotary_factor; only the
        # scaled types (linear, dynamic, yarn, llama3) shorten the rotated part.
        notes.append(
            f"partial_rotary_factor {partial} with default RoPE: speculators' training "
            "layers (transformers 5) rotate all head_dim channels (used here); vLLM rotates "
            f"only the first {partial} of them"
        )
        partial = 1.0
    if rope_type in ("linear", "dynamic", "llama3") and params.get("factor") is None:
        raise CheckpointError(f"rope_type {rope_type!r} needs rope_parameters.factor")
    if rope_type == "llama3":
        for key in ("low_freq_factor", "high_freq_factor"):
            if params.get(key) is None:
                raise CheckpointError(f"rope_type 'llama3' needs rope_parameters.{key}")
    if rope_type in ("llama3", "yarn"):
        params.setdefault(
            "original_max_position_embeddings",
            tlc.get("original_max_position_embeddings") or max_positions,
        )
    return RopeSpec(rope_type, float(theta), float(partial), max_positions, params)


def _resolve_vocab_and_aux(
    model_type: str,
    config: dict[str, Any],
    algo: dict[str, Any],
    layer: LayerSpec,
    notes: list[str],
) -> tuple[int, int, int]:
    if model_type == "mtp":
        return layer.V, 0, layer.H
    D = int(algo["draft_vocab_size"])
    if not 0 < D <= layer.V:
        raise CheckpointError(
            f"draft_vocab_size ({D}) must be between 1 and the verifier vocabulary ({layer.V})"
        )
    if model_type in EAGLE_FAMILY:
        ids = algo["eagle_aux_hidden_state_layer_ids"]
        A = len(ids) if ids else 3
    else:
        ids = algo["aux_hidden_state_layer_ids"]
        if not isinstance(ids, list) or not ids:
            raise CheckpointError(
                f"aux_hidden_state_layer_ids must be a non-empty list for {model_type} "
                "(speculators and vLLM both index it)"
            )
        A = len(ids)
    Ht = algo.get("target_hidden_size") or layer.H
    if Ht != layer.H:
        notes.append(
            f"target_hidden_size ({Ht}) differs from hidden_size ({layer.H}): speculators' "
            "training model cannot build this draft; the fc input follows vLLM and the "
            f"legacy converter (A*Ht = {A * Ht})"
        )
    return D, A, int(Ht)


def _check_algorithm_fields(
    model_type: str, algo: dict[str, Any], layer: LayerSpec, D: int
) -> None:
    if model_type in EAGLE_FAMILY and algo["norm_before_fc"] and algo["fc_norm"]:
        raise CheckpointError(
            "norm_before_fc and fc_norm are both true; speculators rejects the pair "
            "(set at most one)"
        )
    needs_mask = model_type == "peagle" or model_type in DFLASH_FAMILY
    if needs_mask:
        mask_id = algo["mask_token_id"]
        if not isinstance(mask_id, int) or not 0 <= mask_id < layer.V:
            raise CheckpointError(
                f"mask_token_id ({mask_id!r}) must be a token id in [0, {layer.V}) for {model_type}"
            )
    if model_type in DFLASH_FAMILY and int(algo["block_size"]) < 1:
        raise CheckpointError(f"block_size ({algo['block_size']}) must be at least 1")
    if model_type == "dspark":
        if algo["markov_head_type"] not in ("vanilla", "gated", "rnn"):
            raise UnsupportedError(
                f"markov_head_type {algo['markov_head_type']!r} is not one of vanilla, gated, rnn"
            )
        if (
            algo["enable_confidence_head"]
            and algo["confidence_head_with_markov"]
            and int(algo["markov_rank"]) <= 0
        ):
            raise CheckpointError("confidence_head_with_markov=true requires markov_rank > 0")
    if model_type == "dflash2":
        if D != layer.V:
            raise CheckpointError(
                f"dflash2 requires the full verifier vocabulary (draft_vocab_size {D} != "
                f"vocab_size {layer.V})"
            )
        if layer.H % int(algo["conv_group_size"]):
            raise CheckpointError(
                f"hidden_size ({layer.H}) is not a multiple of conv_group_size "
                f"({algo['conv_group_size']})"
            )
        if int(algo["conv_kernel_size"]) > int(algo["block_size"]):
            raise CheckpointError("conv_kernel_size cannot exceed block_size")
    if model_type == "mtp" and int(algo["num_nextn_predict_layers"]) != 1:
        raise UnsupportedError("num_nextn_predict_layers must be 1 (as in speculators)")


def _train_serve_notes(
    model_type: str,
    config: dict[str, Any],
    algo: dict[str, Any],
    layer: LayerSpec,
    A: int,
    notes: list[str],
) -> None:
    """Differences between speculators' training model (followed here) and vLLM."""
    if model_type in EAGLE_FAMILY and "norm_before_residual" not in config:
        serve = "True" if model_type == "eagle3" else "False"
        notes.append(
            f"norm_before_residual is absent: training uses False (used here), vLLM "
            f"reads {serve}; write it explicitly"
        )
    if model_type in EAGLE_FAMILY and layer.model_type == "llama" and A != 3:
        notes.append(
            f"{A} aux hidden states: vLLM's llama EAGLE-3 path assumes 3 unless "
            "num_aux_hidden_states is injected"
        )
    if model_type == "eagle3" and any(layer.is_sliding(i) for i in range(layer.L)):
        notes.append(
            "sliding-window layers in chained steps: training measures the window from the "
            "last row, vLLM from each step's own position (differs once steps approach the "
            "window)"
        )
    if model_type in EAGLE_FAMILY and layer.model_type == "qwen3" and layer.attention_bias:
        notes.append("attention_bias with qwen3 layers: vLLM's Qwen3 o_proj has no bias")
    if model_type == "peagle" and algo["fc_norm"]:
        notes.append("fc_norm on peagle: vLLM's P-EAGLE config update does not forward it")
    if model_type == "peagle" and algo["norm_output"]:
        notes.append("norm_output has no effect on P-EAGLE (single parallel pass)")
    if model_type in DFLASH_FAMILY:
        full = [i for i, t in enumerate(layer.layer_types) if t == "full_attention"]
        if full and not algo["sliding_window_non_causal"]:
            notes.append(
                "full-attention layers are bidirectional inside the block (training); vLLM "
                "versions that map sliding_window_non_causal=false to a global causal flag "
                "run them causally"
            )
        if "sliding_attention" in layer.layer_types:
            notes.append(
                "sliding-window context is measured from the anchor (training); vLLM "
                "measures the window from each query's own position"
            )
        if model_type == "dflash" and algo["sample_from_anchor"]:
            notes.append(
                "dflash with sample_from_anchor=true: vLLM's DFlash proposer samples only "
                "block slots 1..B-1"
            )
    if (
        model_type == "dspark"
        and algo["markov_head_type"] != "vanilla"
        and int(algo["markov_rank"]) > 0
    ):
        notes.append(
            f"markov_head_type {algo['markov_head_type']!r}: vLLM builds only the vanilla "
            "Markov head"
        )
    if model_type == "mtp":
        notes.append(
            "MTP input is the verifier's last hidden state as captured by speculators' "
            "datagen (pre-final-norm); whether vLLM feeds the same tensor is unverified"
        )
