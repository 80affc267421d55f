"""The wording of every safetensors header and checkpoint layout problem, by the kind the
readers record (:class:`~spec_format.parsers.safetensors.HeaderErrorKind` values and the issue names of
:mod:`spec_format.parsers.checkpoint`). Each kind is the ``name`` of one H rule
(``spec_format/rules/header.py``), which takes its template from here: the readers word their
messages without importing the rule registry. A dict holds one template per variant."""

from __future__ import annotations

from typing import Any

from spec_format.base.wording import fill

_PACKED = (
    "; tensors must be packed back to back from offset 0 without gaps or overlaps. Write the "
    "file again with a safetensors writer."
)

TEMPLATES: dict[str, str | dict[str, str]] = {
    # H001
    "header-too-small": (
        "file is {size} byte{s} long, shorter than the 8-byte header length; the file is "
        "truncated or not safetensors, write it again."
    ),
    # H002
    "header-too-large": (
        "header length is {length:,} bytes, over the 100,000,000-byte limit of the "
        "safetensors library; the file is corrupt or not safetensors."
    ),
    # H003
    "header-length-out-of-bounds": (
        "header length is {length:,} bytes but the file has only {rest:,} bytes after the "
        "length field; the file is truncated, download or write it again."
    ),
    # H004
    "header-not-utf8": (
        "header is not valid UTF-8 (byte {position} of the header); the file is corrupt."
    ),
    # H005
    "header-not-json": {
        "parse": (
            "header is not valid JSON ({detail}); the file is corrupt or was not written by a "
            "safetensors writer."
        ),
        "strict": (
            "header is not valid JSON for strict parsers ({detail}); the file is corrupt or was "
            "not written by a safetensors writer."
        ),
    },
    # H006
    "header-not-object": (
        "header is a JSON {found}, not an object mapping tensor names to entries; the file is "
        "not safetensors."
    ),
    # H007
    "duplicate-tensor-name": {
        "tensor": (
            "tensor name {name!r} appears twice in the header; readers disagree on which entry "
            "wins (the safetensors library keeps the last). Write the file again with unique "
            "names."
        ),
        "metadata": (
            "metadata appears twice in the header; readers disagree on which entry wins (the "
            "safetensors library keeps the last). Write the file again with unique names."
        ),
    },
    # H008
    "invalid-tensor-entry": {
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
    },
    # H009
    "unknown-dtype": (
        "tensor {name!r}: dtype {dtype!r} is not a safetensors dtype{hint}; use one of {known}."
    ),
    # H010
    "invalid-shape": {
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
    },
    # H011
    "invalid-data-offsets": {
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
    },
    # H012
    "tensor-size-mismatch": {
        "sub-byte": (
            "tensor {name!r}: {numel} elements of {dtype} ({bits} bits each) do not fill whole "
            "bytes; sub-byte tensors need an element count that ends on a byte boundary."
        ),
        "span": (
            "tensor {name!r}: shape {shape} of {dtype} needs {need:,} bytes but data_offsets "
            "[{begin}, {end}] span {span:,}; shape, dtype and offsets disagree, write the file "
            "again."
        ),
    },
    # H013
    "invalid-metadata": (
        "__metadata__ must map strings to strings ({found}); store numbers and lists as "
        "strings, e.g. json.dumps(value)."
    ),
    # H014
    "buffer-size-mismatch": {
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
    },
    # H015
    "header-padding": (
        "the header starts with whitespace; the safetensors library accepts it, but the format "
        "says a header begins with '{{' and stricter readers refuse it. Write the file again "
        "with a safetensors writer."
    ),
    # H016
    "weights-file-unreadable": {
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
    },
    # H017
    "invalid-shard-index": {
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
    },
    # H018
    "missing-shard": (
        "{index} maps {count} tensor{s} (e.g. {example!r}) to {shard}, which is not in the "
        "checkpoint; upload the shard or write the checkpoint again."
    ),
    # H019
    "tensor-not-in-shard": (
        "{index} maps {name!r} to {shard}, but that shard has no such tensor{where}; write "
        "the index again from the shards."
    ),
    # H020
    "duplicate-tensor-across-shards": (
        "tensor {name!r} is stored in both {first} and {shard}; readers keep whichever they "
        "load last. Remove one copy."
    ),
    # H021
    "unindexed-tensor": (
        "tensor {name!r} is in {shard} but not in {index}'s weight_map; readers that follow "
        "the index never see it. Add it to the index or remove it from the shard."
    ),
    # H022
    "stray-safetensors-file": {
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
    },
}


def message(kind: str, variant: str | None = None, **params: Any) -> str:
    """The message of one problem of ``kind`` (an H rule's name)."""
    return fill(TEMPLATES[kind], variant, kind, **params)
