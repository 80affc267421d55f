"""Questions only the training run can answer, and the findings that ask them.

Some values of a draft's config are facts of its training run that no reader, verifier or
release table can supply: which verifier layers it tapped, which mask token it was trained
with, whether its hidden states were captured one layer late. (Whether a converter kept the
decoder layer, M007, is not one: the weights answer it, W001 names the missing tensors.) ``validate`` asks them (the findings below); ``fix``, ``migrate`` and
``convert`` must never answer one with a guess (see :mod:`spec_format.rewrites.fixing`), so a
rewritten config is asked every question the original was, at least as loudly
(``tests/test_questions.py`` runs validate before and after on every example and fixture).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from spec_format.facts import catalog

#: rule id -> which of its findings ask a training question: "aux" (those at the aux layer
#: ids of the type), or None (every finding of the rule)
QUESTION_RULES: dict[str, str | None] = {
    "C001": "aux",  # aux ids absent or null: readers tap default layers
    "X005": None,  # aux ids missing or empty where engines require them
    "X013": None,  # mask_token_id missing
    "M008": None,  # hidden states captured one layer late
}

_RANK = {"info": 0, "warning": 1, "error": 2}


def asked(findings: Iterable[Any], model_type: str | None) -> dict[tuple[str, str], str]:
    """``{(rule, pointer): severity}`` of the findings that ask a training question
    (findings as :class:`~spec_format.base.report.Finding` or their ``to_dict()``)."""
    aux = catalog.aux_key(model_type) if isinstance(model_type, str) else None
    out: dict[tuple[str, str], str] = {}
    for f in findings:
        rule, pointer, severity = (
            (f["rule"], f.get("pointer"), f["severity"])
            if isinstance(f, dict)
            else (f.rule, f.pointer, f.severity.value)
        )
        if rule not in QUESTION_RULES:
            continue
        if QUESTION_RULES[rule] == "aux" and pointer != f"/{aux}":
            continue
        key = (rule, pointer or "")
        if _RANK.get(severity, 0) >= _RANK.get(out.get(key, "info"), 0):
            out[key] = severity
    return out


def unanswered(before: dict[tuple[str, str], str], after: dict[tuple[str, str], str]) -> list:
    """The questions of ``before`` that ``after`` no longer asks as loudly: each
    ``(rule, pointer, severity before, severity after or None)``. A question counts as
    still asked by any question rule at the same pointer."""
    lost = []
    for (rule, pointer), severity in before.items():
        same = [s for (r, p), s in after.items() if p == pointer]
        best = max(same, key=lambda s: _RANK.get(s, 0)) if same else None
        if best is None or _RANK.get(best, 0) < _RANK.get(severity, 0):
            lost.append((rule, pointer, severity, best))
    return lost
