"""Safetensors container rules (H): the header and the file layout of a checkpoint.

These findings come from :func:`spec_format.parsers.checkpoint.load_checkpoint` (which reads only
the headers), not from ``check``: the reader names the rule and the parameters of the
message, the classes carry the ids, severities, message templates and documentation, and
:func:`header_findings` turns the loader's issues into findings. The kind of every
:class:`~spec_format.parsers.safetensors.HeaderError` is the ``name`` of one of these rules.

Exit codes: header problems are errors (exit 1) as long as the config could be checked; an
input is unreadable (exit 3) only when nothing at all could be read.
"""

from __future__ import annotations

from spec_format.base.report import Finding, Severity, cap_per_rule
from spec_format.facts.header_messages import TEMPLATES
from spec_format.rules.base import Layer, Profile, Rule


class _HeaderRule(Rule):
    abstract = True
    layer = Layer.HEADER
    engine_emitted = True
    requires = frozenset({"weights"})
    references = ("huggingface/safetensors safetensors/src/tensor.rs",)
    templates = TEMPLATES  # the readers word these messages: the templates live beside them


class HeaderTooSmall(_HeaderRule):
    """The safetensors file is shorter than the 8-byte header length."""

    id = "H001"
    name = "header-too-small"
    since = "0.1.0"
    severity = Severity.ERROR


class HeaderTooLarge(_HeaderRule):
    """The header length field claims more than 100,000,000 bytes."""

    id = "H002"
    name = "header-too-large"
    since = "0.1.0"
    severity = Severity.ERROR


class HeaderLengthOutOfBounds(_HeaderRule):
    """The header length points past the end of the file."""

    id = "H003"
    name = "header-length-out-of-bounds"
    since = "0.1.0"
    severity = Severity.ERROR


class HeaderNotUtf8(_HeaderRule):
    """The header bytes are not valid UTF-8."""

    id = "H004"
    name = "header-not-utf8"
    since = "0.1.0"
    severity = Severity.ERROR


class HeaderNotJson(_HeaderRule):
    """The header is not valid JSON."""

    id = "H005"
    name = "header-not-json"
    since = "0.1.0"
    severity = Severity.ERROR


class HeaderNotObject(_HeaderRule):
    """The header is JSON but not an object."""

    id = "H006"
    name = "header-not-object"
    since = "0.1.0"
    severity = Severity.ERROR


class DuplicateTensorName(_HeaderRule):
    """A tensor name (or `__metadata__`) appears twice in the header."""

    id = "H007"
    name = "duplicate-tensor-name"
    since = "0.1.0"
    severity = Severity.ERROR


class InvalidTensorEntry(_HeaderRule):
    """A header entry is not an object with `dtype`, `shape` and `data_offsets` of the right types."""

    id = "H008"
    name = "invalid-tensor-entry"
    since = "0.1.0"
    severity = Severity.ERROR


class UnknownDtype(_HeaderRule):
    """A tensor's dtype is not one the safetensors format knows."""

    id = "H009"
    name = "unknown-dtype"
    since = "0.1.0"
    severity = Severity.ERROR


class InvalidShape(_HeaderRule):
    """A tensor's shape has a negative, fractional or absurdly large dimension."""

    id = "H010"
    name = "invalid-shape"
    since = "0.1.0"
    severity = Severity.ERROR


class InvalidDataOffsets(_HeaderRule):
    """Tensor data ranges overlap, leave gaps, or end before they begin."""

    id = "H011"
    name = "invalid-data-offsets"
    since = "0.1.0"
    severity = Severity.ERROR


class TensorSizeMismatch(_HeaderRule):
    """A tensor's byte range does not match its shape and dtype."""

    id = "H012"
    name = "tensor-size-mismatch"
    since = "0.1.0"
    severity = Severity.ERROR


class InvalidMetadata(_HeaderRule):
    """`__metadata__` is not a map of strings to strings."""

    id = "H013"
    name = "invalid-metadata"
    since = "0.1.0"
    severity = Severity.ERROR


class BufferSizeMismatch(_HeaderRule):
    """The tensor data does not end exactly at the end of the file."""

    id = "H014"
    name = "buffer-size-mismatch"
    since = "0.1.0"
    severity = Severity.ERROR


class HeaderPadding(_HeaderRule):
    """The header starts with whitespace."""

    id = "H015"
    name = "header-padding"
    since = "0.1.0"
    severity = Severity.INFO


class WeightsFileUnreadable(_HeaderRule):
    """A weights file cannot be opened: missing, a symlink loop, a dangling symlink, not a regular file, no permission, or an HTTP error."""

    id = "H016"
    name = "weights-file-unreadable"
    since = "0.1.0"
    severity = Severity.ERROR


class InvalidShardIndex(_HeaderRule):
    """`model.safetensors.index.json` cannot be used."""

    id = "H017"
    name = "invalid-shard-index"
    since = "0.1.0"
    severity = Severity.ERROR


class MissingShard(_HeaderRule):
    """The index maps tensors to a shard file that is not in the checkpoint."""

    id = "H018"
    name = "missing-shard"
    since = "0.1.0"
    severity = Severity.ERROR


class TensorNotInShard(_HeaderRule):
    """The index maps a tensor to a shard whose header does not hold it."""

    id = "H019"
    name = "tensor-not-in-shard"
    since = "0.1.0"
    severity = Severity.ERROR


class DuplicateTensorAcrossShards(_HeaderRule):
    """The same tensor name is stored in two shards."""

    id = "H020"
    name = "duplicate-tensor-across-shards"
    since = "0.1.0"
    severity = Severity.ERROR


class UnindexedTensor(_HeaderRule):
    """A shard holds a tensor that the index does not list."""

    id = "H021"
    name = "unindexed-tensor"
    since = "0.1.0"
    severity = Severity.WARNING


class StraySafetensorsFile(_HeaderRule):
    """A `*.safetensors` file in the checkpoint directory is not part of the weights."""

    id = "H022"
    name = "stray-safetensors-file"
    since = "0.1.0"
    severity = Severity.WARNING


def header_findings(checkpoint, profile: Profile = Profile.CURRENT) -> list[Finding]:
    """The findings for every issue :func:`load_checkpoint` recorded (capped per rule)."""
    return list(
        cap_per_rule(
            _BY_NAME[issue.rule].finding(
                issue.message, issue.file, profile=profile, tensor=issue.tensor
            )
            for issue in checkpoint.issues
        )
    )


#: the H rules by name: CheckpointIssue.rule is the name of an H rule
_BY_NAME = {rule.name: rule for rule in _HeaderRule.__subclasses__()}
