#!/usr/bin/env python3
"""Benchmark: `specfmt validate` (config layers) against check-jsonschema.

Two measurements, side by side in one run, written to benches/RESULTS-validate.md:

1. One config, whole process (start-up included): `specfmt validate CONFIG` against
   `check-jsonschema --schemafile <type schema> CONFIG`, median of N runs each.
2. Many files in one process: N generated configs (every type, realistic values with
   random variations, about one in ten broken) validated by one `specfmt validate`
   process, against one `check-jsonschema` process over the same files and the root
   schema; configs per second on one core (both are single-threaded Python).

    python benches/bench_validate.py [--files 10000] [--runs 15]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*/config.json"))
SCHEMA_DIR = ROOT / "schema" / "0.9"


def _exe(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        raise SystemExit(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def _timed(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return times


def _variants(n: int, seed: int = 0):
    """n configs derived from the examples: renamed, resized, flags flipped, some broken."""
    rng = random.Random(seed)
    bases = [json.loads(p.read_text()) for p in EXAMPLES]
    for i in range(n):
        cfg = copy.deepcopy(rng.choice(bases))
        tlc = cfg["transformer_layer_config"]
        tlc["num_hidden_layers"] = (
            rng.choice([1, 2, 3, 5])
            if cfg["speculators_model_type"] != "mtp"
            else tlc["num_hidden_layers"]
        )
        if "layer_types" in tlc and cfg["speculators_model_type"] != "mtp":
            tlc["layer_types"] = ["full_attention"] * tlc["num_hidden_layers"]
        cfg["speculators_config"]["proposal_methods"][0]["verifier_accept_k"] = 1
        if "draft_vocab_size" in cfg:
            cfg["draft_vocab_size"] = rng.choice([16000, 32000, 64000])
        if "norm_before_residual" in cfg:
            cfg["norm_before_residual"] = rng.random() < 0.5
        if i % 10 == 0:  # a broken one: wrong type, out of range, or a dropped required key
            kind = rng.randrange(3)
            if kind == 0:
                tlc["hidden_size"] = str(tlc["hidden_size"])
            elif kind == 1:
                cfg["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = 0
            else:
                del cfg["speculators_config"]["verifier"]["name_or_path"]
        yield cfg


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, default=ROOT / "benches" / "RESULTS-validate.md")
    args = parser.parse_args()

    specfmt, cjs = _exe("specfmt"), _exe("check-jsonschema")
    config = ROOT / "examples" / "qwen3-8b-eagle3" / "config.json"
    type_schema = SCHEMA_DIR / "eagle3.schema.json"
    commands = {
        "specfmt validate": [specfmt, "validate", str(config), "-q"],
        "check-jsonschema": [
            cjs,
            "--schemafile",
            str(type_schema),
            "--base-uri",
            type_schema.as_uri(),
            str(config),
        ],
    }
    # alternate the two commands so machine noise hits both alike
    single: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            single[name] += _timed(cmd, 1)

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, cfg in enumerate(_variants(args.files)):
            p = Path(tmp) / f"c{i:05d}.json"
            p.write_text(json.dumps(cfg, indent=2))
            paths.append(str(p))
        listfile = Path(tmp) / "paths.txt"
        root_schema = SCHEMA_DIR / "speculators.schema.json"

        # specfmt: in one process (timed inside, start-up excluded) and as a whole process
        code = (
            "import sys, time\n"
            "from spec_format.validation import validate\n"
            "paths = open(sys.argv[1]).read().split()\n"
            "t = time.perf_counter(); r = validate(paths); dt = time.perf_counter() - t\n"
            "print(dt, r.counts().get('error', 0), sum(f.status.value == 'fail' for f in r.files))\n"
        )
        listfile.write_text("\n".join(paths))
        out = subprocess.run(
            [sys.executable, "-c", code, str(listfile)], capture_output=True, text=True, check=True
        )
        inproc_s, n_errors, n_failed = out.stdout.split()
        inproc_s = float(inproc_s)
        start = time.perf_counter()
        subprocess.run([specfmt, "validate", *paths, "-q"], stdout=subprocess.DEVNULL, check=False)
        specfmt_whole = time.perf_counter() - start
        start = time.perf_counter()
        cjs_proc = subprocess.run(
            [cjs, "--schemafile", str(root_schema), "--base-uri", root_schema.as_uri(), *paths],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        cjs_whole = time.perf_counter() - start

    def ms(xs):
        return f"{statistics.median(xs) * 1000:.0f} ms (min {min(xs) * 1000:.0f})"

    lines = [
        "# `specfmt validate` benchmark (config layers)",
        "",
        f"Run: `python benches/bench_validate.py --files {args.files} --runs {args.runs}` on "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; {time.strftime('%Y-%m-%d')}.",
        "",
        "## One config, whole process (start-up included)",
        "",
        "| command | median wall time |",
        "|---|---|",
        *[f"| {name} | {ms(times)} |" for name, times in single.items()],
        "",
        "specfmt runs the schema layer plus the cross-field, consumer and version rules; "
        "check-jsonschema runs the JSON Schema of the type only. specfmt runs from the "
        "development (editable) install, whose import hook adds about 15 ms to start-up.",
        "",
        f"## {args.files:,} generated configs in one process",
        "",
        "| what | wall time | configs/s |",
        "|---|---|---|",
        f"| specfmt `validate()` in-process (schema + cross-field + consumer) | {inproc_s:.2f} s | {args.files / inproc_s:,.0f} |",
        f"| `specfmt validate` whole process | {specfmt_whole:.2f} s | {args.files / specfmt_whole:,.0f} |",
        f"| `check-jsonschema` whole process, root schema (oneOf over 7 types) | {cjs_whole:.2f} s | {args.files / cjs_whole:,.0f} |",
        "",
        f"specfmt found {n_errors} errors in {n_failed} failing files (about one in ten is broken "
        f"on purpose); check-jsonschema exited {cjs_proc.returncode}. Target: at least 3,000 "
        "configs/s in one process on one core.",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
