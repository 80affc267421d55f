"""The TypeScript types: regenerated identically, used on real configs, strict where TS can be.

One `tsc --noEmit` run (strict mode) over three generated files next to tests/ts/contract.ts:

* imports.ts imports every example, positive fixture and release fixture (what each
  speculators release writes, one folder per format version) as a JSON module
  (resolveJsonModule) and assigns it to its type's interface and its version's root union.
  TypeScript widens the string values of a JSON module to ``string``, so the assignment goes
  through ``JsonOf<T>`` (the type with its literals widened; see docs/guide/schemas.md):
  keys, required keys and value types are checked, enum values cannot be;
* literals.ts writes the same configs as object literals, where enum values are checked too;
* negatives.ts writes every negative schema fixture whose violation TypeScript can express
  (a missing required key, a value of the wrong type, a value outside an enum or const, a
  union of types) as an object literal typed with its type's interface: tsc must report an
  error on the line of the offending key (for a missing key, the line of the object that
  lacks it) and nowhere else.

contract.ts's `@ts-expect-error` lines are hand-written checks of the same kind (an unused
directive is itself a compile error).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from nodetools import NODE_MODULES, require_node

from spec_format.facts import catalog, export, schemas
from spec_format.runner.validation import ValidateOptions, validate, validate_config
from tests.common import EXAMPLES, INVALID, RELEASES, ROOT, VALID, load_case

TYPES = ROOT / "generated" / "typescript"
#: schema-layer rules whose violations TypeScript types can express; S103 (numeric bounds,
#: lengths) mostly cannot (contract.ts checks the one it can: an empty proposal_methods)
EXPRESSIBLE = {"S101": "required key", "S102": "type", "S104": "enum/const", "S105": "union"}
JSON_OF = """\
/** T as TypeScript types a JSON module: string, number and boolean literals widened. */
type JsonOf<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer U)[]
        ? JsonOf<U>[]
        : T extends object
          ? { [K in keyof T]: JsonOf<T[K]> }
          : T;
"""


def test_typescript_types_are_up_to_date():
    require_node("json-schema-to-typescript")
    proc = subprocess.run(
        [sys.executable, "scripts/generate.py", "--check", "--only", "typescript"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _imports(i: int, version: str, model_type: str) -> list[str]:
    folder = TYPES / version
    interface = schemas.type_schema(version, model_type)["title"]
    root = schemas.load_schema(version, catalog.version_entry(version).root)["title"]
    return [
        f"import type {{ {root} as Root{i} }} from {json.dumps(str(folder / export.root_name(version)))};",
        f"import type {{ {interface} as Type{i} }} from {json.dumps(str(folder / model_type))};",
    ]


def _positives() -> tuple[str, str]:
    imports = ["// Written by tests/test_typescript.py: every positive config, imported.", JSON_OF]
    literals = ["// Written by tests/test_typescript.py: every positive config, as a literal."]
    for i, path in enumerate([e / "config.json" for e in EXAMPLES] + VALID + RELEASES):
        report = validate([path]).files[0]
        version, model_type = report.format_version, report.model_type
        assert model_type, f"{path}: no type"
        where = f"// {path.relative_to(ROOT)} (format {version}, {model_type})"
        imports += _imports(i, version, model_type) + [
            where,
            f"import json{i} from {json.dumps(str(path))};",
            f"export const config{i}: JsonOf<Type{i}> = json{i};",
            f"export const root{i}: JsonOf<Root{i}> = json{i};",
        ]
        literals += _imports(i, version, model_type) + [
            where,
            f"export const config{i}: Type{i} = {path.read_text(encoding='utf-8').strip()};",
            f"export const root{i}: Root{i} = config{i};",
        ]
    return "\n".join(imports) + "\n", "\n".join(literals) + "\n"


def _literal(value, pointer: str, line: int, lines: dict[str, int], indent: int = 0) -> list[str]:
    """``value`` as indented TS literal lines; ``lines`` gets each pointer's (0-based) line."""
    lines[pointer] = line
    pad = "  " * (indent + 1)
    if isinstance(value, dict) and value:
        out = ["{"]
        for key, item in value.items():
            sub = _literal(item, f"{pointer}/{key}", line + len(out), lines, indent + 1)
            out += [f"{pad}{json.dumps(key)}: {sub[0]}", *sub[1:]]
            out[-1] += ","
        return [*out, "  " * indent + "}"]
    if isinstance(value, list) and value:
        out = ["["]
        for n, item in enumerate(value):
            sub = _literal(item, f"{pointer}/{n}", line + len(out), lines, indent + 1)
            out += [pad + sub[0], *sub[1:]]
            out[-1] += ","
        return [*out, "  " * indent + "]"]
    return [json.dumps(value)]


def _negatives() -> tuple[str, dict[str, tuple[int, int, set[int]]]]:
    """negatives.ts, and per fixture: its first and last line and where tsc must complain."""
    text = ["// Written by tests/test_typescript.py: schema-layer negatives TS can express."]
    where: dict[str, tuple[int, int, set[int]]] = {}
    for i, path in enumerate(INVALID):
        case = load_case(path)
        if not set(case["expect"]) & set(EXPRESSIBLE):
            continue
        report = validate_config(case["config"], ValidateOptions(**case.get("options", {})))
        findings = [f for f in report.findings if f.rule in EXPRESSIBLE]
        text += _imports(i, report.format_version, report.model_type)
        text.append(f"// {path.relative_to(ROOT)} (format {report.format_version})")
        start, lines = len(text), {}
        body = _literal(case["config"], "", start, lines)
        text += [f"export const bad{i}: Type{i} = {body[0]}", *body[1:]]
        text[-1] += ";"
        expected = set()
        for f in findings:
            pointer = f.pointer if f.pointer in lines else f.pointer.rsplit("/", 1)[0]
            expected.add(lines[pointer] + 1)  # tsc counts lines from 1
        where[f"{path.parent.name}/{path.name}"] = (start + 1, len(text), expected)
    return "\n".join(text) + "\n", where


_TSC_ERROR = re.compile(r"^(?P<file>[^\s(]+)\((?P<line>\d+),\d+\): error (?P<message>.*)$")


def test_configs_type_check_and_negatives_are_rejected(tmp_path):
    require_node("typescript")
    imports, literals = _positives()
    negatives, where = _negatives()
    assert {k.split("/")[0] for k in where} == set(EXPRESSIBLE), "a rule lost its fixtures"
    for name, text in (("imports", imports), ("literals", literals), ("negatives", negatives)):
        (tmp_path / f"{name}.ts").write_text(text, encoding="utf-8")
    tsconfig = {
        "extends": str(ROOT / "tests" / "ts" / "tsconfig.json"),
        "compilerOptions": {"resolveJsonModule": True},
        "include": [],
        "files": [
            *(str(tmp_path / f"{n}.ts") for n in ("imports", "literals", "negatives")),
            str(ROOT / "tests" / "ts" / "contract.ts"),
        ],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(tsconfig), encoding="utf-8")
    tsc = NODE_MODULES / ".bin" / "tsc"
    proc = subprocess.run(
        [str(tsc), "-p", str(tmp_path), "--pretty", "false"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    errors = [m for m in map(_TSC_ERROR.match, proc.stdout.splitlines()) if m]
    elsewhere = [m.group(0) for m in errors if not m.group("file").endswith("negatives.ts")]
    assert not elsewhere, "positive configs or contract.ts fail to type-check:\n" + "\n".join(
        elsewhere
    )
    lines = {int(m.group("line")): m.group("message") for m in errors}
    problems = []
    for name, (first, last, expected) in where.items():
        got = {n for n in lines if first <= n <= last}
        if got != expected:
            shown = "; ".join(f"line {n}: {lines[n]}" for n in sorted(got)) or "no error"
            problems.append(f"{name}: expected errors on lines {sorted(expected)}, got {shown}")
    stray = [n for n in lines if not any(a <= n <= b for a, b, _ in where.values())]
    problems += [f"negatives.ts line {n}: {lines[n]}" for n in stray]
    assert not problems, "\n".join(problems) + f"\n(files in {tmp_path})"
