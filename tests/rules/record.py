"""Show, and on request record, the findings each rule case produces now.

    python -m tests.rules.record [--write] [ID ...]

prints every case whose ``findings`` (tests/rules/README.md) is absent or differs from what
the command produces now, with each rule's first message; ``--write`` stores the produced
set in those cases (a fix case: the problems the rewrite reports). It is a review aid, not an oracle: a recorded set
is what the code does today, so read each one (is every rule in it right for this input,
is every severity the one the rule promises?) before committing it. A snapshot of a bug is
a bug.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import pytest

from tests.rules.cases import case_files, load_file, run


def produced(ids: set[str]) -> dict[str, dict[str, tuple[dict[str, str], dict]]]:
    """rule id -> case name -> (findings as a case states them, messages by rule)."""
    out: dict[str, dict[str, tuple[dict[str, str], dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        builds = root / "builds"
        builds.mkdir()
        patch = pytest.MonkeyPatch()
        for n, path in enumerate(case_files()):
            rule, cases = load_file(path)
            if ids and rule not in ids:
                continue
            for i, case in enumerate(cases):
                try:
                    outcome = run(case, root / f"{n}-{i}", builds, patch)
                finally:
                    patch.undo()
                found = {r: "/".join(s) for r, s in outcome.findings.items()}
                out.setdefault(rule, {})[case.name] = (found, outcome.messages)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", help="rule ids (default: every rule)")
    parser.add_argument("--write", action="store_true", help="record the produced findings")
    args = parser.parse_args(argv)
    results = produced(set(args.ids))
    differ = 0
    for path in case_files():
        if path.stem not in results:
            continue
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
        ascii_only = json.dumps(doc, indent=2) + "\n" == text
        for case in doc["cases"]:
            found, messages = results[path.stem][case["name"]]
            if case.get("findings") == found:
                continue
            differ += 1
            print(f"{path.stem} {case['name']} ({case['expect']}): {found}")
            print(f"  states {case['findings']}" if "findings" in case else "  states nothing")
            for rule, texts in messages.items():
                print(f"  {rule}: {texts[0][:160]}")
            if args.write:
                case["findings"] = found
        if args.write:
            path.write_text(
                json.dumps(doc, indent=2, ensure_ascii=ascii_only) + "\n", encoding="utf-8"
            )
    print(f"{differ} case(s) differ", file=sys.stderr)
    return 1 if differ and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
