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
import sysconfig
from pathlib import Path

import pytest

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


@pytest.fixture(scope="module")
def probe(request) -> dict[str, dict]:
    wanted = (
        "interop" in (request.config.getoption("-m") or "")
        or os.environ.get("SPECFMT_INTEROP") == "1"
    )
    if not wanted:
        pytest.skip("interop tests run with `pytest -m interop` (envs: scripts/interop-envs.sh)")
    if not ((ENV / ".ok").is_file() and PYTHON.exists()):
        pytest.skip(f"no speculators 0.9.0 environment in {CACHE} (scripts/interop-envs.sh)")
    proc = subprocess.run(
        [str(PYTHON), str(PROBE)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={
            **os.environ,
            "PYTHONPATH": f"{ENV}{os.pathsep}{ROOT}",
            "SPECFMT_PROBE_FALLBACK_PATH": sysconfig.get_paths()["purelib"],
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["case"]: r for r in json.loads(proc.stdout.strip().splitlines()[-1])}


@pytest.mark.parametrize("case", CASES)
def test_matches_the_training_model(probe, case):
    result = probe[case]
    assert "error" not in result, result.get("error")
    assert result["max_abs_diff"] <= ATOL
