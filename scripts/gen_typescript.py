"""The TypeScript generator behind `python scripts/generate.py --only typescript`.

Feeds the exported 2020-12 schemas in their code-generator form (``codegen=True``: the
root's ``oneOf`` + ``discriminator``, which becomes the tagged union; one self-contained
file per type and a root per version) to json-schema-to-typescript, pinned in package.json, through the machine's Node.js.
Needs `npm ci` first; without node_modules it stops with that instruction.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

SCRIPT = "scripts/node/json2ts.mjs"
PREFIX = "generated/schemas/"


def _for_types(node: Any) -> Any:
    """Drop what does not change a type: ``x-*`` extensions everywhere, and the annotations
    beside a ``$ref`` (per-type defaults). json-schema-to-typescript merges a ``$ref`` with its
    siblings into a new anonymous type, which would give one ``Architectures1``,
    ``Architectures2``... per type instead of one shared ``Architectures``."""
    if isinstance(node, list):
        return [_for_types(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _for_types(v) for k, v in node.items() if not k.startswith("x-")}
    if "$ref" in out:
        out = {k: v for k, v in out.items() if k not in ("default", "examples", "$comment")}
    return out


def generate(root: Path, schema_files: dict[str, str]) -> dict[str, str]:
    if not (root / "node_modules" / "json-schema-to-typescript").is_dir():
        raise SystemExit(
            "the typescript generator needs the Node packages: run `npm ci` in the repository "
            "root first (or leave it out with --skip typescript)"
        )
    node = shutil.which("node")
    if node is None:
        raise SystemExit("the typescript generator needs Node.js (node) on PATH")
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "schemas", Path(tmp) / "ts"
        for rel, text in schema_files.items():
            sub = rel[len(PREFIX) :]
            if "/draft-07/" in sub:
                continue  # the 2020-12 bundles are the source of the types
            path = src / sub
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(_for_types(json.loads(text)), indent=2), encoding="utf-8")
        proc = subprocess.run(
            [node, str(root / SCRIPT), str(src), str(dst)], cwd=root, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"json-schema-to-typescript failed:\n{proc.stderr}")
        for path in sorted(dst.rglob("*.d.ts")):
            rel = path.relative_to(dst).as_posix()
            out[f"generated/typescript/{rel}"] = path.read_text(encoding="utf-8")
    return out
