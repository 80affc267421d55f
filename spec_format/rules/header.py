"""Safetensors container rules (H): the header and the file layout of a checkpoint.

These findings come from :func:`spec_format.checkpoint.load_checkpoint` (which reads only
the headers), not from ``check``: the reader names the rule and the parameters of the
message, the classes carry the ids, severities, message templates and documentation, and
:func:`header_findings` turns the loader's issues into findings. The kind of every
:class:`~spec_format.safetensors.HeaderError` is the ``name`` of one of these rules.

Exit codes: header problems are errors (exit 1) as long as the config could be checked; an
input is unreadable (exit 3) only when nothing at all could be read.
"""

from __future__ import annotations

from spec_format.report import Finding, Severity, cap_per_rule
from spec_format.rules.base import Layer, Profile, Rule

_PACKED = (
    "; tensors must be packed back to back from offset 0 without gaps or overlaps. Write the "
    "file again with a safetensors writer."
)


class _HeaderRule(Rule):
    abstract = True
    layer = Layer.HEADER
    engine_emitted = True
    requires = frozenset({"weights"})
    references = ("huggingface/safetensors safetensors/src/tensor.rs",)


class HeaderTooSmall(_HeaderRule):
    """The safetensors file is shorter than the 8-byte header length."""

    id = "H001"
    name = "header-too-small"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "file is {size} byte{s} long, shorter than the 8-byte header length; the file is "
        "truncated or not safetensors, write it again."
    )


class HeaderTooLarge(_HeaderRule):
    """The header length field claims more than 100,000,000 bytes."""

    id = "H002"
    name = "header-too-large"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "header length is {length:,} bytes, over the 100,000,000-byte limit of the "
        "safetensors library; the file is corrupt or not safetensors."
    )


class HeaderLengthOutOfBounds(_HeaderRule):
    """The header length points past the end of the file."""

    id = "H003"
    name = "header-length-out-of-bounds"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "header length is {length:,} bytes but the file has only {rest:,} bytes after the "
        "length field; the file is truncated, download or write it again."
    )


class HeaderNotUtf8(_HeaderRule):
    """The header bytes are not valid UTF-8."""

    id = "H004"
    name = "header-not-utf8"
    since = "0.1.0"
    severity = Severity.ERROR
    template = "header is not valid UTF-8 (byte {position} of the header); the file is corrupt."


class HeaderNotJson(_HeaderRule):
    """The header is not valid JSON."""

    id = "H005"
    name = "header-not-json"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "parse": (
            "header is not valid JSON ({detail}); the file is corrupt or was not written by a "
            "safetensors writer."
        ),
        "strict": (
            "header is not valid JSON for strict parsers ({detail}); the file is corrupt or was "
            "not written by a safetensors writer."
        ),
    }


class HeaderNotObject(_HeaderRule):
    """The header is JSON but not an object."""

    id = "H006"
    name = "header-not-object"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "header is a JSON {found}, not an object mapping tensor names to entries; the file is "
        "not safetensors."
    )


class DuplicateTensorName(_HeaderRule):
    """A tensor name (or `__metadata__`) appears twice in the header."""

    id = "H007"
    name = "duplicate-tensor-name"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "tensor": (
            "tensor name {name!r} appears twice in the header; readers disagree on which entry "
            "wins (the safetensors library keeps the last). Write the file again with unique "
            "names."
        ),
        "metadata": (
            "metadata appears twice in the header; readers disagree on which entry wins (the "
            "safetensors library keeps the last). Write the file again with unique names."
        ),
    }


class InvalidTensorEntry(_HeaderRule):
    """A header entry is not an object with `dtype`, `shape` and `data_offsets` of the right types."""

    id = "H008"
    name = "invalid-tensor-entry"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "not-object": (
            "entry {name!r} is a JSON {found}, not an object with dtype, shape and data_offsets."
        ),
        "repeated": "tensor {name!r} repeats the field {fields}; every field appears once.",
        "missing": (
            "tensor {name!r} has no {fields}; every entry needs dtype, shape and data_offsets."
        ),
        "dtype": 'tensor {name!r}: dtype is a JSON {found}, not a string such as "BF16".',
        "offsets": (
            "tensor {name!r}: data_offsets must be two non-negative integers [begin, end], "
            "got {found}."
        ),
    }


class UnknownDtype(_HeaderRule):
    """A tensor's dtype is not one the safetensors format knows."""

    id = "H009"
    name = "unknown-dtype"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "tensor {name!r}: dtype {dtype!r} is not a safetensors dtype{hint}; use one of {known}."
    )


class InvalidShape(_HeaderRule):
    """A tensor's shape has a negative, fractional or absurdly large dimension."""

    id = "H010"
    name = "invalid-shape"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "dimension": (
            "tensor {name!r}: dimension {found} is not a non-negative integer; a shape is a "
            "list of non-negative integers ([] for a scalar)."
        ),
        "not-a-list": (
            "tensor {name!r}: shape is a JSON {found}, not a list; a shape is a list of "
            "non-negative integers ([] for a scalar)."
        ),
        "overflow": (
            "tensor {name!r}: shape {shape} of {dtype} overflows a 64-bit byte count; the "
            "header is corrupt."
        ),
    }


class InvalidDataOffsets(_HeaderRule):
    """Tensor data ranges overlap, leave gaps, or end before they begin."""

    id = "H011"
    name = "invalid-data-offsets"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "reversed": (
            "tensor {name!r}: data_offsets [{begin}, {end}] ends ({end}) before it begins "
            "({begin})" + _PACKED
        ),
        "overlap": (
            "tensor {name!r}: data_offsets [{begin}, {end}] starts at {begin}, inside the "
            "previous tensor (which ends at {position})" + _PACKED
        ),
        "gap": (
            "tensor {name!r}: data_offsets [{begin}, {end}] starts at {begin}, leaving a gap "
            "after the previous tensor (which ends at {position})" + _PACKED
        ),
    }


class TensorSizeMismatch(_HeaderRule):
    """A tensor's byte range does not match its shape and dtype."""

    id = "H012"
    name = "tensor-size-mismatch"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "sub-byte": (
            "tensor {name!r}: {numel} elements of {dtype} ({bits} bits each) do not fill whole "
            "bytes; sub-byte tensors need an element count that ends on a byte boundary."
        ),
        "span": (
            "tensor {name!r}: shape {shape} of {dtype} needs {need:,} bytes but data_offsets "
            "[{begin}, {end}] span {span:,}; shape, dtype and offsets disagree, write the file "
            "again."
        ),
    }


class InvalidMetadata(_HeaderRule):
    """`__metadata__` is not a map of strings to strings."""

    id = "H013"
    name = "invalid-metadata"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "__metadata__ must map strings to strings ({found}); store numbers and lists as "
        "strings, e.g. json.dumps(value)."
    )


class BufferSizeMismatch(_HeaderRule):
    """The tensor data does not end exactly at the end of the file."""

    id = "H014"
    name = "buffer-size-mismatch"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "truncated": (
            "the tensors need {need:,} bytes of data but the file holds only {have:,} after the "
            "header; the file is truncated, download or write it again."
        ),
        "trailing": (
            "{extra:,} byte{s} after the last tensor are not covered by any entry; the "
            "safetensors library refuses such files (they can hide a second file format). "
            "Write the file again."
        ),
        "short-read": "{name}: file ended after {got} of {want} bytes",
        "inside-tensor": "{name}: file ended inside the tensor",
        "inside-element": "{name}: file ended inside an element",
    }


class HeaderPadding(_HeaderRule):
    """The header starts with whitespace."""

    id = "H015"
    name = "header-padding"
    since = "0.1.0"
    severity = Severity.INFO
    template = (
        "the header starts with whitespace; the safetensors library accepts it, but the format "
        "says a header begins with '{{' and stricter readers refuse it. Write the file again "
        "with a safetensors writer."
    )


class WeightsFileUnreadable(_HeaderRule):
    """A weights file cannot be opened: missing, a symlink loop, a dangling symlink, not a regular file, no permission, or an HTTP error."""

    id = "H016"
    name = "weights-file-unreadable"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "loop": "{name} is a symlink loop; point it at the real safetensors file.",
        "dangling": "{name} is a dangling symlink; point it at the real safetensors file.",
        "missing": "{name} does not exist.",
        "permission": "{name} cannot be read (permission denied); fix its permissions.",
        "os": "{name} cannot be read: {reason}.",
        "not-a-file": (
            "{name} is {what}, not a regular file; replace it with the safetensors file itself "
            "(or a symlink to one)."
        ),
        "http": "{url}: the server answered HTTP {status} to a range request.",
        "no-size": "{url}: the server did not say how large the file is.",
        "fetch": "{url}: cannot be fetched ({error}).",
        "budget": "{url}: {error}",
        "too-many-files": (
            "{url}: not fetched: at most {limit:,} safetensors files are read per hf:// "
            "checkpoint (download it and validate the local copy)"
        ),
    }


class InvalidShardIndex(_HeaderRule):
    """`model.safetensors.index.json` cannot be used."""

    id = "H017"
    name = "invalid-shard-index"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "too-large": "{index}: index is {size:,} bytes, over the {limit:,}-byte limit.",
        "not-json": "{index}: index is not valid JSON ({detail}); write it again.",
        "no-weight-map": (
            '{index}: index has no "weight_map" object mapping tensor names to shard files; '
            "write it again with save_pretrained."
        ),
        "bad-entry": (
            "{index}: weight_map entry for {name!r} is {found}; shard names must be plain file "
            "names ending in .safetensors in the checkpoint directory (no paths)."
        ),
        "unreadable": "{index}: {detail}",
        "duplicate-key": (
            "{index}: the key {key} appears more than once in one object; JSON readers "
            "disagree on which copy wins (for a weight_map entry: which shard holds the "
            "tensor). Keep one."
        ),
    }


class MissingShard(_HeaderRule):
    """The index maps tensors to a shard file that is not in the checkpoint."""

    id = "H018"
    name = "missing-shard"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{index} maps {count} tensor{s} (e.g. {example!r}) to {shard}, which is not in the "
        "checkpoint; upload the shard or write the checkpoint again."
    )


class TensorNotInShard(_HeaderRule):
    """The index maps a tensor to a shard whose header does not hold it."""

    id = "H019"
    name = "tensor-not-in-shard"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{index} maps {name!r} to {shard}, but that shard has no such tensor{where}; write "
        "the index again from the shards."
    )


class DuplicateTensorAcrossShards(_HeaderRule):
    """The same tensor name is stored in two shards."""

    id = "H020"
    name = "duplicate-tensor-across-shards"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "tensor {name!r} is stored in both {first} and {shard}; readers keep whichever they "
        "load last. Remove one copy."
    )


class UnindexedTensor(_HeaderRule):
    """A shard holds a tensor that the index does not list."""

    id = "H021"
    name = "unindexed-tensor"
    since = "0.1.0"
    severity = Severity.WARNING
    template = (
        "tensor {name!r} is in {shard} but not in {index}'s weight_map; readers that follow "
        "the index never see it. Add it to the index or remove it from the shard."
    )


class StraySafetensorsFile(_HeaderRule):
    """A `*.safetensors` file in the checkpoint directory is not part of the weights."""

    id = "H022"
    name = "stray-safetensors-file"
    since = "0.1.0"
    severity = Severity.WARNING
    template = {
        "beside-index": (
            "{single} sits next to {index}: transformers and speculators load {single}, vLLM "
            "loads the shards of the index, so the two may serve different weights. Delete "
            "whichever is stale."
        ),
        "no-weights": (
            "stray file {name}: there is no {single} or {index}, so speculators finds no "
            "weights, while vLLM would load every *.safetensors file. Rename it to {single} if "
            "it holds the draft's weights, otherwise move it out."
        ),
        "beside-single": (
            "stray file {name}: it is not the checkpoint's weights, but vLLM loads every "
            "*.safetensors file of a directory without an index and would fail on its tensors. "
            "Move it out of the checkpoint."
        ),
        "unindexed": (
            "stray file {name}: no entry of {index} points at it; it is ignored by the readers "
            "but wastes a download. Move it out of the checkpoint."
        ),
    }


def header_findings(checkpoint, profile: Profile = Profile.CURRENT) -> list[Finding]:
    """The findings for every issue :func:`load_checkpoint` recorded (capped per rule)."""
    from spec_format.rules.registry import by_name

    rules = by_name(Layer.HEADER)  # CheckpointIssue.rule is the name of an H rule
    return list(
        cap_per_rule(
            rules[issue.rule].finding(
                issue.message, issue.file, profile=profile, tensor=issue.tensor
            )
            for issue in checkpoint.issues
        )
    )
