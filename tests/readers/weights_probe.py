"""Runs inside one vLLM reader environment with its model layer (scripts/reader-envs.sh);
never imported by specfmt. Builds a release's draft model on CPU and loads a checkpoint.

Reads JSON requests, one per line, on stdin: ``{"draft": DIR, "verifier": DIR}`` (a draft
written by spec_format.testing, and a local verifier config; ``"record": true`` adds the
config reads, reads_probe.py); answers each with one line:
  {"stage", "error", "class", "loaded": {tensor: param}, "dropped": [...], "initial": [...]}

Everything is vLLM's own, unmodified code (a release before 0.31 gets its own ``CpuPlatform``
selected, which it does by itself only in a CPU build; 0.26-0.30 get a Python stand-in for
the one compiled op their drafter binds, see ``_register_silu_and_mul``; the model registry's
inspection of a class runs in this process: vLLM starts a fresh interpreter for it, 15-30 s of
importing vLLM again per architecture, only to keep CUDA uninitialised here, and on CPU the
same function gives the same ``_ModelInfo``), called the way ``vllm serve VERIFIER
--speculative-config '{...}'`` calls it: ``maybe_override_with_speculators`` on the draft gives
the speculative settings (method, tokens, parallel drafting), ``EngineArgs`` with the local
verifier builds the ``VllmConfig`` (CPU platform, float32), a single-process gloo group stands
in for the tensor-parallel one, ``initialize_model`` builds the class the release's registry
names, and the release's ``DefaultModelLoader.load_weights`` reads the safetensors file into it.

What it reports:
* ``stage``/``error``: where it stopped (``config``, ``build``, ``load``) and the exception;
* ``loaded``: checkpoint tensor -> the parameter (or non-persistent buffer: P-EAGLE's
  ``mask_hidden``) that holds its values afterwards (found by value: every tensor of a test
  checkpoint is distinct random data), ``[q]``/``[k]``/``[v]``/``[0]``/``[1]`` naming the
  slice of a fused parameter;
* ``dropped``: checkpoint tensors whose values are in no parameter after a load that raised
  nothing (skipped by the release's loader);
* ``initial``: parameters the load never wrote (every parameter and buffer holds a marker,
  NaN or -7, before the load; the attention layers' quantization scales, never in a
  checkpoint, are left out): in vLLM they keep their initial value.
"""

import contextlib
import io
import json
import logging
import os
import sys
import tempfile
import traceback
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ["VLLM_TARGET_DEVICE"] = "cpu"

with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    import vllm.platforms as platforms

    # before 0.31 a release picks the CPU platform only in a CPU build of vLLM (a version
    # with "cpu" in it), never for VLLM_TARGET_DEVICE; its own CpuPlatform is selected here
    if not platforms.current_platform.device_type:
        from vllm.platforms.cpu import CpuPlatform

        platforms._current_platform = CpuPlatform()
    import torch

    # 0.17's CpuPlatform.import_kernels asks torch's private torch._C._cpu for the AVX-512
    # check, which the reader environments' torch 2.13 keeps only as torch.cpu's (the same
    # function under its public name); the answer picks a compiled kernel library, which the
    # environment does not have either way
    if not hasattr(torch._C._cpu, "_is_avx512_supported"):
        torch._C._cpu._is_avx512_supported = torch.cpu._is_avx512_supported
    import vllm.transformers_utils.config as vconfig
    from safetensors.torch import load_file
    from vllm.config import set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.model_loader import get_model_loader
    from vllm.model_executor.model_loader.utils import initialize_model
    from vllm.model_executor.models import registry
    from vllm.transformers_utils.configs.speculators.base import SpeculatorsConfig

    try:
        from vllm.utils.torch_utils import set_default_torch_dtype
    except ImportError:  # older releases
        from vllm.model_executor.model_loader.utils import set_default_torch_dtype

logging.disable(logging.CRITICAL)
registry._run_in_subprocess = lambda fn: fn()
_STARTED = False


def _register_silu_and_mul() -> object | None:
    """From 0.26 to 0.30 ``SiluAndMul.__init__`` on a CPU platform binds
    ``torch.ops._C.silu_and_mul``, an op of the compiled ``vllm._C`` of a CPU build of vLLM
    (not on the package registry; the reader environment has no compiled extension). Building
    the draft only binds the op and loading weights never calls it, so the probe registers a
    Python op of the same name and schema (the gated SiLU it computes) before any build;
    vLLM's own code stays unmodified. No release tests for the op's presence; the others
    never bind it on CPU."""
    if hasattr(torch.ops._C, "silu_and_mul"):
        return None
    lib = torch.library.Library("_C", "FRAGMENT")
    lib.define("silu_and_mul(Tensor! result, Tensor input) -> ()")

    def silu_and_mul(result: torch.Tensor, x: torch.Tensor) -> None:
        half = x.shape[-1] // 2
        result.copy_(torch.nn.functional.silu(x[..., :half]) * x[..., half:])

    lib.impl("silu_and_mul", silu_and_mul, "CPU")
    return lib  # the registration lives as long as this object


_STAND_IN = _register_silu_and_mul()


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:1000]


def _distributed(vllm_config) -> None:
    global _STARTED
    if _STARTED:
        return
    with set_current_vllm_config(vllm_config):
        init_distributed_environment(
            world_size=1,
            rank=0,
            distributed_init_method=f"file://{tempfile.mktemp(prefix='vllm-gloo-')}",
            local_rank=0,
            backend="gloo",
        )
        initialize_model_parallel(1, 1)
    _STARTED = True


def _slices(param: torch.Tensor, tensor: torch.Tensor):
    """The row slices of ``param`` that hold ``tensor`` (fused q/k/v, gate/up)."""
    if param.dim() != tensor.dim() or param.shape[1:] != tensor.shape[1:]:
        return None
    rows = tensor.shape[0] if tensor.dim() else 0
    if tensor.dim() == 0:
        return 0 if torch.equal(param, tensor) else None
    for start in range(0, param.shape[0] - rows + 1):
        if torch.equal(param[start : start + rows], tensor):
            return start
    return None


def _where(tensor: torch.Tensor, params: dict[str, torch.Tensor]) -> str | None:
    tensor = tensor.to(torch.float32) if tensor.is_floating_point() else tensor
    for name, param in params.items():
        if param.dtype.is_floating_point != tensor.is_floating_point():
            continue
        value = param.to(torch.float32) if param.is_floating_point() else param
        if value.dim() != tensor.dim() and value.numel() == tensor.numel():
            # copied in through a view (mask_hidden [1, 1, n] into a [1, n] buffer)
            if torch.equal(value.reshape(-1), tensor.reshape(-1)):
                return name
            continue
        start = _slices(value, tensor)
        if start is None:
            continue
        if tuple(value.shape) == tuple(tensor.shape):
            return name
        return f"{name}[{start}:{start + tensor.shape[0]}]"
    return None


def _speculative(draft: str) -> dict | None:
    """The speculative settings the release takes from a speculators draft. 0.10.x has no
    ``maybe_override_with_speculators``: its ``EngineArgs.create_speculative_config`` reads
    the draft with ``get_config`` and, for a ``SpeculatorsConfig``, takes the method and token
    count from its attributes; the same three keys are built here from the same reading."""
    if hasattr(vconfig, "maybe_override_with_speculators"):
        return vconfig.maybe_override_with_speculators(
            model=draft, tokenizer=None, trust_remote_code=False
        )[2]
    hf = vconfig.get_config(draft, trust_remote_code=False)
    if not isinstance(hf, SpeculatorsConfig):
        return None
    return {"num_speculative_tokens": hf.num_lookahead_tokens, "model": draft, "method": hf.method}


def _engine_config(draft: str, verifier: str):
    spec = _speculative(draft)
    if spec is None:
        raise ValueError("not detected as a speculators checkpoint")
    args = EngineArgs(
        model=verifier,
        speculative_config=spec,
        dtype="float32",
        enforce_eager=True,
        max_model_len=256,
    )
    return args.create_engine_config()


def _without_triton_check(draft: str, verifier: str):
    """From 0.34 the CPU platform's config check refuses an x86 machine without Triton
    (``CpuPlatform.check_and_update_config``: "vLLM on x86 CPUs requires Triton
    (triton-cpu)", the CPU model runner runs Triton kernels). Building a drafter and loading
    its weights launches none (the drafters' ``@triton.jit`` kernels are decorated by vLLM's
    placeholder when Triton is absent and only called in ``forward``), so the engine config
    is built with ``vllm.triton_utils.HAS_TRITON`` read as true by that one check (the
    module's flag, set for the call and restored); vLLM's code stays unmodified."""
    import vllm.triton_utils as triton_utils

    saved = triton_utils.HAS_TRITON
    triton_utils.HAS_TRITON = True
    try:
        return _engine_config(draft, verifier)
    finally:
        triton_utils.HAS_TRITON = saved


def load(request: dict) -> dict:
    """The answer to one request; with ``"record": true`` also ``reads``, what the release
    read from the draft's and the verifier's configs on the way (reads_probe.py: the answer
    is otherwise the same)."""
    if not request.get("record"):
        return _load(request)
    import reads_probe

    with reads_probe.recording(request["draft"], request["verifier"]) as reads:
        out = _load(request)
    out["reads"] = {**reads, "interface": reads_probe.interface(request["verifier"])}
    return out


def _load(request: dict) -> dict:
    out = {"stage": None, "error": None, "class": None}
    draft, verifier = request["draft"], request["verifier"]
    try:
        try:
            vllm_config = _engine_config(draft, verifier)
        except Exception as exc:
            # a draft the release serves only with its V2 model runner (0.33: DSpark, DFlash2)
            # is loaded as a user relaunching with VLLM_USE_V2_MODEL_RUNNER=1 would
            if "Model Runner V1 does not support" not in str(exc):
                raise
            os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "1"
            try:
                vllm_config = _engine_config(draft, verifier)
            finally:
                del os.environ["VLLM_USE_V2_MODEL_RUNNER"]
    except Exception as exc:
        if "requires Triton (triton-cpu)" not in str(exc):
            out.update(stage="config", error=error_text(exc))
            return out
        try:
            vllm_config = _without_triton_check(draft, verifier)
        except Exception as exc2:
            out.update(stage="config", error=error_text(exc2))
            return out
    _distributed(vllm_config)
    model_config = vllm_config.speculative_config.draft_model_config
    with set_current_vllm_config(vllm_config):
        try:
            with set_default_torch_dtype(model_config.dtype), torch.device("cpu"):
                model = initialize_model(vllm_config=vllm_config, model_config=model_config)
        except Exception as exc:
            out.update(stage="build", error=error_text(exc))
            return out
        out["class"] = type(model).__name__
        # a marker in every parameter and buffer: memory torch.empty hands out may hold the
        # previous request's tensors, which would read as "loaded" or hide an untouched one
        with torch.no_grad():
            for value in model.state_dict().values():
                value.fill_(float("nan") if value.is_floating_point() else -7)
        try:
            get_model_loader(vllm_config.load_config).load_weights(model, model_config)
        except Exception as exc:
            out.update(stage="load", error=error_text(exc))
            return out
    after = {k: v.detach() for k, v in model.state_dict().items()}
    # a checkpoint tensor may land in a buffer outside the state dict (P-EAGLE's mask_hidden)
    held = {**after, **{k: v.detach() for k, v in model.named_buffers() if k not in after}}
    checkpoint = load_file(os.path.join(draft, "model.safetensors"))
    loaded, dropped = {}, []
    for name in sorted(checkpoint):
        where = _where(checkpoint[name], held)
        if where is None:
            dropped.append(name)
        else:
            loaded[name] = where
    initial = [
        k
        for k, v in after.items()
        if bool((v.isnan() if v.is_floating_point() else v == -7).all())
        and not (".attn." in k and k.endswith("_scale"))
    ]
    out.update(loaded=loaded, dropped=dropped, initial=sorted(initial))
    return out


def main() -> None:
    # answers go to the original standard output; whatever vLLM prints goes to standard
    # error (at the descriptor level: some releases dup sys.stdout's descriptor)
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = load(request)
        except Exception as exc:  # report, do not stop the session
            answer = {"stage": "probe", "error": error_text(exc), "trace": traceback.format_exc()}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
