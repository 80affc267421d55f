#!/usr/bin/env python3
"""Scaffold a new config rule: class, page text, registry line, cases file and docs page.

    python scripts/new_rule.py X021 --name block-size-null --key block_size --type dflash

Writes, for a rule of a config layer (X cross-field, C consumer, M version):

* the rule class at the end of the layer's module (``spec_format/rules/<layer>.py``),
  applying to the catalog family of ``--type``, status ``preview``, ``since`` the latest
  format release (``--since`` to say otherwise), with its one-line docstring and a working
  check that flags an explicit ``null`` at ``--key``: replace it with the real condition;
* its page text ``spec_format/rules/docs/<ID>.md`` in the four required sections;
* its line in ``spec_format/rules/registry.py``, after the layer's last rule;
* its cases file ``tests/rules/cases/<ID>.json``: a failing case (an example config of
  ``--type`` with ``--key`` nulled) and a passing one (the example as it is);
* the docs page, by running ``python scripts/generate.py --only docs``.

Engine-emitted layers (I, S, H, R) and the layers that need weights or a verifier
(W, D, V) are refused: their rules are added by hand (see docs/development.md).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from spec_format.facts import catalog  # noqa: E402
from spec_format.rules import registry  # noqa: E402
from spec_format.rules.base import DOC_FOLDER, LAYER_PREFIX, Layer  # noqa: E402

SCAFFOLDED = (Layer.CROSS_FIELD, Layer.CONSUMER, Layer.VERSION)
USAGE_ERROR = 2


class Refused(Exception):
    """A request the scaffold cannot carry out; the message says why and what to do."""


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def _example(model_type: str) -> tuple[Path, dict]:
    for path in sorted(ROOT.glob("examples/*/config.json")):
        config = json.loads(path.read_text(encoding="utf-8"))
        if config.get("speculators_model_type") == model_type:
            return path, config
    raise Refused(f"no example config of type {model_type!r} under examples/")


def _layer(rule_id: str) -> Layer:
    if not re.fullmatch(r"[A-Z][0-9]{3}", rule_id):
        raise Refused(f"{rule_id!r} is not a rule id (a layer letter and three digits)")
    by_prefix = {prefix: layer for layer, prefix in LAYER_PREFIX.items()}
    layer = by_prefix.get(rule_id[0])
    if layer is None:
        raise Refused(f"{rule_id}: no layer has the letter {rule_id[0]}")
    if layer not in SCAFFOLDED:
        letters = ", ".join(LAYER_PREFIX[x] for x in SCAFFOLDED)
        raise Refused(
            f"{rule_id}: the {layer.value} layer is not scaffolded (only {letters}); add the "
            "class by hand, see docs/development.md"
        )
    if rule_id in registry.entries():
        raise Refused(f"{rule_id} is taken (ids are never reused); pick another")
    return layer


def _page_text(args, value) -> str:
    failing = json.dumps({"speculators_model_type": args.type, args.key: None})
    passing = json.dumps({"speculators_model_type": args.type, args.key: value})
    return f"""## What it checks
`{args.key}` is not an explicit `null`.

## Why it matters
TODO: which reader breaks, and how (cite the report in `references`).

## Example
```json
{failing}
```

## Use instead
```json
{passing}
```
"""


def _write_page_text(args, value) -> Path:
    path = ROOT / "spec_format" / "rules" / DOC_FOLDER / f"{args.id}.md"
    path.write_text(_page_text(args, value), encoding="utf-8")
    return path


def _class_source(args, cls: str, layer: Layer, since: str, family: str) -> str:
    summary = args.summary or f"`{args.key}` is explicitly null."
    return f'''

class {cls}({_base_class(layer)}):
    """{summary}"""

    id = "{args.id}"
    name = "{args.name}"
    since = "{since}"
    status = Stability.PREVIEW
    severity = Severity.WARNING
    applies_to = catalog.family("{family}")

    def check(self, ctx: Context) -> tuple[Hit, ...]:
        if "{args.key}" not in ctx.config or ctx.config["{args.key}"] is not None:
            return ()
        return (
            Hit(
                "{args.key} is null; write the value the draft was trained with",
                pointer="/{args.key}",
            ),
        )
'''


def _base_class(layer: Layer) -> str:
    # the module's private layer class, e.g. _CrossFieldRule: the one every rule of it uses
    rule = registry.by_layer(layer)[0]
    return rule.__mro__[1].__name__


def _add_class(layer: Layer, source: str) -> Path:
    module = registry.by_layer(layer)[0].__module__
    path = ROOT / (module.replace(".", "/") + ".py")
    text = path.read_text(encoding="utf-8")
    # the layer modules import Context, Hit and Severity already; add Stability
    base = re.search(r"^from spec_format\.rules\.base import (.+)$", text, re.M)
    if base is None:
        raise Refused(f"{path.relative_to(ROOT)} does not import from spec_format.rules.base")
    names = sorted({*(n.strip() for n in base.group(1).split(",")), "Stability"})
    text = text.replace(base.group(0), f"from spec_format.rules.base import {', '.join(names)}")
    # rules select types through the catalog (a family), never by a list of names
    package = re.search(r"^from spec_format\.facts import (.+)$", text, re.M)
    if package is None:
        text = text.replace(
            "from spec_format.base.report import",
            "from spec_format.facts import catalog\nfrom spec_format.base.report import",
            1,
        )
    elif "catalog" not in package.group(1).split(", "):
        names = sorted({*(n.strip() for n in package.group(1).split(",")), "catalog"})
        text = text.replace(package.group(0), f"from spec_format.facts import {', '.join(names)}")
    path.write_text(text.rstrip("\n") + "\n" + source, encoding="utf-8")
    return path


def _add_registry_line(layer: Layer, cls: str) -> None:
    path = ROOT / "spec_format" / "rules" / "registry.py"
    last = registry.by_layer(layer)[-1]
    alias = last.__module__.rsplit(".", 1)[1]
    old = f"    {alias}.{last.__name__},\n"
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise Refused(f"cannot find the line of {last.id} in {path.relative_to(ROOT)}")
    path.write_text(text.replace(old, old + f"    {alias}.{cls},\n"), encoding="utf-8")


def _write_cases(args, source: Path) -> Path:
    """tests/rules/cases/<ID>.json: the example with the key nulled fails, as it is passes."""
    example = source.parent.name
    cases = {
        "rule": args.id,
        "cases": [
            {
                "name": args.name,
                "expect": "fail",
                "description": f"{args.key} written as null ({example} with the key nulled)",
                "example": example,
                "set": {args.key: None},
            },
            {
                "name": f"example-{example}",
                "expect": "pass",
                "description": f"{args.key} as the example {example} writes it",
                "example": example,
            },
        ],
    }
    path = ROOT / "tests" / "rules" / "cases" / f"{args.id}.json"
    path.write_text(json.dumps(cases, indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("id", help="the new rule id, e.g. X021 (its letter picks the layer)")
    parser.add_argument("--name", required=True, help="kebab-case name, e.g. head-dim-odd")
    parser.add_argument("--key", required=True, help="the top-level config key it is about")
    parser.add_argument(
        "--type",
        default="eagle3",
        help="an example config of this type makes the cases; the rule applies to its family",
    )
    parser.add_argument("--summary", help="one-line statement of the rule (its docstring)")
    parser.add_argument("--since", help="format release it exists since (default: latest)")
    parser.add_argument("--no-generate", action="store_true", help="skip the docs page")
    args = parser.parse_args(argv)
    args.id = args.id.upper()
    try:
        layer = _layer(args.id)
        if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", args.name):
            raise Refused(f"--name {args.name!r} must be kebab-case (head-dim-odd)")
        if args.name in {r.name for r in registry.RULES}:
            raise Refused(f"--name {args.name} is taken by {registry.get(args.name).id}")
        source, example = _example(args.type)
        if args.key not in example or example[args.key] is None:
            raise Refused(
                f"--key {args.key}: not set in {source.relative_to(ROOT)}; pick a key that "
                "example has, so the passing case and example are real"
            )
        since = args.since or catalog.version_entry(catalog.latest_version()).release
        cls = _camel(args.name)
        family = catalog.record(args.type).family
        source_text = _class_source(args, cls, layer, since, family)
        module = _add_class(layer, source_text)
    except Refused as exc:
        print(f"new_rule.py: {exc}", file=sys.stderr)
        return USAGE_ERROR
    _add_registry_line(layer, cls)
    written = [module, _write_page_text(args, example[args.key])]
    written.append(_write_cases(args, source))
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print("added the registry line in spec_format/rules/registry.py")
    if not args.no_generate:
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "generate.py"), "--only", "docs"], cwd=ROOT
        )
        if done.returncode:
            return done.returncode
    print(
        f"next: write the real check of {cls} and its page text, make the cases in "
        f"tests/rules/cases/{args.id}.json real (tests/rules/README.md), run "
        "`python scripts/generate.py` and the tests (docs/development.md)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
