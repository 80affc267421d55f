"""Read a draft's ``config.json`` the way ``validate`` does, then resolve the numbers the
reference forward needs.

No torch here. :func:`read_config` runs validate's own reader and config checks
(:func:`spec_format.runner.validation.check_config_file`: the bounded strict JSON loader, format
version detection, the JSON Schema and the config rules): a config with errors is refused
with validate's findings, so the forward never interprets a config validate rejects.

:func:`resolve` turns the checked config into a :class:`DraftSpec`. Symbols follow the
tensor contract (H, V, D, A, Ht, L, I, nH, nKV, hd, B). Where a field is absent:

* a top-level field takes the ``default`` of the schema of the detected format version
  (:func:`spec_format.facts.effective.schema_default`); a field that version does not have takes
  the default of the later version that introduced it (the feature's "off" value);
* a ``transformer_layer_config`` field takes the default of the transformers config class
  speculators builds (:data:`LAYER_CLASS_DEFAULTS`); which class that is when
  ``model_type`` is absent depends on the format version, as in ``migrate``.

Each fallback that serving engines read differently is recorded in ``notes``.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from spec_format.base.errors import InputError
from spec_format.base.jsonload import json_int
from spec_format.base.report import Report, Severity
from spec_format.facts import catalog, disputes, readers, schemas
from spec_format.facts.effective import schema_default
from spec_format.forward.errors import CheckpointError, UnsupportedError

#: speculators_model_type -> "module:Class" of its reference model in spec_format.forward
#: (the catalog's ``forward`` field)
FORWARD_CLASSES = {t: catalog.record(t).forward for t in catalog.forward_types()}
SUPPORTED_TYPES = tuple(FORWARD_CLASSES)
CHAIN = catalog.family("chain")
BLOCK = catalog.family("block")
NEXTN = catalog.family("nextn")
PARALLEL = catalog.with_feature("parallel-drafting")

#: rope_type values with a port in ``blocks.rope_inv_freq``. "mrope" is multimodal RoPE,
#: which for text-only inputs (three equal position components) is 1-D default RoPE.
SUPPORTED_ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "mrope")

#: transformers' LlamaConfig / Qwen3Config defaults for the layer fields the forward reads:
#: speculators builds its layer config through these classes, so an absent field takes these
#: values there. The keys are also the layer classes the reference implements.
LAYER_CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {
        "vocab_size": 32000,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": None,  # None: num_attention_heads
        "head_dim": None,  # None: hidden_size // num_attention_heads
        "hidden_act": "silu",
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6,
        "attention_bias": False,
        "mlp_bias": False,
        "rope_theta": 10000.0,
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
        "rope_theta": 10000.0,
        "use_sliding_window": False,
        "max_window_layers": 28,
    },
}

TLC = "transformer_layer_config"


@dataclass(frozen=True)
class CheckedConfig:
    """A config.json that passed validate's reader and config checks."""

    path: Path
    data: dict[str, Any]  # as validate parsed it
    model_type: str
    format_version: str  # the detected (or declared) format version line, e.g. "0.9"
    findings: list[str] = field(default_factory=list)  # validate's warnings, as it prints them


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
    algo: dict[str, Any]  # every top-level field of the type's schema, defaults filled
    speculative_tokens: int | None
    format_version: str = ""
    #: the config with every value the forward used written in (defaults included): what
    #: the tensor contract is evaluated on, so it describes the model that is built
    effective: dict[str, Any] = field(default_factory=dict)
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


# ----------------------------------------------------------------------------- reading


def read_config(checkpoint: Path) -> CheckedConfig:
    """Read ``checkpoint`` (a directory or its config.json) through validate's checks.

    Raises :class:`InputError` (exit 3) when the file cannot be read as JSON, a
    :class:`CheckpointError` (exit 1) carrying validate's findings when the config has
    errors, :class:`UnsupportedError` for a type without a reference forward.
    """
    from spec_format.runner.validate_options import ValidateOptions
    from spec_format.runner.validation import check_config_file

    try:
        path = checkpoint / "config.json" if checkpoint.is_dir() else checkpoint
        found = path.exists()
    except OSError as exc:  # e.g. a directory without search permission
        raise InputError(f"{checkpoint}: cannot read ({exc.strerror or exc})") from None
    if not found:
        raise InputError(f"{checkpoint}: no config.json found")
    # the reference forward computes what the checkpoint computes, whichever engine serves
    # it: that no covered vLLM release loads the draft (C022) is validate's to say, not a
    # reason to refuse the computation
    report, ctx = check_config_file(path, ValidateOptions(ignore=("C022",)))
    if report.unreadable:
        raise InputError(_render(report))
    if report.status.value == "fail" or ctx is None:
        raise CheckpointError(
            f"{path}: `specfmt validate` finds errors in this config; the reference forward "
            "runs only a config that validates",
            _render(report).splitlines(),
        )
    if ctx.model_type not in FORWARD_CLASSES:
        raise UnsupportedError(
            f"speculators_model_type {ctx.model_type!r} has no reference forward; "
            f"supported: {', '.join(SUPPORTED_TYPES)}"
        )
    warnings = []
    if any(f.severity is Severity.WARNING for f in report.findings):  # locating costs a scan
        warnings = [
            f"{f.rule} {f.message}"
            for f in report.sorted_findings()
            if f.severity is Severity.WARNING
        ]
    return CheckedConfig(path, ctx.config, ctx.model_type, ctx.format_version, warnings)


def _render(report) -> str:
    """The findings exactly as ``specfmt validate`` prints them (text, no colour)."""
    from spec_format.render.text import render_text

    out = io.StringIO()
    whole = Report()
    whole.files.append(report)
    render_text(whole, out, color=False, verbosity=1)
    return out.getvalue().rstrip("\n")


# ----------------------------------------------------------------------------- defaults


def _versions_from(version: str, model_type: str) -> list[str]:
    """The detected version, then every later version that has the type."""
    line = list(catalog.versions())
    later = line[line.index(version) :] if version in line else line
    return [v for v in later if model_type in catalog.versions()[v].types]


@cache
def _fields(version: str, model_type: str) -> dict[str, str]:
    """Every top-level field of the type's schema from ``version`` on -> the version whose
    schema declares it (``version`` itself when it has the field, else the first later one,
    the version that introduced it)."""
    out: dict[str, str] = {}
    for v in _versions_from(version, model_type):
        for key in schemas.resolve(v, model_type, ()).get("properties", {}):
            out.setdefault(key, v)
    return out


def layer_class_default(model_type: str, version: str) -> str | None:
    """The layer config class speculators ``version`` builds when
    ``transformer_layer_config.model_type`` is absent (the fact ``migrate`` writes in)."""
    return catalog.default_layer(model_type, version)


# ----------------------------------------------------------------------------- typed reads


class _Fields:
    """Typed reads of one JSON object: a value of the wrong kind or out of range is a
    :class:`CheckpointError` naming the field, never an exception from int() or float().
    validate's schema already checked most of these; the rest (fields it leaves open)
    are checked here before they reach an allocation, ``range`` or math."""

    def __init__(self, node: dict[str, Any], where: str, defaults: dict[str, Any]) -> None:
        self.node, self.where, self.defaults = node, where, defaults

    def raw(self, key: str) -> Any:
        value = self.node.get(key)
        return self.defaults.get(key) if value is None else value

    def _bad(self, key: str, value: Any, what: str) -> CheckpointError:
        return CheckpointError(
            f"{self.where}{key} is {_short(value)}; the reference forward needs {what}"
        )

    def int(self, key: str, minimum: int = 1) -> int:
        value = self.raw(key)
        if json_int(value) is None or value < minimum:
            raise self._bad(key, value, f"an integer >= {minimum}")
        return value

    def float(self, key: str, *, positive: bool = True) -> float:
        value = self.raw(key)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or (positive and value <= 0):
            raise self._bad(key, value, "a finite number" + (" > 0" if positive else ""))
        return float(value)

    def bool(self, key: str) -> bool:
        value = self.raw(key)
        if not isinstance(value, bool):
            raise self._bad(key, value, "true or false")
        return value

    def str(self, key: str) -> str:
        value = self.raw(key)
        if not isinstance(value, str):
            raise self._bad(key, value, "a string")
        return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ----------------------------------------------------------------------------- resolving


def resolve(checked: CheckedConfig) -> DraftSpec:
    """Turn a checked config into a :class:`DraftSpec`, or raise naming the field."""
    config, model_type, version = checked.data, checked.model_type, checked.format_version
    notes: list[str] = []
    effective = dict(config)
    algo = _algorithm_fields(config, model_type, version)
    effective.update(algo)
    tlc = config.get(TLC)
    if not isinstance(tlc, dict):  # the schema requires it; kept for direct callers
        raise CheckpointError(f"{TLC} is missing or not an object")
    layer, layer_effective = _resolve_layer(model_type, version, tlc, notes)
    effective[TLC] = layer_effective
    D, A, Ht = _resolve_vocab_and_aux(model_type, algo, layer, notes)
    _check_algorithm_fields(model_type, algo, layer, D)
    _reader_notes(model_type, config, version, notes)
    _train_serve_notes(model_type, config, algo, layer, A, notes)

    speculative_tokens = None
    spec_config = config.get("speculators_config")
    methods = spec_config.get("proposal_methods") if isinstance(spec_config, dict) else None
    if isinstance(methods, list) and methods and isinstance(methods[0], dict):
        value = json_int(methods[0].get("speculative_tokens"))
        speculative_tokens = value if value is not None and value >= 1 else None

    return DraftSpec(
        model_type, layer, D, A, Ht, algo, speculative_tokens, version, effective, notes
    )


def _algorithm_fields(config: dict[str, Any], model_type: str, version: str) -> dict[str, Any]:
    """Every top-level schema field of the type: the config's value, else the schema
    default. An integer field holding a float (the schema accepts ``8.0``) is refused: the
    tensor contract and torch need a true integer."""
    out = {}
    for key, declared_in in _fields(version, model_type).items():
        value = config[key] if key in config else schema_default(declared_in, model_type, key)
        kinds = schemas.resolve(declared_in, model_type, (key,)).get("type", ())
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        if "integer" in kinds and isinstance(value, float):
            raise CheckpointError(
                f"{key} is {value!r}; the reference forward needs an integer ({key}: "
                f"{int(value) if value.is_integer() else '...'})"
            )
        out[key] = value
    return out


def _layer_class(
    model_type: str, version: str, tlc: dict[str, Any], notes: list[str]
) -> tuple[str, str]:
    """(decoder family built, config class whose defaults apply)."""
    declared = tlc.get("model_type")
    layer_type = declared
    if layer_type is None:
        layer_type = layer_class_default(model_type, version)
        engines = disputes.absent_layer_class(model_type)  # the reader table
        notes.append(
            f"{TLC}.model_type is absent: speculators {version} builds {layer_type} layers "
            f"(used here){f', {engines}' if engines else ''}; write it explicitly"
        )
    if model_type in NEXTN and layer_type != "qwen3":
        raise UnsupportedError(
            f"{TLC}.model_type {layer_type!r} is not supported for {model_type} by the reference "
            "forward: only 'qwen3' MTP layers are implemented (Qwen3-Next / Qwen3.5 MTP "
            "layers use gated attention and (1+w) norms)"
        )
    if model_type in BLOCK:
        # The DFlash family always builds Qwen3-style layers (q_norm/k_norm), whatever
        # model_type says; the config class (defaults, sliding window) follows model_type.
        config_class = layer_type if layer_type in LAYER_CLASS_DEFAULTS else "qwen3"
        return "qwen3", config_class
    if layer_type not in LAYER_CLASS_DEFAULTS:
        raise UnsupportedError(
            f"{TLC}.model_type {layer_type!r} is not a draft layer type for {model_type}: "
            f"the reference forward implements {', '.join(map(repr, LAYER_CLASS_DEFAULTS))}"
        )
    return layer_type, layer_type


def _resolve_layer(
    model_type: str, version: str, tlc: dict[str, Any], notes: list[str]
) -> tuple[LayerSpec, dict[str, Any]]:
    layer_type, config_class = _layer_class(model_type, version, tlc, notes)
    defaults = LAYER_CLASS_DEFAULTS[config_class]
    f = _Fields(tlc, f"{TLC}.", defaults)

    H, nH, V = f.int("hidden_size"), f.int("num_attention_heads"), f.int("vocab_size")
    L = f.int("num_hidden_layers", minimum=1)
    nKV = f.int("num_key_value_heads") if f.raw("num_key_value_heads") is not None else nH
    hd = f.int("head_dim") if f.raw("head_dim") is not None else H // nH
    if hd < 1:
        raise CheckpointError(
            f"{TLC}.head_dim is absent and hidden_size // num_attention_heads is 0; set it"
        )
    I = f.int("intermediate_size")  # noqa: E741
    eps = f.float("rms_norm_eps")
    resolved = {
        "intermediate_size": I,
        "head_dim": hd,
        "rms_norm_eps": eps,
        "num_key_value_heads": nKV,
    }
    for name, value in resolved.items():
        if tlc.get(name) is None:
            notes.append(
                f"{TLC}.{name} is absent: used {value}, as transformers' {config_class} "
                "config class (speculators) does; write it explicitly"
            )
    hidden_act = f.str("hidden_act")
    if hidden_act not in ("silu", "swish"):
        raise UnsupportedError(
            f"{TLC}.hidden_act {hidden_act!r} is not supported (the reference implements silu)"
        )

    sliding_window = None
    if tlc.get("sliding_window") is not None:
        sliding_window = f.int("sliding_window")
    if config_class == "qwen3" and not f.bool("use_sliding_window"):
        sliding_window = None  # Qwen3Config drops the window unless use_sliding_window
    layer_types = tlc.get("layer_types")
    if layer_types is None:
        first_sliding = f.int("max_window_layers", minimum=0) if config_class == "qwen3" else L
        layer_types = [
            "sliding_attention"
            if sliding_window is not None and i >= first_sliding
            else "full_attention"
            for i in range(L)
        ]
    if not isinstance(layer_types, list) or len(layer_types) < L:
        raise CheckpointError(f"{TLC}.layer_types needs one entry per layer ({L} layers)")
    layer_types = layer_types[:L]
    for i, kind in enumerate(layer_types):
        if kind not in ("full_attention", "sliding_attention"):
            raise UnsupportedError(
                f"{TLC}.layer_types[{i}] is {_short(kind)}; the reference implements "
                "'full_attention' and 'sliding_attention'"
            )
    if "sliding_attention" in layer_types and not sliding_window:
        notes.append(
            "layer_types has sliding_attention layers but no effective sliding_window "
            "(qwen3 drops it unless use_sliding_window=true): the training model runs "
            "them without a window, and so does this forward"
        )
    max_positions = f.int("max_position_embeddings")
    attention_bias = f.bool("attention_bias")
    mlp_bias = f.bool("mlp_bias") if layer_type == "llama" else False  # Qwen3MLP: none
    layer = LayerSpec(
        model_type=layer_type,
        H=H,
        I=I,
        nH=nH,
        nKV=nKV,
        hd=hd,
        V=V,
        L=L,
        eps=eps,
        hidden_act=hidden_act,
        attention_bias=attention_bias,
        mlp_bias=mlp_bias,
        layer_types=tuple(layer_types),
        sliding_window=sliding_window,
        rope=_resolve_rope(f, max_positions, notes),
    )
    effective = {
        **tlc,
        "model_type": config_class,
        "hidden_size": H,
        "intermediate_size": I,
        "num_hidden_layers": L,
        "num_attention_heads": nH,
        "num_key_value_heads": nKV,
        "head_dim": hd,
        "vocab_size": V,
        "attention_bias": attention_bias,
        "mlp_bias": mlp_bias,
    }
    return layer, effective


def _rope_params(tlc: dict[str, Any]) -> dict[str, Any]:
    params = tlc.get("rope_scaling") or tlc.get("rope_parameters") or {}
    if isinstance(params, dict) and ("sliding_attention" in params or "full_attention" in params):
        # Per-layer-type RoPE: speculators flattens it to the sliding_attention entry.
        params = params.get("sliding_attention") or params.get("full_attention") or {}
    if not isinstance(params, dict):
        raise CheckpointError(f"{TLC}.rope_parameters is {_short(params)}, not an object")
    return dict(params)


def _resolve_rope(layer: _Fields, max_positions: int, notes: list[str]) -> RopeSpec:
    """Read RoPE from ``rope_parameters`` (transformers 5) or ``rope_scaling`` +
    ``rope_theta`` (transformers 4), the way transformers standardises them."""
    tlc = layer.node
    params = _rope_params(tlc)
    rope_type = params.pop("rope_type", None) or params.pop("type", None) or "default"
    if rope_type not in SUPPORTED_ROPE_TYPES:
        raise UnsupportedError(
            f"rope_type {_short(rope_type)} is not supported by the reference forward; "
            f"supported: {', '.join(SUPPORTED_ROPE_TYPES)}"
        )
    p = _Fields(params, "rope_parameters.", {})
    if params.get("rope_theta") is not None:
        theta = p.float("rope_theta")
    else:
        if tlc.get("rope_theta") is None:
            notes.append(
                "rope theta is absent: transformers (training) uses 10000, vLLM's DFlash and "
                "older Qwen3 layers use 1e6; used 10000 here, write rope_theta explicitly"
            )
        theta = layer.float("rope_theta")
    params.pop("rope_theta", None)
    if params.get("partial_rotary_factor") is not None:
        partial = p.float("partial_rotary_factor")
    else:
        partial = _Fields(tlc, f"{TLC}.", {"partial_rotary_factor": 1.0}).float(
            "partial_rotary_factor"
        )
    params.pop("partial_rotary_factor", None)
    if partial > 1:
        raise CheckpointError(f"partial_rotary_factor is {partial}; it must be at most 1")
    if rope_type == "mrope" or "mrope_section" in params:
        notes.append(
            "multimodal RoPE (mrope_section) treated as 1-D RoPE: equal for text-only "
            "inputs, where the three position components coincide"
        )
        params.pop("mrope_section", None)
        params.pop("mrope_interleaved", None)
        if rope_type == "mrope":
            rope_type = "default"
    if rope_type == "default" and partial < 1.0:
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
        if p.float("high_freq_factor") <= p.float("low_freq_factor"):
            raise CheckpointError(
                "rope_parameters.high_freq_factor must be larger than low_freq_factor "
                "(llama3 RoPE divides by their difference)"
            )
    if rope_type in ("llama3", "yarn"):
        if params.get("original_max_position_embeddings") is None:
            params["original_max_position_embeddings"] = (
                tlc.get("original_max_position_embeddings") or max_positions
            )
        p.int("original_max_position_embeddings")
    for key in ("factor", "attention_factor", "mscale", "mscale_all_dim", "beta_fast", "beta_slow"):
        if params.get(key) is not None:
            params[key] = p.float(key)
    return RopeSpec(rope_type, theta, partial, max_positions, params)


def _resolve_vocab_and_aux(
    model_type: str, algo: dict[str, Any], layer: LayerSpec, notes: list[str]
) -> tuple[int, int, int]:
    if model_type in NEXTN:
        return layer.V, 0, layer.H
    D = algo["draft_vocab_size"]
    ids = algo[catalog.aux_key(model_type)]
    A = len(ids) if ids else 3  # a list or null (schema); null is an error for DFlash (X005)
    Ht = algo["target_hidden_size"] or layer.H
    if Ht != layer.H:
        notes.append(
            f"target_hidden_size ({Ht}) differs from hidden_size ({layer.H}): speculators' "
            "training model cannot build this draft; the fc input follows vLLM and the "
            f"legacy converter (A*Ht = {A * Ht})"
        )
    return D, A, Ht


def _check_algorithm_fields(
    model_type: str, algo: dict[str, Any], layer: LayerSpec, D: int
) -> None:
    """What the reference needs beyond the schema and validate's rules (which already
    checked types, ranges and the cross-field rules)."""
    if (
        model_type in catalog.with_feature("markov-head")
        and algo["enable_confidence_head"]
        and algo["confidence_head_with_markov"]
        and algo["markov_rank"] <= 0
    ):
        raise CheckpointError("confidence_head_with_markov=true requires markov_rank > 0")
    if model_type in catalog.with_feature("conv-selector"):
        if D != layer.V:
            raise CheckpointError(
                f"{model_type} requires the full verifier vocabulary (draft_vocab_size {D} != "
                f"vocab_size {layer.V})"
            )
        if algo["conv_kernel_size"] > algo["block_size"]:
            raise CheckpointError("conv_kernel_size cannot exceed block_size")


def _reader_notes(model_type: str, config: dict[str, Any], version: str, notes: list[str]) -> None:
    """What the reader table says the engines read differently from the writer (the forward
    follows the writer), and the flags they ignore."""
    from spec_format.facts import disputes

    writer = disputes.writer_of(version)
    if writer is None:
        return
    engines = disputes.assumed_engines()
    for d in disputes.disputes(config, model_type, writer, engines):
        notes.append(f"{d.field}: {d.describe()}; this forward follows {writer.id}")
    for key, ignoring in disputes.ignored_fields(model_type, engines).items():
        if config.get(key) is True:
            notes.append(f"{key} is true: {', '.join(ignoring)} never read it (used here)")


def _train_serve_notes(
    model_type: str,
    config: dict[str, Any],
    algo: dict[str, Any],
    layer: LayerSpec,
    A: int,
    notes: list[str],
) -> None:
    """Differences between speculators' training model (followed here) and vLLM."""
    if model_type in CHAIN and layer.model_type == "llama":
        refusing, sizes = readers.fc_mismatch(model_type, config, A)
        if refusing:
            notes.append(
                f"{A} aux hidden states: vLLM {refusing} size the llama EAGLE-3 fc for "
                f"{' or '.join(map(str, sizes))}"
            )
    if (
        model_type in CHAIN
        and model_type not in PARALLEL
        and any(layer.is_sliding(i) for i in range(layer.L))
    ):
        notes.append(
            "sliding-window layers in chained steps: training measures the window from the "
            "last row, vLLM from each step's own position (differs once steps approach the "
            "window)"
        )
    if model_type in CHAIN and layer.model_type == "qwen3" and layer.attention_bias:
        notes.append("attention_bias with qwen3 layers: vLLM's Qwen3 o_proj has no bias")
    if model_type in PARALLEL and algo["norm_output"]:
        notes.append("norm_output has no effect on P-EAGLE (single parallel pass)")
    if model_type in BLOCK:
        if "sliding_attention" in layer.layer_types:
            notes.append(
                "sliding-window context is measured from the anchor (training); vLLM "
                "measures the window from each query's own position"
            )
        if (
            model_type in catalog.with_feature("anchor-sampling-unsupported")
            and algo["sample_from_anchor"]
        ):
            notes.append(
                f"{model_type} with sample_from_anchor=true: vLLM's DFlash proposer samples only "
                "block slots 1..B-1"
            )
    if (
        model_type in catalog.with_feature("markov-head")
        and algo["markov_head_type"] != "vanilla"
        and algo["markov_rank"]
    ):
        notes.append(
            f"markov_head_type {algo['markov_head_type']!r}: vLLM builds only the vanilla "
            "Markov head"
        )
    if model_type in NEXTN:
        notes.append(
            "MTP input is the verifier's last hidden state as captured by speculators' "
            "datagen (pre-final-norm); whether vLLM feeds the same tensor is unverified"
        )
