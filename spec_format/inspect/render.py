"""The text form of an :class:`~spec_format.inspect.run.InspectReport` (``--format json`` is
its ``to_dict``). Rounded as the seed document shows its numbers: cost ratio and
acceptances to 4 decimals, speedups to 2."""

from __future__ import annotations

from spec_format.base.wording import human_bytes
from spec_format.inspect import economics
from spec_format.inspect.run import PROXY_LABEL, GammaEconomics, InspectReport


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _forwards_text(report: InspectReport) -> str:
    if report.draft_forwards == economics.PER_TOKEN:
        return "one draft forward per drafted token (step cost 1 + gamma*c)"
    if report.family == "block":
        return "one draft forward drafts the whole block (block cost model: step cost 1 + c)"
    return "one parallel draft forward drafts every token of the step (step cost 1 + c)"


def render_text(report: InspectReport, *, quiet: bool = False) -> str:
    """The report; ``quiet`` (-q): the checkpoint, each gamma's break-even and the notes."""
    out = [
        f"{report.checkpoint}",
        f"  {report.model_type} ({report.what}), {report.family} family: {_forwards_text(report)}",
    ]
    if quiet:
        for g in report.economics:
            out += _economics_lines(report, g)[:2]
        out += [f"note: {n}" for n in report.notes]
        return "\n".join(out)
    out += ["", *_draft_lines(report), "", *_target_lines(report)]
    for g in report.economics:
        out += ["", *_economics_lines(report, g)]
    out += ["", *_vocab_lines(report)]
    if report.notes:
        out += ["", *(f"note: {n}" for n in report.notes)]
    return "\n".join(out)


def _draft_lines(report: InspectReport) -> list[str]:
    d = report.draft
    files = ", ".join(d.files)
    head = (
        f"Draft weights (safetensors headers of {files}: {human_bytes(d.file_bytes)})"
        if d.source == "headers"
        else "Draft weights (none in the checkpoint: the tensors its config implies)"
    )
    lines = [
        head,
        f"  {'group':<28}{'tensors':>8}{'parameters':>16}{'size':>12}",
    ]
    for g in d.groups.values():
        tail = "" if g.compute else "  not compute"
        lines.append(
            f"  {g.name:<28}{g.tensors:>8}{g.parameters:>16,}{human_bytes(g.bytes):>12}{tail}"
        )
    count = sum(g.tensors for g in d.groups.values())
    lines.append(f"  {'total':<28}{count:>8}{d.total:>16,}{human_bytes(d.total_bytes):>12}")
    lines.append("  dtypes: " + ", ".join(f"{k} x{v}" for k, v in d.dtypes.items()))
    lines.append(
        f"  compute-relevant parameters: {d.compute:,} (every tensor except the embed_tokens "
        "copy and the t2d/d2t vocabulary maps)"
    )
    if d.shared_head:
        lines.append(
            f"    including {d.shared_head[0]} shared with the verifier (not in the checkpoint, "
            f"read at every draft step): {d.shared_head[1]:,}"
        )
    return lines


def _target_lines(report: InspectReport) -> list[str]:
    t = report.target
    lines = ["Target (verifier)"]
    if t is None:
        lines.append("  not given (--verifier)")
    else:
        source = "safetensors headers" if t.source == "header" else "config.json"
        if t.experts is None:
            lines.append(f"  {t.per_token:,} parameters, from the {source} of {t.where}")
        else:
            lines.append(
                f"  {t.per_token:,} active parameters per token of {t.total:,} "
                f"(mixture of experts), from the {source} of {t.where}"
            )
        lines.append(f"  formula: {t.formula}")
        lines += [f"  note: {n}" for n in t.notes]
    if report.cost_ratio is not None:
        if report.cost_ratio_source == "proxy":
            lines.append(f"  cost ratio c = {report.cost_ratio:.4f} ({PROXY_LABEL})")
        else:
            lines.append(f"  cost ratio c = {report.cost_ratio:.4f} (given with --cost-ratio)")
            if report.proxy_ratio is not None:
                lines.append(f"    the parameter proxy would be {report.proxy_ratio:.4f}")
    return lines


def _economics_lines(report: InspectReport, g: GammaEconomics) -> list[str]:
    where = "the checkpoint's speculative_tokens" if g.source == "speculative_tokens" else "--gamma"
    head = f"Economics, gamma = {g.gamma} ({where}): {g.draft_forwards} draft forward"
    head += "s per step" if g.draft_forwards != 1 else " per step"
    if g.step_cost is not None:
        head += f", step cost {g.step_cost:.4f} verifier forwards"
    lines = [head]
    if g.step_cost is not None:
        if g.break_even is None:
            lines.append(
                "  break-even: none; even acceptance 1 commits fewer tokens than the step costs"
            )
        else:
            lines.append(
                f"  break-even acceptance a* = {g.break_even:.4f} (S = 1; below it speculation "
                "is a net loss)"
            )
    chain = report.draft_forwards == economics.PER_TOKEN
    header = f"  {'acceptance':<28}{'E(a,g)':>8}{'speedup':>10}"
    if chain and g.step_cost is not None:
        header += f"{'best gamma':>14}"
    lines.append(header)
    for p in g.points:
        label = f"{p.acceptance:.4f}"
        if p.ceiling:
            label += " (vocabulary ceiling)"
        elif p.above_ceiling:
            label += " (above the ceiling)"
        row = f"  {label:<28}{p.tokens:>8.2f}"
        row += f"{p.speedup:>9.2f}x" if p.speedup is not None else f"{'-':>10}"
        if p.best is not None:
            best = f"{p.best.gamma}{'+' if p.best.at_limit else ''} ({p.best.speedup:.2f}x)"
            row += f"{best:>14}"
        lines.append(row)
    lines.append(
        "  E(a,g) = (1 - a^(g+1)) / (1 - a) tokens per verifier step; S = E / step cost; "
        f"a* by bisection to {economics.TOLERANCE:g}"
    )
    if not chain and g.step_cost is not None:
        lines.append(
            "  best gamma: none within this model (the step cost does not grow with gamma, so "
            "S only grows with it); gamma is bounded by what the draft was trained to propose"
        )
    return lines


def _vocab_lines(report: InspectReport) -> list[str]:
    c = report.coverage
    lines = ["Vocabulary"]
    if not c.pruned:
        lines.append(
            f"  the draft proposes from the full verifier vocabulary ({_count(c.verifier_vocab)} "
            "tokens): no vocabulary ceiling on acceptance"
        )
        return lines
    D, V = c.draft_vocab, c.verifier_vocab
    share = f" ({D / V:.1%})" if D and V else ""
    lines.append(f"  draft vocabulary (t2d): {_count(D)} of {_count(V)} verifier tokens{share}")
    if c.out_of_draft_mass is None:
        lines.append(
            "  acceptance ceiling: 1 - the workload's target mass outside them; pass "
            "--token-freq FILE (token_freq.pt, .npy, .json) to compute it"
        )
    else:
        lines.append(
            f"  workload {c.token_freq}: out-of-draft mass {c.out_of_draft_mass:.4f} -> "
            f"acceptance ceiling {c.ceiling:.4f} per position"
        )
    return lines
