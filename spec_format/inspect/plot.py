"""``--plot FILE.svg|.png``: speedup against acceptance for the checkpoint's gamma and its
neighbours, with the break-even point and the vocabulary ceiling marked.

matplotlib is the optional ``plot`` extra, imported here only (no pyplot: a bare
:class:`~matplotlib.figure.Figure` renders without a display or global state).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from spec_format.base import extras
from spec_format.base.errors import UsageError
from spec_format.inspect import economics
from spec_format.parsers.outfile import write_output

#: Acceptance grid of the curves.
STEPS = 400


def points_label(g) -> str:
    """The legend of the marked points: the --acceptance values when they were given, else
    the default acceptances the text report tabulates."""
    given = sorted({p.acceptance for p in g.points if not p.ceiling and p.speedup is not None})
    if given == sorted(economics.DEFAULT_ACCEPTANCE):
        return f"default acceptances ({', '.join(f'{a:g}' for a in economics.DEFAULT_ACCEPTANCE)})"
    return "--acceptance values"


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(extras.missing("--plot", "plot")) from None


def plotted_gammas(report: Any) -> list[int]:
    """The checkpoint's gamma (else the first --gamma), its neighbours and every --gamma."""
    own = [g.gamma for g in report.economics]
    if not own:
        return []
    centre = own[0]
    return sorted({g for g in (centre - 1, centre, centre + 1, *own) if g >= 1})


def write_plot(report: Any, path: Path) -> None:
    """Draw ``report`` (an :class:`~spec_format.inspect.run.InspectReport`, which calls this
    for ``--plot``) to ``path`` through the one writer."""
    require_matplotlib()
    from matplotlib.figure import Figure

    c = report.cost_ratio
    if c is None or not report.economics:
        raise UsageError(
            "--plot needs a cost ratio and a gamma: pass --verifier or --cost-ratio (and "
            "--gamma when the config has no speculative_tokens)"
        )
    mode = report.draft_forwards
    main = report.economics[0]
    grid = [i / STEPS for i in range(STEPS)]
    fig = Figure(figsize=(9.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    for g in plotted_gammas(report):
        ys = [economics.speedup(a, g, c, mode) for a in grid]
        ax.plot(grid, ys, linewidth=2.2 if g == main.gamma else 1.2, label=f"gamma = {g}")
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="no speedup (S = 1)")
    if main.break_even is not None:
        ax.axvline(main.break_even, color="tab:red", linestyle=":", linewidth=1.2)
        ax.annotate(
            f"break-even a* = {main.break_even:.4f}",
            (main.break_even, ax.get_ylim()[1]),
            xytext=(4, -14),
            textcoords="offset points",
            color="tab:red",
        )
    ceiling = report.coverage.ceiling if report.coverage.out_of_draft_mass is not None else None
    if ceiling is not None and ceiling < 1.0:
        ax.axvspan(ceiling, 1.0, color="grey", alpha=0.15, label="beyond the vocabulary ceiling")
        ax.axvline(ceiling, color="black", linewidth=1)
        ax.annotate(
            f"vocabulary ceiling {ceiling:.4f}",
            (ceiling, ax.get_ylim()[0]),
            xytext=(4, 6),
            textcoords="offset points",
        )
    marked = [p for p in main.points if p.speedup is not None]
    ax.scatter(
        [p.acceptance for p in marked],
        [p.speedup for p in marked],
        zorder=3,
        color="black",
        s=16,
        label=points_label(main),
    )
    what = "c" if report.cost_ratio_source == "--cost-ratio" else "c (parameter proxy)"
    ax.set_title(f"{report.model_type} draft: speedup vs acceptance, {what} = {c:.4f}")
    ax.set_xlabel("per-position acceptance a")
    ax.set_ylabel("speedup S = E(a, gamma) / step cost")
    ax.set_xlim(0.0, 1.0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    metadata = {"Date": None} if path.suffix.lower() == ".svg" else None
    buffer = io.BytesIO()  # the suffix is .svg or .png (checked before the work)
    fig.savefig(buffer, format=path.suffix.lower().lstrip("."), metadata=metadata)
    # through the one writer: atomic for a regular file, written through a FIFO or device
    write_output(path, buffer.getvalue())
