"""What changed from one vLLM release group of the reader table to the next (docs only)."""

from __future__ import annotations

import json


def _json(value) -> str:
    return json.dumps(value)


def _cell(row: dict | None) -> str:
    """A row in a few words: what the release reads when the field is absent, null or [],
    which given values it refuses, or that it never reads the field."""
    if row is None or row.get("ignored"):
        return "ignored"
    said = []
    for case in ("absent", "null", "empty"):
        rule = row.get(case)
        if rule is not None:
            what = "refused" if "rejects" in rule else f"`{_json(rule.get('reads'))}`"
            said.append(f"{case} {what}")
    if row.get("given_rejects"):
        said.append("refuses some values")
    return ", ".join(said) or "read as given"


def changes(prev, cur) -> list[str]:
    """Differences of ``cur``'s table file from ``prev``'s, in the table's terms."""
    out: list[str] = []
    a, b = prev.data, cur.data
    old, new = a["types"]["accepted"], b["types"]["accepted"]
    if added := [t for t in new if t not in old]:
        out.append("reads " + ", ".join(f"`{t}`" for t in added))
    if dropped := [t for t in old if t not in new]:
        out.append("no longer reads " + ", ".join(f"`{t}`" for t in dropped))
    fails, failed = b["types"].get("fails", {}), a["types"].get("fails", {})
    for t in new:
        if t in fails and t not in failed:
            out.append(f"refuses `{t}` ({fails[t]})")
        elif t in failed and t not in fails and t in old:
            out.append(f"serves `{t}`")
    for pointer in b.get("requires", {}).keys() - a.get("requires", {}).keys():
        out.append(f"requires `{pointer}`")
    for pointer in a.get("requires", {}).keys() - b.get("requires", {}).keys():
        out.append(f"no longer requires `{pointer}`")
    refused = b.get("verifier", {}).get("rejects", [])
    before = a.get("verifier", {}).get("rejects", [])
    if refused != before:
        out.append("refuses verifier forms: " + (", ".join(refused) or "none"))
    for model_type in new:
        if model_type not in old or model_type in fails:
            continue
        mold = a["models"].get(model_type, {})
        mnew = b["models"].get(model_type, {})
        names = list(mold.get("fields", {})) + [
            n for n in mnew.get("fields", {}) if n not in mold.get("fields", {})
        ]
        for name in names:
            x, y = mold.get("fields", {}).get(name), mnew.get("fields", {}).get(name)
            if _cell(x) != _cell(y):
                out.append(f"`{model_type}.{name}`: {_cell(x)} → {_cell(y)}")
        lx = mold.get("layer_model_type", {}).get("accepts")
        ly = mnew.get("layer_model_type", {}).get("accepts")
        if lx != ly:
            said = ", ".join(ly) if ly else "any (not checked)"
            out.append(f"`{model_type}` layer model types: {said}")
        for name, row in mnew.get("layer_fields", {}).items():
            if row != mold.get("layer_fields", {}).get(name) and "class" in row:
                out.append(
                    f"`{model_type}`: a non-empty `transformer_layer_config.{name}` builds "
                    f"`{row['class']}`"
                )
    return out


def group_lines(releases) -> list[str]:
    """A Markdown table: each vLLM group, its member releases, and what changed; and the
    speculators files that cover several releases of their line."""
    groups = [r for r in releases if r.name == "vllm"]
    if not groups:
        return []
    shared = [r for r in releases if r.name != "vllm" and len(r.members) > 1]
    lines = []
    if shared:
        lines += [
            "",
            "Speculators releases of one line whose config and model code are byte-identical "
            "(they differ in the converter, data generation or training code) share the line's "
            "file, executed with its newest release: "
            + "; ".join(
                f"`{r.id}` covers " + ", ".join(f"`{r.name}=={m}`" for m in r.members)
                for r in shared
            )
            + ".",
        ]
    lines += [
        "",
        "## vLLM release groups",
        "",
        "Releases whose reader source is byte-identical share one table file "
        "(`scripts/vllm-digests.py` hashes each wheel's speculators config package, detection, "
        "draft-config and registry code, and checks the digests the table records); the first "
        "release of each group is executed by the `readers` test group.",
        "",
        "| Group | Releases | Changed from the previous group |",
        "|---|---|---|",
    ]
    prev = None
    for rel in groups:
        said = "first speculators reader" if prev is None else "; ".join(changes(prev, rel))
        members = ", ".join(f"`{rel.name}=={m}`" for m in rel.members)
        lines.append(f"| `{rel.id}` | {members} | {said or 'no change in the rows'} |")
        prev = rel
    return lines
