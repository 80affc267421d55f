"""Benchmark: `specfmt inspect` next to `specfmt validate` on the Qwen3-8B EAGLE-3 shapes.

    python benches/bench_inspect.py [--repeat 5]

Builds, in a temporary directory deleted afterwards, the draft of
RedHatAI/Qwen3-8B-speculator.eagle3 (H=4096, V=151936, D=32000, one layer, bf16, ~1.9 GB)
*sparse* (tensor data are holes), a Qwen3-8B ``config.json``, a sparse Qwen3-8B verifier
(5 shards, ~16 GB of holes) and a token-count file. Then, each mode in a fresh process
(warm: one call on a tiny checkpoint first, so imports and schema loading are not counted):

* time of one call and bytes read by the process during it (``/proc/self/io`` ``rchar``:
  every ``read``/``pread``, configs and headers included) for ``validate`` header-only,
  ``inspect --verifier CONFIG``, ``inspect --verifier DIR`` (the verifier's 5 headers) and
  ``inspect --token-freq`` (reads t2d);
* the whole command line, start-up included: ``specfmt validate CKPT`` and ``specfmt inspect
  CKPT --verifier CONFIG``, alternated, median of the runs.

Results go to ``benches/RESULTS-inspect.md`` (``--out``); the issue's targets are checked.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
TARGET_BYTES = 2 * 1024 * 1024


def rchar() -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


# -- one mode, in its own process ------------------------------------------------------------


def child(mode: str, paths: dict[str, str], repeat: int) -> None:
    from spec_format.inspect.run import InspectOptions, run_inspect
    from spec_format.runner.validation import ValidateOptions, validate

    def call(draft: str, tiny: bool):
        if mode == "validate":
            return validate([draft], ValidateOptions())
        verifier = {
            "inspect-config": paths["verifier_config"],
            "inspect-header": paths["verifier_dir"],
            "inspect-token-freq": paths["verifier_config"],
        }[mode]
        freq = None
        if mode == "inspect-token-freq":
            freq = Path(paths["tiny_freq"] if tiny else paths["freq"])
        if tiny:
            verifier = paths["tiny_verifier"]
        return run_inspect(InspectOptions(draft, verifier=verifier, token_freq=freq))

    call(paths["tiny"], True)  # imports, schemas, contracts: not what is measured
    times, reads, own = [], [], []
    for _ in range(repeat):
        before = rchar()
        t = time.perf_counter()
        result = call(paths["draft"], False)
        times.append(time.perf_counter() - t)
        after = rchar()
        reads.append(None if before is None else after - before)
        own.append(getattr(result, "bytes_read", None))
    print(json.dumps({"mode": mode, "seconds": times, "rchar": reads, "reported": own}))


def run_child(mode: str, paths: dict[str, str], repeat: int) -> dict:
    cmd = [sys.executable, str(HERE), "--child", mode, "--paths", json.dumps(paths)]
    cmd += ["--repeat", str(repeat)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli_walls(paths: dict[str, str], repeat: int) -> dict[str, list[float]]:
    base = [sys.executable, "-m", "spec_format"]
    commands = {
        "specfmt validate CKPT": [*base, "validate", paths["draft"], "-q"],
        "specfmt inspect CKPT --verifier CONFIG": [
            *base,
            "inspect",
            paths["draft"],
            "--verifier",
            paths["verifier_config"],
        ],
    }
    out: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):  # alternated, so machine noise hits both alike
        for name, cmd in commands.items():
            t = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, check=False, cwd=ROOT)
            out[name].append(time.perf_counter() - t)
            if proc.returncode != 0:
                raise RuntimeError(f"{name} exited {proc.returncode}: {proc.stderr.decode()}")
    return out


# -- the parent ------------------------------------------------------------------------------


def prepare(workdir: Path) -> dict[str, str]:
    import numpy as np

    from spec_format.testing.builder import (
        build_checkpoint,
        build_verifier,
        qwen3_8b_config,
        qwen3_8b_eagle3_config,
        tiny_config,
    )

    draft = build_checkpoint(workdir / "draft", qwen3_8b_eagle3_config(), data="sparse").path
    verifier_dir = build_verifier(workdir / "Qwen3-8B", qwen3_8b_config(), shards=5).path
    config_only = workdir / "Qwen3-8B-config"
    config_only.mkdir()
    shutil.copy(verifier_dir / "config.json", config_only / "config.json")
    tiny = build_checkpoint(workdir / "tiny", tiny_config("eagle3")).path
    tiny_verifier = workdir / "tiny-verifier"
    tiny_verifier.mkdir()
    small = {**qwen3_8b_config(), "vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 2}
    (tiny_verifier / "config.json").write_text(json.dumps(small))
    rng = np.random.default_rng(0)
    np.save(workdir / "freq.npy", rng.integers(0, 1000, size=151936))
    np.save(workdir / "tiny-freq.npy", rng.integers(0, 1000, size=256))
    return {
        "draft": str(draft),
        "verifier_dir": str(verifier_dir),
        "verifier_config": str(config_only),
        "tiny": str(tiny),
        "tiny_verifier": str(tiny_verifier),
        "freq": str(workdir / "freq.npy"),
        "tiny_freq": str(workdir / "tiny-freq.npy"),
    }


def med(values) -> float:
    return statistics.median(v for v in values if v is not None)


def report(results: dict) -> str:
    m = results["machine"]
    size = results["size"]
    runs = results["runs"]
    lines = [
        "# `specfmt inspect` benchmark",
        "",
        "Written by `python benches/bench_inspect.py` (do not edit by hand; rerun it). Checkpoint:",
        "the shapes of RedHatAI/Qwen3-8B-speculator.eagle3 (H=4096, V=151936, D=32000, one",
        f"decoder layer, bf16), {size / 1e9:.2f} GB written sparse; verifier: Qwen3-8B, as its",
        "config.json alone and as a sparse 5-shard checkpoint (8.19B parameters). Every mode runs",
        "in a fresh process after one warm-up call on a tiny checkpoint; medians.",
        "",
        f"Machine: {m['cpus']} CPUs, {m['platform']}; Python {m['python']}.",
        "",
        "## One call, in process",
        "",
        "| mode | time | bytes read (process) | bytes read (reported) |",
        "|---|---|---|---|",
    ]
    names = {
        "validate": "`validate CKPT` (header-only)",
        "inspect-config": "`inspect CKPT --verifier CONFIG`",
        "inspect-header": "`inspect CKPT --verifier DIR` (5 verifier headers)",
        "inspect-token-freq": "`inspect CKPT --verifier CONFIG --token-freq freq.npy`",
    }
    for mode, name in names.items():
        r = runs[mode]
        reported = med(r["reported"]) if any(v is not None for v in r["reported"]) else None
        lines.append(
            f"| {name} | {med(r['seconds']) * 1e3:.1f} ms | {med(r['rchar']) / 1024:.1f} KiB | "
            + (f"{reported / 1024:.1f} KiB |" if reported is not None else "- |")
        )
    walls = results["cli"]
    lines += [
        "",
        "The process count includes the configs, the token-count file (1.2 MB of int64 for",
        "`--token-freq`) and every header; the reported count is what the checkpoint readers",
        "fetched (draft and verifier). Without `--token-freq` nothing but headers and configs",
        "is read; with it, t2d (151,936 bytes) as well.",
        "",
        "## Whole command, start-up included",
        "",
        "| command | median wall time |",
        "|---|---|",
    ]
    for name, values in walls.items():
        lines.append(f"| `{name}` | {med(values) * 1e3:.0f} ms (min {min(values) * 1e3:.0f}) |")
    inspect_bytes = med(runs["inspect-config"]["rchar"])
    (v_name, v_walls), (i_name, i_walls) = walls.items()
    lines += [
        "",
        f"Fastest runs: inspect {(min(i_walls) - min(v_walls)) * 1e3:+.0f} ms against validate;",
        "both commands start the same application, inspect imports its own modules on top",
        "(`python -X importtime` puts `spec_format.inspect` at about 20 ms on this machine).",
        "Medians move with the load of the shared machine.",
        "",
        "## Targets",
        "",
        f"- header-only, under 2 MB read without `--token-freq`: {inspect_bytes / 1024:.1f} KiB "
        f"({'met' if inspect_bytes < TARGET_BYTES else 'NOT met'})",
        f"- same time as `validate`: inspect {med(runs['inspect-config']['seconds']) * 1e3:.1f} ms "
        f"vs validate {med(runs['validate']['seconds']) * 1e3:.1f} ms in process; whole command "
        + " vs ".join(f"{med(v) * 1e3:.0f} ms" for v in walls.values()),
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE.parent / "RESULTS-inspect.md")
    parser.add_argument("--child")
    parser.add_argument("--paths")
    args = parser.parse_args()
    if args.child:
        child(args.child, json.loads(args.paths), args.repeat)
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="specfmt-bench-inspect-"))
    try:
        paths = prepare(workdir)
        size = (Path(paths["draft"]) / "model.safetensors").stat().st_size
        runs = {
            mode: run_child(mode, paths, args.repeat * 4)
            for mode in ("validate", "inspect-config", "inspect-header", "inspect-token-freq")
        }
        results = {
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
            },
            "size": size,
            "runs": runs,
            "cli": cli_walls(paths, args.repeat),
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    text = report(results)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
