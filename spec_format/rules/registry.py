"""The rule registry: the contract of every rule id.

``RULES`` is the one table of live rules, in the order layers run. Each id maps to an
:class:`Entry`: its status (``stable``, ``preview``, or ``removed``), the rule class, and
the format release ``since`` which the rule exists (an attribute of the class itself).
Ids are never reused: a removed rule stays in ``REMOVED`` with the id that replaced it, so
ignore lists and CI configs keep working and ``specfmt explain OLD`` shows the redirect.
Per-layer views (:func:`by_layer`, :func:`checks_for`) are derived from ``RULES``; no
module lists its rules a second time.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from functools import cache
from typing import NamedTuple

from spec_format.base.errors import UsageError
from spec_format.rules import (
    base_models,
    consumers,
    crossfield,
    engine_weights,
    engines,
    header,
    input,
    pairing,
    relations,
    rewrite,
    rootcause,
    schema,
    untrained,
    verifier,
    verifier_serving,
    version,
    vocab,
    weights_consumers,
    weights_dtypes,
    weights_presence,
    weights_shapes,
    weights_vocab_maps,
)
from spec_format.rules.base import LAYER_PREFIX, Layer, Rule, Stability

RULES: tuple[type[Rule], ...] = (
    # input (I), emitted while reading files
    input.PathNotFound,
    input.FileUnreadable,
    input.EmptyFile,
    input.NotUtf8,
    input.Utf8Bom,
    input.InvalidJson,
    input.NotAnObject,
    input.NestedTooDeep,
    input.DuplicateKey,
    input.NonFiniteNumber,
    input.NoConfigInDirectory,
    input.SpecfmtBug,
    input.WeightsNotFound,
    # schema (S)
    schema.MissingModelType,
    schema.UnknownModelType,
    schema.RetiredModelType,
    schema.ThirdPartyConfig,
    base_models.BaseModelCheckpoint,
    schema.TypeNotInVersion,
    schema.RequiredPropertyMissing,
    schema.WrongType,
    schema.ValueOutOfRange,
    schema.ValueNotAllowed,
    schema.SchemaViolation,
    # cross-field (X)
    crossfield.DefaultProposalMethodUnknown,
    crossfield.NormFlagsExclusive,
    crossfield.SpeculativeTokensBlockMismatch,
    crossfield.DraftVocabExceedsVerifierVocab,
    crossfield.AuxLayerIdsRequired,
    crossfield.AuxLayerIdInvalid,
    crossfield.AuxLayerIdsDuplicate,
    crossfield.AuxLayerIdsUnordered,
    crossfield.LayerModelTypeUnsupported,
    crossfield.DFlashLayerModelTypeIgnored,
    crossfield.MtpNextnLayers,
    crossfield.DtypeConflict,
    crossfield.MaskTokenIdRequired,
    crossfield.MaskTokenOutOfVocab,
    crossfield.LayerTypesLength,
    crossfield.AttentionHeadsInconsistent,
    crossfield.RopeSpellingsDisagree,
    crossfield.AlgorithmMismatch,
    crossfield.LossyAcceptance,
    crossfield.ConvGroupSizeDividesHidden,
    # consumer (C)
    engines.ReadersDisagree,
    consumers.LayerModelTypeMissing,
    consumers.NestedKeyDropped,
    consumers.AuxLayerCountNotThree,
    consumers.VerifierArchitecturesEmpty,
    engines.VerifierNotAHubId,
    engines.TopLevelKeyRefused,
    consumers.ObsoleteKey,
    consumers.AnchorSamplingSupport,
    engines.TypeNotServed,
    engines.EngineRejects,
    engines.AssumedEngineRejects,
    engine_weights.EngineCannotLoadDraft,
    consumers.MisspelledKey,
    engines.EngineIgnoresTrainedFlag,
    engines.AssumedEngineIgnoresTrainedFlag,
    engines.EngineNewerThanTable,
    engines.NoReleaseLoadsDraft,
    engines.EngineReadsNoSpeculatorsConfig,
    # version (M)
    version.VersionStringInvalid,
    version.VersionMissing,
    version.VersionDisagreesWithKeys,
    version.OlderFormat,
    version.DSparkAnchorUnrecorded,
    version.DFlashTokensOffByOne,
    version.ConverterLostDecoderLayer,
    version.HiddenStatesOffByOne,
    # safetensors container (H), emitted by the checkpoint loader
    header.HeaderTooSmall,
    header.HeaderTooLarge,
    header.HeaderLengthOutOfBounds,
    header.HeaderNotUtf8,
    header.HeaderNotJson,
    header.HeaderNotObject,
    header.DuplicateTensorName,
    header.InvalidTensorEntry,
    header.UnknownDtype,
    header.InvalidShape,
    header.InvalidDataOffsets,
    header.TensorSizeMismatch,
    header.InvalidMetadata,
    header.BufferSizeMismatch,
    header.HeaderPadding,
    header.WeightsFileUnreadable,
    header.InvalidShardIndex,
    header.MissingShard,
    header.TensorNotInShard,
    header.DuplicateTensorAcrossShards,
    header.UnindexedTensor,
    header.StraySafetensorsFile,
    # config against the weights (W)
    weights_presence.MissingTensor,
    weights_presence.UnexpectedTensor,
    weights_shapes.TensorShapeMismatch,
    weights_shapes.FcWidthMismatch,
    weights_shapes.LmHeadRowsMismatch,
    weights_shapes.EmbedRowsMismatch,
    weights_vocab_maps.VocabMapLengthMismatch,
    weights_vocab_maps.VocabMapMissing,
    weights_shapes.FirstLayerInputWidth,
    weights_presence.LayerCountMismatch,
    weights_dtypes.DtypeFamilyMismatch,
    weights_dtypes.MixedFloatDtypes,
    weights_dtypes.DtypeConfigMismatch,
    weights_consumers.VerifierTensorsInCheckpoint,
    weights_consumers.Qwen3OProjBias,
    weights_consumers.DFlashMaskHidden,
    weights_consumers.DSparkMarkovHeadVariant,
    relations.TiedHeadShapeDiffers,
    rootcause.ConfigValueContradictsWeights,
    engine_weights.EngineCannotLoadTensors,
    # tensor values (D), --deep / --scan-weights
    vocab.T2dCountMismatch,
    vocab.D2tOutOfRange,
    vocab.D2tNotIncreasing,
    vocab.D2tT2dInconsistent,
    relations.DraftVocabFirstIds,
    vocab.NonFiniteWeights,
    untrained.UntrainedWeights,
    # config against the verifier (V), --verifier
    verifier.VerifierHiddenSizeMismatch,
    verifier.VerifierVocabMismatch,
    verifier.AuxLayerBeyondVerifier,
    verifier.AuxLayerIsFinalOutput,
    verifier.VerifierAttentionMismatch,
    verifier.VerifierRopeMismatch,
    verifier.VerifierArchitectureMismatch,
    pairing.DraftPositionsShorter,
    pairing.VerifierQuantized,
    pairing.VerifierQuantizationUnknown,
    pairing.VerifierDtypeDiffers,
    pairing.VerifierRotated,
    pairing.NamedVerifierDiffers,
    pairing.EngineQuantizesDraft,
    relations.MaskTokenIsSpecial,
    relations.DraftRunDtypeDiffers,
    verifier_serving.VerifierCannotServeDraft,
    verifier_serving.VerifierArchitectureUnknownToEngine,
    verifier_serving.VerifierModelTypeRefused,
    # what migrate and fix report but cannot rewrite (R)
    rewrite.VerifierArchitecturesHardcoded,
    rewrite.MlpUnbuildable,
    rewrite.SlidingWindowIgnored,
    rewrite.RopeParametersInvalid,
    rewrite.AuxLayerIdsImplicit,
    rewrite.AuxLayerIdsAssumed,
)


class Removed(NamedTuple):
    """A retired id: what it was, when it went, and the id that replaced it (or None)."""

    id: str
    name: str
    since: str  # the format release the rule existed since
    removed_in: str  # the specfmt release that removed it
    redirect: str | None
    why: str


#: retired ids, never reused
REMOVED: tuple[Removed, ...] = (
    Removed(
        "C005",
        "feature-ignored-by-old-readers",
        "0.1.0",
        "0.1.0",
        "C016",
        "a note about every release that ignores a trained flag was noise on current configs; "
        "the releases a draft meets are judged by C015 (named with --engine, an error) and "
        "C016 (assumed, a warning)",
    ),
)


class Entry(NamedTuple):
    """One id of the registry: a live rule class, or a removed id with its redirect."""

    id: str
    status: Stability
    since: str
    rule: type[Rule] | None = None
    removed: Removed | None = None

    @property
    def redirect(self) -> str | None:
        return self.removed.redirect if self.removed else None


BY_ID: dict[str, type[Rule]] = {r.id: r for r in RULES}
#: retired id -> successor id (or None); derived from ``REMOVED``
REDIRECTS: dict[str, str | None] = {r.id: r.redirect for r in REMOVED}


def entries() -> dict[str, Entry]:
    """Every id the registry has ever had (live and removed), by id."""
    out = {r.id: Entry(r.id, r.status, r.since, rule=r) for r in RULES}
    for gone in REMOVED:
        out[gone.id] = Entry(gone.id, Stability.REMOVED, gone.since, removed=gone)
    return out


def entry(rule_id: str) -> Entry:
    """The entry of one id (live or removed); raises KeyError for ids never used."""
    rule_id = rule_id.upper()
    if rule_id in BY_ID:
        rule = BY_ID[rule_id]
        return Entry(rule.id, rule.status, rule.since, rule=rule)
    gone = next((r for r in REMOVED if r.id == rule_id), None)
    if gone is None:
        raise KeyError(rule_id)
    return Entry(gone.id, Stability.REMOVED, gone.since, removed=gone)


def get(rule_id: str) -> type[Rule]:
    """Look a rule up by id (following redirects); raises KeyError for unknown ids."""
    rule_id = rule_id.upper()
    seen: set[str] = set()
    while rule_id not in BY_ID and rule_id in REDIRECTS and rule_id not in seen:
        seen.add(rule_id)
        nxt = REDIRECTS[rule_id]
        if nxt is None:
            raise KeyError(rule_id)
        rule_id = nxt
    return BY_ID[rule_id]


@cache
def by_layer(layer: Layer) -> tuple[type[Rule], ...]:
    """Every rule of one layer, in registry order."""
    return tuple(r for r in RULES if r.layer is layer)


@cache
def checks_for(layer: Layer) -> tuple[type[Rule], ...]:
    """Rules of one layer that the engine runs through ``check`` (not engine-emitted)."""
    return tuple(r for r in by_layer(layer) if not r.engine_emitted)


@cache
def by_name(layer: Layer) -> dict[str, type[Rule]]:
    """The rules of one layer by kebab-case name (parsers name H rules by kind)."""
    return {r.name: r for r in by_layer(layer)}


def expand(selectors: Iterable[str], option: str = "--select") -> frozenset[str]:
    """Rule selectors -> the rule ids they name, like ruff's: an id (``C001``; a removed
    id follows its redirect), a prefix (``C`` every consumer rule, ``C00`` C001-C009) or
    ``ALL``. Anything that names no rule is a usage error with the closest ids."""
    from spec_format.base.notes import NOTES  # run notes (N001...) are selected like rules

    out: set[str] = set()
    for raw in selectors:
        text = str(raw).strip().upper()
        if not text:
            continue
        if text == "ALL":
            out.update(BY_ID)
            out.update(NOTES)
            continue
        if text in NOTES:
            out.add(text)
            continue
        if text in BY_ID or text in REDIRECTS:
            if text in BY_ID or REDIRECTS.get(text):  # removed without a successor: nothing
                out.add(get(text).id)
            continue
        known = [*BY_ID, *NOTES]
        matched = [i for i in known if _PREFIX.fullmatch(text) and i.startswith(text)]
        if not matched:
            raise UsageError(_unknown_selector(str(raw).strip(), option))
        out.update(matched)
    return frozenset(out)


_PREFIX = re.compile(r"[A-Z][0-9]{0,2}")


def _unknown_selector(text: str, option: str) -> str:
    upper = text.upper()
    head = f"{option}: unknown rule id {text!r}"
    tail = "`specfmt rules` lists them"
    by_name = {r.name: r.id for r in RULES}
    if text.lower() in by_name:
        return f"{head} (did you mean {by_name[text.lower()]}, the id of that name?); {tail}"
    letters = {i[0] for i in BY_ID} | {"N"}
    if upper[:1] not in letters:
        known = ", ".join(p for p in LAYER_PREFIX.values() if p in letters) + ", N (run notes)"
        return (
            f"{head}: a rule id is a layer letter ({known}) and three digits, such as C001, "
            f"or a prefix of one (C, C00); {tail}"
        )
    # a letter typed for a digit (C0O1, C00l) first, then the ids that look closest
    digits = upper[:1] + upper[1:].translate(str.maketrans("OILS", "0115"))
    close = [digits] if digits in BY_ID else []
    if len(upper) < 16:
        close += [
            c for c in difflib.get_close_matches(upper, list(BY_ID), n=3, cutoff=0.5) if c != digits
        ]
    if close:
        return f"{head} (did you mean {', '.join(close[:3])}?); {tail}"
    layer = sorted(i for i in BY_ID if i[0] == upper[0])
    return f"{head}; the {upper[0]} rules are {layer[0]}-{layer[-1]}; {tail}"
