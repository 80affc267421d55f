"""The explicit table of every rule, by stable id.

Ids are never reused: a retired rule stays in ``REDIRECTS`` (old id -> successor, or
``None`` when it has none) so ignore lists and CI configs keep working.
"""

from __future__ import annotations

from functools import cache

from spec_format.rules import (
    consumers,
    crossfield,
    header,
    input,
    schema,
    verifier,
    version,
    vocab,
    weights,
)
from spec_format.rules.base import Layer, Rule

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
    input.InternalError,
    # schema (S)
    schema.MissingModelType,
    schema.UnknownModelType,
    schema.RetiredModelType,
    schema.ThirdPartyConfig,
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
    consumers.ImplicitDefaultDisagreement,
    consumers.LayerModelTypeMissing,
    consumers.NestedKeyDropped,
    consumers.AuxLayerCountNotThree,
    consumers.FeatureIgnoredByOldReaders,
    consumers.VerifierArchitecturesEmpty,
    consumers.VerifierPathNotPortable,
    consumers.TopLevelModelType,
    consumers.ObsoleteKey,
    consumers.AnchorSamplingSupport,
    consumers.TypeNeedsRecentReader,
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
    weights.MissingTensor,
    weights.UnexpectedTensor,
    weights.TensorShapeMismatch,
    weights.FcWidthMismatch,
    weights.LmHeadRowsMismatch,
    weights.EmbedRowsMismatch,
    weights.VocabMapLengthMismatch,
    weights.VocabMapMissing,
    weights.FirstLayerInputWidth,
    weights.LayerCountMismatch,
    weights.DtypeFamilyMismatch,
    weights.MixedFloatDtypes,
    weights.DtypeConfigMismatch,
    weights.VerifierTensorsInCheckpoint,
    weights.Qwen3OProjBias,
    weights.DFlashMaskHidden,
    weights.DSparkMarkovHeadVariant,
    # tensor values (D), --deep / --scan-weights
    vocab.T2dCountMismatch,
    vocab.D2tOutOfRange,
    vocab.D2tNotIncreasing,
    vocab.D2tT2dInconsistent,
    vocab.NonFiniteWeights,
    # config against the verifier (V), --verifier
    verifier.VerifierHiddenSizeMismatch,
    verifier.VerifierVocabMismatch,
    verifier.AuxLayerBeyondVerifier,
    verifier.AuxLayerIsFinalOutput,
    verifier.VerifierAttentionMismatch,
    verifier.VerifierRopeMismatch,
    verifier.VerifierArchitectureMismatch,
)

#: retired rule id -> successor id (or None)
REDIRECTS: dict[str, str | None] = {}

BY_ID: dict[str, type[Rule]] = {r.id: r for r in RULES}


def get(rule_id: str) -> type[Rule]:
    """Look a rule up by id (following redirects); raises KeyError for unknown ids."""
    rule_id = rule_id.upper()
    while rule_id in REDIRECTS and rule_id not in BY_ID:
        nxt = REDIRECTS[rule_id]
        if nxt is None:
            raise KeyError(rule_id)
        rule_id = nxt
    return BY_ID[rule_id]


@cache
def checks_for(layer: Layer) -> tuple[type[Rule], ...]:
    """Rules of one layer that the engine runs through ``check`` (not engine-emitted)."""
    return tuple(r for r in RULES if r.layer is layer and not r.engine_emitted)
