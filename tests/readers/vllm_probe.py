"""Runs inside one vLLM reader environment (scripts/reader-envs.sh); never imported by specfmt.

Reads JSON requests, one per line, on stdin and answers each with one JSON line on stdout:
  {"config": {...}}  ->  {"accepted", "stage", "error", "speculative": {...}, "draft": {...}}
A line "{}" (no config) is answered with {"version": ...} and used as a readiness check.

Every reading comes from vLLM's own, unmodified code, called the way `vllm serve DRAFT` calls it:
* detection: ``vllm.transformers_utils.config.maybe_override_with_speculators`` (what
  EngineArgs runs first): method, number of speculative tokens, parallel drafting, verifier;
* draft config: ``HFConfigParser.parse`` (what ModelConfig runs for the draft), which for a
  speculators file calls ``SpeculatorsConfig.from_pretrained`` and the per-algorithm updater;
  a top-level ``model_type`` makes it take the plain-model path instead (reported as such);
* draft architecture: the model registry's supported architectures and, when unsupported,
  the registry's own error message;
* DFlash per-layer causality: ``_dflash_layer_causal`` from vLLM's DFlash model module.

Stubs and workarounds (nothing of vLLM is replaced):
* the DFlash model module (``vllm/model_executor/models/qwen3_dflash.py``) imports the whole
  attention stack, which needs compiled extensions (xgrammar, apache-tvm-ffi, vllm._C). Its
  ``_dflash_layer_causal`` is a pure function of the config, so its source is taken verbatim
  from that file with ``ast`` and executed on its own (the module's constant it reads is
  defined the same way); older releases without the function report ``layer_causal: null``;
* the wheel's compiled ``vllm._C`` is not installed; vLLM logs that it is missing and the
  config code never calls it.
"""

import ast
import contextlib
import io
import json
import logging
import os
import re
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    import importlib.metadata as metadata

    import vllm.transformers_utils.config as vconfig
    from vllm.model_executor.models.registry import ModelRegistry
    from vllm.transformers_utils.configs.speculators.base import SpeculatorsConfig

logging.disable(logging.CRITICAL)
VERSION = metadata.version("vllm")
SUPPORTED_ARCHS = set(ModelRegistry.get_supported_archs())
#: draft config attributes the per-algorithm updaters set (read back when present)
DRAFT_KEYS = (
    "architectures",
    "model_type",
    "draft_vocab_size",
    "target_hidden_size",
    "norm_before_residual",
    "norm_before_fc",
    "fc_norm",
    "norm_output",
    "eagle_aux_hidden_state_layer_ids",
    "target_layer_ids",
    "pard_token",
    "dflash_config",
    "sample_from_anchor",
    "dspark_bonus_anchor",
    "mask_token_id",
    "markov_rank",
    "markov_head_type",
    "block_size",
    "enable_confidence_head",
    "confidence_head_with_markov",
    "use_aux_hidden_state",
    "num_hidden_layers",
    "layer_types",
    "sliding_window_non_causal",
)


def _load_layer_causal():
    """vLLM's own per-layer DFlash causality function, executed without its module's imports."""
    source = Path(vconfig.__file__).parents[1] / "model_executor" / "models" / "qwen3_dflash.py"
    if not source.is_file():  # before DFlash
        return None
    tree = ast.parse(source.read_text(encoding="utf-8"))
    keep = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef) and node.name == "_dflash_layer_causal")
        or (
            isinstance(node, ast.Assign)
            and any(getattr(t, "id", None) == "_SLIDING_ATTENTION" for t in node.targets)
        )
    ]
    if not any(isinstance(node, ast.FunctionDef) for node in keep):
        return None
    for node in keep:  # annotations name the module's imports (Qwen3Config); not evaluated
        if isinstance(node, ast.FunctionDef):
            node.args.args[0].annotation = None
    namespace: dict = {}
    module = ast.Module(body=keep, type_ignores=[])
    exec(compile(module, str(source), "exec"), namespace)
    return namespace["_dflash_layer_causal"]


LAYER_CAUSAL = _load_layer_causal()


def jsonable(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        if isinstance(value, (list, tuple)):
            return [jsonable(v) for v in value]
        if isinstance(value, dict):
            return {str(k): jsonable(v) for k, v in value.items()}
        return repr(value)


def error_text(exc: BaseException) -> str:
    # function reprs carry memory addresses; keep their names so messages compare
    text = re.sub(r"<function (\w+) at 0x[0-9a-f]+>", r"\1", f"{type(exc).__name__}: {exc}")
    return text[:1000]


def read(config: dict, workdir: Path) -> dict:
    folder = Path(tempfile.mkdtemp(dir=workdir))
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    out = {"accepted": False, "stage": None, "error": None, "speculative": None, "draft": None}
    if not hasattr(vconfig, "maybe_override_with_speculators"):
        return read_010(folder, out)
    try:
        model, tokenizer, spec = vconfig.maybe_override_with_speculators(
            model=str(folder), tokenizer=None, trust_remote_code=False
        )
    except Exception as exc:
        out.update(stage="detect", error=error_text(exc))
        return out
    if spec is None:
        out.update(stage="detect", error="not detected as a speculators checkpoint")
        return out
    out["speculative"] = {
        "method": spec.get("method"),
        "num_speculative_tokens": spec.get("num_speculative_tokens"),
        "parallel_drafting": bool(spec.get("parallel_drafting", False)),
        "verifier": model,
    }
    try:
        _, hf = vconfig.HFConfigParser().parse(str(folder), trust_remote_code=False)
    except Exception as exc:
        out.update(stage="draft", error=error_text(exc))
        return out
    return judge_draft(hf, out)


def read_010(folder: Path, out: dict) -> dict:
    """0.10.x: ``maybe_override_with_speculators_target_model`` swaps in the verifier, then
    ``EngineArgs.create_speculative_config`` builds the draft with ``get_config`` and, when
    that is a ``SpeculatorsConfig``, takes the method and token count from its attributes
    (``hf.method``, ``hf.num_lookahead_tokens``), as read here."""
    try:
        model, _ = vconfig.maybe_override_with_speculators_target_model(
            model=str(folder), tokenizer=None, trust_remote_code=False
        )
    except Exception as exc:
        out.update(stage="detect", error=error_text(exc))
        return out
    try:
        hf = vconfig.get_config(str(folder), trust_remote_code=False)
    except Exception as exc:
        out.update(stage="draft", error=error_text(exc))
        return out
    if isinstance(hf, SpeculatorsConfig):
        out["speculative"] = {
            "method": getattr(hf, "method", None),
            "num_speculative_tokens": getattr(hf, "num_lookahead_tokens", None),
            "parallel_drafting": False,
            "verifier": model,
        }
    return judge_draft(hf, out)


def judge_draft(hf, out: dict) -> dict:
    draft = {"path": "speculators" if isinstance(hf, SpeculatorsConfig) else "plain"}
    draft["config_class"] = type(hf).__name__
    for key in DRAFT_KEYS:
        if hasattr(hf, key):
            draft[key] = jsonable(getattr(hf, key))
    if LAYER_CAUSAL is not None and getattr(hf, "dflash_config", None) is not None:
        layers = getattr(hf, "num_hidden_layers", 0) or 0
        draft["layer_causal"] = [bool(LAYER_CAUSAL(hf, i)) for i in range(layers)]
    else:
        draft["layer_causal"] = None
    archs = list(getattr(hf, "architectures", None) or [])
    draft["registered"] = bool(archs) and all(a in SUPPORTED_ARCHS for a in archs)
    out["draft"] = draft
    registry = None
    if not draft["registered"]:
        try:
            ModelRegistry._raise_for_unsupported(archs)
            registry = f"architectures {archs} are not registered"
        except Exception as exc:
            registry = error_text(exc)[:300]
    if draft["path"] != "speculators":
        # the speculators conversion never runs; what is left is a plain model config
        plain = (
            f"read as a plain {getattr(hf, 'model_type', None)!r} model, not as a speculators draft"
        )
        out.update(stage="draft", error=plain + (f"; {registry}" if registry else ""))
        return out
    if registry:
        out.update(stage="registry", error=registry)
        return out
    out["accepted"] = True
    return out


def answer(request: dict, workdir: Path) -> dict:
    """The answer to one request; ``workdir`` is the current directory (relative verifier
    paths resolve there, never in the checkout)."""
    if "config" not in request:
        return {"version": VERSION, "layer_causal": LAYER_CAUSAL is not None}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return read(request["config"], workdir)
    except Exception as exc:  # report, do not stop the session
        return {
            "accepted": False,
            "stage": "probe",
            "error": error_text(exc),
            "trace": traceback.format_exc()[-1500:],
        }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        os.chdir(workdir)
        for line in sys.stdin:
            if line.strip():
                sys.stdout.write(json.dumps(answer(json.loads(line), workdir)) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
