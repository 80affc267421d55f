#!/usr/bin/env python3
"""Add a reader release to the reader table (schema/readers/) in one command.

    scripts/add-release.py vllm X.Y.Z          # fetch, digest, join or draft, regenerate
    scripts/add-release.py speculators X.Y.Z   # the nearest release's rows, its environment
    scripts/add-release.py vllm 0.22.1 --as-new   # redo a covered release as if it were new
    scripts/add-release.py sglang X.Y.Z        # SGLang's serving facts (scripts/sglang-facts.py)

vLLM: the wheel is fetched into the reader cache (``pip download --no-deps``, kept), its
reader and model digests computed (scripts/vllm-digests.py). A release whose two digests are
a group's joins that group's ``members``; any other release is a new group: its environment
is built (``scripts/reader-envs.sh X.Y.Z``), the executed release drafts the group's file
(tests/readers/draft_rows.py: types, requires, verifier, every field's reading, the weight
blocks to execute) and the lines to review are printed. speculators: the newest older
release's file with ``version`` set, and its environment (``scripts/interop-envs.sh``).
Then, for vLLM, the table of what each release makes of a draft it reads as it is
(``scripts/vllm-native-facts.py``, ``schema/readers/native/vllm.json``), and every page
that states the covered releases is regenerated (``scripts/generate.py --only docs``); tests
derive them from the table.

The table is changed at the end or not at all: the new table is built in a temporary copy,
checked against reader.schema.json, then each changed file goes through the project's writer
(``spec_format.parsers.outfile.write_output``); a failing regeneration puts the old files
back. Exit 0 done, 1 a step failed (the table as it was), 2 a usage error. Review what it
printed, then run ``pytest -m readers tests/readers -k VERSION``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "scripts"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from spec_format.base.errors import SpecfmtError  # noqa: E402
from spec_format.facts import readers  # noqa: E402
from spec_format.parsers.outfile import write_output  # noqa: E402

TABLE = ROOT / "schema" / "readers"
READER_CACHE = Path(os.environ.get("SPECFMT_READER_CACHE", ROOT / ".cache" / "vllm"))
INTEROP_CACHE = Path(os.environ.get("SPECFMT_INTEROP_CACHE", ROOT / ".cache" / "interop"))
VERSION = re.compile(r"^\d+(\.\d+){1,3}$")


class Failed(Exception):
    """A step failed: one line for the user; the table is left as it was."""


def _say(line: str) -> None:
    print(f"[add-release] {line}", file=sys.stderr, flush=True)


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _dump(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(table: Path, reader: str) -> dict[str, dict]:
    return {
        p.name: json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(table.glob(f"{reader}-*.json"))
    }


def _use_table(table: Path) -> None:
    """Point spec_format.facts.readers (and what drafts rows through it) at ``table``."""
    readers.table_dir = lambda: table
    readers._load.cache_clear()


# -- taking a covered release out (--as-new) ----------------------------------------------------


def remove(table: Path, reader: str, version: str) -> None:
    """``version`` taken out of the table copy ``table``: out of its group's ``members``, and
    the group's file removed when it is the group's representative."""
    for name, data in _files(table, reader).items():
        if reader == "vllm" and version in data.get("members", {}):
            if data["version"] == version:
                (table / name).unlink()
            else:
                del data["members"][version]
                (table / name).write_text(_dump(data), encoding="utf-8")
            return
        if reader == "speculators" and data["version"] == version:
            (table / name).unlink()
            return
    raise Failed(f"{reader}=={version} is not in the table: --as-new redoes a covered release")


# -- vLLM -------------------------------------------------------------------------------------


def fetch_wheel(version: str) -> Path:
    wheels = READER_CACHE / "wheels"
    found = sorted(wheels.glob(f"vllm-{version}-*.whl"))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    pip = INTEROP_CACHE / "base" / "bin" / "pip"
    command = [str(pip)] if pip.exists() else [sys.executable, "-m", "pip"]
    _say(f"downloading the vllm=={version} wheel (no dependencies) into {wheels}")
    done = subprocess.run(
        [*command, "download", "-q", "--disable-pip-version-check", "--no-deps"]
        + [f"vllm=={version}", "-d", str(wheels)],
        capture_output=True,
        text=True,
    )
    found = sorted(wheels.glob(f"vllm-{version}-*.whl"))
    if done.returncode != 0 or not found:
        said = [line for line in done.stderr.splitlines() if line.strip()]
        errors = [line for line in said if line.startswith("ERROR")] or said or ["no wheel"]
        last = errors[-1]
        raise Failed(f"cannot download vllm=={version}: {last}")
    return found[0]


def add_vllm(table: Path, version: str, template: str | None) -> list[str]:
    """Add ``version`` to the table copy ``table``; the review lines."""
    digests = _module("vllm_digests", ROOT / "scripts" / "vllm-digests.py")
    wheel = fetch_wheel(version)
    got = digests.digests(wheel)
    if got["version"] != version:
        raise Failed(f"{wheel.name} is vllm {got['version']}, not {version}")
    pair = {"reader": got["reader"], "model": got["model"]}
    _say(f"vllm=={version}: reader {pair['reader']}, model {pair['model']}")
    for name, data in _files(table, "vllm").items():
        if pair in data.get("members", {}).values():
            data["members"][version] = pair
            data["members"] = dict(sorted(data["members"].items(), key=lambda kv: _vkey(kv[0])))
            (table / name).write_text(_dump(data), encoding="utf-8")
            _say(f"vllm=={version} joins {name} (group of {data['version']})")
            return []
    _say(f"vllm=={version}: no group has both digests; a new group, drafted from the release")
    env = subprocess.run(["bash", str(ROOT / "scripts" / "reader-envs.sh"), version], cwd=ROOT)
    if env.returncode != 0 or not (READER_CACHE / "envs" / version / ".ok").exists():
        raise Failed(
            f"no environment for vllm=={version}: see scripts/reader-envs.sh's lines above"
        )
    _use_table(table)
    from tests.readers import draft_rows

    data, review = draft_rows.table_file(version, template, wheel.parent)
    (table / f"vllm-{version}.json").write_text(_dump(data), encoding="utf-8")
    return review


# -- speculators -----------------------------------------------------------------------------


def add_speculators(table: Path, version: str) -> list[str]:
    """The newest older release's file with ``version`` set, and the release's environment."""
    older = [
        (data["version"], name)
        for name, data in _files(table, "speculators").items()
        if _vkey(data["version"]) < _vkey(version)
    ]
    if not older:
        raise Failed(f"no speculators release before {version} in the table to start from")
    source_version, source = max(older, key=lambda vn: _vkey(vn[0]))
    data = json.loads((table / source).read_text(encoding="utf-8"))
    data["version"] = version
    # the older file's members are its own releases, not this one's: a new file stands alone
    data.pop("members", None)
    (table / f"speculators-{version}.json").write_text(_dump(data), encoding="utf-8")
    env = subprocess.run(["bash", str(ROOT / "scripts" / "interop-envs.sh"), version], cwd=ROOT)
    if env.returncode != 0:
        raise Failed(
            f"no environment for speculators=={version}: add its line to recipe() in "
            "scripts/interop-envs.sh"
        )
    return [f"rows copied from speculators=={source_version}: the readers group checks them"]


# -- the swap ------------------------------------------------------------------------------


def _check_schema(table: Path) -> None:
    import jsonschema

    schema = json.loads((TABLE / "reader.schema.json").read_text(encoding="utf-8"))
    for path in sorted(table.glob("*-*.json")):
        errors = list(
            jsonschema.Draft202012Validator(schema).iter_errors(json.loads(path.read_text()))
        )
        if errors:
            raise Failed(f"{path.name}: not a table file: {errors[0].message}")


def swap(work: Path) -> dict[str, bytes | None]:
    """The table's files made those of ``work``, one write each through the project's
    writer; returns what each changed file held before (None: it was new)."""
    old: dict[str, bytes | None] = {}
    wanted = {p.name: p.read_bytes() for p in work.glob("*-*.json")}
    current = {p.name: p.read_bytes() for p in TABLE.glob("*-*.json")}
    for name in sorted(wanted.keys() | current.keys()):
        if wanted.get(name) != current.get(name):
            old[name] = current.get(name)
    for name, before in old.items():
        if name in wanted:
            write_output(TABLE / name, wanted[name], expect=before)
        else:
            (TABLE / name).unlink()
    return old


def restore(old: dict[str, bytes | None]) -> None:
    for name, before in old.items():
        if before is None:
            (TABLE / name).unlink(missing_ok=True)
        else:
            write_output(TABLE / name, before)


def regenerate() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate.py"), "--only", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:]
        raise Failed(f"scripts/generate.py --only docs failed: {' '.join(last)}")
    for line in done.stdout.splitlines():
        _say(line)


def native_facts() -> None:
    """The table of what each vLLM release makes of a draft it reads as it is
    (scripts/vllm-native-facts.py, over the reader table's releases as they are now)."""
    script = ROOT / "scripts" / "vllm-native-facts.py"
    if subprocess.call([sys.executable, str(script)], cwd=ROOT) != 0:
        raise Failed("scripts/vllm-native-facts.py failed (its lines above)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reader", choices=("vllm", "speculators", "sglang"))
    parser.add_argument("version", help="the release, X.Y.Z")
    parser.add_argument(
        "--as-new",
        action="store_true",
        help="take the covered release out first and add it again (what the test runs)",
    )
    parser.add_argument("--template", help="vLLM: the release whose rows a new group tries")
    parser.add_argument("--no-generate", action="store_true", help="leave the pages as they are")
    args = parser.parse_args(argv)
    if args.reader == "sglang":  # no reader table: its serving facts, from the wheel
        script = ROOT / "scripts" / "sglang-facts.py"
        return subprocess.call([sys.executable, str(script), "--add", args.version])
    if not VERSION.match(args.version):
        parser.error(f"{args.version!r} is not a release number (X.Y.Z)")
    while args.version.count(".") < 2:  # PEP 440: 0.35 is 0.35.0, the wheel's own spelling
        args.version += ".0"
    covered = f"{args.reader}=={args.version}" in readers.releases()
    if covered and not args.as_new:
        parser.error(f"{args.reader}=={args.version} is covered already (--as-new redoes it)")
    with tempfile.TemporaryDirectory(prefix="add-release-") as tmp:
        work = Path(tmp) / "readers"
        shutil.copytree(TABLE, work)
        try:
            if args.as_new:
                remove(work, args.reader, args.version)
            if args.reader == "vllm":
                review = add_vllm(work, args.version, args.template)
            else:
                review = add_speculators(work, args.version)
            _check_schema(work)
        except Failed as exc:
            _say(f"error: {exc}; schema/readers/ is unchanged")
            return 1
        try:
            old = swap(work)
        except SpecfmtError as exc:  # the writer refused (a file changed meanwhile, a link)
            _say(f"error: {exc}")
            return 1
    native = TABLE / "native" / "vllm.json"
    native_before = native.read_bytes() if native.exists() else None
    try:
        if args.reader == "vllm":
            native_facts()
        if not args.no_generate:
            regenerate()
    except Failed as exc:
        restore(old)
        if native_before is not None and native.read_bytes() != native_before:
            write_output(native, native_before)
        _say(f"error: {exc}; schema/readers/ is put back as it was")
        return 1
    for name in sorted(old):
        _say(f"wrote schema/readers/{name}")
    for line in review:
        print(f"review: {line}")
    _say(
        f"done: review the rows, then `pytest -m readers tests/readers -k {args.version}` "
        f"and `python scripts/vllm-digests.py --check`"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
