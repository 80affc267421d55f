"""The one tiny-checkpoint builder: config.json + model.safetensors for any contract type.

Tests, fixtures, benchmarks and the reference forward's tests all build their checkpoints
here, from the same tensor contract the validator reads, so a test checkpoint can never
drift from what the validator expects. Every way of breaking a checkpoint that a rule
needs a fixture for is one keyword: ``drop``, ``rename``, ``reshape``, ``retype``,
``values``/``mutate`` (poke values, e.g. a bad ``d2t``), ``nan``/``inf``, ``extra``.

Why our own writer instead of ``safetensors.numpy.save_file``: numpy has no bfloat16, and
benchmarks need multi-GB files written *sparsely* (header plus holes) in a second. The
writer produces the library's canonical layout (tensors sorted by descending dtype
alignment, then name; header padded with spaces to a multiple of 8), and the tests load
its output with the real safetensors library.

numpy is imported lazily: importing this module costs nothing.
"""

from __future__ import annotations

import copy
import json
import os
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from spec_format.convert.write import canonical_header
from spec_format.facts import catalog
from spec_format.facts.contract import expected_tensors
from spec_format.facts.contract.symbols import get_path
from spec_format.parsers.safetensors import DTYPE_BITS, INDEX_NAME, SINGLE_NAME

#: Float dtype of config ``torch_dtype``/``dtype`` values.
_CONFIG_DTYPES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32", "float64": "F64"}
_FAMILY_DEFAULT = {"bool": "BOOL", "int64": "I64"}


# ---------------------------------------------------------------------------------------
# Configs


@cache
def _tiny_data() -> dict[str, Any]:
    return json.loads((Path(__file__).with_name("tiny_configs.json")).read_text(encoding="utf-8"))


def tiny_config(model_type: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A complete speculators 0.9 config with tiny dimensions for ``model_type``.

    Dimensions follow the reference-forward test sizes: V=256, H=64, I=128, nH=4, nKV=2 and
    head_dim=32 (deliberately not H/nH), D=64 (so the vocabulary maps exist), a verifier of 8
    layers with aux layers [2, 4, 5]. ``overrides`` maps dotted paths to values
    (``{"transformer_layer_config.model_type": "qwen3", "fc_norm": True}``); a value of
    :data:`DELETE` removes the key.
    """
    layer = {
        "model_type": "llama",
        "vocab_size": 256,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "max_position_embeddings": 256,
        "attention_bias": False,
        "tie_word_embeddings": False,
    }
    config: dict[str, Any] = {
        "speculators_model_type": model_type,
        "speculators_version": "0.9.0",
        "torch_dtype": "bfloat16",
        "draft_vocab_size": 64,
        "transformer_layer_config": layer,
        "speculators_config": {
            "algorithm": model_type,
            "proposal_methods": [
                {
                    "proposal_type": "greedy",
                    "speculative_tokens": 3,
                    "verifier_accept_k": 1,
                    "accept_tolerance": 0.0,
                }
            ],
            "default_proposal_method": "greedy",
            "verifier": {"name_or_path": None, "architectures": ["LlamaForCausalLM"]},
        },
    }
    rec = catalog.record(model_type)
    if rec is None or rec.family == "legacy":
        raise ValueError(f"no tiny config for speculators_model_type {model_type!r}")
    config["architectures"] = list(rec.architectures)
    if rec.aux_key:
        config[rec.aux_key] = [2, 4, 5]
    tiny = _tiny_data()
    for part in (tiny["families"].get(rec.family, {}), tiny["types"].get(model_type, {})):
        config.update(copy.deepcopy(part.get("config", {})))
        layer.update(copy.deepcopy(part.get("layer", {})))
        if "speculative_tokens" in part:
            config["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = part[
                "speculative_tokens"
            ]
        if "verifier_architectures" in part:
            config["speculators_config"]["verifier"]["architectures"] = list(
                part["verifier_architectures"]
            )
    for path, value in (overrides or {}).items():
        set_path(config, path, value)
    return config


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


#: Override value that removes a key from the config.
DELETE: Any = _Delete()


def set_path(config: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, with :data:`DELETE`, remove) a dotted path, creating dicts on the way."""
    parts = path.split(".")
    node = config
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    if value is DELETE:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def replace_keys(config: dict[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """Replace top-level keys of ``config`` with ``overrides`` (a value of None removes the
    key); returns ``config``."""
    for key, value in (overrides or {}).items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    return config


def qwen3_8b_eagle3_config() -> dict[str, Any]:
    """The real shapes of RedHatAI/Qwen3-8B-speculator.eagle3 (H=4096, V=151936, D=32000,
    one layer, bf16): the benchmark's checkpoint."""
    return tiny_config(
        "eagle3",
        {
            "draft_vocab_size": 32000,
            "transformer_layer_config.vocab_size": 151936,
            "transformer_layer_config.hidden_size": 4096,
            "transformer_layer_config.intermediate_size": 12288,
            "transformer_layer_config.num_attention_heads": 32,
            "transformer_layer_config.num_key_value_heads": 8,
            "transformer_layer_config.head_dim": 128,
            "transformer_layer_config.max_position_embeddings": 40960,
            "transformer_layer_config.rope_theta": 1000000.0,
            "eagle_aux_hidden_state_layer_ids": [2, 18, 33],
            "speculators_config.verifier": {
                "name_or_path": "Qwen/Qwen3-8B",
                "architectures": ["Qwen3ForCausalLM"],
            },
        },
    )


# ---------------------------------------------------------------------------------------
# Values


def vocab_maps(vocab: int, draft_vocab: int, seed: int = 0):
    """A valid (t2d, d2t) pair: ``draft_vocab`` sorted target ids, as the library builds it."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(vocab, size=draft_vocab, replace=False)).astype(np.int64)
    d2t = ids - np.arange(draft_vocab, dtype=np.int64)
    t2d = np.zeros(vocab, dtype=bool)
    t2d[ids] = True
    return t2d, d2t


def to_bytes(array: Any, dtype: str) -> bytes:
    """Little-endian bytes of ``array`` stored as safetensors ``dtype`` (BF16 rounded)."""
    import numpy as np

    a = np.asarray(array)
    if dtype == "BF16":
        f = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
        rounded = (f + np.uint32(0x7FFF) + ((f >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
        # keep NaN a NaN (rounding can carry a NaN mantissa into the exponent's neighbour)
        nan = np.isnan(np.asarray(a, dtype=np.float32))
        out = rounded.astype("<u2")
        out[nan] = 0x7FC0
        return out.tobytes()
    from spec_format.parsers.safetensors import NUMPY_DTYPES

    numpy_dtype = NUMPY_DTYPES.get(dtype)
    if numpy_dtype is None:
        raise ValueError(f"the builder cannot write {dtype} values")
    with np.errstate(invalid="ignore"):  # NaN poked into an integer tensor on purpose
        return np.ascontiguousarray(a, dtype=numpy_dtype).tobytes()


def _random_values(name: str, shape: tuple[int, ...], rng):
    import numpy as np

    if len(shape) == 1 and "norm" in name:
        return 1.0 + 0.01 * rng.standard_normal(shape, dtype=np.float32)
    return 0.02 * rng.standard_normal(shape, dtype=np.float32)


# ---------------------------------------------------------------------------------------
# Writing


@dataclass
class TensorData:
    """One tensor to write: ``data`` is its bytes, or ``None`` for a hole (sparse file)."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes | None = None
    #: with ``data`` None: repeat these bytes over the tensor (cheap dense data for benches)
    pattern: bytes | None = None

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * DTYPE_BITS[self.dtype] // 8


def write_safetensors(
    path: str | os.PathLike[str],
    tensors: Mapping[str, TensorData],
    metadata: Mapping[str, str] | None = None,
) -> int:
    """Write the canonical layout; tensors without data become holes. Returns file size."""
    head, order = canonical_header(tensors.items(), metadata)
    total = len(head) + sum(t.nbytes for _, t in order)
    with open(path, "wb") as f:
        f.write(head)
        position = len(head)
        for name, t in order:
            if t.data is not None:
                if len(t.data) != t.nbytes:
                    raise ValueError(f"{name}: {len(t.data)} bytes for {t.nbytes}")
                f.seek(position)
                f.write(t.data)
            elif t.pattern:
                f.seek(position)
                block = t.pattern * max(1, (8 << 20) // len(t.pattern))
                left = t.nbytes
                while left > 0:
                    chunk = block[: min(left, len(block))]
                    f.write(chunk)
                    left -= len(chunk)
            position += t.nbytes
        f.truncate(total)
    return total


def write_raw(
    path: str | os.PathLike[str], header: bytes | Mapping[str, Any], data: bytes = b""
) -> None:
    """Write a file byte for byte: 8-byte length, header (JSON-encoded if a mapping), data.
    For crafting broken files."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        f.write(data)


# ---------------------------------------------------------------------------------------
# Checkpoints


@dataclass
class BuiltCheckpoint:
    path: Path
    config: dict[str, Any]
    tensors: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"


def build_checkpoint(
    directory: str | os.PathLike[str],
    config: Mapping[str, Any],
    *,
    seed: int = 0,
    dtype: str | None = None,
    include_optional: bool | Iterable[str] | None = None,
    drop: Iterable[str] = (),
    rename: Mapping[str, str] | None = None,
    reshape: Mapping[str, tuple[int, ...]] | None = None,
    retype: Mapping[str, str] | None = None,
    values: Mapping[str, Any] | None = None,
    mutate: Mapping[str, Callable[[Any], Any]] | None = None,
    nan: Iterable[str] = (),
    inf: Iterable[str] = (),
    extra: Mapping[str, tuple[str, tuple[int, ...]]] | None = None,
    shards: int | None = None,
    data: str = "random",
    metadata: Mapping[str, str] | None = None,
    write_config: bool = True,
) -> BuiltCheckpoint:
    """Write ``config.json`` and the weights for ``config`` into ``directory``.

    The tensors come from the type's contract. ``include_optional`` chooses optional tensors:
    ``None`` writes what speculators writes (embed_tokens and lm_head, except for mtp),
    ``True`` all of them, ``False`` none, or an explicit list of names.

    Break one thing per rule with: ``drop`` (names), ``rename`` ({old: new}), ``reshape``
    ({name: shape}), ``retype`` ({name: dtype}, values converted), ``values`` ({name: array},
    replaces the values), ``mutate`` ({name: fn(array) -> array}), ``nan``/``inf`` (names
    whose first element becomes NaN/Inf), ``extra`` ({name: (dtype, shape)}).
    ``data`` is ``"random"``, ``"zeros"``, ``"sparse"`` (float tensors become holes: a
    multi-GB file costs nothing) or ``"pattern"`` (float tensors repeat a 1 MiB block of
    random values: dense, finite and cheap to write); vocabulary maps and ``values`` are
    always written for real.
    ``shards=N`` splits the tensors over N files plus ``model.safetensors.index.json``.
    """
    import numpy as np

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config = copy.deepcopy(dict(config))
    rng = np.random.default_rng(seed)
    expected = expected_tensors(config)
    model_type = expected.model_type
    float_dtype = dtype or _CONFIG_DTYPES.get(
        str(config.get("torch_dtype") or config.get("dtype") or "bfloat16"), "BF16"
    )

    chosen: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, t in expected.tensors.items():
        if not t.required and not _include_optional(include_optional, name, t.role, model_type):
            continue
        if any(d is None for d in t.shape):
            raise ValueError(
                f"the config does not determine the shape of {name} {t.describe_shape()}; "
                "complete the config"
            )
        chosen[name] = (_FAMILY_DEFAULT.get(t.dtype, float_dtype), tuple(t.shape))  # type: ignore[arg-type]

    V, D = expected.symbols.get("V"), expected.symbols.get("D")
    maps = None
    if "t2d" in chosen or "d2t" in chosen:
        maps = vocab_maps(V, D, seed)

    drop = set(drop)
    rename = dict(rename or {})
    reshape = dict(reshape or {})
    retype = dict(retype or {})
    values = dict(values or {})
    mutate = dict(mutate or {})
    nan, inf = set(nan), set(inf)
    for name, spec in (extra or {}).items():
        chosen[name] = (spec[0], tuple(spec[1]))
    unknown = (
        drop | set(rename) | set(reshape) | set(retype) | set(values) | set(mutate) | nan | inf
    ) - set(chosen)
    if unknown:
        raise ValueError(f"not tensors of this checkpoint: {sorted(unknown)}")

    out: dict[str, TensorData] = {}
    built: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, (tensor_dtype, shape) in chosen.items():
        if name in drop:
            continue
        shape = tuple(reshape.get(name, shape))
        tensor_dtype = retype.get(name, tensor_dtype)
        array = None
        if name in values:
            array = np.asarray(values[name])
            shape = tuple(array.shape)
        elif name == "t2d" and maps is not None:
            array = maps[0]
        elif name == "d2t" and maps is not None:
            array = maps[1]
        if array is not None and tuple(array.shape) != shape:
            array = _fit(array, shape)
        if name in mutate:
            base = array if array is not None else _random_values(name, shape, rng)
            array = np.asarray(mutate[name](np.array(base)))
            shape = tuple(array.shape)
        if name in nan or name in inf:
            base = array if array is not None else _random_values(name, shape, rng)
            array = np.array(base, dtype=np.float64)
            if array.size:
                array.flat[0] = np.nan if name in nan else np.inf
        payload: bytes | None
        pattern = None
        if array is not None:
            payload = to_bytes(array, tensor_dtype)
        elif data == "sparse" and tensor_dtype not in ("BOOL", "I64"):
            payload = None
        elif data == "pattern" and tensor_dtype not in ("BOOL", "I64"):
            payload = None
            item = DTYPE_BITS[tensor_dtype] // 8
            pattern = to_bytes(_random_values(name, ((1 << 20) // item,), rng), tensor_dtype)
        elif data in ("zeros", "sparse"):
            payload = bytes(TensorData(tensor_dtype, shape).nbytes)
        else:
            if tensor_dtype in ("BOOL", "I64", "I32", "I16", "I8", "U8"):
                payload = to_bytes(rng.integers(0, 2, size=shape), tensor_dtype)
            else:
                payload = to_bytes(_random_values(name, shape, rng), tensor_dtype)
        final = rename.get(name, name)
        out[final] = TensorData(tensor_dtype, shape, payload, pattern)
        built[final] = (tensor_dtype, shape)

    meta = {"format": "pt"} if metadata is None else dict(metadata)
    files = _write_weights(directory, out, meta, shards)
    if write_config:
        (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    return BuiltCheckpoint(directory, config, built, files)


def _include_optional(
    choice: bool | Iterable[str] | None, name: str, role: str | None, model_type: str
) -> bool:
    if choice is None:
        # MTP layers share the verifier's embeddings and head
        rec = catalog.record(model_type)
        return role in ("embed", "lm_head") and not (rec and rec.family == "nextn")
    if isinstance(choice, bool):
        return choice and role not in ("t2d", "d2t")
    return name in set(choice)


def _fit(array, shape: tuple[int, ...]):
    """Resize ``array`` to ``shape`` (for ``reshape`` of a tensor with real values)."""
    import numpy as np

    flat = np.resize(array.reshape(-1), int(np.prod(shape)) if shape else 1)
    return flat.reshape(shape)


def _write_weights(
    directory: Path, tensors: dict[str, TensorData], metadata: dict[str, str], shards: int | None
) -> list[Path]:
    if not shards:
        path = directory / SINGLE_NAME
        write_safetensors(path, tensors, metadata)
        return [path]
    names = sorted(tensors)
    groups = [names[i::shards] for i in range(shards)]
    weight_map: dict[str, str] = {}
    files = []
    total = 0
    for i, group in enumerate(groups, start=1):
        shard = f"model-{i:05d}-of-{shards:05d}.safetensors"
        write_safetensors(directory / shard, {n: tensors[n] for n in group}, metadata)
        files.append(directory / shard)
        for n in group:
            weight_map[n] = shard
            total += tensors[n].nbytes
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (directory / INDEX_NAME).write_text(json.dumps(index, indent=2) + "\n")
    return files


# ---------------------------------------------------------------------------------------
# Verifiers


def tiny_verifier() -> dict[str, Any]:
    """The verifier config.json :func:`tiny_config` drafts are built for (8 layers, hidden 64,
    vocab 256)."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "num_hidden_layers": 8,
        "vocab_size": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "intermediate_size": 256,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "max_position_embeddings": 256,
        "torch_dtype": "bfloat16",
    }


def qwen3_8b_config() -> dict[str, Any]:
    """The config.json values of Qwen/Qwen3-8B that fix its parameter count."""
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 4096,
        "num_hidden_layers": 36,
        "intermediate_size": 12288,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "torch_dtype": "bfloat16",
    }


def verifier_tensors(config: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensor names and shapes a transformers ``save_pretrained`` of a Llama, Mistral,
    Qwen3 or Qwen3-MoE causal LM writes (``model.`` prefix, per-expert MoE tensors).

    Written out by name here, independently of ``specfmt inspect``'s config formula, so a
    test can compare the two."""
    H, L, V = config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]
    nH = config["num_attention_heads"]
    nKV = config.get("num_key_value_heads") or nH
    hd = config.get("head_dim") or H // nH
    qwen = config["model_type"] in ("qwen3", "qwen3_moe")
    bias = bool(config.get("attention_bias"))
    experts = config.get("num_experts") if config["model_type"] == "qwen3_moe" else None
    out: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (V, H)}
    for i in range(L):
        p = f"model.layers.{i}."
        out[p + "input_layernorm.weight"] = (H,)
        out[p + "post_attention_layernorm.weight"] = (H,)
        for name, rows in (("q", nH * hd), ("k", nKV * hd), ("v", nKV * hd)):
            out[p + f"self_attn.{name}_proj.weight"] = (rows, H)
            if bias:
                out[p + f"self_attn.{name}_proj.bias"] = (rows,)
        out[p + "self_attn.o_proj.weight"] = (H, nH * hd)
        if bias:
            out[p + "self_attn.o_proj.bias"] = (H,)
        if qwen:
            out[p + "self_attn.q_norm.weight"] = (hd,)
            out[p + "self_attn.k_norm.weight"] = (hd,)
        if experts:
            I = config["moe_intermediate_size"]  # noqa: E741
            out[p + "mlp.gate.weight"] = (experts, H)
            for e in range(experts):
                q = f"{p}mlp.experts.{e}."
                out[q + "gate_proj.weight"] = (I, H)
                out[q + "up_proj.weight"] = (I, H)
                out[q + "down_proj.weight"] = (H, I)
        else:
            I = config["intermediate_size"]  # noqa: E741
            out[p + "mlp.gate_proj.weight"] = (I, H)
            out[p + "mlp.up_proj.weight"] = (I, H)
            out[p + "mlp.down_proj.weight"] = (H, I)
    out["model.norm.weight"] = (H,)
    if not config.get("tie_word_embeddings"):
        out["lm_head.weight"] = (V, H)
    return out


def build_verifier(
    directory: str | os.PathLike[str],
    config: Mapping[str, Any],
    *,
    dtype: str = "BF16",
    shards: int | None = None,
) -> BuiltCheckpoint:
    """A verifier (target model) directory: its ``config.json`` and *sparse* safetensors
    weights (holes: a 16 GB model costs nothing), sharded with an index when ``shards``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    shapes = verifier_tensors(config)
    tensors = {name: TensorData(dtype, shape) for name, shape in shapes.items()}
    files = _write_weights(directory, tensors, {"format": "pt"}, shards)
    (directory / "config.json").write_text(json.dumps(dict(config), indent=2) + "\n")
    built = {name: (dtype, shape) for name, shape in shapes.items()}
    return BuiltCheckpoint(directory, dict(config), built, files)


def config_value(config: Mapping[str, Any], path: str) -> Any:
    """Read a dotted path from a config (re-exported for tests)."""
    return get_path(config, path)
