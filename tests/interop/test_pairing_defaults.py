"""schema/verifiers.json against the real transformers config classes (interop envs).

For every installed transformers (one per speculators release env under
$SPECFMT_INTEROP_CACHE; 4.x and 5.x), each model_type of the defaults table that release
ships is instantiated with no arguments and saved with ``to_dict()``: what specfmt reads
from the table for a config that omits the keys must equal what it reads from the class's
own full config (theta, rope type and scaling, positional range). Every quantization
method the release's ``QuantizationMethod`` knows must be known to the table (V010 would
otherwise call a real method unknown).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from spec_format.facts import pairing

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SPECFMT_INTEROP_CACHE", ROOT / ".cache" / "interop"))
#: one env per transformers line is enough (4.57.6, 5.6.2, 5.19.0)
ENVS = ("0.2.0", "0.5.0", "0.9.0")

PROBE = """
import json, sys
import transformers
from transformers import CONFIG_MAPPING
from transformers.utils.quantization_config import QuantizationMethod
out = {"version": transformers.__version__, "methods": [m.value for m in QuantizationMethod],
       "configs": {}}
for mt in json.loads(sys.argv[1]):
    if mt in CONFIG_MAPPING:
        out["configs"][mt] = CONFIG_MAPPING[mt]().to_dict()
print(json.dumps(out, default=str))
"""


def probe(release: str) -> dict:
    env = CACHE / "envs" / release
    python = CACHE / "base" / "bin" / "python"
    if not (env / ".ok").is_file() or not python.exists():
        pytest.skip(f"interop env {release} not built (scripts/interop-envs.sh)")
    proc = subprocess.run(
        [str(python), "-c", PROBE, json.dumps(sorted(pairing.table()["defaults"]))],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(env), "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("release", ENVS)
def test_defaults_table_is_what_transformers_uses(release):
    found = probe(release)
    assert found["configs"], f"transformers {found['version']} ships none of the table"
    for mt, full in found["configs"].items():
        ours, theirs = pairing.rope_of({"model_type": mt}), pairing.rope_of(full)
        assert (ours.theta, ours.kind, ours.scaling) == (
            theirs.theta,
            theirs.kind,
            theirs.scaling,
        ), (
            found["version"],
            mt,
        )
        assert (
            pairing.positional_range({"model_type": mt})[0] == (pairing.positional_range(full)[0])
        ), (found["version"], mt)


@pytest.mark.parametrize("release", ENVS)
def test_every_transformers_quantization_method_is_known(release):
    found = probe(release)
    unknown = set(found["methods"]) - set(pairing.table()["quantization"])
    assert not unknown, f"transformers {found['version']}: {sorted(unknown)}"
