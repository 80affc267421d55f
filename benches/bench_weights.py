"""Benchmark: weight checks on a checkpoint with the real shapes of Qwen3-8B EAGLE-3.

    python benches/bench_weights.py                  # sparse and dense, ~2 minutes
    python benches/bench_weights.py --data sparse    # only the sparse file (fast)

Builds, in a temporary directory that is deleted afterwards, the draft of
RedHatAI/Qwen3-8B-speculator.eagle3 (H=4096, V=151936, D=32000, one layer, bf16, ~2.0 GB):
once *sparse* (tensor data are holes, so reads cost no disk I/O) and once *dense* with cheap
data (a 1 MiB block of random finite values repeated). Then it measures, each in a fresh
process so that peak memory is the measured mode's own:

* ``specfmt validate`` header-only: time of the validate call (warm: contracts and schemas
  already loaded) and of the first call, bytes read by the process (``/proc/self/io``
  ``rchar``, every ``read``/``pread``, config and headers included), and the CLI's wall time;
* ``--deep`` (reads t2d and d2t);
* ``--scan-weights`` with the page cache warm and cold (pages evicted with
  ``posix_fadvise(DONTNEED)``): throughput and peak RSS, next to a plain sequential read of
  the same bytes (the bandwidth the scan should reach);
* the obvious alternative: ``safetensors.safe_open`` reading every tensor (torch, since
  numpy has no bfloat16), with and without a ``torch.isfinite`` check.

Results go to ``benches/RESULTS-weights.md`` (``--out``); targets from the issue are checked
and printed next to the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent

TARGET_HEADER_MS = 50.0
TARGET_HEADER_BYTES = 2 * 1024 * 1024
TARGET_DEEP_MS = 100.0
TARGET_SCAN_RSS_MB = 256.0


# -- helpers used by the child processes ---------------------------------------------------


def rchar() -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def peak_rss_mb() -> float:
    """Peak RSS of this process (``VmHWM``; ``ru_maxrss`` would include the parent's peak,
    which Linux carries across fork and exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def evict(path: Path) -> None:
    """Drop the file's pages from the page cache (no root needed for clean pages)."""
    for f in sorted(path.glob("*.safetensors")):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def child(mode: str, path: Path, tiny: Path, repeat: int, cold: bool) -> dict:
    """One measurement, run in its own process; prints a JSON object."""
    t_import = time.perf_counter()
    from spec_format.runner.validation import ValidateOptions, validate

    import_s = time.perf_counter() - t_import
    out: dict = {"mode": mode, "cold": cold, "import_s": import_s}

    if mode in ("header", "deep", "scan"):
        options = ValidateOptions(deep=mode == "deep", scan_weights=mode == "scan")
        first_t = time.perf_counter()
        validate([str(tiny)], options)  # loads schemas and contracts: the "first call" cost
        out["first_call_tiny_s"] = time.perf_counter() - first_t
        times, reads = [], []
        base_rss = current_rss_mb()
        for _ in range(repeat):
            if cold:
                evict(path)
            before = rchar()
            t = time.perf_counter()
            report = validate([str(path)], options)
            times.append(time.perf_counter() - t)
            after = rchar()
            reads.append(None if before is None else after - before)
        out.update(
            seconds=times,
            bytes_read=reads,
            exit_code=report.exit_code,
            findings=sorted({f.rule for fr in report.files for f in fr.findings}),
            rss_before_mb=base_rss,
            peak_rss_mb=peak_rss_mb(),
        )
    elif mode == "raw-read":
        # the scan's own I/O (same checkpoint reader, same 2 MiB buffer, same preadv calls)
        # without the bit test: the bandwidth ceiling of the scan on this machine
        from spec_format.parsers.checkpoint import load_checkpoint
        from spec_format.rules.vocab import SCAN_CHUNK_BYTES

        buffer = bytearray(SCAN_CHUNK_BYTES)
        times = []
        for _ in range(repeat):
            if cold:
                evict(path)
            t = time.perf_counter()
            with load_checkpoint(path) as ckpt:
                for name in ckpt.tensors:
                    for _chunk in ckpt.iter_chunks(name, buffer):
                        pass
            times.append(time.perf_counter() - t)
        out.update(seconds=times, peak_rss_mb=peak_rss_mb())
    elif mode.startswith("safe_open"):
        import torch
        from safetensors import safe_open

        times, bad = [], 0
        base_rss = current_rss_mb()
        for _ in range(repeat):
            if cold:
                evict(path)
            t = time.perf_counter()
            for f in sorted(path.glob("*.safetensors")):
                with safe_open(str(f), framework="pt") as st:
                    for name in st.keys():  # noqa: SIM118 - safe_open is not iterable
                        if mode == "safe_open-header":
                            sl = st.get_slice(name)
                            sl.get_shape(), sl.get_dtype()
                            continue
                        # get_tensor maps the file; clone() makes it read the bytes, as
                        # loading them into a model does
                        tensor = st.get_tensor(name).clone()
                        if mode == "safe_open-isfinite" and tensor.is_floating_point():
                            bad += int(not bool(torch.isfinite(tensor).all()))
                        del tensor
            times.append(time.perf_counter() - t)
        out.update(
            seconds=times, rss_before_mb=base_rss, peak_rss_mb=peak_rss_mb(), nonfinite_tensors=bad
        )
    print(json.dumps(out))
    return out


# -- the parent ------------------------------------------------------------------------------


def run_child(mode: str, path: Path, tiny: Path, repeat: int, cold: bool = False) -> dict:
    cmd = [
        sys.executable,
        str(HERE),
        "--child",
        mode,
        "--path",
        str(path),
        "--tiny",
        str(tiny),
        "--repeat",
        str(repeat),
    ] + (["--cold"] if cold else [])
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if result.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def cli_wall(path: Path, repeat: int) -> list[float]:
    exe = shutil.which("specfmt") or str(Path(sys.executable).parent / "specfmt")
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([exe, "validate", str(path), "-q"], capture_output=True, check=False)
        times.append(time.perf_counter() - t)
    return times


def build(directory: Path, data: str) -> tuple[float, int, int]:
    from spec_format.testing.builder import build_checkpoint, qwen3_8b_eagle3_config

    t = time.perf_counter()
    built = build_checkpoint(directory, qwen3_8b_eagle3_config(), data=data, seed=0)
    elapsed = time.perf_counter() - t
    size = sum(f.stat().st_size for f in built.files)
    on_disk = sum(f.stat().st_blocks * 512 for f in built.files)
    return elapsed, size, on_disk


def med(values) -> float:
    return statistics.median(v for v in values if v is not None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=["sparse", "dense", "both"], default="both")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE.parent / "RESULTS-weights.md")
    parser.add_argument("--child")
    parser.add_argument("--path", type=Path)
    parser.add_argument("--tiny", type=Path)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.path, args.tiny, args.repeat, args.cold)
        return 0

    from spec_format.testing.builder import build_checkpoint, tiny_config

    workdir = Path(tempfile.mkdtemp(prefix="specfmt-bench-"))
    results: dict = {"machine": machine(), "runs": {}}
    try:
        tiny = build_checkpoint(workdir / "tiny", tiny_config("eagle3")).path
        modes = ["sparse", "dense"] if args.data == "both" else [args.data]
        for data in modes:
            path = workdir / data
            build_s, size, on_disk = build(path, "sparse" if data == "sparse" else "pattern")
            print(
                f"[{data}] built {size / 1e9:.2f} GB ({on_disk / 1e6:.0f} MB on disk) in {build_s:.1f} s",
                flush=True,
            )
            run: dict = {"build_s": build_s, "size": size, "on_disk": on_disk}
            run["header"] = run_child("header", path, tiny, args.repeat * 4)
            run["deep"] = run_child("deep", path, tiny, args.repeat * 4)
            run["cli_s"] = cli_wall(path, args.repeat)
            run["safe_open-header"] = run_child("safe_open-header", path, tiny, args.repeat * 4)
            for cold in (False, True) if data == "dense" else (False,):
                tag = "cold" if cold else "warm"
                run[f"raw-read-{tag}"] = run_child("raw-read", path, tiny, args.repeat, cold)
                run[f"scan-{tag}"] = run_child("scan", path, tiny, max(2, args.repeat // 2), cold)
                run[f"safe_open-all-{tag}"] = run_child(
                    "safe_open-all", path, tiny, max(2, args.repeat // 2), cold
                )
                run[f"safe_open-isfinite-{tag}"] = run_child(
                    "safe_open-isfinite", path, tiny, max(2, args.repeat // 2), cold
                )
            results["runs"][data] = run
            shutil.rmtree(path)
            print(summary_lines(data, run), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    args.out.write_text(report(results))
    print(f"wrote {args.out}")
    return 0


def machine() -> dict:
    import numpy
    import safetensors

    try:
        import torch

        torch_version = torch.__version__
    except ImportError:  # pragma: no cover
        torch_version = "-"
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "numpy": numpy.__version__,
        "safetensors": safetensors.__version__,
        "torch": torch_version,
        "mem_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    }


def summary_lines(data: str, run: dict) -> str:
    h, d = run["header"], run["deep"]
    lines = [
        f"[{data}] header-only: {med(h['seconds']) * 1e3:.1f} ms, {med(h['bytes_read']) / 1024:.1f} KiB read",
        f"[{data}] --deep: {med(d['seconds']) * 1e3:.1f} ms, {med(d['bytes_read']) / 1024:.1f} KiB read",
    ]
    for tag in ("warm", "cold"):
        if f"scan-{tag}" in run:
            s, r = run[f"scan-{tag}"], run[f"raw-read-{tag}"]
            lines.append(
                f"[{data}] --scan-weights ({tag}): {run['size'] / med(s['seconds']) / 1e9:.2f} GB/s "
                f"(plain read {run['size'] / med(r['seconds']) / 1e9:.2f} GB/s), peak RSS {s['peak_rss_mb']:.0f} MB"
            )
    return "\n".join(lines)


def report(results: dict) -> str:
    m = results["machine"]
    out = [
        "# Weight checks: benchmark results",
        "",
        "Written by `python benches/bench_weights.py` (do not edit by hand; rerun it). Checkpoint:",
        "the shapes of RedHatAI/Qwen3-8B-speculator.eagle3 (H=4096, V=151936, D=32000, one",
        "decoder layer, bf16, 16 tensors + t2d/d2t), built by the bench in a temporary directory",
        "and deleted afterwards. Every mode runs in a fresh process; times are medians.",
        "",
        f"Machine: {m['cpus']} CPUs, {m['mem_gb']} GiB RAM, {m['platform']}; Python {m['python']}, "
        f"numpy {m['numpy']}, safetensors {m['safetensors']}, torch {m['torch']}.",
        "",
    ]
    for data, run in results["runs"].items():
        h, d = run["header"], run["deep"]
        size_gb = run["size"] / 1e9
        what = (
            "sparse file: tensor data are holes, so every read is served from zero pages "
            "(no disk I/O)"
            if data == "sparse"
            else "dense file: real bytes (a 1 MiB block of random finite bf16 values repeated); "
            "'cold' evicts the file from the page cache before each run (posix_fadvise DONTNEED)"
        )
        out += [
            f"## {data} ({size_gb:.2f} GB; {what})",
            "",
            "| what | time | read | peak RSS | target |",
            "|---|---|---|---|---|",
        ]
        hb, db = med(h["bytes_read"]), med(d["bytes_read"])
        hms, dms = med(h["seconds"]) * 1e3, med(d["seconds"]) * 1e3
        out.append(
            f"| `validate` header-only (library call, warm) | {hms:.1f} ms | {hb / 1024:.1f} KiB | "
            f"{h['peak_rss_mb']:.0f} MB | < 50 ms, < 2 MB: "
            f"{'met' if hms < TARGET_HEADER_MS and hb < TARGET_HEADER_BYTES else 'NOT met'} |"
        )
        out.append(
            f"| `validate --deep` (library call, warm) | {dms:.1f} ms | {db / 1024:.1f} KiB | "
            f"{d['peak_rss_mb']:.0f} MB | < 100 ms: {'met' if dms < TARGET_DEEP_MS else 'NOT met'} |"
        )
        out.append(
            f"| first `validate` call in a process (tiny checkpoint: loads schemas, contracts) | "
            f"{h['first_call_tiny_s'] * 1e3:.0f} ms | | | |"
        )
        out.append(
            f"| importing `spec_format.runner.validation` | {h['import_s'] * 1e3:.0f} ms | | | |"
        )
        out.append(
            f"| `specfmt validate DIR -q` (CLI wall time: interpreter, imports, run) | "
            f"{med(run['cli_s']) * 1e3:.0f} ms | | | |"
        )
        so = run["safe_open-header"]
        out.append(
            f"| alternative: `safe_open` + every `get_slice` shape/dtype | {med(so['seconds']) * 1e3:.1f} ms | | "
            f"{so['peak_rss_mb']:.0f} MB | |"
        )
        for tag in ("warm", "cold"):
            if f"scan-{tag}" not in run:
                continue
            s, r = run[f"scan-{tag}"], run[f"raw-read-{tag}"]
            a, f = run[f"safe_open-all-{tag}"], run[f"safe_open-isfinite-{tag}"]
            ok = s["peak_rss_mb"] < TARGET_SCAN_RSS_MB
            out.append(
                f"| the scan's reads alone (same reader and 2 MiB buffer, no test) ({tag}) | {med(r['seconds']):.2f} s "
                f"({run['size'] / med(r['seconds']) / 1e9:.2f} GB/s) | {size_gb:.2f} GB | {r['peak_rss_mb']:.0f} MB | "
                "bandwidth reference |"
            )
            out.append(
                f"| `validate --scan-weights` ({tag}) | {med(s['seconds']):.2f} s "
                f"({run['size'] / med(s['seconds']) / 1e9:.2f} GB/s) | {size_gb:.2f} GB | {s['peak_rss_mb']:.0f} MB | "
                f"< 256 MB: {'met' if ok else 'NOT met'} |"
            )
            out.append(
                f"| alternative: `safe_open` + `get_tensor(...).clone()` for every tensor ({tag}) | {med(a['seconds']):.2f} s "
                f"({run['size'] / med(a['seconds']) / 1e9:.2f} GB/s) | {size_gb:.2f} GB | {a['peak_rss_mb']:.0f} MB | |"
            )
            out.append(
                f"| alternative: same + `torch.isfinite(t).all()` ({tag}) | {med(f['seconds']):.2f} s "
                f"({run['size'] / med(f['seconds']) / 1e9:.2f} GB/s) | {size_gb:.2f} GB | {f['peak_rss_mb']:.0f} MB | |"
            )
        out += [
            "",
            f"Built in {run['build_s']:.1f} s; {run['on_disk'] / 1e6:.0f} MB on disk. Findings on this "
            f"checkpoint: header-only {h['findings'] or 'none'}, --deep {d['findings'] or 'none'}.",
            "",
        ]
    dense = results["runs"].get("dense") or next(iter(results["runs"].values()))
    h, d = dense["header"], dense["deep"]
    warm, raw_warm = dense["scan-warm"], dense["raw-read-warm"]
    scan_gbs = dense["size"] / med(warm["seconds"]) / 1e9
    raw_gbs = dense["size"] / med(raw_warm["seconds"]) / 1e9
    cold_line, cold_ratio = "", None
    if "scan-cold" in dense:
        c, rc = dense["scan-cold"], dense["raw-read-cold"]
        cold_gbs = dense["size"] / med(c["seconds"]) / 1e9
        read_gbs = dense["size"] / med(rc["seconds"]) / 1e9
        cold_ratio = cold_gbs / read_gbs
        cold_line = (
            f" Cold (from disk): {cold_gbs:.2f} GB/s against {read_gbs:.2f} GB/s for the reads "
            f"alone ({cold_ratio:.0%}; the scan prefetches ahead so disk reads overlap the test)."
        )
    disk_verdict = (
        "met from disk" if cold_ratio is not None and cold_ratio >= 0.8 else "not met from disk"
    )
    out += [
        "## Targets (issue 3)",
        "",
        f"* Header-only audit under 50 ms of work and under 2 MB read, whatever the size: "
        f"**{'met' if med(h['seconds']) * 1e3 < TARGET_HEADER_MS and med(h['bytes_read']) < TARGET_HEADER_BYTES else 'not met'}** "
        f"({med(h['seconds']) * 1e3:.1f} ms, {med(h['bytes_read']) / 1024:.1f} KiB on 2 GB; the same "
        "few KiB on the tiny test checkpoints). A one-shot CLI run is dominated by interpreter "
        "start-up and imports, not by the audit (see the CLI row).",
        f"* `--deep` under 100 ms: **{'met' if med(d['seconds']) * 1e3 < TARGET_DEEP_MS else 'not met'}** "
        f"({med(d['seconds']) * 1e3:.1f} ms, {med(d['bytes_read']) / 1024:.0f} KiB).",
        f"* `--scan-weights` peak memory under 256 MB: "
        f"**{'met' if warm['peak_rss_mb'] < TARGET_SCAN_RSS_MB else 'not met'}** "
        f"({warm['peak_rss_mb']:.0f} MB for 2 GB; `safe_open` + `get_tensor` peaks at "
        f"{dense['safe_open-all-warm']['peak_rss_mb']:.0f} MB).",
        f"* `--scan-weights` at disk/memory bandwidth: **{disk_verdict}; "
        f"{scan_gbs / raw_gbs:.0%} of memory bandwidth from the page cache**. Warm: "
        f"{scan_gbs:.1f} GB/s against {raw_gbs:.1f} GB/s "
        "for the same reads without the test; the remaining cost is numpy's two passes "
        "(mask, max) on one core.{cold}".replace("{cold}", cold_line),
        "",
        "## Reading the numbers",
        "",
        "* *Bytes read* is the process's `rchar` delta around the call: every byte any `read`",
        "  or `pread` returned, including config.json, the headers and (for `--deep`) t2d and",
        "  d2t. The header audit reads the same few KiB whatever the checkpoint size.",
        "* The header-only and `--deep` times are the library call in a warm process (schemas and",
        "  contracts already loaded by a first call on a tiny checkpoint); the CLI row adds",
        "  interpreter start-up and imports, which dominate a one-shot run.",
        "* The scan streams each tensor through one 8 MiB buffer and tests bit patterns with",
        "  numpy, so its memory is the interpreter plus numpy plus ~3 buffers, independent of",
        "  the checkpoint; `safe_open` materialises whole tensors (the 1.24 GB embedding).",
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
