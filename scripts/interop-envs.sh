#!/usr/bin/env bash
# Build one environment per speculators release line for the `interop` tests.
#
# Layout (all under $SPECFMT_INTEROP_CACHE, default .cache/interop/):
#   base/                 a venv with torch==2.13.0 (CPU) only; every release runs on its python
#   constraints.txt       pins torch so no release step can replace it
#   envs/<release>/       `pip install --target` of that release and the dependencies it needs
#   envs/<release>/.ok    written last; its content is the recipe line, so a changed recipe rebuilds
#   timings.log           seconds per install, appended on every build
#
# A release runs as:  PYTHONPATH=envs/<release> base/bin/python -c 'import speculators'
# Existing, complete environments are reused, so CI can keep the cache directory between runs.
# Usage: scripts/interop-envs.sh [RELEASE ...]   (default: one release per format line)
set -euo pipefail

CACHE="${SPECFMT_INTEROP_CACHE:-.cache/interop}"
PYTHON="${PYTHON:-python3}"
TORCH="torch==2.13.0"
# one release per format line: the speculators releases of the reader table
DEFAULT_RELEASES="$(ls "$(dirname "$0")/../schema/readers/" | sed -n 's/^speculators-\(.*\)\.json$/\1/p' | sort -V | tr '\n' ' ')"

# Recipe per release: the transformers version that works (the highest its metadata allows)
# and the small dependencies `import speculators` needs. Torch and the torchvision/torchaudio
# declarations are left out on purpose: the base venv's CPU torch serves every release.
recipe() {
  local common="click httpx huggingface-hub loguru protobuf pydantic pydantic-settings pyyaml safetensors typer-slim"
  case "$1" in
    0.1.*) echo "transformers==4.53.3 datasets numpy $common" ;;
    0.2.*) echo "transformers==4.57.6 datasets numpy $common" ;;
    0.3.*) echo "transformers==4.57.6 datasets numpy rich setuptools tqdm $common" ;;
    0.4.*) echo "transformers==4.57.6 datasets<=4.6.0 numpy<=2.4.2 psutil rich typer setuptools tqdm $common" ;;
    0.5.*) echo "transformers==5.6.2 datasets<=4.8.4 openai>=2 numpy<=2.4.2 psutil rich typer setuptools tqdm $common" ;;
    0.6.*) echo "transformers==5.10.4 datasets<=5.0.0 openai>=2 numpy<=2.4.2 psutil rich typer setuptools tqdm $common" ;;
    0.7.*) echo "transformers==5.14.1 datasets<=5.0.1 openai>=2 numpy<=2.4.2 psutil rich typer setuptools tqdm<=4.70.0 $common" ;;
    0.8.*) echo "transformers==5.16.1 datasets<=5.0.1 openai>=2 numpy<=2.4.2 psutil rich typer setuptools tqdm<=4.70.0 aiohttp $common" ;;
    0.9.*) echo "transformers==5.19.0 datasets<=5.1.0 openai>=2 numpy<=2.5.4 psutil rich typer setuptools tqdm<=4.70.1 aiohttp $common" ;;
    *) echo "unknown release line: $1" >&2; return 1 ;;
  esac
}

# hs-connectors is imported by 0.8+ for config work; its own requirements pull torch extras.
needs_connectors() { case "$1" in 0.8.*|0.9.*) return 0 ;; *) return 1 ;; esac; }

log() { printf '[interop-envs] %s\n' "$*" >&2; }

mkdir -p "$CACHE/envs"
CACHE="$(cd "$CACHE" && pwd)"
BASE="$CACHE/base"

if [[ ! -x "$BASE/bin/python" ]] || ! "$BASE/bin/python" -c "import torch" 2>/dev/null; then
  log "creating base venv with $TORCH"
  start=$SECONDS
  "$PYTHON" -m venv "$BASE"
  "$BASE/bin/pip" install -q --disable-pip-version-check "$TORCH"
  echo "base $TORCH $((SECONDS - start))s" >>"$CACHE/timings.log"
fi
echo "$TORCH" >"$CACHE/constraints.txt"

releases=("$@")
[[ ${#releases[@]} -gt 0 ]] || read -r -a releases <<<"$DEFAULT_RELEASES"

for rel in "${releases[@]}"; do
  target="$CACHE/envs/$rel"
  want="speculators==$rel $(recipe "$rel")"
  if [[ -f "$target/.ok" && "$(cat "$target/.ok")" == "$want" ]]; then
    log "$rel: cached"
    continue
  fi
  log "$rel: installing ($want)"
  rm -rf "$target"
  start=$SECONDS
  pipi() {
    # pip warns about unreachable mirror folders and existing target bin/ dirs; keep real errors
    "$BASE/bin/pip" install -q --disable-pip-version-check --no-compile --target "$target" "$@" \
      2> >(grep -v -e "^WARNING: Location" -e "^WARNING: Target directory" >&2)
  }
  pipi --no-deps "speculators==$rel"
  # shellcheck disable=SC2046  # the recipe is a word list on purpose
  pipi -c "$CACHE/constraints.txt" $(recipe "$rel")
  if needs_connectors "$rel"; then
    pipi --no-deps "hs-connectors==$rel"
  fi
  # A dependency may have dragged in its own torch; the base venv's copy must win.
  rm -rf "$target"/torch "$target"/torch-*.dist-info "$target"/nvidia* "$target"/triton*
  if ! PYTHONPATH="$target" PYTHONDONTWRITEBYTECODE=1 "$BASE/bin/python" -c \
      "import speculators, importlib.metadata as m; assert m.version('speculators') == '$rel'"; then
    log "$rel: 'import speculators' failed; environment left incomplete"
    echo "$rel FAILED $((SECONDS - start))s" >>"$CACHE/timings.log"
    continue
  fi
  echo "$want" >"$target/.ok"
  echo "$rel $((SECONDS - start))s" >>"$CACHE/timings.log"
  log "$rel: ready in $((SECONDS - start))s"
done

# Identical files across releases (most of transformers, datasets, ...) share one inode.
if command -v hardlink >/dev/null 2>&1; then
  hardlink -q "$CACHE/envs" >/dev/null 2>&1 || true
fi
log "done; timings in $CACHE/timings.log"
