"""What a config's *writer* got wrong, as edits: fixups keyed on the declared build, and the
problems no config edit can fix, for ``migrate`` and ``fix``. The facts (which builds, what
they meant) are :mod:`spec_format.facts.writers`.

Fixups return change records like steps; problems are reported by ``migrate``, ``fix``
and ``validate`` (rules in ``spec_format/rules/version.py``).
"""

from __future__ import annotations

from typing import Any

from spec_format.facts.writers import (  # noqa: F401 - BUG_TYPE re-exported for older callers
    BUG_TYPE,
    DSPARK_ANCHOR_MEANT,
    VERIFIER_ARCHS,
    dflash_off_by_one,
    dspark_anchor_missing,
    known_problems,
    v03_hardcoded_llama,
)
from spec_format.rewrites.migration.records import Editor, Problem, StepOutput

FIXUP_STEP = "era"


# -- fixups -------------------------------------------------------------------------------------
def apply_fixups(
    doc: dict[str, Any], verifier: dict[str, Any] | None = None, *, values: bool = True
) -> StepOutput:
    """Correct what known builds wrote wrong, before any step runs. ``values=False`` keeps
    to making implicit meaning explicit (what ``specfmt fix`` does) and leaves written
    values alone."""
    ed = Editor(doc, FIXUP_STEP)
    bug = dflash_off_by_one(doc) if values else None
    if bug is not None:
        i, written, right = bug
        ed.set(
            f"/speculators_config/proposal_methods/{i}/speculative_tokens",
            right,
            f"written by {doc.get('speculators_version')}: DFlash builds 0.5.0.dev46-dev71 "
            f"wrote block_size ({written}); the anchor is the bonus token, so block_size - 1",
        )
    why = dspark_anchor_missing(doc)
    if why is not None:
        ed.set("/sample_from_anchor", DSPARK_ANCHOR_MEANT, why)
    fill_verifier_architectures(ed, verifier)
    return ed.output()


def fill_verifier_architectures(ed: Editor, verifier: dict[str, Any] | None) -> None:
    archs = ed.get(VERIFIER_ARCHS)
    given = verifier.get("architectures") if isinstance(verifier, dict) else None
    if not (isinstance(given, list) and given and all(isinstance(a, str) for a in given)):
        return
    if archs == []:
        ed.set(
            VERIFIER_ARCHS,
            given,
            "was empty (training of 0.4.0.dev33-0.7.0.dev19 built it from the draft's layer "
            "config); filled from --verifier",
        )
    elif v03_hardcoded_llama(ed.doc) and archs != given:
        ed.set(
            VERIFIER_ARCHS,
            given,
            "0.3.0 training wrote LlamaForCausalLM for every verifier; replaced with the "
            "verifier's own from --verifier",
        )


def problems(doc: dict[str, Any]) -> list[Problem]:
    """Known writer problems in ``doc`` (after fixups), each saying what to do."""
    return [Problem.of(p.rule, p.message, pointer=p.pointer) for p in known_problems(doc)]
