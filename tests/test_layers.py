"""The layers contract of pyproject.toml ([tool.importlinter]) holds, counting every import.

`lint-imports` checks spec_format/; it cannot see cli/ (mapped in by package-dir). The ast
walk below checks every import of spec_format/ and cli/, at module level and inside functions,
against the same floors, so an import moved into a function cannot dodge the contract, and
finds no import loop at all (also none inside a floor).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _folders() -> dict[str, Path]:
    """Where each package lives in the checkout: spec_format/, and every subpackage
    pyproject.toml's package-dir maps in (cli/, schema/, generated/models/, ...), so an
    import of any of them is seen, whichever module makes it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = config["tool"]["setuptools"]["package-dir"]
    return {"spec_format": ROOT / "spec_format", **{k: ROOT / v for k, v in mapped.items()}}


FOLDERS = _folders()


def _floors() -> list[list[str]]:
    """The contract's floors, top first, each a list of module names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = config["tool"]["importlinter"]["contracts"]
    floors = []
    for layer in contract["layers"]:
        names = layer.replace("|", ":").split(":")
        floors.append([n.strip().strip("()") for n in names])
    return floors


def _modules() -> dict[str, Path]:
    out = {}
    for package, folder in FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            name = ".".join((package, *rel.parts)).removesuffix(".__init__")
            out[name] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]):
    """(imported project module, line, inside a function) for every import of ``name``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            targets = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = [f"{base}.{a.name}" for a in child.names] + [base]
            found = set()
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    found.add(target)
            for target in sorted(found):
                yield target, child.lineno, inner
            yield from walk(child, inner)

    yield from walk(tree, False)


def _floor_of(module: str, floors: list[list[str]]) -> int | None:
    for i, floor in enumerate(floors):
        if any(module == m or module.startswith(m + ".") for m in floor):
            return i
    return None


def _only_a_docstring(path: Path) -> bool:
    """A package whose floors are its modules (engine, rewrites) has an empty ``__init__``."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return path.name == "__init__.py" and all(
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body
    )


def test_every_module_is_on_a_floor():
    floors = _floors()
    loose = [
        m
        for m, path in _modules().items()
        if m != "spec_format" and _floor_of(m, floors) is None and not _only_a_docstring(path)
    ]
    assert not loose, f"put these modules on a floor of [tool.importlinter]: {loose}"


def test_the_walk_sees_every_mapped_package(tmp_path):
    """The data and generated packages are modules of the walk too: an import of one from
    a lower floor (base/ reading spec_format.schema) is seen."""
    modules = _modules()
    assert {"spec_format.schema", "spec_format.models", "spec_format.cli"} <= set(modules)
    source = "def f():\n    import spec_format.schema as package\n"
    probe = tmp_path / "probe.py"  # read as if it were spec_format/base/probe.py
    probe.write_text(source, encoding="utf-8")
    found = list(_imports("spec_format.base.probe", probe, modules))
    assert ("spec_format.schema", 2, True) in found


def test_no_import_goes_up_a_floor_even_inside_a_function():
    floors, modules = _floors(), _modules()
    upward, in_functions = [], 0
    for name, path in modules.items():
        here = _floor_of(name, floors)
        for target, line, in_function in _imports(name, path, modules):
            in_functions += in_function
            there = _floor_of(target, floors)
            if here is not None and there is not None and there < here:
                where = path.relative_to(ROOT)
                kind = "inside a function" if in_function else "at module level"
                upward.append(f"{where}:{line} imports {target} {kind}")
    assert in_functions > 0  # the walk sees function-level imports
    assert not upward, "imports up a floor:\n" + "\n".join(upward)


def test_no_import_loop():
    modules = _modules()
    graph = {m: {t for t, _, _ in _imports(m, p, modules)} for m, p in modules.items()}
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def loop_from(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := loop_from(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := loop_from(start, [start])):
            pytest.fail("import loop: " + " -> ".join(found))


def test_lint_imports_keeps_the_contract():
    tool = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [str(tool), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout
