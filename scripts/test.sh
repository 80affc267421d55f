#!/usr/bin/env bash
# Set up everything on a fresh machine and run the whole test suite.
# Idempotent: reuses .venv and the caches it finds. Used as-is by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
# torch first, pinned: this machine has a local CPU wheel; a bare `torch` pulls CUDA (GBs)
python -m pip install -q torch==2.13.0
python -m pip install -q -e '.[dev,forward,deep,remote]'

echo "== one environment per speculators release for the interop tests (cached in .cache/interop)"
bash scripts/interop-envs.sh
echo "== one CPU environment per vLLM release for the reader tests (cached in .cache/vllm)"
bash scripts/reader-envs.sh

echo "== Node.js packages (TypeScript generation, Ajv, tsc), pinned by package-lock.json"
npm ci --no-audit --no-fund

echo "== generated files are up to date"
python scripts/generate.py --check
echo "== lint"
ruff check .
echo "== tests (interop and readers included)"
SPECFMT_INTEROP=1 python -m pytest -q "$@"
