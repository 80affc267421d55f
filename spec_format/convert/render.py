"""The text report of ``specfmt convert`` (``-f json`` is
:meth:`~spec_format.convert.run.ConvertResult.to_dict`): every config value with its
origin, every tensor mapped or dropped with its reason, the validation of the result and
what was written."""

from __future__ import annotations

import json


def _at(config, pointer: str):
    node = config
    for part in pointer.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, dict) else None
    return node


def render_text(result, dry_run: bool, quiet: bool = False) -> str:
    from spec_format.base.wording import human_bytes, plural, severity_word
    from spec_format.facts.catalog import record
    from spec_format.rewrites.migration.output import dumps

    plan = result.plan
    model_type = plan.config.get("speculators_model_type")
    rec = record(model_type)
    lines = [
        f"{result.source}: {plan.kind} -> {model_type} ({rec.what if rec else '?'}), "
        f"format {result.format_version}"
    ]
    if not quiet:  # -q: what each value and tensor comes from is left out
        lines.append("config:")
        for p in plan.provenance:
            value = json.dumps(_at(plan.config, p.pointer))
            value = value if len(value) <= 60 else value[:57] + "..."
            detail = f" ({p.detail})" if p.detail else ""
            lines.append(f"  {p.pointer} = {value}: {p.origin}{detail}")
        lines.append("tensors:")
        lines.extend(_tensor_lines(plan.moves))
    for title, items in (("notes", plan.notes), ("lossy (--allow-lossy)", plan.lossy)):
        if items:
            lines.append(f"{title}:")
            lines.extend(f"  - {n}" for n in items)
    if dry_run and quiet:
        lines.append("dry run, nothing written")
        return "\n".join(lines) + "\n"
    if dry_run:
        lines.append("config.json (dry run, nothing written):")
        lines.append(dumps(plan.config).rstrip("\n"))
        return "\n".join(lines) + "\n"
    report = result.validation
    if report is not None:
        c = report.counts()
        counts = [plural(c.get(k, 0), severity_word(k)) for k in ("error", "warning", "info")]
        lines.append(f"validation: ok ({', '.join(counts)})")
        for f in report.sorted_findings():
            lines.append(f"  {severity_word(f.severity)} {f.rule}: {f.message}")
    total = sum(b for _, b in result.files)
    names = ", ".join(n for n, _ in result.files)
    lines.append(f"wrote {result.destination}: {names} ({human_bytes(total)})")
    return "\n".join(lines) + "\n"


#: More tensors than this dropped for one reason (a verifier's whole body next to its MTP
#: layer) print as one line with a count; ``-f json`` lists every one.
_GROUP_DROPS = 8
#: A fused move names this many of its sources, then a count.
_SHOW_SOURCES = 4


def _tensor_lines(moves) -> list[str]:
    drops: dict[str, list[str]] = {}
    lines = []
    for m in moves:
        if m.op == "drop":
            drops.setdefault(m.reason, []).extend(m.sources)
            continue
        src = " + ".join(m.sources[:_SHOW_SOURCES])
        if len(m.sources) > _SHOW_SOURCES:
            src += f" + {len(m.sources) - _SHOW_SOURCES} more"
        if m.op == "copy" and m.target == src:
            lines.append(f"  {src}: copied ({m.reason})")
        else:
            lines.append(f"  {src} -> {m.target}: {m.op} ({m.reason})")
    for reason, names in drops.items():
        if len(names) > _GROUP_DROPS:
            shown = ", ".join(names[:2])
            lines.append(
                f"  {len(names)} tensors dropped ({reason}): {shown}, ... (-f json lists all)"
            )
        else:
            lines.extend(f"  {name}: dropped ({reason})" for name in names)
    return lines
