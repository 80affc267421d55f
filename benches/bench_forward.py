"""Benchmark of ``specfmt forward`` on a Qwen3-8B-shaped EAGLE-3 draft.

The checkpoint has the shapes of RedHatAI/Qwen3-8B-speculator.eagle3 (H=4096, V=151936,
D=32000, one llama layer, bf16, embed_tokens included: about 1.9 GiB). It is built by the
shared builder in a temporary directory (random values: a real, fully written file) and
deleted afterwards. Each measurement runs in a fresh Python process, so its peak RSS
(VmHWM) is its own:

* ``read``: read the file once, sequentially, into a reused 64 MiB buffer (the floor for
  any loader that touches every byte);
* ``specfmt``: the strict loader (contract check, model on the meta device, tensors
  assigned from the memory map, NaN/Inf scan), then the step-0 forward of N positions;
* ``load_file``: the obvious alternative: build the same model on the device (bfloat16
  default dtype, so its init allocates the full size), ``safetensors.torch.load_file``,
  ``load_state_dict(strict=True)``, then the same forward.

The forward runs twice; the second time is the steady state. Every measurement is repeated
(``--repeat``, median reported) with a warm page cache (the builder has just written the
file) and a cold one (the file's pages evicted with ``posix_fadvise(DONTNEED)`` before
each run). Results go to stdout as a markdown table.

    python benches/bench_forward.py [--device cpu|cuda] [--positions 128] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIB = 1024**3


def _rss() -> tuple[int, int]:
    """(current, peak) resident set size of this process in bytes."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


# ----------------------------------------------------------------------------- children


def _child(mode: str, ckpt: Path, device_name: str, positions: int) -> dict:
    out: dict = {"mode": mode}
    if mode == "read":
        buffer = bytearray(64 * 1024 * 1024)
        view = memoryview(buffer)
        start = time.perf_counter()
        total = 0
        with open(ckpt / "model.safetensors", "rb", buffering=0) as f:
            while n := f.readinto(view):
                total += n
        out["seconds"] = time.perf_counter() - start
        out["bytes"] = total
        out["rss"], out["peak_rss"] = _rss()
        return out

    import torch

    from spec_format.forward.config import read_config, resolve
    from spec_format.forward.inputs import random_inputs
    from spec_format.forward.loader import check_weights, load_draft
    from spec_format.forward.run import model_class

    torch.set_num_threads(os.cpu_count() or 1)
    device = torch.device(device_name)
    spec = resolve(read_config(ckpt))
    cls = model_class(spec.model_type)
    out["baseline_rss"] = _rss()[0]  # python + torch, before any weight

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    start = time.perf_counter()
    if mode == "specfmt":
        weights = check_weights(ckpt, spec)
        model = load_draft(weights, spec, cls, device=device, dtype=torch.bfloat16).model
    else:
        from safetensors.torch import load_file

        torch.set_default_dtype(torch.bfloat16)
        with torch.device(device):
            model = cls(spec)
        torch.set_default_dtype(torch.float32)
        state = load_file(str(ckpt / "model.safetensors"), device=str(device))
        model.load_state_dict(state, strict=True)
        del state
        model.requires_grad_(False).eval()
    sync()
    out["load_seconds"] = time.perf_counter() - start
    out["rss_after_load"], out["peak_rss_after_load"] = _rss()
    if device.type == "cuda":
        out["gpu_peak_bytes_after_load"] = torch.cuda.max_memory_allocated()

    data = random_inputs(spec, positions, seed=0)
    ids, hidden = data.input_ids.to(device), data.hidden_states.to(device, torch.bfloat16)
    times = []
    for _ in range(2):
        start = time.perf_counter()
        with torch.inference_mode():
            result = model.draft(ids, hidden, steps=0)
        sync()
        times.append(time.perf_counter() - start)
    out["forward_seconds"] = times
    out["logits_finite"] = bool(torch.isfinite(result.logits).all())
    out["rss"], out["peak_rss"] = _rss()
    if device.type == "cuda":
        out["gpu_peak_bytes"] = torch.cuda.max_memory_allocated()
    return out


# ----------------------------------------------------------------------------- parent


def _measure(mode: str, ckpt: Path, device: str, positions: int) -> dict:
    proc = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            mode,
            "--ckpt",
            str(ckpt),
            "--device",
            device,
            "--positions",
            str(positions),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _evict(path: Path) -> None:
    """Drop the file's pages from the page cache (no root needed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _build(directory: Path) -> tuple[Path, float]:
    from spec_format.testing.builder import build_checkpoint, qwen3_8b_eagle3_config

    start = time.perf_counter()
    build_checkpoint(directory, qwen3_8b_eagle3_config(), dtype="BF16")
    return directory, time.perf_counter() - start


def _table(size: int, results: dict, positions: int, device: str, repeat: int) -> str:
    read = {
        cache: _median([r["seconds"] for r in results[cache]["read"]]) for cache in ("warm", "cold")
    }
    lines = [
        f"checkpoint: {size / GIB:.2f} GiB ({size:,} bytes), device {device}, "
        f"{positions} positions, {os.cpu_count()} CPU threads, median of {repeat} runs",
        f"read once: warm page cache {read['warm']:.2f} s "
        f"({size / GIB / read['warm']:.2f} GiB/s), cold {read['cold']:.2f} s "
        f"({size / GIB / read['cold']:.2f} GiB/s)",
        "",
        "| loader | cache | load s | load / read | peak RSS GiB | peak RSS / size "
        "| forward s (1st, 2nd) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ("specfmt", "load_file"):
        for cache in ("warm", "cold"):
            runs = results[cache][name]
            load = _median([r["load_seconds"] for r in runs])
            peak = max(r["peak_rss"] for r in runs)
            first = _median([r["forward_seconds"][0] for r in runs])
            second = _median([r["forward_seconds"][1] for r in runs])
            lines.append(
                f"| {name} | {cache} | {load:.2f} | {load / read[cache]:.2f}x "
                f"| {peak / GIB:.2f} | {peak / size:.2f}x | {first:.2f}, {second:.2f} |"
            )
            gpu = [r["gpu_peak_bytes"] for r in runs if "gpu_peak_bytes" in r]
            if gpu:
                lines.append(
                    f"| {name} | {cache} | GPU peak allocated | | {max(gpu) / GIB:.2f} | | |"
                )
    baseline = _median([r["baseline_rss"] for r in results["warm"]["specfmt"]])
    lines.append("")
    lines.append(f"peak RSS includes {baseline / GIB:.2f} GiB of Python + torch before any weight")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--positions", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    parser.add_argument("--dir", default=None, help="where to build the temporary checkpoint")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--ckpt", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, Path(args.ckpt), args.device, args.positions)))
        return

    tmp = Path(tempfile.mkdtemp(prefix="specfmt-bench-forward-", dir=args.dir))
    try:
        ckpt, build_seconds = _build(tmp / "qwen3-8b-eagle3")
        weights = ckpt / "model.safetensors"
        size = weights.stat().st_size
        print(f"built in {build_seconds:.1f} s", file=sys.stderr)
        results: dict = {"warm": {}, "cold": {}}
        for cache in ("warm", "cold"):
            for mode in ("read", "specfmt", "load_file"):
                runs = []
                for _ in range(args.repeat):
                    if cache == "cold":
                        _evict(weights)
                    runs.append(_measure(mode, ckpt, args.device, args.positions))
                results[cache][mode] = runs
        print(_table(size, results, args.positions, args.device, args.repeat))
        print("\nraw: " + json.dumps(results))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
