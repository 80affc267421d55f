#!/usr/bin/env python3
"""Mutation testing on a fixed sample: ``python scripts/mutation_sample.py [--per-package N]``.

mutmut (3.8.1, ``[tool.mutmut]`` in pyproject.toml) plants thousands of one-line bugs in
``spec_format/rules``, ``facts``, ``rewrites`` and ``parsers``; running them all takes hours
on two cores. This script generates them all (seconds), picks ``N`` of each package with a
fixed seed from the sorted list of mutant names (the same code gives the same sample), runs
only those through ``mutmut run NAME ...`` and prints, per package, how many the tests
killed and every survivor. It exits 1 when a package's kill rate is under ``--min-rate``
(90%). A mutant no selected test reaches (mutmut's "no tests") counts as a survivor; one
listed in :data:`EQUIVALENT` (no test can tell it from the original) counts in no rate.

``--list`` prints the sample and runs nothing; ``--report`` prints the table of the results
already in mutants/ (after ``mutmut run NAME ...`` of some survivors, say). ``mutmut show NAME`` prints a mutant's diff;
benches/RESULTS-mutation.md records the rates and why each survivor is left.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rules", "facts", "rewrites", "parsers")
SEED = 38  # issue 38
#: the sample of the slow test (tests/test_mutation_sample.py, ``--ci``); its time on two
#: cores is in benches/RESULTS-mutation.md. With 8, one survivor puts a package under 90%
CI_PER_PACKAGE = 8
#: mutants no test can kill, each with why: counted apart, not in a package's rate. A name
#: is mutmut's (``mutmut show NAME``); a change to the function renumbers its mutants, and
#: the report lists a name here that no longer exists, to be checked again.
EQUIVALENT: dict[str, str] = {
    "spec_format.parsers.remote.xǁHttpSourceǁ_fetch_once__mutmut_37": (
        "416 at offset 0 (the only read that learns the size) means an empty file, whose "
        "total is 0 with or without the Content-Range header"
    ),
    "spec_format.parsers.remote.xǁHttpSourceǁ_fetch_once__mutmut_38": (
        "the same read; the header looked up as CONTENT-RANGE (case-insensitive headers)"
    ),
    "spec_format.parsers.checkpoint.xǁCheckpointǁiter_chunks__mutmut_48": (
        "`<=` for `<` before the read-ahead: the advisory prefetch (posix_fadvise) is issued "
        "when the window is reached instead of passed, or with length 0 at the end; no byte "
        "read changes"
    ),
    "spec_format.facts.schemas.x__nested__mutmut_1": (
        "`or` for `and`: every dict subschema, leaves too, gets a generated function beside "
        "its closure; only speed changes, the verdicts agree (tests/test_fast_path.py)"
    ),
    "spec_format.rewrites.rewrite.x_prepare__mutmut_2": (
        "no parsed pair for Outcome.documents: `changed` parses the text again instead, the "
        "same answer (the pair only saves that parse)"
    ),
}
#: mutmut's exit codes that mean a test caught the mutant (failed, errored, timed out)
KILLED = {1, 3, 24, -24, 36, 152, 255, 37}


def uncopied() -> list[str]:
    """Entries of spec_format/ that neither ``source_paths`` nor ``also_copy`` bring into
    mutants/ (a new subpackage: the tests would fail to import it there)."""
    from mutmut.configuration import config

    cfg = config()
    listed = {str(p).rstrip("/") for p in [*cfg.source_paths, *cfg.also_copy]}
    return sorted(
        str(p)
        for p in (ROOT / "spec_format").iterdir()
        if p.name != "__pycache__" and str(p.relative_to(ROOT)) not in listed
    )


def stale_deselections() -> list[str]:
    """The ``--deselect`` node ids of the test selection whose test function no longer exists
    (renamed or moved: the test would be mapped again, minutes of it)."""
    from mutmut.configuration import config

    args = config().pytest_add_cli_args_test_selection
    ids = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--deselect"]
    stale = []
    for node in ids:
        path, _, name = node.partition("::")
        file = ROOT / path
        text = file.read_text(encoding="utf-8") if file.is_file() else ""
        if f"def {name.split('[')[0]}(" not in text:
            stale.append(node)
    return stale


def generate() -> dict[str, list[str]]:
    """Write mutants/ (mutmut's own generation, in this process) and return the mutant names
    of each package, sorted."""
    from mutmut.__main__ import (
        copy_also_copy_files,
        copy_src_dir,
        create_mutants,
        setup_source_paths,
    )
    from mutmut.mutation.trampoline import set_mutant_under_test

    set_mutant_under_test("mutant_generation")
    Path("mutants").mkdir(exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    setup_source_paths()
    create_mutants(min(2, os.cpu_count() or 1))
    return names_by_package()


def _meta_files() -> list[Path]:
    return sorted(
        p for package in PACKAGES for p in Path("mutants/spec_format", package).rglob("*.py.meta")
    )


def _results() -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for meta in _meta_files():
        out.update(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
    return out


def names_by_package() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {package: [] for package in PACKAGES}
    for name in _results():
        out[name.split(".")[1]].append(name)
    return {package: sorted(names) for package, names in out.items()}


def sample(names: dict[str, list[str]], per_package: int, seed: int = SEED) -> list[str]:
    """``per_package`` names of each package, drawn with ``seed`` (all of a smaller one)."""
    picked = []
    for package in PACKAGES:
        pool = names[package]
        picked += sorted(
            random.Random(f"{seed}:{package}").sample(pool, min(per_package, len(pool)))
        )
    return picked


def report(picked: list[str], min_rate: float) -> tuple[str, bool]:
    """The per-package table and survivors, and whether every package reaches ``min_rate``."""
    results = _results()
    lines = [
        "| package | sampled | equivalent | killed | rate |",
        "|---|---|---|---|---|",
    ]
    survivors = []
    ok = True
    for package in PACKAGES:
        mine = [n for n in picked if n.split(".")[1] == package]
        same = [n for n in mine if n in EQUIVALENT]
        killed = [n for n in mine if results.get(n) in KILLED and n not in EQUIVALENT]
        survivors += [
            (n, results.get(n)) for n in mine if results.get(n) not in KILLED and n not in same
        ]
        counted = len(mine) - len(same)
        rate = 100.0 * len(killed) / counted if counted else 100.0
        ok = ok and rate >= min_rate
        lines.append(f"| {package} | {len(mine)} | {len(same)} | {len(killed)} | {rate:.1f}% |")
    codes = Counter(code for _, code in survivors)
    lines.append(f"\nsurvivors ({len(survivors)}; exit codes {dict(codes)}):")
    lines += [f"  {name} (exit {code})" for name, code in survivors]
    if gone := sorted(set(EQUIVALENT) - set(results)):
        lines.append("\nEQUIVALENT names no mutant has any more (check them again):")
        lines += [f"  {name}" for name in gone]
    return "\n".join(lines), ok


def _mutmut_environment() -> dict[str, str]:
    """This environment with Python's bytecode cache on: every mutant's tests run in a fresh
    fork that imports the mutated package, whose files hold every mutant of every function
    (35 MB of source); compiled once into mutants/ (mutmut's scratch copy), it loads in 0.2 s
    instead of 4 s a process (PYTHONDONTWRITEBYTECODE, which some shells and CI set)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def explain_failure() -> str:
    """Why ``mutmut run`` stopped, as far as the tests say: the end of a plain run of the test
    selection in mutants/ (unmutated, up to the first failure). With ``process_isolation =
    "forkserver"`` mutmut maps the tests and runs the clean tests in forked children and drops
    their output: a failing test there shows only as "failed to collect stats" or "Failed to
    run clean test"."""
    from mutmut.configuration import config

    cfg = config()
    args = ["--rootdir=.", "-x", *cfg.pytest_add_cli_args_test_selection]
    env = {**_mutmut_environment(), "MUTANT_UNDER_TEST": "", "PY_IGNORE_IMPORTMISMATCH": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, *cfg.pytest_add_cli_args],
        cwd="mutants",
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    tail = (done.stdout + done.stderr).strip().splitlines()[-60:]
    return (
        f"the selection in mutants/ without a mutant: pytest exit {done.returncode}\n"
        + "\n".join(tail)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-package", type=int, default=80, help="mutants per package")
    parser.add_argument(
        "--ci",
        action="store_true",
        help=f"the CI sample: --per-package {CI_PER_PACKAGE}",
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--max-children", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--min-rate", type=float, default=90.0, help="percent, per package")
    parser.add_argument("--list", action="store_true", help="print the sample, run nothing")
    parser.add_argument(
        "--report",
        action="store_true",
        help="the table of the last run's results in mutants/ (nothing generated or run)",
    )
    args = parser.parse_args(argv)
    if args.ci:
        args.per_package = CI_PER_PACKAGE
    os.chdir(ROOT)
    if missing := uncopied():
        print(f"[tool.mutmut] also_copy lacks {', '.join(missing)}", file=sys.stderr)
        return 2
    if stale := stale_deselections():
        print(f"[tool.mutmut] --deselect names no test: {', '.join(stale)}", file=sys.stderr)
        return 2
    if args.report:
        text, ok = report(sample(names_by_package(), args.per_package, args.seed), args.min_rate)
        print(text)
        return 0 if ok else 1
    picked = sample(generate(), args.per_package, args.seed)
    if args.list:
        print("\n".join(picked))
        return 0
    run = [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.max_children)]
    done = subprocess.run([*run, *picked], check=False, env=_mutmut_environment())
    if done.returncode != 0:
        print(f"mutmut run failed (exit {done.returncode})", file=sys.stderr)
        print(explain_failure(), flush=True)
        return done.returncode
    text, ok = report(picked, args.min_rate)
    print(text)
    if not ok:
        print(f"a package's kill rate is under {args.min_rate}%", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
