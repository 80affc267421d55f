"""``specfmt convert``: parse options, call spec_format.convert.run.convert, render, exit."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from spec_format.base.jsonout import dumps
from spec_format.cli.common import (
    ExitCode,
    ReportFormat,
    format_option,
    handle_errors,
    parse_aux_ids,
    print_text,
    quiet_option,
    stdout,
    verifier_option,
)

#: no shard is larger (a safetensors file's offsets are 64-bit; this is far below)
MAX_SHARD_BYTES = 10**18


def _size(text: str | None) -> int | None:
    """``--max-shard-size 5GB`` (huggingface_hub's decimal units) or a byte count."""
    from spec_format.base.errors import UsageError

    if text is None:
        return None
    import math

    units = {"TB": 10**12, "GB": 10**9, "MB": 10**6, "KB": 10**3}
    s = text.strip().upper()
    wrong = UsageError(f"--max-shard-size {text!r}: a size like 5GB, 500MB or 1000000")
    try:
        number = float(s[:-2]) * units[s[-2:]] if s[-2:] in units else int(s)
    except ValueError:
        raise wrong from None
    if not (math.isfinite(number) and 1 <= number <= MAX_SHARD_BYTES):  # infGB, 1e400KB
        raise UsageError(
            f"--max-shard-size {text!r}: a size from 1 byte to {MAX_SHARD_BYTES // 10**12:,}TB"
        )
    return int(number)


@handle_errors
def convert_command(
    src: Path = typer.Argument(..., help="The source checkpoint directory.", show_default=False),
    output: Path = typer.Option(
        None, "--output", "-o", help="The new checkpoint directory (absent or empty)."
    ),
    verifier: str = verifier_option(
        "The verifier's config.json, its directory, or hf://ORG/NAME[@REV]."
    ),
    verifier_name: str = typer.Option(
        None,
        "--verifier-name",
        help="The verifier's hub id (ORG/NAME), written as the verifier's name_or_path in "
        "speculators_config (default: from hf://, or the local config's _name_or_path).",
    ),
    aux_layer_ids: list[str] = typer.Option(
        None,
        "--aux-layer-ids",
        help="Verifier layers the draft taps, a comma list (when the source does not say; a "
        "refusal names the ones readers would guess for your verifier).",
    ),
    format_version: str = typer.Option(
        None, "--format-version", help="Target format version (default: the latest)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the config and the tensor mapping; write nothing."
    ),
    allow_lossy: bool = typer.Option(
        False, "--allow-lossy", help="Drop tensors the format does not carry (listed)."
    ),
    dtype: str = typer.Option(
        None, "--dtype", help="Re-cast float tensors (bfloat16, float16, float32); default: copy."
    ),
    max_shard_size: str = typer.Option(
        None,
        "--max-shard-size",
        help="Shard the weights above this size (default: save_pretrained's for the target "
        "format's transformers: 5GB for 4.x, 50GB for 5.x).",
    ),
    report_format: str = format_option(ReportFormat, "text", "--format-version", "Report format."),
    quiet: bool = quiet_option(
        "Only the notes, what is dropped, the validation's findings and what was written (no "
        "config origins or tensor mapping)."
    ),
) -> None:
    """Convert a third-party draft checkpoint (SafeAILab EAGLE-3, ...) into the speculators
    format: every tensor mapped or dropped with its reason, every config value with its
    origin, written atomically and validated.

    Exit codes: 0 converted (or --dry-run); 1 the converted checkpoint fails validation
    (nothing written); 2 usage error or a refused conversion (nothing written); 3 the source
    could not be read.
    """
    from spec_format.convert.plan import Request
    from spec_format.convert.run import convert
    from spec_format.convert.write import parse_dtype
    from spec_format.facts import catalog
    from spec_format.parsers.verifier import load_verifier
    from spec_format.rewrites.migration import resolve_target

    line = resolve_target(format_version)[0] if format_version else catalog.latest_version()
    request = Request(
        verifier=load_verifier(verifier) if verifier else None,
        verifier_ref=verifier,
        aux_layer_ids=parse_aux_ids(aux_layer_ids),
        format_version=line,
        allow_lossy=allow_lossy,
        dtype=parse_dtype(dtype) if dtype else None,
        verifier_name=verifier_name,
    )
    result = convert(src, output, request, dry_run=dry_run, max_shard_size=_size(max_shard_size))
    out = stdout()
    if report_format == ReportFormat.json.value:
        out.write(dumps(result.to_dict(), indent=2) + "\n")
    else:
        print_text(render_text(result, dry_run, quiet), out)  # wrapped between words on a terminal
    raise typer.Exit(ExitCode.OK)


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
