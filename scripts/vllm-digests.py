#!/usr/bin/env python3
"""Digest the reader-relevant source of every vLLM wheel, group identical releases, and
check the digests the reader table records (schema/readers/vllm-*.json, ``members``).

Two digests per release, each a sha256 (16 hex digits) over the named units below, read
straight from the wheel with ``zipfile`` (no unpacking):

* ``reader``: everything the readers test group executes for a speculators config
  (tests/readers/vllm_probe.py): the speculators config package, how the release detects a
  speculators draft and builds its config (``transformers_utils/config.py``; before 0.11 also
  ``EngineArgs.create_speculative_config``), the registry of draft architectures and
  DFlash's per-layer causality; of the registry only the entries of the architectures the
  conversion names. Releases with the same reader digest form a group whose
  representative is executed.
* ``model``: the draft model modules the conversion's architectures resolve to through the
  release's own registry (``Eagle3LlamaForCausalLM`` -> ``llama_eagle3.py``, ...), every
  module the table's weight blocks read (:data:`MODEL_MODULES`: the conversion names some
  architectures through variables, which the registry lookup misses), the decoder layers they
  build on (``llama.py``, ``qwen3.py``) and the loader that names a tensor's failure
  (``utils.py::AutoWeightsLoader``): tensor names, renames, ``fc`` sizing and norms (the
  weight contract).

A group is one (reader, model) pair: the releases of a table file share both digests, so the
executed representative speaks for each member's config reading and weight loading.

A unit is a whole file or one top-level function, class or assignment of a file (``::name``;
``A.b`` is method ``b`` of class ``A``); a missing unit counts as absent, so a release that
lacks it still digests.

Usage:
  scripts/vllm-digests.py [--wheels DIR]            print each release's digests and the groups
  scripts/vllm-digests.py --check [--wheels DIR]    exit 1 when a digest of the table, or its
                                                    EAGLE-3 weight contract, differs from the
                                                    wheel (a wheel is missing: 2)
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "schema" / "readers"
WHEELS = ROOT / ".cache" / "vllm" / "wheels"
SPECULATORS = "vllm/transformers_utils/configs/speculators/"
CONFIG = "vllm/transformers_utils/config.py"
REGISTRY = "vllm/model_executor/models/registry.py"
#: the reader units: (file, top-level names); the registry's draft entries are added apart
READER_UNITS = (
    (
        CONFIG,
        (
            "maybe_override_with_speculators",  # 0.11+: detection, method, tokens, verifier
            "HFConfigParser",  # 0.11+: the draft config (SpeculatorsConfig for speculators)
            "_SPECULATIVE_DECODING_CONFIGS",
        ),
    ),
    ("vllm/model_executor/models/qwen3_dflash.py", ("_dflash_layer_causal", "_SLIDING_ATTENTION")),
)
#: before 0.11 (no maybe_override_with_speculators) the probe executes these instead
READER_UNITS_010 = (
    (CONFIG, ("maybe_override_with_speculators_target_model", "get_config")),
    ("vllm/engine/arg_utils.py", ("EngineArgs.create_speculative_config",)),
)


#: draft model modules and what their weight loading builds on, digested whole when present
MODEL_MODULES = tuple(
    f"vllm/model_executor/models/{m}.py"
    for m in (
        "llama_eagle3",
        "qwen3_eagle3",
        "qwen3_dflash",
        "qwen3_dspark",
        "qwen3_dflash2",
        "ricursive_dflash2",  # 0.34: DFlash2 with no_rope_layers (SpeculativeConfig names it)
        "llama",
        "qwen3",
    )
)
#: single units of shared modules: (file, top-level name)
MODEL_UNITS = (("vllm/model_executor/models/utils.py", "AutoWeightsLoader"),)


def _segment(tree: ast.Module, source: str, dotted: str) -> str | None:
    head, _, rest = dotted.partition(".")
    for node in tree.body:
        names = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [getattr(t, "id", None) for t in node.targets]
        elif isinstance(node, ast.AnnAssign):
            names = [getattr(node.target, "id", None)]
        if head not in names:
            continue
        if not rest:
            return ast.get_source_segment(source, node)
        for sub in getattr(node, "body", []):
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef) and sub.name == rest:
                return ast.get_source_segment(source, sub)
    return None


def _sha(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:16]


def _digest(units: dict[str, str]) -> str:
    return _sha("".join(f"{k}\0{v}\n" for k, v in sorted(units.items())))


def _draft_archs(wheel: zipfile.ZipFile, names: set[str]) -> set[str]:
    """The architectures the speculators conversion names (``["architectures"] = [...]``)."""
    archs: set[str] = set()
    for name in names:
        if name.startswith(SPECULATORS) and name.endswith(".py"):
            text = wheel.read(name).decode()
            archs |= set(re.findall(r'\["architectures"\]\s*=\s*\[\s*"(\w+)"', text))
    return archs


def _registry(wheel: zipfile.ZipFile, archs: set[str]) -> dict[str, str]:
    """arch -> the registry's entry source (module, class) for the given architectures."""
    source = wheel.read(REGISTRY).decode()
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in archs:
                    out[key.value] = ast.get_source_segment(source, value)
    return out


def digests(path: Path) -> dict:
    """{"version", "reader", "model", "units": {unit: sha}, "draft_modules": [...]}."""
    with zipfile.ZipFile(path) as wheel:
        names = set(wheel.namelist())
        version = next(
            n.split("/")[0][len("vllm-") : -len(".dist-info")]
            for n in names
            if n.endswith(".dist-info/METADATA") and n.startswith("vllm-")
        )
        reader: dict[str, str] = {}
        for name in sorted(names):
            if name.startswith(SPECULATORS) and name.endswith(".py"):
                reader[name] = _sha(wheel.read(name))
        units = READER_UNITS
        if "def maybe_override_with_speculators(" not in wheel.read(CONFIG).decode():
            units += READER_UNITS_010
        for file, symbols in units:
            if file not in names:
                continue
            source = wheel.read(file).decode()
            tree = ast.parse(source)
            for symbol in symbols:
                seg = _segment(tree, source, symbol)
                if seg is not None:
                    reader[f"{file}::{symbol}"] = _sha(seg)
        entries = _registry(wheel, _draft_archs(wheel, names))
        for arch, entry in entries.items():
            reader[f"{REGISTRY}::{arch}"] = _sha(entry)
        modules = sorted(
            {f"vllm/model_executor/models/{ast.literal_eval(e)[0]}.py" for e in entries.values()}
            & names
        )
        model = {m: _sha(wheel.read(m)) for m in sorted(set(modules) | set(MODEL_MODULES) & names)}
        for file, symbol in MODEL_UNITS:
            if file in names:
                source = wheel.read(file).decode()
                seg = _segment(ast.parse(source), source, symbol)
                if seg is not None:
                    model[f"{file}::{symbol}"] = _sha(seg)
    return {
        "version": version,
        "reader": _digest(reader),
        "model": _digest(model),
        "units": reader | model,
        "draft_modules": modules,
    }


EAGLE3 = "vllm/model_executor/models/llama_eagle3.py"


def eagle3_weights(path: Path) -> dict | None:
    """The EAGLE-3 drafter's weight contract as its source states it (read, not executed):
    how many aux hidden states ``fc`` is sized for, which optional modules it builds and
    under which config flag, and how ``load_weights`` fails on a tensor it has not built
    (``params_dict[name]``: a KeyError; ``AutoWeightsLoader``: a ValueError)."""
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        if EAGLE3 not in names:
            return None
        src = wheel.read(EAGLE3).decode()
        conversion = "".join(
            wheel.read(n).decode() for n in names if n.startswith(SPECULATORS) and n.endswith(".py")
        )
    if re.search(r'eagle_config\.get\(\s*"eagle_aux_hidden_state_layer_ids"', src):
        # sized by config.num_aux_hidden_states, else by the ids of config.eagle_config, else
        # 3: the speculators conversion writes the ids at the top level and neither of those,
        # so every speculators draft gets 3 (executed on 0.22, 0.24, 0.25, 0.31 to 0.33)
        written = re.search(r"eagle_config|num_aux_hidden_states", conversion)
        aux = "eagle_aux_hidden_state_layer_ids" if written else 3
    elif re.search(r"target_hidden_size \* 3", src):
        aux = 3
    else:
        raise SystemExit(f"{path.name}: {EAGLE3}: fc sizing not recognised; read it and extend")
    builds = {}
    if re.search(r"self\.input_norm(: [^=]+)? = RMSNorm", src):
        builds["input_norm.weight"] = "norm_before_fc"
    if re.search(r"self\.fc_norm(: [^=]+)? = nn\.ModuleList", src):
        builds["fc_norm.{i}.weight"] = "fc_norm"
    if "params_dict[name]" in src:
        unknown = "KeyError: params_dict[name] in load_weights"
    elif "AutoWeightsLoader(self)" in src:
        unknown = "ValueError: There is no module or parameter named ... (AutoWeightsLoader)"
    else:
        raise SystemExit(f"{path.name}: {EAGLE3}: load_weights not recognised; read it and extend")
    # what load_weights skips without an error: t2d always; input_norm unless norm_before_fc
    dropped = {}
    if re.search(r'if "t2d" in name:\s*continue', src):
        dropped["t2d"] = None
    # (skip_substrs before 0.29; from 0.29 a WeightsMapper renaming it to None)
    if re.search(
        r"if not self\.model\.norm_before_fc:\s*(skip_substrs\.append\(\"input_norm\.\"\)"
        r'|orig_to_new_substr\["input_norm\."\] = None)',
        src,
    ):
        dropped["input_norm.weight"] = "norm_before_fc"
    return {
        "status": "read-not-executed",
        "from": EAGLE3,
        "fc_aux_layers": aux,
        "optional": builds,
        "dropped": dropped,
        "unknown_tensor": unknown,
    }


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def table_members() -> dict[str, dict]:
    """version -> {"reader", "model", "file", "weights"} as the table records them."""
    out = {}
    for path in sorted(TABLE.glob("vllm-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        weights = data.get("models", {}).get("eagle3", {}).get("weights")
        for version, recorded in data.get("members", {}).items():
            out[version] = {**recorded, "file": path.name, "weights": weights}
    return out


def wheel_of(wheels: Path, version: str) -> Path | None:
    found = sorted(wheels.glob(f"vllm-{version}-*.whl"))
    return found[0] if found else None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, default=WHEELS)
    parser.add_argument("--check", action="store_true", help="check the table's digests")
    parser.add_argument("--json", action="store_true", help="print every release's digests")
    args = parser.parse_args(argv)
    if args.check:
        members = table_members()
        if not members:
            print("no vLLM release in the reader table records digests", file=sys.stderr)
            return 1
        bad, missing = 0, []
        for version in sorted(members, key=_vkey):
            recorded = members[version]
            wheel = wheel_of(args.wheels, version)
            if wheel is None:
                missing.append(version)
                continue
            got = digests(wheel)
            read = recorded["weights"] is not None and recorded["weights"]["status"] != "executed"
            # an executed block is checked by running the release (tests/readers/)
            facts = {k: v for k, v in (recorded["weights"] or {}).items() if k != "reason"}
            if read and eagle3_weights(wheel) != facts:
                bad += 1
                print(
                    f"schema/readers/{recorded['file']}: models.eagle3.weights is not what "
                    f"{version}'s {EAGLE3} builds: {eagle3_weights(wheel)}",
                    file=sys.stderr,
                )
            for kind in ("reader", "model"):
                if got[kind] != recorded.get(kind):
                    bad += 1
                    print(
                        f"schema/readers/{recorded['file']}: members.{version}.{kind} is "
                        f"{recorded.get(kind)}, the wheel's source digests to {got[kind]}",
                        file=sys.stderr,
                    )
        print(f"{len(members) - len(missing)} releases checked, {bad} digests differ")
        if missing:
            print(f"no wheel in {args.wheels} for: {', '.join(missing)}", file=sys.stderr)
            return 2
        return 1 if bad else 0
    found = [digests(p) for p in sorted(args.wheels.glob("vllm-*.whl"))]
    found.sort(key=lambda d: _vkey(d["version"]))
    if args.json:
        print(json.dumps(found, indent=1))
        return 0
    groups: dict[tuple[str, str], list[str]] = {}
    for d in found:
        groups.setdefault((d["reader"], d["model"]), []).append(d["version"])
        print(f"{d['version']:10} reader {d['reader']}  model {d['model']}")
    print(f"{len(found)} releases, {len(groups)} groups (reader, model):")
    for (reader, model), versions in groups.items():
        print(f"  {reader} {model}: {', '.join(versions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
