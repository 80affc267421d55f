"""Benchmark: ``specfmt convert`` of a Qwen3-8B-shaped SafeAILab EAGLE-3 against ``cp``.

    python benches/bench_convert.py              # ~1 minute, needs ~6 GB free in $TMPDIR

Builds, in a temporary directory deleted afterwards, a SafeAILab-style source with the
shapes of RedHatAI/Qwen3-8B-speculator.eagle3's draft (H=4096, V=151936, D=32000, one
``midlayer``, a trained ``embed_tokens``, t2d/d2t, bf16, ~2.0 GB, dense: a repeated byte
pattern, so every byte is really read and written) and a Qwen3-8B verifier config. Then,
each in a fresh process and alternating so that both see the same page-cache state:

* ``cp SRC/model.safetensors DEST/`` (GNU cp: ``copy_file_range`` where the kernel has it);
* ``specfmt convert SRC -o DEST --verifier V`` as a library call: plan, write to a
  temporary directory, validate it (``--deep``, verifier), rename; its wall time and peak
  RSS (``VmHWM``, the process's own);
* the CLI (interpreter start-up and imports included).

Warm: the source in the page cache; cold: evicted (``posix_fadvise(DONTNEED)``) before every
run, for both. Results go to ``benches/RESULTS-convert.md`` (``--out``) with the issue's
targets: time at most 1.5x the copy, peak memory under 256 MB.
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
sys.path[:0] = [str(ROOT), str(HERE.parent)]  # this checkout's spec_format, then the benches
from bench_weights import evict, peak_rss_mb  # noqa: E402

TARGET_RATIO = 1.5
TARGET_RSS_MB = 256.0
AUX = "2,18,33"


def build(workdir: Path) -> tuple[Path, Path, int]:
    from spec_format.testing import builder, safeailab

    sizes = safeailab.QWEN3_8B
    src = workdir / "src"
    config = safeailab.safeailab_config(sizes, {"max_position_embeddings": 40960})
    shapes = safeailab.safeailab_shapes(sizes, embed=True)
    safeailab.build_safeailab(src, config, shapes, dense=False)
    verifier = workdir / "verifier"
    verifier.mkdir()
    (verifier / "config.json").write_text(json.dumps(builder.qwen3_8b_config()))
    return src, verifier, (src / "model.safetensors").stat().st_size


def child(src: Path, dest: Path, verifier: Path, cold: bool) -> dict:
    """One conversion in this process (library call); prints a JSON object."""
    from spec_format.convert.plan import Request
    from spec_format.convert.run import convert, load_verifier_ref

    request = Request(load_verifier_ref(str(verifier)), str(verifier), (2, 18, 33), "0.9")
    if cold:
        evict(src)
    t = time.perf_counter()
    result = convert(src, dest, request)
    seconds = time.perf_counter() - t
    status = result.validation.status.value
    print(json.dumps({"seconds": seconds, "peak_rss_mb": peak_rss_mb(), "validation": status}))
    return {}


def timed(cmd: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed:\n{proc.stderr[-2000:]}")
    return seconds, proc.stdout


def measure(src: Path, verifier: Path, workdir: Path, repeat: int, cold: bool) -> dict:
    cp, lib, lib_rss, cli = [], [], [], []
    for i in range(repeat):
        dest = workdir / f"out-{i}"
        dest.mkdir()
        if cold:
            evict(src)
        cp.append(timed(["cp", str(src / "model.safetensors"), str(dest)])[0])
        shutil.rmtree(dest)
        cmd = [sys.executable, str(HERE), "--child", str(src), str(dest), str(verifier)]
        _, out = timed(cmd + (["--cold"] if cold else []))
        answer = json.loads(out.strip().splitlines()[-1])
        assert answer["validation"] == "ok", answer
        lib.append(answer["seconds"])
        lib_rss.append(answer["peak_rss_mb"])
        shutil.rmtree(dest)
        if cold:
            evict(src)
        cmd = [sys.executable, "-m", "spec_format", "convert", str(src), "-o", str(dest)]
        cmd += ["--verifier", str(verifier)]
        cli.append(timed([*cmd, "--aux-layer-ids", AUX])[0])
        shutil.rmtree(dest)
    return {"cp": cp, "convert": lib, "rss": lib_rss, "cli": cli}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE.parent / "RESULTS-convert.md")
    parser.add_argument("--child", nargs=3, type=Path)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(*args.child, cold=args.cold)
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="specfmt-bench-convert-"))
    try:
        t = time.perf_counter()
        src, verifier, size = build(workdir)
        build_s = time.perf_counter() - t
        print(f"built {size / 1e9:.2f} GB in {build_s:.1f} s", flush=True)
        runs = {}
        for cold in (False, True):
            tag = "cold" if cold else "warm"
            runs[tag] = measure(src, verifier, workdir, args.repeat, cold)
            print(tag, json.dumps(runs[tag]), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    text = report(size, runs)
    args.out.write_text(text)
    print(text)
    return 0


def report(size: int, runs: dict) -> str:
    med = statistics.median
    lines = [
        "# Convert: benchmark results",
        "",
        "Written by `python benches/bench_convert.py` (do not edit by hand; rerun it). Source: a",
        "SafeAILab EAGLE-3 checkpoint with the shapes of RedHatAI/Qwen3-8B-speculator.eagle3's",
        "draft (H=4096, V=151936, D=32000, one `midlayer`, `embed_tokens`, t2d/d2t, bf16, dense),",
        "built in a temporary directory and deleted afterwards. Every run is a fresh process;",
        "times are medians; the conversion includes writing to a temporary directory, `validate",
        "--deep --verifier` of the result and the rename.",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}.",
        "",
        "| what | warm | cold | target |",
        "|---|---|---|---|",
    ]
    w, c = runs["warm"], runs["cold"]
    lines.append(f"| `cp model.safetensors` ({size / 1e9:.2f} GB) | {med(w['cp']):.2f} s | "
                 f"{med(c['cp']):.2f} s | reference |")  # fmt: skip
    worst = max(med(w["convert"]) / med(w["cp"]), med(c["convert"]) / med(c["cp"]))
    verdict = "met" if worst <= TARGET_RATIO else "NOT met"
    lines.append(
        f"| `convert` (library call) | {med(w['convert']):.2f} s "
        f"({med(w['convert']) / med(w['cp']):.2f}x cp) | {med(c['convert']):.2f} s "
        f"({med(c['convert']) / med(c['cp']):.2f}x cp) | <= {TARGET_RATIO}x: {verdict} |"
    )
    rss = max(w["rss"] + c["rss"])
    verdict = "met" if rss < TARGET_RSS_MB else "NOT met"
    lines.append(f"| `convert` peak RSS | {max(w['rss']):.0f} MB | {max(c['rss']):.0f} MB | "
                 f"< {TARGET_RSS_MB:.0f} MB: {verdict} |")  # fmt: skip
    lines.append(f"| `specfmt convert` CLI (start-up and imports included) | {med(w['cli']):.2f} s "
                 f"| {med(c['cli']):.2f} s | |")  # fmt: skip
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
