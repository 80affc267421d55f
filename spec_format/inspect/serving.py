"""``specfmt serving``: which engine releases serve a draft checkpoint (or config), per
release group of the reader table, and the first that serves it as trained.

The verdicts are :func:`spec_format.facts.serving.serving`'s; this module opens the input,
resolves the ``--engine`` strings and lays the answer out as text (80 columns) or a dict
(``-f json``).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec_format.base.errors import InputError, UsageError
from spec_format.facts import engine_strings, readers
from spec_format.facts import serving as facts
from spec_format.parsers import documents
from spec_format.parsers.checkpoint import CONFIG_NAME, load_checkpoint

#: the width the text table fits
WIDTH = 80


@dataclass
class ServingReport:
    """The answer for one input."""

    shown: str  # the input as the user named it
    serving: facts.Serving
    warnings: list[str] = field(default_factory=list)  # engines newer than the table

    def to_dict(self) -> dict[str, Any]:
        return {"input": self.shown, **self.serving.as_dict(), "warnings": self.warnings}


def releases_of(texts: list[str] | tuple[str, ...] | None) -> tuple[tuple, list[str]]:
    """The release groups ``--engine`` strings name (default: every covered vLLM group), one
    per group, and the warnings of the strings that pin a release newer than the table."""
    specs = engine_strings.parse_all(texts)
    for spec in specs:
        if not engine_strings.reads_speculators(spec):
            raise UsageError(
                f"--engine {spec.text!r}: SGLang reads no speculators config, so no release "
                "of it serves a speculators draft; `specfmt validate --engine sglang==X "
                "--verifier V` checks a SafeAILab/SpecForge draft against it"
            )
    if not specs:
        return facts.covered_groups(), []
    out: dict[tuple[str, str], readers.Release] = {}
    for spec in specs:
        for rel in spec.releases:
            out.setdefault((rel.name, rel.representative), rel)
    return tuple(out.values()), [s.newer_message() for s in specs if s.newer]


def serving_report(location: str, engines: list[str] | tuple[str, ...] | None) -> ServingReport:
    """Open a checkpoint directory (or its ``config.json``, or ``hf://``) and judge it."""
    releases, warnings = releases_of(engines)  # a malformed string: usage error first
    if not location.startswith("hf://") and not Path(location).exists():
        raise InputError(f"{location}: no such checkpoint directory or config file")
    if Path(location).is_file() and Path(location).suffix == ".json":  # a config alone
        loaded, tensors, shown = documents.load(Path(location)), None, location
    else:
        ckpt = load_checkpoint(location)
        try:
            data = ckpt.read_config()
            shown = ckpt.display(CONFIG_NAME)
            usable = ckpt.has_weights and ckpt.complete
            tensors = sorted(ckpt.tensors) if usable else None
        finally:
            ckpt.close()
        if data is None:
            raise InputError(f"{location}: no {CONFIG_NAME}")
        loaded = documents.load(Path(CONFIG_NAME), raw=data)
    if not loaded.ok or any(p.fatal for p in loaded.problems) or not isinstance(loaded.data, dict):
        raise InputError(f"{shown}: not a readable config; run `specfmt validate {location}`")
    model_type = loaded.data.get("speculators_model_type")
    if not isinstance(model_type, str):
        raise InputError(f"{shown}: no speculators_model_type; run `specfmt validate {location}`")
    return ServingReport(location, facts.serving(loaded.data, releases, tensors), warnings)


def render_text(report: ServingReport, *, quiet: bool = False) -> str:
    """The verdict table: one row per release group, fitting :data:`WIDTH` columns;
    ``quiet`` (-q): only the groups that do not serve the draft as trained."""
    s = report.serving
    lines = [
        f"{report.shown}: {s.model_type}, format {s.format_version}"
        + (f", written by {s.writer}" if s.writer else ""),
        "tensors: the checkpoint's"
        if s.tensors_from == "checkpoint"
        else "tensors: those its config implies (no weights read)",
    ]
    lines += [f"warning: {w}" for w in report.warnings]
    first = s.first_as_trained
    lines.append(
        f"first release that serves it as trained: {first}"
        if first
        else "no release asked serves it as trained"
    )
    lines.append("")
    rel_w = max([len("release"), *(len(_release(g)) for g in s.groups)])
    verdict_w = max(len(v) for v in facts.VERDICTS)
    why_w = WIDTH - rel_w - verdict_w - 4
    lines.append(f"{'release':<{rel_w}}  {'verdict':<{verdict_w}}  why")
    groups = [g for g in s.groups if not quiet or g.verdict != facts.AS_TRAINED]
    if not groups:
        return "\n".join(line.rstrip() for line in lines[:-1]) + "\n"
    for g in groups:
        why = "; ".join(_distinct(g.reasons)) or "-"
        wrapped = textwrap.wrap(why, why_w, break_long_words=True, break_on_hyphens=False)
        lines.append(f"{_release(g):<{rel_w}}  {g.verdict:<{verdict_w}}  {wrapped[0]}")
        lines += [" " * (rel_w + verdict_w + 4) + more for more in wrapped[1:]]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _release(g: facts.GroupServing) -> str:
    return f"{g.release.split('==')[0]} {g.span}"


def _distinct(reasons) -> list[str]:
    """``"a, b: text"``: the reasons grouped by what the release does, each subject once, the
    layers of a per-layer tensor as ``{i}`` (``layers.{i}.self_attn.q_norm.weight``)."""
    by_text: dict[str, list[str]] = {}
    for r in reasons:
        subjects = by_text.setdefault(r.text, [])
        if _pattern(r.subject) not in subjects:
            subjects.append(_pattern(r.subject))
    return [f"{', '.join(subjects)}: {text}" for text, subjects in by_text.items()]


def _pattern(name: str) -> str:
    parts = name.split(".")
    return ".".join("{i}" if p.isdigit() else p for p in parts)
