"""Safetensors container rules (H): the header and the file layout of a checkpoint.

These findings come from :func:`spec_format.checkpoint.load_checkpoint` (which reads only
the headers), not from ``check``: the classes carry the ids, severities and documentation,
and :func:`header_findings` turns the loader's issues into findings. The kind of every
:class:`~spec_format.safetensors.HeaderError` is the ``name`` of one of these rules.

Exit codes: header problems are errors (exit 1) as long as the config could be checked; an
input is unreadable (exit 3) only when nothing at all could be read.
"""

from __future__ import annotations

from spec_format.report import Finding, Severity, cap_per_rule
from spec_format.rules.base import Layer, Profile, Rule


class _HeaderRule(Rule):
    abstract = True
    layer = Layer.HEADER
    since = "0.1.0"
    engine_emitted = True
    requires = frozenset({"weights"})
    references = ("huggingface/safetensors safetensors/src/tensor.rs",)


class HeaderTooSmall(_HeaderRule):
    """The safetensors file is shorter than the 8-byte header length.

    ## What it checks
    The file has at least 8 bytes: the little-endian length of the JSON header.

    ## Why it matters
    A truncated download or an interrupted write leaves a file no reader can open; every loader fails on it with a low-level error.

    ## Example
    A 0-byte `model.safetensors` left behind by a killed `save_pretrained`.

    ## Use instead
    Write or download the file again and compare its size with the source.
    """

    id = "H001"
    name = "header-too-small"
    severity = Severity.ERROR


class HeaderTooLarge(_HeaderRule):
    """The header length field claims more than 100,000,000 bytes.

    ## What it checks
    The 8-byte header length is at most 100 MB, the limit of the safetensors library (`MAX_HEADER_SIZE`).

    ## Why it matters
    The library refuses such files. A huge length is the classic sign of a file that is not safetensors at all (a pickle, an HTML error page, a Git LFS pointer) or of a hostile file that tries to make a reader allocate gigabytes.

    ## Example
    A `model.safetensors` that is really a PyTorch zip archive: its first 8 bytes read as a length of billions.

    ## Use instead
    Convert the weights to safetensors (`safetensors.torch.save_file`) or fetch the real file instead of a pointer or error page.
    """

    id = "H002"
    name = "header-too-large"
    severity = Severity.ERROR


class HeaderLengthOutOfBounds(_HeaderRule):
    """The header length points past the end of the file.

    ## What it checks
    `8 + N` (length field plus header) is not larger than the file.

    ## Why it matters
    The header itself is cut off: the file is truncated, and no reader can parse it.

    ## Example
    A 1 MB prefix of a 16 GB file copied by an interrupted `rsync`.

    ## Use instead
    Download or write the file again.
    """

    id = "H003"
    name = "header-length-out-of-bounds"
    severity = Severity.ERROR


class HeaderNotUtf8(_HeaderRule):
    """The header bytes are not valid UTF-8.

    ## What it checks
    The header decodes as UTF-8, as the format requires.

    ## Why it matters
    The library rejects the file; invalid UTF-8 in a header means corruption.

    ## Example
    A header with a tensor name written in Latin-1 by a hand-rolled writer.

    ## Use instead
    Write the file with a safetensors writer, which always emits UTF-8.
    """

    id = "H004"
    name = "header-not-utf8"
    severity = Severity.ERROR


class HeaderNotJson(_HeaderRule):
    """The header is not valid JSON.

    ## What it checks
    The header parses as JSON (no trailing garbage, no `NaN`/`Infinity` constants, no absurd nesting). Space padding at the end is allowed: writers pad to 8 bytes.

    ## Why it matters
    The library refuses it. Python's `json` module would accept `NaN` and keep going, so a Python reader that skips this check disagrees with every other reader.

    ## Example
    `{"a": {...}}\x00\x00`: a header padded with NUL bytes instead of spaces.

    ## Use instead
    Write the file with a safetensors writer; pad headers with spaces only.
    """

    id = "H005"
    name = "header-not-json"
    severity = Severity.ERROR


class HeaderNotObject(_HeaderRule):
    """The header is JSON but not an object.

    ## What it checks
    The header's top-level value is a JSON object mapping tensor names to entries.

    ## Why it matters
    Nothing else can be read from a header that is an array or a string; the library refuses it.

    ## Example
    `[]` as the header of an empty file written by a buggy converter.

    ## Use instead
    An empty safetensors file has the header `{}`.
    """

    id = "H006"
    name = "header-not-object"
    severity = Severity.ERROR


class DuplicateTensorName(_HeaderRule):
    """A tensor name (or `__metadata__`) appears twice in the header.

    ## What it checks
    Every key of the header object is unique.

    ## Why it matters
    The format forbids duplicates, but JSON parsers disagree on which copy wins (the safetensors library and Python keep the last, others the first), so two readers can load different weights from the same file.

    ## Example
    `{"fc.weight": {...[4096, 12288]...}, "fc.weight": {...[4096, 16384]...}}`

    ## Use instead
    Write the file again from a state dict (whose keys are unique).
    """

    id = "H007"
    name = "duplicate-tensor-name"
    severity = Severity.ERROR


class InvalidTensorEntry(_HeaderRule):
    """A header entry is not an object with `dtype`, `shape` and `data_offsets` of the right types.

    ## What it checks
    Each tensor entry is an object holding a string `dtype`, a list `shape` and `data_offsets`, a list of exactly two non-negative integers.

    ## Why it matters
    The library refuses the whole file when one entry is malformed.

    ## Example
    `"lm_head.weight": {"dtype": "BF16", "shape": [32000, 4096]}` (no `data_offsets`).

    ## Use instead
    Write the file with a safetensors writer.
    """

    id = "H008"
    name = "invalid-tensor-entry"
    severity = Severity.ERROR


class UnknownDtype(_HeaderRule):
    """A tensor's dtype is not one the safetensors format knows.

    ## What it checks
    `dtype` is one of the library's dtypes (BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, C64, the F8/F6/F4 variants). Case matters.

    ## Why it matters
    The library refuses the file. Lower-case names (`bf16`) are a common hand-written mistake.

    ## Example
    `"dtype": "bf16"`

    ## Use instead
    `"dtype": "BF16"`
    """

    id = "H009"
    name = "unknown-dtype"
    severity = Severity.ERROR


class InvalidShape(_HeaderRule):
    """A tensor's shape has a negative, fractional or absurdly large dimension.

    ## What it checks
    Every dimension is a non-negative integer and the tensor's byte count fits in 64 bits.

    ## Why it matters
    Negative or overflowing shapes make readers compute wrong sizes; the library refuses them. An overflowing shape is a classic attack on readers that multiply without checking.

    ## Example
    `"shape": [4096, -1]` or `"shape": [4294967296, 4294967296, 2]`.

    ## Use instead
    Store the real shape; use `[]` for a scalar and `0` for an empty dimension.
    """

    id = "H010"
    name = "invalid-shape"
    severity = Severity.ERROR


class InvalidDataOffsets(_HeaderRule):
    """Tensor data ranges overlap, leave gaps, or end before they begin.

    ## What it checks
    Sorted by `data_offsets`, the tensors start at 0 and each begins where the previous ends.

    ## Why it matters
    Overlapping ranges let two tensors share bytes (a known attack); gaps hide unindexed data. The library refuses both.

    ## Example
    `a: [0, 8]`, `b: [4, 12]`: `b` overlaps `a`.

    ## Use instead
    Write the file with a safetensors writer, which packs tensors back to back.
    """

    id = "H011"
    name = "invalid-data-offsets"
    severity = Severity.ERROR


class TensorSizeMismatch(_HeaderRule):
    """A tensor's byte range does not match its shape and dtype.

    ## What it checks
    `end - begin == product(shape) x dtype size`, and sub-byte dtypes (F4, F6) fill whole bytes.

    ## Why it matters
    A reader would read a tensor from the wrong bytes, or refuse the file (the library does).

    ## Example
    `"dtype": "BF16", "shape": [4096, 4096], "data_offsets": [0, 16777216]` (that is 4 bytes per element: F32 data labelled BF16).

    ## Use instead
    Label the dtype the data was written in, or convert the data.
    """

    id = "H012"
    name = "tensor-size-mismatch"
    severity = Severity.ERROR


class InvalidMetadata(_HeaderRule):
    """`__metadata__` is not a map of strings to strings.

    ## What it checks
    `__metadata__`, when present, is an object whose values are all strings (or null).

    ## Why it matters
    The library refuses other values; converters that write numbers there produce files that no reader opens.

    ## Example
    `"__metadata__": {"format": "pt", "total_size": 1234}`

    ## Use instead
    `"__metadata__": {"format": "pt", "total_size": "1234"}`
    """

    id = "H013"
    name = "invalid-metadata"
    severity = Severity.ERROR


class BufferSizeMismatch(_HeaderRule):
    """The tensor data does not end exactly at the end of the file.

    ## What it checks
    `8 + N + end of the last tensor == file size`.

    ## Why it matters
    Less data than the header promises means a truncated file; more means unindexed trailing bytes, which the library refuses because they can hide a second file format (polyglot files).

    ## Example
    A 16 GB checkpoint whose upload stopped at 15.2 GB: the header is intact and names every tensor, the data is not.

    ## Use instead
    Download or write the file again; compare its size with the source.
    """

    id = "H014"
    name = "buffer-size-mismatch"
    severity = Severity.ERROR


class HeaderPadding(_HeaderRule):
    """The header starts with whitespace.

    ## What it checks
    The header begins with `{`. (Trailing space padding is normal: writers pad the header to a multiple of 8 bytes.)

    ## Why it matters
    The safetensors library accepts leading whitespace, but the format says a header must begin with `{` and stricter readers (other languages, newer releases) refuse it.

    ## Example
    A header written as `"   {...}"` by a hand-rolled writer.

    ## Use instead
    Write the file with a safetensors writer.
    """

    id = "H015"
    name = "header-padding"
    severity = Severity.INFO


class WeightsFileUnreadable(_HeaderRule):
    """A weights file cannot be opened: missing, a symlink loop, a dangling symlink, not a regular file, no permission, or an HTTP error.

    ## What it checks
    Every safetensors file the checkpoint uses can be opened and read.

    ## Why it matters
    Nothing can be checked about weights that cannot be read, and every engine fails to load them.

    ## Example
    `model.safetensors -> model.safetensors` (a symlink to itself), or a FIFO named `model.safetensors`.

    ## Use instead
    Replace the link with the real file or a link to it; fix permissions.
    """

    id = "H016"
    name = "weights-file-unreadable"
    severity = Severity.ERROR


class InvalidShardIndex(_HeaderRule):
    """`model.safetensors.index.json` cannot be used.

    ## What it checks
    The index is JSON with a `weight_map` object whose values are plain file names ending in `.safetensors` in the checkpoint directory.

    ## Why it matters
    Sharded checkpoints are loaded through the index; a broken index means no engine loads the checkpoint. A shard name with a path (`../x.safetensors`) would read outside the checkpoint.

    ## Example
    `{"weight_map": {"fc.weight": "../other/model.safetensors"}}`

    ## Use instead
    Write the index with `save_pretrained` (or `huggingface_hub.split_torch_state_dict_into_shards`).
    """

    id = "H017"
    name = "invalid-shard-index"
    severity = Severity.ERROR


class MissingShard(_HeaderRule):
    """The index maps tensors to a shard file that is not in the checkpoint.

    ## What it checks
    Every shard the index names exists.

    ## Why it matters
    Loading fails (or, with lenient loaders, the tensors stay randomly initialised), usually because an upload skipped a file.

    ## Example
    `weight_map` points at `model-00002-of-00002.safetensors`, and only the first shard was uploaded.

    ## Use instead
    Upload the missing shard, or write the checkpoint again.
    """

    id = "H018"
    name = "missing-shard"
    severity = Severity.ERROR


class TensorNotInShard(_HeaderRule):
    """The index maps a tensor to a shard whose header does not hold it.

    ## What it checks
    Every tensor of `weight_map` is in the shard it points at.

    ## Why it matters
    Readers that follow the index look for the tensor in the wrong file and fail, or skip it.

    ## Example
    The index says `fc.weight -> model-00001-of-00002.safetensors`, but the tensor was written to shard 2.

    ## Use instead
    Write the index again from the shards' headers.
    """

    id = "H019"
    name = "tensor-not-in-shard"
    severity = Severity.ERROR


class DuplicateTensorAcrossShards(_HeaderRule):
    """The same tensor name is stored in two shards.

    ## What it checks
    Each tensor is stored in exactly one shard.

    ## Why it matters
    Which copy wins depends on the reader's load order, so two engines can serve different weights.

    ## Example
    `lm_head.weight` in both shards after a partial re-save.

    ## Use instead
    Remove the stale copy and write the index again.
    """

    id = "H020"
    name = "duplicate-tensor-across-shards"
    severity = Severity.ERROR


class UnindexedTensor(_HeaderRule):
    """A shard holds a tensor that the index does not list.

    ## What it checks
    Every tensor in a shard appears in `weight_map`.

    ## Why it matters
    Readers that follow the index never load it, others (which load whole shards) do: the same checkpoint means different things to different engines.

    ## Example
    `verifier_lm_head.weight` left in shard 1 but dropped from the index.

    ## Use instead
    Remove the tensor from the shard or add it to the index.
    """

    id = "H021"
    name = "unindexed-tensor"
    severity = Severity.WARNING


class StraySafetensorsFile(_HeaderRule):
    """A `*.safetensors` file in the checkpoint directory is not part of the weights.

    ## What it checks
    The directory holds only the weight files the checkpoint uses: `model.safetensors`, or the index and its shards.

    ## Why it matters
    Stray files are not read as weights here, but vLLM loads every `*.safetensors` of a directory without an index, so an old copy or an optimizer state breaks serving. A `model.safetensors` next to an index is loaded by transformers and speculators while vLLM loads the shards: two engines serve different weights.

    ## Example
    `model.safetensors` plus `model_old.safetensors` left over from an experiment.

    ## Use instead
    Keep only the weights in the checkpoint directory.
    """

    id = "H022"
    name = "stray-safetensors-file"
    severity = Severity.WARNING


HEADER_RULES: tuple[type[Rule], ...] = (
    HeaderTooSmall,
    HeaderTooLarge,
    HeaderLengthOutOfBounds,
    HeaderNotUtf8,
    HeaderNotJson,
    HeaderNotObject,
    DuplicateTensorName,
    InvalidTensorEntry,
    UnknownDtype,
    InvalidShape,
    InvalidDataOffsets,
    TensorSizeMismatch,
    InvalidMetadata,
    BufferSizeMismatch,
    HeaderPadding,
    WeightsFileUnreadable,
    InvalidShardIndex,
    MissingShard,
    TensorNotInShard,
    DuplicateTensorAcrossShards,
    UnindexedTensor,
    StraySafetensorsFile,
)

#: rule name (= HeaderErrorKind value / CheckpointIssue.rule) -> rule
BY_NAME: dict[str, type[Rule]] = {r.name: r for r in HEADER_RULES}


def header_findings(checkpoint, profile: Profile = Profile.CURRENT) -> list[Finding]:
    """The findings for every issue :func:`load_checkpoint` recorded (capped per rule)."""
    return list(
        cap_per_rule(
            BY_NAME[issue.rule].finding(
                issue.message, issue.file, profile=profile, tensor=issue.tensor
            )
            for issue in checkpoint.issues
        )
    )
