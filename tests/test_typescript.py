"""The TypeScript types: regenerated identically, and every example config type-checks.

Each positive config (examples/*/config.json, tests/fixtures/valid/*.json) is written into a
TypeScript file as an object literal typed with its version's root union and its type's own
interface, next to tests/ts/contract.ts (the cases that must *not* type-check), and the lot
is compiled with `tsc --noEmit` in strict mode. contract.ts's `@ts-expect-error` lines prove the
types refuse what the schema refuses (an unused directive is itself a compile error).
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import EXAMPLES, ROOT, VALID
from nodetools import NODE_MODULES, require_node

from spec_format import export, schemas
from spec_format.validation import validate


def test_typescript_types_are_up_to_date():
    require_node("json-schema-to-typescript")
    proc = subprocess.run(
        [sys.executable, "scripts/generate.py", "--check", "--only", "typescript"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _examples_module(folder) -> str:
    lines = ["// Written by tests/test_typescript.py: every positive config, typed."]
    configs = [e / "config.json" for e in EXAMPLES] + list(VALID)
    for i, path in enumerate(configs):
        report = validate([path]).files[0]
        version, model_type = report.format_version, report.model_type
        assert model_type, f"{path}: no type"
        types = ROOT / "generated" / "typescript" / version
        interface = schemas.type_schema(version, model_type)["title"]
        root = schemas.load_schema(version, schemas.version_entry(version).root)["title"]
        lines += [
            f"import type {{ {root} as Root{i} }} from {json.dumps(str(types / export.root_name(version)))};",
            f"import type {{ {interface} as Type{i} }} from {json.dumps(str(types / model_type))};",
            f"// {path.relative_to(ROOT)} (format {version}, {model_type})",
            f"export const config{i}: Type{i} = {path.read_text(encoding='utf-8').strip()};",
            f"export const root{i}: Root{i} = config{i};",
        ]
    return "\n".join(lines) + "\n"


def test_example_configs_type_check(tmp_path):
    require_node("typescript")
    (tmp_path / "examples.ts").write_text(_examples_module(tmp_path), encoding="utf-8")
    tsconfig = {
        "extends": str(ROOT / "tests" / "ts" / "tsconfig.json"),
        "include": [],
        "files": [str(tmp_path / "examples.ts"), str(ROOT / "tests" / "ts" / "contract.ts")],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(tsconfig), encoding="utf-8")
    tsc = NODE_MODULES / ".bin" / "tsc"
    proc = subprocess.run([str(tsc), "-p", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
