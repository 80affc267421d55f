"""Options, result object and text rendering of ``specfmt forward`` (no torch here).

The library function fills a :class:`ForwardResult`; the CLI only renders it
(:func:`render_text` or ``result.to_dict()`` as JSON) and exits with ``result.exit_code``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "bfloat16", "float16")

#: Rows shown by the text renderer (the JSON output has every row).
TEXT_ROWS = 16


@dataclass
class ForwardOptions:
    checkpoint: Path
    verifier: Path | str | None = None  # a directory; hf://ORG/NAME is refused by name
    inputs: Path | None = None
    tokens: int = 16
    seed: int = 0
    steps: int | None = None  # EAGLE family; default: speculative_tokens - 1
    anchor: int | None = None  # DFlash family; default: the last position
    top_k: int = 5
    device: str = "auto"
    dtype: str = "auto"
    dump: Path | None = None
    compare: Path | None = None
    atol: float = 1e-3


@dataclass
class Candidate:
    draft_id: int
    token_id: int  # verifier vocabulary
    prob: float


@dataclass
class Row:
    """One reported row: a position (EAGLE / MTP), a block slot (DFlash family) or a
    chained step after the last position (``step`` >= 1)."""

    position: int
    draft_id: int
    token_id: int
    prob: float
    top: list[Candidate]
    slot: int | None = None
    step: int = 0
    extras: dict[str, float] = field(default_factory=dict)


@dataclass
class LogitStats:
    min: float
    max: float
    mean: float
    std: float
    nonfinite: int
    min_row_std: float  # 0 means some row has constant logits (a degenerate head)


@dataclass
class Comparison:
    path: str
    atol: float
    ok: bool
    max_abs_diff: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


@dataclass
class ForwardResult:
    checkpoint: str
    model_type: str
    layer_type: str
    device: str
    dtype: str
    torch_version: str
    inputs: str
    tokens: int
    rows: list[Row]
    proposal: list[int]
    stats: LogitStats
    load_seconds: float
    forward_seconds: float
    weights: dict[str, int]  # tensors by source: file / verifier / random
    anchor: int | None = None
    steps: int = 0
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # validate's warnings on the config
    dump: str | None = None
    comparison: Comparison | None = None

    @property
    def ok(self) -> bool:
        finite = self.stats.nonfinite == 0
        return finite and (self.comparison is None or self.comparison.ok)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def problems(self) -> list[str]:
        out = []
        if self.stats.nonfinite:
            out.append(f"{self.stats.nonfinite} logits are NaN or Inf")
        if self.comparison is not None:
            out.extend(self.comparison.problems)
        return out

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = "ok" if self.ok else "fail"
        data["problems"] = self.problems()
        return data


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def render_text(result: ForwardResult) -> str:
    lines = [
        f"{result.checkpoint}: {result.model_type} ({result.layer_type} layers) on "
        f"{result.device}, {result.dtype}, torch {result.torch_version}",
        f"  inputs: {result.inputs}, {result.tokens} positions"
        + (f", anchor {result.anchor}" if result.anchor is not None else "")
        + (f", {result.steps} chained steps" if result.steps else ""),
        "  weights: " + ", ".join(f"{n} from {src}" for src, n in result.weights.items() if n),
        f"  load {_ms(result.load_seconds)}, forward {_ms(result.forward_seconds)}",
    ]
    for warning in result.warnings:
        lines.append(f"  WARNING: {warning}")

    rows = result.rows
    shown = rows[-TEXT_ROWS:]
    header = "slot" if rows and rows[0].slot is not None else "pos"
    lines.append("")
    lines.append(f"  {header:>6}  {'draft':>7} -> {'token':>7}  {'p':>6}  top-k (token:p)")
    if len(rows) > len(shown):
        lines.append(f"  ... {len(rows) - len(shown)} earlier rows (--format json has all)")
    for row in shown:
        label = (
            f"+{row.step}"
            if row.step
            else str(row.slot)
            if row.slot is not None
            else str(row.position)
        )
        top = " ".join(f"{c.token_id}:{c.prob:.3f}" for c in row.top)
        extras = "".join(f"  {k}={v:.3f}" for k, v in row.extras.items())
        lines.append(
            f"  {label:>6}  {row.draft_id:>7} -> {row.token_id:>7}  {row.prob:6.3f}  {top}{extras}"
        )
    lines.append("")
    lines.append("  proposal (verifier ids): " + " ".join(str(t) for t in result.proposal))
    s = result.stats
    lines.append(
        f"  logits: min {s.min:.4g}, max {s.max:.4g}, mean {s.mean:.4g}, "
        f"std {s.std:.4g}, smallest row std {s.min_row_std:.4g}, "
        f"non-finite {s.nonfinite}"
    )
    for note in result.notes:
        lines.append(f"  note: {note}")
    for finding in result.findings:
        lines.append(f"  validate: warning {finding}")
    if result.dump:
        lines.append(f"  wrote {result.dump}")
    if result.comparison is not None:
        c = result.comparison
        diffs = ", ".join(f"{k} {v:.3g}" for k, v in c.max_abs_diff.items())
        verdict = "match" if c.ok else "MISMATCH"
        lines.append(
            f"  compare with {c.path} (atol {c.atol:g}): {verdict}"
            + (f"; max |diff| {diffs}" if diffs else "")
        )
        lines.extend(f"    - {p}" for p in c.problems)
    if not result.ok:
        lines.append("  FAILED: " + "; ".join(result.problems()))
    return "\n".join(lines)
