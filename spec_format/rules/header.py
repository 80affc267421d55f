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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "file is {size} byte{s} long, shorter than the 8-byte header length; the file is "
        "truncated or not safetensors, write it again."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "header length is {length:,} bytes, over the 100,000,000-byte limit of the "
        "safetensors library; the file is corrupt or not safetensors."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "header length is {length:,} bytes but the file has only {rest:,} bytes after the "
        "length field; the file is truncated, download or write it again."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = "header is not valid UTF-8 (byte {position} of the header); the file is corrupt."


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "header is a JSON {found}, not an object mapping tensor names to entries; the file is "
        "not safetensors."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "tensor {name!r}: dtype {dtype!r} is not a safetensors dtype{hint}; use one of {known}."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "__metadata__ must map strings to strings ({found}); store numbers and lists as "
        "strings, e.g. json.dumps(value)."
    )


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
    since = "0.1.0"
    severity = Severity.INFO
    template = (
        "the header starts with whitespace; the safetensors library accepts it, but the format "
        "says a header begins with '{{' and stricter readers refuse it. Write the file again "
        "with a safetensors writer."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{index} maps {count} tensor{s} (e.g. {example!r}) to {shard}, which is not in the "
        "checkpoint; upload the shard or write the checkpoint again."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{index} maps {name!r} to {shard}, but that shard has no such tensor{where}; write "
        "the index again from the shards."
    )


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
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "tensor {name!r} is stored in both {first} and {shard}; readers keep whichever they "
        "load last. Remove one copy."
    )


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
    since = "0.1.0"
    severity = Severity.WARNING
    template = (
        "tensor {name!r} is in {shard} but not in {index}'s weight_map; readers that follow "
        "the index never see it. Add it to the index or remove it from the shard."
    )


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
