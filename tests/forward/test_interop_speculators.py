"""The reference forward against the released speculators 0.9 (its training model).

Opt-in like the other interop tests (``pytest -m interop`` or SPECFMT_INTEROP=1) and needs
the 0.9.0 environment from ``scripts/interop-envs.sh``. One subprocess runs
``speculators_probe.py`` inside that environment for every case (importing speculators
takes 15 s); each case is then one test here. Logits must agree to float32 rounding.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.interop.test_releases import run_with_specfmt, skip_unless_asked

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SPECFMT_INTEROP_CACHE", ROOT / ".cache" / "interop"))
ENV = CACHE / "envs" / "0.9.0"
PYTHON = CACHE / "base" / "bin" / "python"
PROBE = Path(__file__).resolve().parent / "speculators_probe.py"
CASES = [
    "eagle3-llama",
    "eagle3-qwen3-2layers-fcnorm-normout",
    "eagle3-sliding-normbeforefc",
    "dflash-full",
    "dflash-sliding-causal",
    "dflash-sliding-noncausal-from-anchor",
    "dspark-vanilla",
    "dspark-gated",
    "dspark-rnn",
    "dflash2",
    "xpress",
    "peagle",
    "mtp",
]
ATOL = 1e-5


def _need_env(request) -> None:
    skip_unless_asked(request)
    if not ((ENV / ".ok").is_file() and PYTHON.exists()):
        pytest.skip(f"no speculators 0.9.0 environment in {CACHE} (scripts/interop-envs.sh)")


@pytest.fixture(scope="module")
def probe(request) -> dict[str, dict]:
    _need_env(request)
    return {r["case"]: r for r in run_with_specfmt(ENV, PROBE)}


@pytest.mark.parametrize("case", CASES)
def test_matches_the_training_model(probe, case):
    result = probe[case]
    assert "error" not in result, result.get("error")
    assert result["max_abs_diff"] <= ATOL


_CLASS_DEFAULTS = """
import json
from transformers import LlamaConfig, Qwen3Config
print(json.dumps({"llama": LlamaConfig().to_dict(), "qwen3": Qwen3Config().to_dict()}))
"""


def test_layer_class_defaults_are_those_of_transformers(request):
    """The only defaults the forward keeps are transformers' config-class defaults; they
    must be the classes' own (transformers of the speculators 0.9 environment)."""
    _need_env(request)
    from spec_format.forward.config import LAYER_CLASS_DEFAULTS

    proc = subprocess.run(
        [str(PYTHON), "-c", _CLASS_DEFAULTS],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ENV), "TRANSFORMERS_OFFLINE": "1"},
    )
    classes = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, ours in LAYER_CLASS_DEFAULTS.items():
        theirs = classes[name]
        derived = {
            "num_key_value_heads": theirs["num_attention_heads"],
            "head_dim": theirs["hidden_size"] // theirs["num_attention_heads"],
            "rope_theta": (theirs.get("rope_parameters") or {}).get("rope_theta"),
        }
        for key, value in ours.items():
            expected = theirs.get(key)
            if expected is None:
                expected = derived.get(key)
            if expected is None and key not in theirs:
                continue  # not an attribute of this class (Qwen3 MLPs have no bias)
            assert (value if value is not None else derived[key]) == expected, (name, key)
