"""Paths and loaders shared by the tests: import them as ``from tests.common import ...``
(fixtures stay in conftest.py, which pytest loads itself)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/config.json"))
VALID = sorted((ROOT / "tests" / "fixtures" / "valid").glob("*.json"))
#: what each speculators release writes: releases/<format version>/<type>/<case>.json
RELEASES = sorted((ROOT / "tests" / "fixtures" / "releases").glob("*/*/*.json"))
#: the rule cases, one file per rule: tests/rules/cases/<ID>.json (tests/rules/README.md)
RULE_CASES = ROOT / "tests" / "rules" / "cases"


def _invalid() -> list[Path]:
    """One name per failing case of a rule that is a whole config document validated alone
    (the regression configs from real reports): ``tests/rules/cases/<ID>/<case>``. The name
    is no file: :func:`load_case` reads the case from ``<ID>.json``, and ``.parent.name`` is
    the rule, ``.name`` the case (names may hold dots: never ``.stem``)."""
    out = []
    for path in sorted(RULE_CASES.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            if case["expect"] == "fail" and "config" in case and _config_only(case):
                out.append(RULE_CASES / path.stem / case["name"])
    return out


def _config_only(case: dict) -> bool:
    others = {"checkpoint", "verifier", "raw", "input", "inject_bug", "command"}
    return not others & case.keys()


INVALID = _invalid()


def load_case(path: Path) -> dict:
    """A JSON file, or a rule case named in :data:`INVALID` (its description, the rules it
    expects, its config and validate options)."""
    if path.parent.parent == RULE_CASES:
        from tests.rules.cases import load_file

        _, cases = load_file(RULE_CASES / f"{path.parent.name}.json")
        return next(c for c in cases if c.name == path.name).as_fixture()
    return json.loads(path.read_text(encoding="utf-8"))


def load_script(path: Path) -> ModuleType:
    """A script that is no package module (``scripts/sglang-facts.py``), imported once per
    process under its file name with ``_`` for ``-``: every test file gets the same module,
    so its functions pickle by name for the worker processes it starts."""
    name = path.stem.replace("-", "_")
    loaded = sys.modules.get(name)
    if loaded is not None and Path(loaded.__file__).resolve() == path.resolve():
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
