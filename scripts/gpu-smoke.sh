#!/usr/bin/env bash
# GPU smoke test of `specfmt forward`, end to end, in well under five minutes.
#
# Needs a CUDA GPU and an environment with specfmt installed with its forward extra and a
# CUDA build of torch (pip install -e '.[forward,dev]'). Steps:
#   1. every speculators_model_type: a tiny checkpoint (shared builder); CPU float32 is the
#      reference dump; `specfmt forward --device cuda` must match it in float32 (atol 1e-4)
#      and in bfloat16 (atol 0.02), and report the CUDA device;
#   2. the Qwen3-8B EAGLE-3-shaped benchmark on CUDA (one run per measurement).
# Exit status 0 when every step passed. SKIP_BENCH=1 runs step 1 only; SMOKE_DEVICE=cpu
# dry-runs the script's logic on a machine without a GPU (CPU against CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
export SMOKE_DEVICE=${SMOKE_DEVICE:-cuda}
start=$(date +%s)

"$PY" - <<'EOF'
import os
import sys
import torch
if os.environ["SMOKE_DEVICE"] == "cuda":
    if not torch.cuda.is_available():
        sys.exit(f"gpu-smoke: no CUDA device visible to torch {torch.__version__}")
    print(f"gpu-smoke: torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"{torch.cuda.get_device_name(0)}")
else:
    print(f"gpu-smoke: dry run on {os.environ['SMOKE_DEVICE']}, torch {torch.__version__}")
EOF

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$PY" - "$work" <<'EOF'
import json
import os
import subprocess
import sys
from pathlib import Path

from spec_format.builder import build_checkpoint, tiny_config

work = Path(sys.argv[1])
device = os.environ["SMOKE_DEVICE"]
failures = []


def forward(ckpt, *args):
    cmd = [sys.executable, "-c", "from spec_format.cli.app import main; main()", "forward",
           str(ckpt), "--format", "json", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    doc = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
    return proc.returncode, doc, proc.stderr.strip()


for model_type in ("eagle3", "peagle", "dflash", "dspark", "dflash2", "xpress", "mtp"):
    ckpt = build_checkpoint(work / model_type, tiny_config(model_type), dtype="F32").path
    ref = work / f"{model_type}-cpu.safetensors"
    steps = ["--steps", "2"] if model_type in ("eagle3", "peagle") else []
    rc, doc, err = forward(ckpt, "--device", "cpu", "--dtype", "float32", "--dump", ref, *steps)
    if rc != 0:
        failures.append(f"{model_type}: CPU run failed ({rc}): {err}")
        continue
    for dtype, atol in (("float32", "1e-4"), ("bfloat16", "0.02")):
        rc, doc, err = forward(ckpt, "--device", device, "--dtype", dtype, "--compare", ref,
                               "--atol", atol, *steps)
        ok = rc == 0 and doc is not None and doc["device"].startswith(device)
        diff = doc["comparison"]["max_abs_diff"] if doc else {}
        print(f"  {model_type:8} {device} {dtype:8} exit {rc}  max|diff| {diff}  "
              f"load {doc['load_seconds'] * 1000 if doc else 0:.0f} ms  "
              f"forward {doc['forward_seconds'] * 1000 if doc else 0:.0f} ms")
        if not ok:
            failures.append(f"{model_type} {device} {dtype}: exit {rc} {err} "
                            f"{doc['problems'] if doc else ''}")

if failures:
    print("gpu-smoke: FAILED\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"gpu-smoke: every type on {device} matches its CPU float32 reference")
EOF

if [ "${SKIP_BENCH:-0}" != "1" ]; then
    "$PY" benches/bench_forward.py --device "$SMOKE_DEVICE" --repeat 1
fi
echo "gpu-smoke: passed in $(( $(date +%s) - start )) s"
