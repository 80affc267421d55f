#!/usr/bin/env python3
"""Every benchmark of the project, side by side with its peer, written to benches/RESULTS-*.md.

    python benches/run.py                       # every suite
    python benches/run.py validate scan         # some suites
    python benches/run.py --list

Suites measured here (each writes its RESULTS file):

* ``validate``: ``specfmt validate CONFIG`` against ``check-jsonschema`` on the exported
  schema of the config's type and version, and against ``python -c pass``; ``validate()``
  of N generated configs in one process against jsonschema-rs (read + parse + validate of
  the exported root schema; the two take turns on chunks of 500 files, and the rates are of
  the summed CPU times); ``specfmt validate`` over the N files against
  ``check-jsonschema`` over the same files (whole processes, CPU and peak memory). Both
  on N distinct documents (the headline: a batch that repeats nothing) and on the issue's
  set (about 600 distinct documents in 10,000). Where the in-process goal is missed, the
  row says what bounds it: the CPU per file of each part (``_SPLIT``). The specfmt measured
  is the installed one (``install_used``; a wheel, as users install it, is the one to
  quote): the in-process children run outside the checkout.
* ``scan``: the NaN/Inf scan (``--scan-weights``) of a 1.9 GB bf16 checkpoint (the example
  EAGLE-3 draft, valid), warm page cache, against ``cat FILE > /dev/null``; in process (the
  scan alone) and as a whole ``specfmt validate --scan-weights`` process (the goal's row);
  the whole process again on the 8.2 GB draft of a 31B target (``gemma-4-31b-dflash``).
* ``audit``: ``specfmt validate`` of 200 hf:// drafts against one draft, on a Hub on
  127.0.0.1 that answers after 50 ms (benches/hub_server.py); wall time, as the work is
  waiting; and the same 200 one at a time (``--jobs 1``).
* ``convert``: ``specfmt convert`` (CLI) of a 2 GB SafeAILab EAGLE-3 source against
  ``cp -r`` of the same directory, warm.

Suites that keep their own script (``weights``, ``inspect``, ``forward``) are run as they
are (``benches/bench_<suite>.py``) and write their own RESULTS file.

Method: whole-process figures are the operating system's accounting of the finished child
(``os.wait4``: user + system CPU seconds, peak RSS) and a monotonic wall clock. The two
commands of a row run in turn, A B A B ..., after one warm-up each, and the ratio is taken
pair by pair, then the median: pairing keeps a ratio meaningful when a shared machine's
speed drifts. CPU time is the figure to compare on a loaded machine; wall time is given
too. The load average is printed before and after each suite. Python runs with bytecode
caching on (``PYTHONDONTWRITEBYTECODE`` unset), as an installed package does. A child's
peak RSS cannot read below this harness's own (a forked child starts as its copy): the
harness keeps to the standard library and builds big inputs in child processes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _exe(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        raise SystemExit(f"{name} is not installed (pip install -e '.[dev,deep]')")
    return found


# -- measuring -----------------------------------------------------------------------------


@dataclass
class Run:
    cpu: float
    wall: float
    peak_mib: float
    code: int


def run_once(cmd: list[str], stdout: str | None = None, env: dict | None = None) -> Run:
    """One whole process: its CPU (user + system) and peak RSS from wait4, its wall time."""
    out = open(stdout or os.devnull, "ab")  # noqa: SIM115 - closed below
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env or ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.close()
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, proc.returncode)


@dataclass
class Pair:
    a: list[Run]
    b: list[Run]

    def med(self, side: str, what: str) -> float:
        return statistics.median(getattr(r, what) for r in getattr(self, side))

    def ratio(self, what: str) -> float:
        return statistics.median(
            getattr(x, what) / max(getattr(y, what), 1e-9)
            for x, y in zip(self.a, self.b, strict=True)
        )


def interleaved(
    a: list[str], b: list[str], runs: int, env: dict | None = None, warm_up: bool = True
) -> Pair:
    if warm_up:
        run_once(a, env=env), run_once(b, env=env)  # page cache, bytecode caches
    pair = Pair([], [])
    for _ in range(runs):
        pair.a.append(run_once(a, env=env))
        pair.b.append(run_once(b, env=env))
    return pair


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def machine() -> str:
    return (
        f"{os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )


def version_of(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=ENV)
    except OSError:
        return "?"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "?"


def shown(cmd: list[str]) -> str:
    return shlex.join(cmd)


def row(name: str, pair: Pair, side: str, with_ratio: bool) -> str:
    cells = [
        name,
        f"{pair.med(side, 'cpu'):.3f} s",
        f"{pair.med(side, 'wall'):.3f} s",
        f"{pair.med(side, 'peak_mib'):.0f} MiB",
    ]
    if with_ratio:
        cells.append(f"{pair.ratio('cpu'):.2f}x CPU, {pair.ratio('wall'):.2f}x wall")
    else:
        cells.append("1 (the peer)")
    return "| " + " | ".join(cells) + " |"


def table(title: str, a_name: str, b_name: str, pair: Pair, goal: str) -> list[str]:
    return [
        f"### {title}",
        "",
        "| command | CPU (median) | wall (median) | peak RSS | A/B, median of pairs |",
        "|---|---|---|---|---|",
        row(a_name, pair, "a", True),
        row(b_name, pair, "b", False),
        "",
        f"Goal: {goal}. Runs: {len(pair.a)} pairs; exit codes A "
        f"{sorted({r.code for r in pair.a})}, B {sorted({r.code for r in pair.b})}.",
        "",
    ]


def header(title: str, argv: str, peers: list[str]) -> list[str]:
    return [
        f"# {title}",
        "",
        f"Written by `python benches/run.py {argv}` (do not edit by hand; rerun it). Method: "
        "see the docstring of benches/run.py (whole processes, `wait4` accounting, A/B "
        "interleaved, ratios per pair). Machine: " + machine() + ".",
        "",
        "Peers: " + "; ".join(peers) + ".",
        "",
    ]


# -- validate ------------------------------------------------------------------------------

ONE_CONFIG = ROOT / "examples" / "llama-3.1-8b-eagle3-0.9" / "config.json"


def suite_validate(args) -> None:
    specfmt, cjs, python = _exe("specfmt"), _exe("check-jsonschema"), sys.executable
    exported = ROOT / "generated" / "schemas" / "0.9"
    lines = header(
        "`specfmt validate` against check-jsonschema and jsonschema-rs",
        "validate" + (f" --files {args.files}" if args.files != 10_000 else ""),
        [
            version_of([cjs, "--version"]),
            "jsonschema-rs " + _module_version("jsonschema_rs"),
            f"Python {platform.python_version()} (`python -c pass`)",
            f"measured: {install_used()}",
        ],
    )
    lines += [f"Load average (1/5/15 min) before: {load()}.", ""]
    one = [specfmt, "validate", str(ONE_CONFIG), "-q"]
    peer = [cjs, "--schemafile", str(exported / "eagle3.schema.json"), str(ONE_CONFIG)]
    pair = interleaved(one, peer, args.runs)
    lines += table(
        "One config, whole process",
        f"`{shown(one)}`",
        f"`{shown(peer)}`",
        pair,
        "A/B CPU ≤ 0.5",
    )
    pair = interleaved(one, [python, "-c", "pass"], args.runs)
    lines += table(
        "One config against a bare interpreter",
        f"`{shown(one)}`",
        f"`{shown([python, '-c', 'pass'])}`",
        pair,
        "A/B CPU ≤ 6",
    )
    for distinct in (True, False):  # the headline: a batch that repeats nothing
        with tempfile.TemporaryDirectory() as tmp:
            lines += _many_files(args, Path(tmp), distinct, specfmt, cjs, exported)
    lines += [f"Load average after: {load()}.", ""]
    _write("RESULTS-validate.md", lines)


def _many_files(args, tmp: Path, distinct: bool, specfmt: str, cjs: str, exported: Path) -> list:
    """The in-process and whole-process rows over N generated files: the issue's set (about
    600 distinct documents in 10,000, as batches of real checkpoints repeat configs), then a
    set of N distinct documents, where a run shares nothing."""
    from bench_validate import _variants

    texts = [json.dumps(cfg, indent=2) for cfg in _variants(args.files, distinct=distinct)]
    paths = []
    for i, text in enumerate(texts):
        p = tmp / f"c{i:05d}.json"
        p.write_text(text)
        paths.append(str(p))
    listfile = tmp / "paths.txt"
    listfile.write_text("\n".join(paths))
    kind = "distinct generated configs" if distinct else "generated configs"
    what = f"{len(set(texts)):,} distinct documents" + (
        " (each names a verifier repository of its own)" if distinct else " (the issue's set)"
    )
    rate = _in_process(listfile, exported / "speculators.schema.json", tmp)
    lines = [
        f"### {args.files:,} {kind} in one process (CPU time, after a warm-up, "
        "interleaved in turns of 500 files)",
        "",
        f"{what}; one `validate()` run over the {args.files:,} files, which checks each "
        "distinct document of the run once (spec_format/runner/config_memo.py), each report "
        "taken as it comes, 500 files at a time in turn with jsonschema-rs on the same 500 "
        f"files. The median of {IN_PROCESS_RUNS} such runs (separate processes); the ratios "
        f"of all of them: {', '.join(f'{r:.3f}x' for r in rate['ratios'])}.",
        "",
        "| what | configs/s | ratio |",
        "|---|---|---|",
        f"| specfmt `validate(paths)`: read, parse, schema, every config rule | "
        f"{rate['specfmt']:,.0f} | {rate['specfmt'] / rate['rs']:.3f}x |",
        f"| jsonschema-rs: read, `json.loads`, `is_valid` (exported 0.9 root schema) | "
        f"{rate['rs']:,.0f} | 1 (the peer) |",
        "",
        f"Goal: ≥ 0.5x. specfmt found {rate['errors']} errors in {rate['failed']} failing "
        "files (about one in ten is broken on purpose). Rerun: `python benches/run.py "
        "validate` (the in-process part is `_in_process` there).",
        "",
    ]
    if rate["specfmt"] / rate["rs"] < 0.5:
        lines[-2:-1] = [
            lines[-2] + " " + _bound(listfile, exported / "speculators.schema.json", tmp)
        ]
    many = [specfmt, "validate", *paths, "-q"]
    peer = [cjs, "--schemafile", str(exported / "speculators.schema.json"), *paths]
    pair = interleaved(many, peer, max(3, args.runs // 3))
    lines += table(
        f"{args.files:,} {kind}, whole process ({what})",
        f"`specfmt validate FILES -q` ({args.files:,} files)",
        "`check-jsonschema --schemafile generated/schemas/0.9/speculators.schema.json FILES`",
        pair,
        "A/B CPU ≤ 0.25, peak memory ≤ 1x",
    )
    lines[-2] += f" Peak memory A/B: {pair.med('a', 'peak_mib') / pair.med('b', 'peak_mib'):.2f}x."
    return lines


def _module_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name.replace("_", "-"))
    except PackageNotFoundError:
        return "not installed"


_IN_PROCESS = r"""
import itertools, json, sys, time
paths = open(sys.argv[1]).read().split()
from spec_format.runner.validation import Validation, validate
import jsonschema_rs
validator = jsonschema_rs.validator_for(json.load(open(sys.argv[2])))
def rs(chunk):
    for p in chunk:
        with open(p, "rb") as f:
            validator.is_valid(json.loads(f.read()))
validate(paths[:100])  # warm-up: imports, per-(type, version) caches
rs(paths[:100])
# one validate() run over every file (what `validate(paths)` does), each report taken as it
# comes (as a caller iterating the run does): it checks 500 files, then jsonschema-rs reads
# the same 500, in turns, so that a shared machine's drifting speed falls on both alike;
# the rates are of the summed CPU times
t = time.process_time()
run = iter(Validation(paths))
spec = time.process_time() - t
peer = 0.0
errors = failed = 0
for i in range(0, len(paths), 500):
    t = time.process_time()
    for report in itertools.islice(run, 500):
        failed += report.status.value == "fail"
        errors += sum(f.severity.value == "error" for f in report.findings)
    spec += time.process_time() - t
    t = time.process_time()
    rs(paths[i : i + 500])
    peer += time.process_time() - t
print(json.dumps({"specfmt": len(paths) / spec, "rs": len(paths) / peer,
                  "errors": errors, "failed": failed}))
"""
#: separate processes the in-process row runs (the median ratio is quoted)
IN_PROCESS_RUNS = 5

_SPLIT = r"""
import json, sys, time
paths = open(sys.argv[1]).read().split()[:2000]
from spec_format.rules import schema as schema_rules
from spec_format.runner import config_checks
from spec_format.runner.validation import Validation, validate
import jsonschema_rs
validator = jsonschema_rs.validator_for(json.load(open(sys.argv[2])))
plan, schema = config_checks.run_plan, schema_rules.schema_findings
def per_file(run):
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        run()
        best = min(best, time.process_time() - t)
    return best / len(paths) * 1e6
def rs():
    for p in paths:
        with open(p, "rb") as f:
            validator.is_valid(json.loads(f.read()))
def specfmt():
    for _ in Validation(paths):
        pass
validate(paths[:100])
out = {"rs": per_file(rs), "all": per_file(specfmt)}
config_checks.run_plan = lambda *a: None  # no config rule
out["no rules"] = per_file(specfmt)
schema_rules.schema_findings = lambda *a, **k: ()  # nor the schema
out["neither"] = per_file(specfmt)
config_checks.run_plan, schema_rules.schema_findings = plan, schema
print(json.dumps(out))
"""


def _bound(listfile: Path, schema: Path, cwd: Path) -> str:
    """What bounds the in-process rate, measured: the CPU per file of the config rules, of
    the schema check and of the rest (read, parse, format version, report), the least of
    three passes over 2,000 of the files with each part left out in turn (``_SPLIT``)."""
    t = _child(_SPLIT, listfile, schema, cwd)
    rules, schema_us, rest = t["all"] - t["no rules"], t["no rules"] - t["neither"], t["neither"]
    return (
        f"Not met; what bounds it, measured (CPU per file, the least of three passes over "
        f"2,000 of the files, each part left out in turn: `_SPLIT` in benches/run.py): "
        f"specfmt {t['all']:.0f} µs, of which the config rules {rules:.0f} µs "
        f"({rules / t['all']:.0%}), the schema check {schema_us:.0f} µs "
        f"({schema_us / t['all']:.0%}: the compiled check of every file, jsonschema's "
        f"walk and wording of the failing ones), and reading, parsing, the format version "
        f"and the report {rest:.0f} µs ({rest / t['all']:.0%}); jsonschema-rs "
        f"{t['rs']:.0f} µs for all of it. 0.5x allows {2 * t['rs']:.0f} µs: the rest "
        f"alone is {rest / t['rs']:.1f}x the peer's whole time."
    )


def _in_process(listfile: Path, schema: Path, cwd: Path) -> dict:
    """The in-process row's runs, each a child in ``cwd`` (not the checkout: it imports
    the installed specfmt, as the whole-process rows run it)."""
    runs = []
    for _ in range(IN_PROCESS_RUNS):
        runs.append(_child(_IN_PROCESS, listfile, schema, cwd))
    runs.sort(key=lambda r: r["specfmt"] / r["rs"])
    median = dict(runs[len(runs) // 2])
    median["ratios"] = [r["specfmt"] / r["rs"] for r in runs]
    return median


def _child(script: str, listfile: Path, schema: Path, cwd: Path) -> dict:
    """What one child running ``script`` over the files of ``listfile`` prints (JSON)."""
    out = subprocess.run(
        [sys.executable, "-c", script, str(listfile), str(schema)],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
        cwd=cwd,
    )
    return json.loads(out.stdout)


# -- scan ----------------------------------------------------------------------------------


def suite_scan(args) -> None:
    specfmt = _exe("specfmt")
    lines = header(
        "NaN/Inf scan (`--scan-weights`) against reading the file",
        "scan",
        [version_of(["cat", "--version"]), "numpy " + _module_version("numpy")],
    )
    lines += [f"Load average (1/5/15 min) before: {load()}.", ""]
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        ckpt = Path(tmp) / "ckpt"
        weights, cat = _scan_checkpoint(ckpt, ONE_CONFIG)
        size = weights.stat().st_size
        inner = [sys.executable, "-c", _SCAN, str(ckpt)]
        pair = interleaved(inner, cat, args.runs)
        scan = _scan_median(pair, tmp)
        lines += [
            f"Checkpoint: one safetensors file of {size / 1e9:.2f} GB, the draft of "
            f"`{ONE_CONFIG.relative_to(ROOT)}` with every tensor its contract names "
            "(embed_tokens and lm_head included), bf16; each float tensor repeats a 1 MiB "
            "block of random values of its own (no two tensors alike, no constant tensor), "
            "so the checkpoint is valid (exit 0). Built by `build_checkpoint(..., "
            'data="pattern")` (spec_format/testing/builder.py) in a temporary directory and '
            "deleted afterwards; warm (read once before the runs).",
            "",
            "### The scan alone, in process (CPU of the scan loop, no start-up)",
            "",
            "| what | CPU (median) | ratio |",
            "|---|---|---|",
            f"| `scan_tensor` over every tensor (chunks of read-only maps) | "
            f"{scan:.3f} s | "
            f"{scan / pair.med('b', 'cpu'):.2f}x (ratio of medians) |",
            f"| `{shown(cat)}` (whole process) | {pair.med('b', 'cpu'):.3f} s | 1 (the peer) |",
            "",
            "The scan runs in a child process that times only its loop "
            "(`_SCAN` in benches/run.py), interleaved with `cat`. This row is not the goal's: "
            "the goal is the whole command below.",
            "",
        ]
        whole = [specfmt, "validate", str(ckpt), "--scan-weights", "-q"]
        pair = interleaved(whole, cat, args.runs)
        lines += table(
            "Whole process (interpreter, imports, header audit, every rule, scan)",
            "`specfmt validate CKPT --scan-weights -q`",
            f"`{shown(cat)}`",
            pair,
            "A/B CPU ≤ 1.2 (issue 21: the whole command a user waits for)",
        )
        # as specfmt imports it: without OpenBLAS's thread pool (cli/app.py main)
        floor = ["env", "OPENBLAS_NUM_THREADS=1", sys.executable, "-c", "import numpy"]
        pair = interleaved(floor, cat, args.runs)
        lines += table(
            "What the whole process pays before reading a byte (interpreter + numpy)",
            "`OPENBLAS_NUM_THREADS=1 python -c 'import numpy'` (as specfmt imports it)",
            f"`{shown(cat)}`",
            pair,
            "none: this row is the floor under the row above (the scan needs numpy)",
        )
        shutil.rmtree(ckpt)  # its pages leave the cache room for the bigger draft
        lines += _scan_bigger_draft(specfmt, Path(tmp) / "big", args.runs)
    lines += [f"Load average after: {load()}.", ""]
    _write("RESULTS-scan.md", lines)


#: a draft several times the size of the 8B one: the start-up is paid once, the bytes scale
BIG_CONFIG = ROOT / "examples" / "gemma-4-31b-dflash" / "config.json"


def _scan_bigger_draft(specfmt: str, ckpt: Path, runs: int) -> list[str]:
    """The whole command on the draft of a 31B target: the same fixed start-up over four
    times the bytes, so the row shows how the ratio of the row above falls with size."""
    weights, cat = _scan_checkpoint(ckpt, BIG_CONFIG)
    pair = interleaved([specfmt, "validate", str(ckpt), "--scan-weights", "-q"], cat, runs)
    return table(
        f"Whole process on a bigger draft: `{BIG_CONFIG.relative_to(ROOT)}`, "
        f"{weights.stat().st_size / 1e9:.2f} GB, built the same way",
        "`specfmt validate BIG --scan-weights -q`",
        f"`{shown(cat)}`",
        pair,
        "none of its own (the issue's row is the 1.9 GB one above); this row separates the "
        "fixed start-up from the cost per byte",
    )


def _scan_checkpoint(ckpt: Path, config: Path) -> tuple[Path, list[str]]:
    """The draft of ``config`` built at ``ckpt`` (valid, bf16, dense) in a child (memory this
    process touched would count in every child's peak): its weights file, and the peer that
    reads it."""
    subprocess.run(
        [sys.executable, "-c", _BUILD_SCAN, str(ckpt), str(config)],
        check=True,
        env=ENV,
        cwd=ROOT,
    )
    (ckpt / "config.json").write_text(config.read_text())
    weights = ckpt / "model.safetensors"
    return weights, ["sh", "-c", f"exec cat {shlex.quote(str(weights))} > /dev/null"]


_BUILD_SCAN = r"""
import json, sys
from spec_format.testing.builder import build_checkpoint
config = json.loads(open(sys.argv[2]).read())
build_checkpoint(sys.argv[1], config, data="pattern", write_config=False)
"""

_SCAN = r"""
import json, sys, time
from pathlib import Path
import numpy  # imported by the first scan_tensor call: not part of the scan's time
from spec_format.parsers.checkpoint import load_checkpoint
from spec_format.rules.vocab import SCAN_CHUNK_BYTES, scan_tensor
ckpt = load_checkpoint(sys.argv[1])
buffer = bytearray(SCAN_CHUNK_BYTES)
t = time.process_time()
found = [scan_tensor(ckpt, name, buffer) for name in ckpt.tensors]
cpu = time.process_time() - t
assert all(f == (0, 0, None) for f in found), found
out = Path(sys.argv[1]).parent / "scan.json"
runs = json.loads(out.read_text())["runs"] if out.exists() else []
out.write_text(json.dumps({"runs": runs + [cpu]}))
"""


def _scan_median(pair: Pair, tmp: str) -> float:
    runs = json.loads(Path(tmp, "scan.json").read_text())["runs"]
    return statistics.median(runs[-len(pair.a) :])


# -- convert -------------------------------------------------------------------------------


def suite_convert(args) -> None:
    from bench_convert import AUX

    specfmt = _exe("specfmt")
    lines = header(
        "`specfmt convert` against `cp -r`",
        "convert",
        [version_of(["cp", "--version"])],
    )
    lines += [f"Load average (1/5/15 min) before: {load()}.", ""]
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        work = Path(tmp)
        code = (
            f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(HERE)!r}]\n"
            "from pathlib import Path\nfrom bench_convert import build\n"
            f"print(build(Path({str(work)!r}))[2])"
        )  # built in a child, like the scan's checkpoint
        size = int(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=ENV
            ).stdout.split()[-1]
        )
        src, verifier = work / "src", work / "verifier"
        dest = work / "out"
        cmd = [specfmt, "convert", str(src), "-o", str(dest), "--verifier", str(verifier)]
        cmd += ["--aux-layer-ids", AUX]
        convert = ["sh", "-c", f"rm -rf {shlex.quote(str(dest))} && exec {shlex.join(cmd)}"]
        copy = work / "copy"
        cp = ["sh", "-c", f"rm -rf {shlex.quote(str(copy))} && exec cp -r {src} {copy}"]
        pair = interleaved(convert, cp, max(3, args.runs // 3))
        lines += [
            f"Source: a SafeAILab EAGLE-3 checkpoint with the shapes of "
            f"RedHatAI/Qwen3-8B-speculator.eagle3's draft ({size / 1e9:.2f} GB, bf16), built "
            "by benches/bench_convert.py's `build` in a temporary directory and deleted "
            "afterwards; warm page cache. The convert command includes its validation of the "
            "result and the rename; both commands first remove their previous output.",
            "",
        ]
        lines += table(
            "Convert, whole process",
            f"`specfmt convert SRC -o OUT --verifier V --aux-layer-ids {AUX}`",
            "`cp -r SRC COPY`",
            pair,
            "A/B wall ≤ 1.3",
        )
    lines += [f"Load average after: {load()}.", ""]
    _write("RESULTS-convert.md", lines)


# -- audit ---------------------------------------------------------------------------------


def suite_audit(args) -> None:
    """``specfmt validate hf://org/d0 ... hf://org/d{N-1}`` against one draft, on a Hub on
    127.0.0.1 that answers every request after LATENCY seconds (benches/hub_server.py, in a
    process of its own): the network waits of N drafts overlap (``--jobs``), the start-up
    (interpreter, imports, the HTTP client) is paid once."""
    specfmt = _exe("specfmt")
    latency, drafts = 0.05, args.drafts
    lines = header(
        "`specfmt validate` of many hf:// drafts against one",
        "audit" + (f" --drafts {drafts}" if drafts != 200 else ""),
        [f"the same command on one draft; {install_used()}"],
    )
    lines += [f"Load average (1/5/15 min) before: {load()}.", ""]
    server = subprocess.Popen(
        [sys.executable, str(HERE / "hub_server.py"), "--drafts", str(drafts)]
        + ["--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        endpoint = server.stdout.readline().strip()
        env = {
            **ENV,
            "HF_ENDPOINT": endpoint,
            "HF_HUB_OFFLINE": "0",
            "HF_TOKEN": "hf_not_a_real_token",
            "HF_HUB_DISABLE_TELEMETRY": "1",
        }
        urls = [f"hf://org/d{i}" for i in range(drafts)]
        one = [specfmt, "validate", urls[0], "-q"]
        many = [specfmt, "validate", *urls, "-q"]
        lines += [
            f"Hub: benches/hub_server.py on 127.0.0.1, {drafts} repositories of the same valid "
            f"EAGLE-3 draft (tiny; weights over 64 KiB), every answer after {latency * 1000:.0f} "
            "ms; four requests a draft (listing, config.json, the weights' redirect and its "
            "64 KiB range). Wall time is the figure here (the work is waiting).",
            "",
        ]
        pair = interleaved(many, one, max(3, args.runs // 3), env=env)
        lines += table(
            f"{drafts} drafts, default --jobs, whole process",
            f"`specfmt validate hf://org/d0 ... hf://org/d{drafts - 1} -q`",
            "`specfmt validate hf://org/d0 -q`",
            pair,
            f"A/B wall ≤ 10 (issue 37; {drafts} drafts, bounded concurrency)",
        )
        sequential = [specfmt, "validate", "--jobs", "1", *urls, "-q"]
        pair = interleaved(sequential, one, 1, env=env, warm_up=False)
        lines += table(
            f"{drafts} drafts one at a time (`--jobs 1`, as before), whole process",
            f"`specfmt validate --jobs 1 hf://org/d0 ... hf://org/d{drafts - 1} -q`",
            "`specfmt validate hf://org/d0 -q`",
            pair,
            "none: the sequential run the row above is measured against (one pair, no warm-up)",
        )
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    lines += [f"Load average after: {load()}.", ""]
    _write("RESULTS-audit.md", lines)


def install_used(env: dict | None = None) -> str:
    """How the measured specfmt is installed (a wheel, as users install it, or editable),
    and where its modules come from under ``env`` (a PYTHONPATH comes first)."""
    code = (
        "import json, spec_format\n"
        "from importlib.metadata import distribution\n"
        "d = distribution('specfmt')\n"
        "print(json.dumps([spec_format.__file__, d.version, d.read_text('direct_url.json')]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env or ENV, cwd="/"
    )
    if out.returncode != 0:
        return "specfmt not importable"
    where, version, direct = json.loads(out.stdout)
    info = json.loads(direct or "{}")
    kind = (
        "an editable install (`pip install -e`)"
        if info.get("dir_info", {}).get("editable")
        else "a wheel"
    )
    where = os.path.dirname(where)
    site = "site-packages of the environment" if "site-packages" in where else where
    return f"specfmt {version}, {kind}, modules from {site}"


# -- suites with their own script ----------------------------------------------------------


def _script(name: str):
    def run(args) -> None:
        subprocess.run([sys.executable, str(HERE / f"bench_{name}.py")], check=True, env=ENV)

    return run


def portable(text: str) -> str:
    """Commands as a reader reruns them: tools by name (from the environment's PATH), paths
    relative to the repository, temporary directories as $TMP."""
    import re

    bin_dir = os.path.dirname(os.path.abspath(sys.executable))
    text = text.replace(bin_dir + "/", "").replace(str(ROOT) + "/", "")
    return re.sub(r"/tmp/tmp[\w-]+", "$TMP", text)


def _write(name: str, lines: list[str]) -> None:
    text = portable("\n".join(lines).rstrip() + "\n")
    (HERE / name).write_text(text)
    print(text)


SUITES = {
    "validate": suite_validate,
    "scan": suite_scan,
    "convert": suite_convert,
    "audit": suite_audit,
    "weights": _script("weights"),
    "inspect": _script("inspect"),
    "forward": _script("forward"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="*", help=f"some of: {', '.join(SUITES)} (default all)")
    parser.add_argument("--runs", type=int, default=9, help="A/B pairs per row")
    parser.add_argument("--files", type=int, default=10_000, help="configs of the batch rows")
    parser.add_argument("--drafts", type=int, default=200, help="hf:// drafts of the audit")
    parser.add_argument("--tmp", default=None, help="where the 2 GB checkpoints are built")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        print("\n".join(SUITES))
        return 0
    unknown = [s for s in args.suites if s not in SUITES]
    if unknown:
        parser.error(f"unknown suite {', '.join(unknown)}; known: {', '.join(SUITES)}")
    for name in args.suites or list(SUITES):
        SUITES[name](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
