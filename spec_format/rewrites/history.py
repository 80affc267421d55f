"""``specfmt history``: the known format versions and what each migration step changes.

Built from the catalog and the step modules' docstrings (alembic's ``history`` prints
``Script.doc`` the same way), so it cannot drift from what ``migrate`` does.
"""

from __future__ import annotations

import re
from typing import Any

from spec_format.facts import catalog
from spec_format.rewrites.migration.runner import chain


def history() -> dict[str, Any]:
    steps = chain().ordered()
    return {
        "versions": [
            {
                "version": v,
                "release": catalog.version_entry(v).release,
                "types": list(catalog.version_entry(v).types),
            }
            for v in catalog.versions()
        ],
        "steps": [
            {
                "id": s.id,
                "source": s.source,
                "target": s.target,
                "summary": s.summary,
                "doc": s.doc,
                "touches": list(s.touches),
                "module": s.module,
            }
            for s in steps
        ],
    }


def render(verbose: bool = False) -> str:
    data = history()
    out = ["Format versions (oldest first):"]
    for v in data["versions"]:
        out.append(f"  {v['version']}  release {v['release']:<7} types: {', '.join(v['types'])}")
    out.append("")
    out.append(
        "Migration steps (`specfmt migrate --to V` runs them in order, down for downgrades):"
    )
    for s in data["steps"]:
        out.append(f"  {s['source']} -> {s['target']}  {s['summary']}")
        if verbose:
            body = s["doc"].split("\n\n", 1)[1] if "\n\n" in s["doc"] else ""
            for paragraph in re.split(r"\n\s*\n", body.strip()):
                if paragraph.strip():  # one line each: the renderer wraps it to the width
                    text = " ".join(paragraph.split()).replace("``", "`")
                    out.append(f"      {text}")
            if s["touches"]:
                out.append(f"      touches: {', '.join(s['touches'])}")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
