"""Generated statements inside hand-written pages: what the reader table covers.

A hand-written page (``README.md``, ``schema/readers/README.md``, the guide and
``docs/development.md``) never spells the newest covered release, a release count or a
group count: it marks the place, inline, and the generator writes the value from
``spec_format.facts.readers``::

    every vLLM release from <!-- gen:vllm-first -->0.10.1<!-- /gen --> to
    <!-- gen:vllm-newest -->...<!-- /gen -->

so that adding a release (``scripts/add-release.py``) edits no page by hand. README.md's
exit-code table is one too (``gen:exit-codes``, from ``spec_format.base.errors``). An unknown
name between the markers stops the generator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from spec_format.base.errors import EXIT_MEANINGS
from spec_format.facts import catalog, readers

MARKER = re.compile(r"<!-- gen:([a-z0-9-]+) -->(.*?)<!-- /gen -->", re.S)
#: the hand-written pages that may hold markers (generated folders are written whole)
PAGES = ("README.md", "schema/readers/README.md", "docs/*.md", "docs/guide/*.md")


def weight_blocks() -> list[str]:
    """Per draft type with a weight-contract block, how many groups execute it and how many
    read it from the source: ``"eagle3: 20 executed, 1 read-not-executed (of 21 groups
    serving it)"``, in catalog order. A type with a block in one group has one in every group
    that serves it (ValueError otherwise)."""
    groups = [
        rel
        for rid in readers.representatives()
        if (rel := readers.release(*rid.split("=="))).name == "vllm"
    ]
    claims = []
    for model_type in catalog.records():
        serving = [rel for rel in groups if rel.serves(model_type)]
        blocks = [
            (rel.version, rel.data["models"].get(model_type, {}).get("weights")) for rel in serving
        ]
        if not any(block for _, block in blocks):
            continue
        missing = [version for version, block in blocks if not block]
        if missing:
            raise ValueError(f"models.{model_type}.weights is missing for vllm {missing}")
        statuses = [block["status"] for _, block in blocks]
        claims.append(
            f"{model_type}: {statuses.count('executed')} executed, "
            f"{statuses.count('read-not-executed')} read-not-executed (of {len(serving)} groups "
            "serving it)"
        )
    return claims


def _each(name: str) -> str:
    """Every covered release of reader ``name``: ``"0.1.0, 0.2.0 and 0.3.0"``."""
    found = [r.split("==")[1] for r in readers.releases() if r.startswith(f"{name}==")]
    return ", ".join(found[:-1]) + f" and {found[-1]}" if len(found) > 1 else "".join(found)


def _exit_codes() -> str:
    """README.md's exit-code table, from ``spec_format.base.errors.EXIT_MEANINGS``."""
    rows = "".join(f"| {row.code} | {row} |\n" for row in EXIT_MEANINGS)
    return f"\n| code | meaning |\n|---|---|\n{rows}"


def _values() -> dict[str, Callable[[], str]]:
    def of(name: str, attribute: str) -> Callable[[], str]:
        return lambda: str(getattr(readers.coverage(name), attribute))

    out: dict[str, Callable[[], str]] = {}
    for name in ("vllm", "speculators"):
        for attribute in ("first", "newest", "releases", "groups"):
            out[f"{name}-{attribute}"] = of(name, attribute)
    out["weight-blocks"] = lambda: ", ".join(weight_blocks())
    out["speculators-each"] = lambda: _each("speculators")
    out["exit-codes"] = _exit_codes
    out["representatives"] = lambda: str(len(readers.representatives()))
    return out


def fill(text: str, where: str) -> str:
    """``text`` with every marked value written from the table."""
    values = _values()

    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            known = ", ".join(sorted(values))
            raise ValueError(f"{where}: unknown generated value gen:{name} (known: {known})")
        return f"<!-- gen:{name} -->{values[name]()}<!-- /gen -->"

    return MARKER.sub(one, text)


def sections(root: Path) -> dict[str, str]:
    """repo-relative path -> the page with its marked values regenerated, for every page
    that has markers."""
    out = {}
    for pattern in PAGES:
        for path in sorted(root.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            if MARKER.search(text):
                rel = path.relative_to(root).as_posix()
                out[rel] = fill(text, rel)
    return out
