"""Executed readers for the reader table: runs vLLM releases (vllm_probe.py) and speculators
releases (tests/interop/probe.py) on configs and turns their answers into table terms.

Also the maintainer's drafting aid: ``python -m tests.readers.oracle vllm==0.32.0`` prints
what the executed release reads for every row of its table file, to fill a new file's rows.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from spec_format.facts import readers

ROOT = Path(__file__).resolve().parents[2]
VLLM_CACHE = Path(os.environ.get("SPECFMT_READER_CACHE", ROOT / ".cache" / "vllm"))
INTEROP_CACHE = Path(os.environ.get("SPECFMT_INTEROP_CACHE", ROOT / ".cache" / "interop"))
BASE_PYTHON = INTEROP_CACHE / "base" / "bin" / "python"
VLLM_PROBE = Path(__file__).resolve().parent / "vllm_probe.py"
SPEC_PROBE = ROOT / "tests" / "interop" / "probe.py"
#: the example each vLLM row starts from (a realistic, accepted config of that type)
EXAMPLE = {
    "eagle3": "qwen3-8b-eagle3",
    "peagle": "qwen3-8b-peagle",
    "dflash": "qwen3-8b-dflash",
    "dflash2": "qwen3-32b-dflash2",
    "dspark": "qwen3-8b-dspark",
    "xpress": "qwen3-8b-xpress",
    "mtp": "qwen3-next-80b-mtp",
}
FIXTURES = ROOT / "tests" / "fixtures" / "releases"
_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
#: the probes' compiled bytecode, outside the release environments (kept between sessions:
#: a release's second start skips compiling vLLM, transformers and the model layer)
PYCACHE = ROOT / ".cache" / "pycache"


def env_path(rel: readers.Release) -> Path:
    if rel.name == "vllm":
        return VLLM_CACHE / "envs" / rel.representative
    return INTEROP_CACHE / "envs" / rel.version


def env_ready(rel: readers.Release) -> bool:
    return (env_path(rel) / ".ok").is_file() and BASE_PYTHON.exists()


def probe_env(path: str) -> dict[str, str]:
    """The environment of a probe process with ``path`` as its python path."""
    env = {**os.environ, **_OFFLINE, "PYTHONPATH": path, "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    # one hash seed: a release's message that lists a set (the parameters a model has) reads
    # the same in every probe process, so two processes' answers compare equal
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(rel: readers.Release, configs: list[dict]) -> list[dict]:
    """Answers of the executed release for each config (one subprocess for all)."""
    target = env_path(rel)
    if rel.name == "vllm":
        cmd, path = [str(BASE_PYTHON), str(VLLM_PROBE)], f"{target / 'src'}:{target / 'deps'}"
        stdin = "".join(json.dumps({"config": c}) + "\n" for c in configs)
    else:
        cmd, path = [str(BASE_PYTHON), str(SPEC_PROBE)], str(target)
        stdin = json.dumps([{"op": "read", "config": c} for c in configs])
    proc = subprocess.run(
        cmd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        env=probe_env(path),
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe for {rel.id} failed:\n{proc.stderr[-3000:]}")
    if rel.name == "vllm":
        return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return json.loads(proc.stdout)


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def base_config(rid: str, model_type: str) -> dict | None:
    """A realistic config of the type for the reader release: for a speculators release the
    newest reconstructed fixture of its own line or older, else the bundled example."""
    name, version = rid.split("==")
    if name == "speculators":
        line = tuple(int(p) for p in version.split(".")[:2])
        candidates = sorted(
            (p for p in FIXTURES.glob(f"*/{model_type}/*.json")),
            key=lambda p: tuple(int(x) for x in p.parent.parent.name.split(".")),
        )
        own = [
            p
            for p in candidates
            if tuple(int(x) for x in p.parent.parent.name.split(".")) <= line
            and "off-by-one" not in p.name
            and "no-anchor" not in p.name
        ]
        if own:
            return load(own[-1])
    if model_type in EXAMPLE:
        return load(ROOT / "examples" / EXAMPLE[model_type] / "config.json")
    return None


def variant(config: dict, name: str, case: str, value=None) -> dict:
    out = copy.deepcopy(config)
    out.pop(name, None)
    if case == "null":
        out[name] = None
    elif case == "empty":
        out[name] = []
    elif case == "given":
        out[name] = value
    return out


def dig(node, dotted: str):
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def observed(rel: readers.Release, row: dict, name: str, answer: dict) -> tuple[str, object]:
    """('rejected', error) or ('read', value in the config field's own terms)."""
    if rel.name == "vllm":
        if not answer.get("accepted"):
            return "rejected", answer.get("error")
        value = dig(answer, row.get("into", f"draft.{name}"))
        for step in row.get("transform", []):
            if step == "not" and value is not None:
                value = not value
            elif step == "unset-if-empty" and not value:
                value = None
            elif step == "truthy":  # the draft model code only tests the flag's truthiness
                value = bool(value)
        return "read", value
    if not answer.get("ok"):
        return "rejected", answer.get("error")
    return "read", answer["fields"].get(name)


def cases(row: dict) -> list[tuple[str, object]]:
    """(case, value) pairs a row is checked with."""
    out = [("absent", None), ("null", None)]
    if "empty" in row or row.get("list"):
        out.append(("empty", None))
    out += [("given", v) for v in row.get("test_values", [])]
    return out


def main(argv: list[str]) -> None:
    rel = readers.release(*argv[0].split("=="))
    keys, configs = [], []
    for model_type in rel.data.get("models", {}):
        base = base_config(rel.id, model_type)
        for name, row in rel.fields(model_type).items():
            for case, value in cases(row):
                keys.append((model_type, name, case, value))
                configs.append(variant(base, name, case, value))
    for key, answer in zip(keys, run(rel, configs), strict=True):
        row = rel.row(key[0], key[1])
        print(*key, observed(rel, row, key[1], answer))


if __name__ == "__main__":
    main(sys.argv[1:])
