#!/usr/bin/env python3
"""Scaffold a new format version: ``python scripts/new_version.py 0.10``.

Creates, from the latest version:
* ``schema/X.Y/``: a copy of the latest version's schema files with their ``$id``s moved
  to the new version (references into the shared definitions stay as they are, so the new
  version starts with exactly the latest one's meaning);
* the catalog entry (``schema/catalog.json``: release ``X.Y.0``, the same types, and
  ``latest``);
* an identity migration step ``spec_format/rewrites/migration/steps/vA_B_to_vX_Y.py``, registered in
  ``spec_format/rewrites/migration/steps/__init__.py``;

then regenerates models, exported schemas, TypeScript and docs (``scripts/generate.py``),
writes the migration goldens at the new release (``tests/migrate/golden/``)
and records the new version's digests in ``schema/frozen.json`` (re-run
``python scripts/generate.py --refreeze X.Y`` after each edit until the release is cut).
What is left to do by hand is what actually changed in the release: edit the new schemas,
the step's upgrade/downgrade, and the reader table (``schema/readers/``). See
docs/development.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema"
STEPS = ROOT / "spec_format" / "rewrites" / "migration" / "steps"
VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")


def module_name(version: str) -> str:
    return "v" + version.replace(".", "_")


def fail(message: str) -> None:
    print(f"new_version: {message}", file=sys.stderr)
    raise SystemExit(2)


def copy_schemas(catalog: dict, latest: str, new: str) -> None:
    source, target = SCHEMA / latest, SCHEMA / new
    base = catalog["base_uri"]
    target.mkdir()
    for path in sorted(source.glob("*.schema.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        old_id = f"{base}{latest}/{path.name}"
        if doc.get("$id") != old_id:
            fail(f"{path}: $id is {doc.get('$id')!r}, expected {old_id!r}")
        doc["$id"] = f"{base}{new}/{path.name}"
        stamp = doc.get("properties", {}).get("speculators_version", {})
        if stamp.get("default") == catalog["versions"][latest]["release"]:
            stamp["default"] = f"{new}.0"
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        # titles and descriptions that name the version follow it
        for phrase in ("speculators {}", "format version {}", "format {}"):
            text = text.replace(phrase.format(latest), phrase.format(new))
        (target / path.name).write_text(text, encoding="utf-8")


def add_catalog_entry(catalog: dict, latest: str, new: str) -> None:
    entry = dict(catalog["versions"][latest])
    entry["release"] = f"{new}.0"
    entry["types"] = list(entry["types"])
    catalog["versions"][new] = entry
    catalog["latest"] = new
    (SCHEMA / "catalog.json").write_text(json.dumps(catalog, indent=2) + "\n", encoding="utf-8")


STEP_TEMPLATE = '''"""{source} -> {target}: scaffolded by scripts/new_version.py; nothing changes yet.

Describe here what the {target} release changed, and make upgrade/downgrade do it.
"""

from __future__ import annotations

from spec_format.rewrites.migration.records import Editor, StepOutput

SOURCE = "{source}"
TARGET = "{target}"
TOUCHES = ()
STEP = f"{{SOURCE}}->{{TARGET}}"


def upgrade(doc, ctx) -> StepOutput:
    return Editor(doc, STEP).output()


def downgrade(doc, ctx) -> StepOutput:
    return Editor(doc, f"{{TARGET}}->{{SOURCE}}").output()
'''


def add_step(latest: str, new: str) -> None:
    name = f"{module_name(latest)}_to_{module_name(new)}"
    (STEPS / f"{name}.py").write_text(
        STEP_TEMPLATE.format(source=latest, target=new), encoding="utf-8"
    )
    init = STEPS / "__init__.py"
    text = init.read_text(encoding="utf-8")
    last = f"{module_name(_previous(latest))}_to_{module_name(latest)}"
    if f'    "{last}",\n' not in text:
        fail(f"{init}: cannot find the step {last} to register {name} after it")
    text = text.replace(f'    "{last}",\n', f'    "{last}",\n    "{name}",\n')
    init.write_text(text, encoding="utf-8")


def _previous(version: str) -> str:
    catalog = json.loads((SCHEMA / "catalog.json").read_text(encoding="utf-8"))
    names = list(catalog["versions"])
    return names[names.index(version) - 1]


#: what scripts/generate.py's typescript generator needs (gen_typescript.py checks the same)
NODE_PACKAGES = ROOT / "node_modules" / "json-schema-to-typescript"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="the new format version, MAJOR.MINOR (e.g. 0.10)")
    parser.add_argument(
        "--no-generate",
        action="store_true",
        help="skip scripts/generate.py (models, exports, TypeScript, docs, frozen digests)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="GENERATOR",
        help="leave one generator of scripts/generate.py out (repeatable), e.g. --skip "
        "typescript without Node's packages; run it later with `scripts/generate.py --only NAME`",
    )
    args = parser.parse_args(argv)
    if not VERSION_RE.match(args.version):
        fail(f"{args.version!r} is not MAJOR.MINOR (a speculators release line, e.g. 0.10)")
    catalog = json.loads((SCHEMA / "catalog.json").read_text(encoding="utf-8"))
    latest = catalog["latest"]
    key = tuple(int(p) for p in args.version.split("."))
    if args.version in catalog["versions"] or key <= tuple(int(p) for p in latest.split(".")):
        fail(f"format {args.version} is not newer than the latest, {latest}")
    generate = not args.no_generate
    if generate and "typescript" not in args.skip and not NODE_PACKAGES.is_dir():
        # before anything is written: a half-made version is worse than none
        fail(
            "scripts/generate.py's typescript generator needs the Node packages: run `npm ci` "
            "in the repository root first, or pass --skip typescript (then `python "
            "scripts/generate.py --only typescript` once Node is there); nothing was written"
        )
    copy_schemas(catalog, latest, args.version)
    add_step(latest, args.version)
    add_catalog_entry(catalog, latest, args.version)
    print(f"new_version: schema/{args.version}/, catalog entry, step {latest}->{args.version}")
    if generate:
        skips = [a for name in args.skip for a in ("--skip", name)]
        for extra in (skips, ["--refreeze", args.version]):
            done = subprocess.run([sys.executable, "scripts/generate.py", *extra], cwd=ROOT)
            if done.returncode:
                print(
                    f"new_version: `python scripts/generate.py {' '.join(extra)}` failed (exit "
                    f"{done.returncode}, above); schema/{args.version}/ and its step are in "
                    "place: fix the cause and run it again",
                    file=sys.stderr,
                )
                return done.returncode
    # the migration goldens at the new release (tests/migrate/test_golden.py writes what the
    # code does today; the identity step makes them the latest line's, restamped)
    release = f"{args.version}.0"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
        + ["tests/migrate/test_golden.py", "-k", release],
        cwd=ROOT,
        env={**os.environ, "SPECFMT_UPDATE_GOLDEN": "1"},
    )
    if done.returncode:
        print(
            f"new_version: writing the migration goldens at {release} failed (above); run "
            f"`SPECFMT_UPDATE_GOLDEN=1 pytest tests/migrate/test_golden.py -k {release}`",
            file=sys.stderr,
        )
        return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
