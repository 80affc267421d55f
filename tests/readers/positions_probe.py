"""Runs inside a vLLM reader environment; never imported by specfmt.

``max_len(folder)``: the maximum model length vLLM derives for the config.json in ``folder``
(``_get_and_verify_max_len`` on the config's text config, as ``ModelConfig`` calls it with no
--max-model-len), or "ERR ..." when vLLM cannot load it. release_probe.py asks it per request;
as a script it takes folders as arguments and prints one JSON object: folder -> that value.
"""

import contextlib
import inspect
import io
import json
import logging
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    import vllm.transformers_utils.config as vconfig
    from vllm.config import model as vmodel
logging.disable(logging.CRITICAL)


def max_len(folder: str) -> int | str:
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            config = vconfig.get_config(folder, trust_remote_code=False)
            wanted = inspect.signature(vmodel._get_and_verify_max_len).parameters
            args = {
                "hf_config": config.get_text_config(),
                "tokenizer_config": None,
                "max_model_len": None,
                "disable_sliding_window": False,
                "sliding_window": None,
            }
            return vmodel._get_and_verify_max_len(**{k: v for k, v in args.items() if k in wanted})
    except Exception as exc:  # reported, the test decides
        return f"ERR {type(exc).__name__}: {str(exc)[:200]}"


if __name__ == "__main__":
    print(json.dumps({folder: max_len(folder) for folder in sys.argv[1:]}))
