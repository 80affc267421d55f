"""Runs inside one speculators release (its own python path); never imported by specfmt.

Reads a JSON list of requests on stdin, answers a JSON list on stdout:
  {"op": "read", "config": {...}}  -> what this release reads from the config
  {"op": "write", "type": "eagle3"} -> a config this release writes itself (config only)
"""

import json
import sys
import traceback
import warnings

warnings.filterwarnings("ignore")

from speculators import SpeculatorModelConfig  # noqa: E402

HF_KEYS = {
    "architectures",
    "auto_map",
    "dtype",
    "torch_dtype",
    "transformers_version",
    "tie_word_embeddings",
}


def declared_fields(cls):
    """Fields the speculators classes declare themselves (not transformers' attributes)."""
    out = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("speculators"):
            for name in getattr(klass, "__annotations__", {}):
                if name in cls.model_fields:
                    out[name] = cls.model_fields[name]
    return out


def jsonable(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        if hasattr(value, "model_dump"):
            return jsonable(value.model_dump())
        if isinstance(value, (list, tuple)):
            return [jsonable(v) for v in value]
        if isinstance(value, dict):
            return {str(k): jsonable(v) for k, v in value.items()}
        return repr(value)


def rope(tlc):
    params = getattr(tlc, "rope_parameters", None)
    theta = getattr(tlc, "rope_theta", None)
    scaling = getattr(tlc, "rope_scaling", None)
    if isinstance(params, dict) and params:
        if all(isinstance(v, dict) for v in params.values()):
            params = next(iter(params.values()))
        theta = params.get("rope_theta", theta)
        rest = {k: v for k, v in params.items() if k != "rope_theta"}
        scaling = None if rest.get("rope_type", "default") == "default" and len(rest) <= 1 else rest
    if isinstance(scaling, dict):
        scaling = {("rope_type" if k == "type" else k): v for k, v in scaling.items()}
        if scaling.get("rope_type") == "default" and len(scaling) == 1:
            scaling = None
    return (float(theta) if theta is not None else None), jsonable(scaling)


def read(config):
    cfg = SpeculatorModelConfig.from_dict(json.loads(json.dumps(config)))
    cls = type(cfg)
    fields = declared_fields(cls)
    skip = {"transformer_layer_config", "speculators_config", "speculators_version"}
    values = {k: jsonable(getattr(cfg, k)) for k in fields if k not in skip}
    defaults = {}
    for k, f in fields.items():
        if k in skip:
            continue
        try:
            defaults[k] = jsonable(f.get_default(call_default_factory=True))
        except Exception:
            defaults[k] = None
    sc = cfg.speculators_config
    proposal = None
    if sc is not None:
        methods = [jsonable(m.model_dump()) for m in sc.proposal_methods]
        proposal = {
            "algorithm": sc.algorithm,
            "default": sc.default_proposal_method,
            "methods": methods,
            "verifier": jsonable(sc.verifier.model_dump()),
        }
    layer = None
    tlc = getattr(cfg, "transformer_layer_config", None)
    if tlc is not None:
        theta, scaling = rope(tlc)
        layer = {"class": type(tlc).__name__, "model_type": getattr(tlc, "model_type", None)}
        for k in (
            "hidden_size",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "num_hidden_layers",
            "vocab_size",
            "intermediate_size",
            "layer_types",
            "sliding_window",
            "use_sliding_window",
        ):
            layer[k] = jsonable(getattr(tlc, k, None))
        layer["rope_theta"], layer["rope_scaling"] = theta, scaling
    return {
        "ok": True,
        "type": cfg.speculators_model_type,
        "class": cls.__name__,
        "fields": values,
        "defaults": defaults,
        "proposal": proposal,
        "layer": layer,
        "declared": sorted(set(fields) | HF_KEYS),
    }


def write(model_type):
    import transformers

    cls = SpeculatorModelConfig.registry[model_type]
    fields = cls.model_fields
    greedy = {
        "proposal_type": "greedy",
        "speculative_tokens": 3,
        "verifier_accept_k": 1,
        "accept_tolerance": 0.0,
    }
    kw = {}
    if model_type in ("eagle3", "peagle", "eagle"):
        tlc = transformers.LlamaConfig(
            hidden_size=4096,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            intermediate_size=14336,
            num_hidden_layers=1,
            vocab_size=128256,
            max_position_embeddings=131072,
            rms_norm_eps=1e-5,
            rope_theta=500000.0,
            tie_word_embeddings=False,
        )
        verifier = {
            "name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
            "architectures": ["LlamaForCausalLM"],
        }
        kw.update(
            draft_vocab_size=32000,
            norm_before_residual=True,
            eagle_aux_hidden_state_layer_ids=[2, 16, 29],
            mask_token_id=128002,
        )
        if model_type == "peagle":
            greedy["speculative_tokens"] = 8
    else:
        tlc = transformers.Qwen3Config(
            hidden_size=4096,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            intermediate_size=12288,
            num_hidden_layers=5 if model_type != "mtp" else 36,
            vocab_size=151936,
            max_position_embeddings=40960,
            rms_norm_eps=1e-6,
            rope_theta=1000000.0,
            tie_word_embeddings=False,
        )
        verifier = {"name_or_path": "Qwen/Qwen3-8B", "architectures": ["Qwen3ForCausalLM"]}
        kw.update(
            draft_vocab_size=151936,
            block_size=8,
            aux_hidden_state_layer_ids=[2, 18, 33],
            mask_token_id=151669,
        )
        anchor = fields.get("sample_from_anchor")
        greedy["speculative_tokens"] = 8 if anchor is not None and anchor.default else 7
    kw = {k: v for k, v in kw.items() if k in fields}
    spec = {
        "algorithm": model_type,
        "proposal_methods": [greedy],
        "default_proposal_method": "greedy",
        "verifier": verifier,
    }
    if model_type == "eagle":
        cfg = cls(transformer_layer_config=tlc, speculators_config=spec, **kw)
    else:
        cfg = cls(transformer_layer_config=tlc, speculators_config=spec, **kw)
    return {"ok": True, "config": json.loads(cfg.to_json_string())}


def main():
    requests = json.load(sys.stdin)
    answers = []
    for req in requests:
        try:
            answers.append(read(req["config"]) if req["op"] == "read" else write(req["type"]))
        except Exception as exc:  # report, do not stop the batch
            answers.append(
                {
                    "ok": False,
                    "error": f"{type(exc).__name__}: {exc}"[:2000],
                    "trace": traceback.format_exc()[-1500:],
                }
            )
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
