"""What a config's *writer* got wrong, as facts: recognised from the declared build (in build
order, see :func:`spec_format.facts.versions.order_key`) plus the producer (``architectures``).

Some builds wrote files whose keys are fine but whose values mean something else:

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

The rules (``spec_format/rules/version.py``, ``crossfield.py``, ``engines.py``) report these;
:mod:`spec_format.rewrites.migration.eras` turns them into fixups and problems for ``migrate`` and ``fix``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

from spec_format.base.jsonload import json_strings
from spec_format.facts import versions

VERIFIER_ARCHS = "/speculators_config/verifier/architectures"
#: the type whose writers made each known mistake, by the rule that reports it (the rules
#: in spec_format/rules/version.py apply to these types)
BUG_TYPE = {"M005": "dspark", "M006": "dflash", "M007": "eagle3", "M008": "eagle3"}
#: what a dspark writer that left out ``sample_from_anchor`` meant by it
DSPARK_ANCHOR_MEANT = False


class WriterProblem(NamedTuple):
    """A known writer problem no config edit can fix: the rule that reports it, its message
    (None: the rule's template words it) and where."""

    rule: str
    message: str | None
    pointer: str


def declared_build(doc: dict[str, Any]) -> versions.ParsedVersion | None:
    return versions.try_parse(doc.get("speculators_version"))


def _greedy_tokens(doc: dict[str, Any]) -> tuple[int | None, Any]:
    spec = doc.get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    if isinstance(methods, list):
        for i, m in enumerate(methods):
            if isinstance(m, dict) and m.get("proposal_type", "greedy") == "greedy":
                return i, m.get("speculative_tokens")
    return None, None


def dflash_off_by_one(doc: dict[str, Any]) -> tuple[int, int, int] | None:
    """(method index, written, right) when a DFlash file carries the dev46-dev71 bug."""
    if doc.get("speculators_model_type") != BUG_TYPE["M006"] or "sample_from_anchor" in doc:
        return None
    if not versions.in_range(declared_build(doc), "0.5.0.dev46", "0.5.0.dev71"):
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
    declared = declared_build(doc)
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


def v03_hardcoded_llama(doc: dict[str, Any]) -> bool:
    """Trained by 0.3.0.dev37 ... 0.4.0.dev32 (both ends included: the 0.4.0 dev builds up
    to dev32 still wrote LlamaForCausalLM; dev33 on wrote [])."""
    return "Eagle3DraftModel" in json_strings(doc.get("architectures")) and versions.in_range(
        declared_build(doc), "0.3.0.dev37", "0.4.0.dev32"
    )


#: the rope every EAGLE-3 draft layer config of speculators 0.2-0.5 training carried, whatever
#: the verifier's: theta 10000, no scaling (the draft was trained with it)
TRAINED_ROPE_LINES = ("0.2", "0.3", "0.4", "0.5")
TRAINED_ROPE_THETA = 10000.0


def trained_with_default_rope(doc: dict[str, Any], theta: float | None, rescales: bool) -> bool:
    """The draft's rope is the one its writer's training always used (so the draft was
    trained with it, and serving it so matches training, whatever the verifier's)."""
    declared = declared_build(doc)
    return (
        declared is not None
        and declared.line in TRAINED_ROPE_LINES
        and theta == TRAINED_ROPE_THETA
        and not rescales
    )


def _verifier_archs(doc: dict[str, Any]) -> Any:
    spec = doc.get("speculators_config")
    verifier = spec.get("verifier") if isinstance(spec, dict) else None
    return verifier.get("architectures") if isinstance(verifier, dict) else None


def known_problems(doc: dict[str, Any]) -> list[WriterProblem]:
    """Known writer problems in ``doc`` (after fixups), each saying what to do; ``message``
    None means the rule's own template words it.

    Worked out once per combination of the values it reads (a batch has a handful), when
    they have the usual shapes: strings, lists of strings, null."""
    key = _problems_key(doc)
    if key is None:
        return _known_problems(doc)
    return list(_known_problems_of(key))


#: the memo keeps keys of short strings only (a hostile config's 10 MB names are not kept)
_KEY_TEXT = 128
_KEY_ITEMS = 8


def _strings_or_none(value: Any) -> tuple[str, ...] | None | bool:
    """``value`` as a key part: None, or a tuple for a short list of short strings; False
    (no key) for any other value."""
    if value is None:
        return None
    if value.__class__ is not list or len(value) > _KEY_ITEMS:
        return False
    for v in value:
        if v.__class__ is not str or len(v) > _KEY_TEXT:
            return False
    return tuple(value)


def _problems_key(doc: dict[str, Any]) -> tuple | None:
    """Every value :func:`_known_problems` reads, typed (None where one has another shape:
    then nothing is cached)."""
    version = doc.get("speculators_version")
    model_type = doc.get("speculators_model_type")
    if version is not None and (version.__class__ is not str or len(version) > _KEY_TEXT):
        return None
    if model_type.__class__ is not str or len(model_type) > _KEY_TEXT:
        return None
    archs = _strings_or_none(doc.get("architectures"))
    verifier = _strings_or_none(_verifier_archs(doc))
    if archs is False or verifier is False:
        return None
    aux_unset = doc.get("eagle_aux_hidden_state_layer_ids") is None
    return (version, model_type, archs, verifier, aux_unset)


@lru_cache(maxsize=1024)
def _known_problems_of(key: tuple) -> tuple[WriterProblem, ...]:
    version, model_type, archs, verifier, aux_unset = key
    doc: dict[str, Any] = {"speculators_model_type": model_type}
    if version is not None:
        doc["speculators_version"] = version
    if archs is not None:
        doc["architectures"] = list(archs)
    if verifier is not None:
        doc["speculators_config"] = {"verifier": {"architectures": list(verifier)}}
    if not aux_unset:
        doc["eagle_aux_hidden_state_layer_ids"] = [1]
    return tuple(_known_problems(doc))


def _known_problems(doc: dict[str, Any]) -> list[WriterProblem]:
    out: list[WriterProblem] = []
    declared = declared_build(doc)
    model_type = doc.get("speculators_model_type")
    archs = json_strings(doc.get("architectures"))
    if _verifier_archs(doc) == []:
        out.append(
            WriterProblem(
                "C006",
                "speculators_config.verifier.architectures is empty (training of "
                "0.4.0.dev33-0.7.0.dev19 wrote []); readers cannot check the verifier. Pass "
                "--verifier PATH (the verifier's config.json or folder) to fill it",
                VERIFIER_ARCHS,
            )
        )
    elif v03_hardcoded_llama(doc) and _verifier_archs(doc) == ["LlamaForCausalLM"]:
        out.append(WriterProblem("R001", None, VERIFIER_ARCHS))
    if (
        model_type == BUG_TYPE["M007"]
        and "Eagle3Speculator" in archs
        and (
            versions.in_range(declared, "0.2.0.dev20", "0.4.0.post999")
            or versions.in_range(declared, "0.5.0.dev1", "0.5.0.dev13")
        )
    ):
        out.append(
            WriterProblem(
                "M007",
                f"converted by speculators {declared}: converters 0.2.0.dev20-0.4.0 and "
                "0.5.0.dev1-dev13 dropped the midlayer.* -> layers.0.* rename, so EAGLE-3 "
                "checkpoints converted from SafeAILab/NVIDIA midlayer weights have a randomly "
                "initialised decoder layer (acceptance near 0). Re-convert the original "
                "checkpoint with speculators >= 0.4.0.1; a config edit cannot fix the weights",
                "/speculators_version",
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
            WriterProblem(
                "M008",
                f"trained by speculators {declared}: its data generation (0.3-0.4) captured the "
                "hidden state after layer L where readers feed the one entering layer L, so the "
                "draft saw features one layer later than it is served with. Nothing in the "
                "config records this; re-train on data from speculators >= 0.5, or measure "
                "acceptance before serving",
                "/eagle_aux_hidden_state_layer_ids",
            )
        )
    return out
