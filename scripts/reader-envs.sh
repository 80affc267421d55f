#!/usr/bin/env bash
# Build one CPU environment per vLLM release for the `readers` tests (tests/readers/).
#
# Layout (all under $SPECFMT_READER_CACHE, default .cache/vllm/):
#   wheels/vllm-X.Y.Z-*.whl   `pip download --no-deps vllm==X.Y.Z` (kept between runs)
#   envs/X.Y.Z/src/           only the wheel's *.py files and its dist-info metadata
#                             (compiled extensions are left out: nothing here needs them)
#   deps/<recipe digest>/     `pip install --target` of the pure-Python packages vLLM's
#                             config code and model registry import (never vLLM's own
#                             dependency tree, never a CUDA torch); shared by the releases
#                             with the same recipe, linked as envs/X.Y.Z/deps
#   envs/X.Y.Z/.ok            written last; its content is the recipe, so a changed recipe rebuilds
#   mdeps/<digest>/           the model layer: what building a draft model class on CPU imports
#                             beyond the config code (tests/readers/weights_probe.py), installed
#                             `--no-deps` (CPU wheels; still no vLLM dependency tree, no CUDA
#                             torch), linked as envs/X.Y.Z/mdeps; envs/X.Y.Z/.model-ok last
#   timings.log               seconds per step, appended on every run (warm runs included)
#
# Everything runs on the torch 2.13.0 CPU base venv of scripts/interop-envs.sh
# ($SPECFMT_INTEROP_CACHE/base):  PYTHONPATH=envs/X.Y.Z/src:envs/X.Y.Z/deps base/bin/python
# Usage: scripts/reader-envs.sh [VERSION ...]   (default: every release in schema/readers/)
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${SPECFMT_READER_CACHE:-.cache/vllm}"
INTEROP="${SPECFMT_INTEROP_CACHE:-.cache/interop}"
BASE="$INTEROP/base"
DEFAULT_RELEASES="$(ls schema/readers/ | sed -n 's/^vllm-\(.*\)\.json$/\1/p' | sort -V | tr '\n' ' ')"

# What `vllm.transformers_utils.config`, the speculators config classes and the model
# registry import, found by importing them on CPU. transformers is the highest version the
# release's metadata allows; the rest are unpinned (torch is pinned by the constraints file).
# From 0.24 the transformers pin is read from the wheel's metadata: the highest of
# TRANSFORMERS_PINS its `Requires-Dist: transformers` allows (0.31: <5.18 gives 5.17.0, the
# others 5.19.0), so a new release needs no edit here unless no pin fits (the message names
# what to add) or its import check names a missing package (add it to `common`).
TRANSFORMERS_PINS="5.19.0 5.17.0"
recipe() {
  local common="huggingface_hub safetensors pyyaml regex cachetools pydantic msgspec psutil pyzmq cbor2 aiohttp requests openai-harmony openai"
  case "$1" in
    # the last 4.x, inside every range before 0.24 (0.10.1: >=4.55.0; 0.11.1-0.19.0: <5);
    # their model registry (from 0.12 the config utils: gguf; from 0.16 cpuinfo) import these
    0.1[0-9].* | 0.2[0-3].*)
      echo "transformers==4.57.6 $common cloudpickle setproctitle blake3 pillow pybase64 gguf py-cpuinfo" ;;
    0.*)
      local pin
      pin="$(transformers_pin "$1")" || return 1
      echo "transformers==$pin $common" ;;
    *) echo "vllm $1: no recipe for a major release other than 0; add a case to recipe() in scripts/reader-envs.sh" >&2; return 1 ;;
  esac
}

# The highest of TRANSFORMERS_PINS that vLLM $1's wheel metadata allows (read from the
# cached wheel, never installed)
transformers_pin() {
  local wheel
  wheel="$(ls "$CACHE"/wheels/vllm-"$1"-*.whl 2>/dev/null | head -1 || true)"
  if [[ -z "$wheel" ]]; then
    echo "vllm $1: no wheel in $CACHE/wheels to read its transformers range from" >&2
    return 1
  fi
  "$BASE/bin/python" - "$wheel" "$1" "$TRANSFORMERS_PINS" <<'PY'
import sys, zipfile
from pip._vendor.packaging.requirements import Requirement
wheel, release, pins = sys.argv[1], sys.argv[2], sys.argv[3].split()
with zipfile.ZipFile(wheel) as z:
    meta = z.read(f"vllm-{release}.dist-info/METADATA").decode()
wanted = [
    Requirement(line.split(":", 1)[1].strip())
    for line in meta.splitlines()
    if line.startswith("Requires-Dist:")
]
spec = next((r.specifier for r in wanted if r.name == "transformers" and not r.marker), None)
if spec is None:
    sys.exit(f"vllm {release}: its metadata names no transformers requirement; "
             "add a case to recipe() in scripts/reader-envs.sh")
fits = [p for p in pins if spec.contains(p, prereleases=False)]
if not fits:
    sys.exit(f"vllm {release} asks transformers{spec}, which none of TRANSFORMERS_PINS "
             f"({' '.join(pins)}) satisfies: add such a version to TRANSFORMERS_PINS in "
             "scripts/reader-envs.sh")
print(max(fits, key=lambda p: tuple(int(x) for x in p.split("."))))
PY
}

# What importing a draft model module and vLLM's model loader adds (found by importing
# llama_eagle3 and DefaultModelLoader on CPU), installed without dependencies; 0.10.x's
# model loader also imports compressed_tensors (at the version its metadata pins; 0.11.0
# imports frozendict)
model_recipe() {
  local common="pillow cloudpickle setproctitle blake3 pybase64 gguf py-cpuinfo einops tqdm uvloop prometheus_client xgrammar apache-tvm-ffi fastapi annotated-doc starlette opentelemetry-api partial_json_parser llguidance"
  case "$1" in
    0.10.1) echo "$common compressed-tensors==0.10.2" ;;
    0.10.2) echo "$common compressed-tensors==0.11.0 frozendict" ;;
    *) echo "$common" ;;
  esac
}

log() { printf '[reader-envs] %s\n' "$*" >&2; }
stamp() { echo "$(date -u +%FT%TZ) $*" >>"$CACHE/timings.log"; }

if [[ ! -x "$BASE/bin/python" ]]; then
  log "no base venv at $BASE; run scripts/interop-envs.sh first"
  exit 1
fi
mkdir -p "$CACHE/wheels" "$CACHE/envs"
CACHE="$(cd "$CACHE" && pwd)"
echo "torch==2.13.0" >"$CACHE/constraints.txt"

releases=("$@")
[[ ${#releases[@]} -gt 0 ]] || read -r -a releases <<<"$DEFAULT_RELEASES"

all_start=$SECONDS
# fetch the missing wheels first, two at a time (a fresh CI machine needs one per release);
# a failure here is retried, and reported, by the loop below
missing=()
for rel in "${releases[@]}"; do
  ls "$CACHE"/wheels/vllm-"$rel"-*.whl >/dev/null 2>&1 || missing+=("$rel")
done
# with no releases named, the group members' wheels too: never unpacked, only digested by
# tests/readers/test_digests.py, which so checks every grouping claim of the table in CI
if [[ $# -eq 0 ]]; then
  for rel in $("$BASE/bin/python" -c 'import glob, json
for f in sorted(glob.glob("schema/readers/vllm-*.json")):
    d = json.load(open(f)); print(*[m for m in d["members"] if m != d["version"]])'); do
    ls "$CACHE"/wheels/vllm-"$rel"-*.whl >/dev/null 2>&1 || missing+=("$rel")
  done
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  log "downloading ${#missing[@]} wheels (no dependencies), two at a time"
  t=$SECONDS
  printf 'vllm==%s\n' "${missing[@]}" | xargs -P 2 -I{} "$BASE/bin/pip" download -q \
    --disable-pip-version-check --no-deps {} -d "$CACHE/wheels" 2>/dev/null || true
  stamp "download ${#missing[@]} wheels $((SECONDS - t))s"
fi
# the import check of an unpacked environment; .ok is written last
check() {
  local rel="$1" start="$2" target="$CACHE/envs/$1" t=$SECONDS
  local failed
  if ! failed="$(PYTHONPATH="$target/src:$target/deps" PYTHONDONTWRITEBYTECODE=1 "$BASE/bin/python" -c \
      "import importlib.metadata as m; assert m.version('vllm') == '$rel'
import vllm.transformers_utils.config
from vllm.transformers_utils.configs.speculators.base import SpeculatorsConfig" 2>&1 >/dev/null)"; then
    log "$rel: importing vLLM's config code failed ($(tail -1 <<<"$failed")); a missing module goes into recipe() of scripts/reader-envs.sh; environment left incomplete"
    stamp "$rel FAILED"
    return
  fi
  stamp "$rel import-check $((SECONDS - t))s"
  echo "vllm==$rel ${RECIPES[$rel]}" >"$target/.ok"
  stamp "$rel built $((SECONDS - start))s"
  log "$rel: ready in $((SECONDS - start))s"
}

# the model layer of a built environment (one install per model recipe, shared)
model_layer() {
  local rel="$1" target="$CACHE/envs/$1" t=$SECONDS mdeps
  mdeps="$CACHE/mdeps/$(model_recipe "$rel" | sha256sum | cut -c1-16)"
  if [[ ! -f "$mdeps/.ok" ]]; then
    rm -rf "$mdeps"
    # shellcheck disable=SC2046  # the recipe is a word list on purpose
    if ! "$BASE/bin/pip" install -q --disable-pip-version-check --no-compile --no-deps \
        --target "$mdeps" $(model_recipe "$rel") \
        2> >(grep -v -e "^WARNING: Location" -e "^WARNING: Target directory" >&2); then
      log "$rel: cannot install the model layer; its weight-contract tests will skip"
      return
    fi
    model_recipe "$rel" >"$mdeps/.ok"
    stamp "model layer $((SECONDS - t))s"
  fi
  ln -sfn "../../mdeps/${mdeps##*/}" "$target/mdeps"
  model_recipe "$rel" >"$target/.model-ok"
}

# wheels, dependencies (one install per recipe) and unpacking, one release after another;
# then the import checks, two at a time (each is one single-threaded Python start-up)
pending=()
declare -A RECIPES=()
for rel in "${releases[@]}"; do
  target="$CACHE/envs/$rel"
  if ! deps_recipe="$(recipe "$rel")"; then
    log "$rel: no environment recipe (the line above says what to add)"
    stamp "$rel FAILED recipe"
    continue
  fi
  RECIPES[$rel]="$deps_recipe"
  want="vllm==$rel $deps_recipe"
  if [[ -f "$target/.ok" && "$(cat "$target/.ok")" == "$want" ]]; then
    log "$rel: cached"
    continue
  fi
  start=$SECONDS
  wheel="$(ls "$CACHE"/wheels/vllm-"$rel"-*.whl 2>/dev/null | head -1 || true)"
  if [[ -z "$wheel" ]]; then
    log "$rel: downloading the wheel (no dependencies)"
    # no registry (offline machine): leave the release out; its tests skip (fail under CI=true)
    if ! "$BASE/bin/pip" download -q --disable-pip-version-check --no-deps "vllm==$rel" \
        -d "$CACHE/wheels" 2> >(grep -v "^WARNING: Location" >&2); then
      log "$rel: cannot download the wheel; its reader tests will skip"
      stamp "$rel FAILED download"
      continue
    fi
    wheel="$(ls "$CACHE"/wheels/vllm-"$rel"-*.whl | head -1)"
    stamp "$rel download $((SECONDS - start))s"
  fi
  rm -rf "$target"
  mkdir -p "$target"
  t=$SECONDS
  unzip -q "$wheel" '*.py' "vllm-$rel.dist-info/*" -d "$target/src"
  stamp "$rel unpack $((SECONDS - t))s"
  deps="$CACHE/deps/$(sha256sum <<<"$deps_recipe" | cut -c1-16)"
  if [[ ! -f "$deps/.ok" ]]; then
    t=$SECONDS
    rm -rf "$deps"
    # shellcheck disable=SC2086  # the recipe is a word list on purpose
    if ! "$BASE/bin/pip" install -q --disable-pip-version-check --no-compile --target "$deps" \
        -c "$CACHE/constraints.txt" $deps_recipe \
        2> >(grep -v -e "^WARNING: Location" -e "^WARNING: Target directory" >&2); then
      log "$rel: cannot install its dependencies; its reader tests will skip"
      stamp "$rel FAILED deps"
      continue
    fi
    # a dependency may drag in its own torch; the base venv's CPU copy must win
    rm -rf "$deps"/torch "$deps"/torch-*.dist-info "$deps"/nvidia* "$deps"/triton*
    echo "$deps_recipe" >"$deps/.ok"
    stamp "$rel deps $((SECONDS - t))s"
  fi
  ln -sfn "../../deps/${deps##*/}" "$target/deps"
  pending+=("$rel:$start")
done
running=0
for item in "${pending[@]}"; do
  check "${item%%:*}" "${item##*:}" &
  running=$((running + 1))
  if [[ $running -ge 2 ]]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
# the model layer last, one release after another (the first one installs it)
for rel in "${releases[@]}"; do
  target="$CACHE/envs/$rel"
  [[ -f "$target/.ok" ]] || continue
  [[ -f "$target/.model-ok" && "$(cat "$target/.model-ok")" == "$(model_recipe "$rel")" ]] ||
    model_layer "$rel"
done
stamp "all (${releases[*]}) $((SECONDS - all_start))s"
log "done in $((SECONDS - all_start))s; timings in $CACHE/timings.log"
