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

echo "== headless Chromium for the docs browser test (tests/test_docs_browser.py)"
# the distribution's package, never a downloaded browser; installed only when missing
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >/dev/null 2>&1 \
        || echo "apt-get could not install chromium"
fi
if [ -n "${SPECFMT_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then
    export SPECFMT_REQUIRE_BROWSER=1  # from here on a browser test that cannot start fails
else
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!! WARNING: no chromium: the docs browser test (tests/test_docs_browser.py) SKIPS."
    echo "!! Install it with: apt-get install chromium (as root), or set SPECFMT_CHROMIUM."
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
fi

echo "== generated files are up to date"
python scripts/generate.py --check
echo "== lint"
ruff check .
echo "== layers (pyproject.toml [tool.importlinter])"
lint-imports
echo "== tests (everything: slow, interop and readers included), in two runs"
# Two -m selections that together are everything (they replace pyproject's default selection).
# interop and readers run first in one process (-n0): their session fixtures and caches probe
# every release once, two probes at a time, and every xdist worker would repeat those probes.
# The rest runs on every core (addopts: -n auto --dist loadfile). Exit 5 (no test selected)
# is fine for one run when the other ran tests (`scripts/test.sh tests/test_foo.py`).
export SPECFMT_INTEROP=1
first=0
python -m pytest -q -n0 -m 'interop or readers' "$@" || first=$?
if [ "$first" != 0 ] && [ "$first" != 5 ]; then
    echo "== the interop and readers run FAILED (exit $first, summary above); the rest follows"
fi
second=0
python -m pytest -q -m 'not interop and not readers' "$@" || second=$?
if [ "$first" = 5 ] && [ "$second" != 5 ]; then first=0; fi
if [ "$second" = 5 ] && [ "$first" = 0 ]; then second=0; fi
if [ "$first" != 0 ]; then exit "$first"; fi
exit "$second"
