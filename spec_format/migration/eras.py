"""What a config's *writer* got wrong: fixups keyed on the declared build, and problems
no config edit can fix.

Adjacent-version steps describe how the format changed between releases. Some builds,
though, wrote files whose keys are fine but whose values mean something else, and those
are recognised from the declared ``speculators_version`` (in build order, see
:func:`spec_format.versions.order_key`) plus the producer (``architectures``):

* DFlash drafts written 0.5.0.dev46 … dev71 set ``speculative_tokens = block_size``
  (off by one; the anchor is the bonus token, so ``block_size - 1`` is right);
* DSpark drafts written 0.7.0.dev42 … dev81 have no ``sample_from_anchor`` but were trained
  with the anchor as bonus token, while the field added later defaults to true for dspark;
* EAGLE-3 conversions from ``midlayer.*`` weights with 0.2.0.dev20 … 0.4.0 and
  0.5.0.dev1 … dev13 lost the decoder layer (weights need re-conversion);
* EAGLE-3 drafts trained by 0.3.0.dev37 … 0.5.0.dev16 learned from hidden states captured
  one layer later than their ids say;
* 0.4 … 0.6 training wrote ``verifier.architectures: []`` (and 0.3.0 wrote
  ``["LlamaForCausalLM"]`` for every verifier).

Fixups return change records like steps; problems are reported by ``migrate``, ``fix``
and ``validate`` (rules in ``spec_format/rules/version.py``).
"""

from __future__ import annotations

from typing import Any

from spec_format import versions
from spec_format.jsonload import json_strings
from spec_format.migration.records import Editor, Problem, StepOutput, get

FIXUP_STEP = "era"
VERIFIER_ARCHS = "/speculators_config/verifier/architectures"
#: the type whose writers made each known mistake, by the rule that reports it (the rules
#: in spec_format/rules/version.py apply to these types)
BUG_TYPE = {"M005": "dspark", "M006": "dflash", "M007": "eagle3", "M008": "eagle3"}


def _declared(doc: dict[str, Any]) -> versions.ParsedVersion | None:
    return versions.try_parse(doc.get("speculators_version"))


def _greedy_tokens(doc: dict[str, Any]) -> tuple[int | None, Any]:
    spec = doc.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    if isinstance(methods, list):
        for i, m in enumerate(methods):
            if isinstance(m, dict) and m.get("proposal_type", "greedy") == "greedy":
                return i, m.get("speculative_tokens")
    return None, None


# -- fixups -------------------------------------------------------------------------------------
def dflash_off_by_one(doc: dict[str, Any]) -> tuple[int, int, int] | None:
    """(method index, written, right) when a DFlash file carries the dev46-dev71 bug."""
    if doc.get("speculators_model_type") != BUG_TYPE["M006"] or "sample_from_anchor" in doc:
        return None
    if not versions.in_range(_declared(doc), "0.5.0.dev46", "0.5.0.dev71"):
        return None
    i, tokens = _greedy_tokens(doc)
    block = doc.get("block_size")
    if i is None or not isinstance(block, int) or tokens != block or block < 2:
        return None
    return i, tokens, block - 1


def dspark_anchor_missing(doc: dict[str, Any]) -> str | None:
    """Why a dspark file without ``sample_from_anchor`` means false, or None."""
    if doc.get("speculators_model_type") != BUG_TYPE["M005"] or "sample_from_anchor" in doc:
        return None
    declared = _declared(doc)
    if versions.in_range(declared, "0.7.0.dev42", "0.7.0.dev81"):
        return (
            f"written by {declared} (0.7.0.dev42-dev81), before the field existed: those drafts "
            "were trained with the anchor as bonus token; a 0.7+ reader would assume true"
        )
    return (
        "every release from 0.7.0 writes this key, so a dspark file without it comes from "
        "0.7.0.dev42-dev81 (or a hand edit), whose drafts were trained with the anchor as "
        "bonus token; a 0.7+ reader would assume true"
    )


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
        ed.set("/sample_from_anchor", False, why)
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
    elif _v03_hardcoded_llama(ed.doc) and archs != given:
        ed.set(
            VERIFIER_ARCHS,
            given,
            "0.3.0 training wrote LlamaForCausalLM for every verifier; replaced with the "
            "verifier's own from --verifier",
        )


def _v03_hardcoded_llama(doc: dict[str, Any]) -> bool:
    declared = _declared(doc)
    return (
        declared is not None
        and declared.line == "0.3"
        and "Eagle3DraftModel" in json_strings(doc.get("architectures"))
        and versions.in_range(declared, "0.3.0.dev37", "0.4.0.dev32")
    )


# -- problems a config edit cannot fix -----------------------------------------------------------
def problems(doc: dict[str, Any]) -> list[Problem]:
    """Known writer problems in ``doc`` (after fixups), each saying what to do."""
    out: list[Problem] = []
    declared = _declared(doc)
    model_type = doc.get("speculators_model_type")
    archs = json_strings(doc.get("architectures"))
    if get(doc, VERIFIER_ARCHS) == []:
        out.append(
            Problem.of(
                "C006",
                "speculators_config.verifier.architectures is empty (training of "
                "0.4.0.dev33-0.7.0.dev19 wrote []); readers cannot check the verifier. Pass "
                "--verifier PATH (the verifier's config.json or folder) to fill it",
                pointer=VERIFIER_ARCHS,
            )
        )
    elif _v03_hardcoded_llama(doc) and get(doc, VERIFIER_ARCHS) == ["LlamaForCausalLM"]:
        out.append(Problem.of("R001", pointer=VERIFIER_ARCHS))
    if (
        model_type == BUG_TYPE["M007"]
        and "Eagle3Speculator" in archs
        and (
            versions.in_range(declared, "0.2.0.dev20", "0.4.0.post999")
            or versions.in_range(declared, "0.5.0.dev1", "0.5.0.dev13")
        )
    ):
        out.append(
            Problem.of(
                "M007",
                f"converted by speculators {declared}: converters 0.2.0.dev20-0.4.0 and "
                "0.5.0.dev1-dev13 dropped the midlayer.* -> layers.0.* rename, so EAGLE-3 "
                "checkpoints converted from SafeAILab/NVIDIA midlayer weights have a randomly "
                "initialised decoder layer (acceptance near 0). Re-convert the original "
                "checkpoint with speculators >= 0.4.0.1; a config edit cannot fix the weights",
                pointer="/speculators_version",
            )
        )
    aux = doc.get("eagle_aux_hidden_state_layer_ids")
    if (
        model_type == BUG_TYPE["M008"]
        and "Eagle3DraftModel" in archs
        and aux is None
        and versions.in_range(declared, "0.3.0.dev37", "0.5.0.dev16")
    ):
        out.append(
            Problem.of(
                "M008",
                f"trained by speculators {declared}: its data generation (0.3-0.4) captured the "
                "hidden state after layer L where readers feed the one entering layer L, so the "
                "draft saw features one layer later than it is served with. Nothing in the "
                "config records this; re-train on data from speculators >= 0.5, or measure "
                "acceptance before serving",
                pointer="/eagle_aux_hidden_state_layer_ids",
            )
        )
    return out
