"""Header-only reading of safetensors files, with the safetensors library's own limits.

Everything specfmt checks about weights without ``--deep`` comes from the headers: the
8-byte length, the JSON header, and the shard index of a sharded checkpoint. This module
names the public pieces; each lives in a module of its own:

* :mod:`~spec_format.facts.safetensors_dtypes`: the dtypes, their bit sizes and numpy spellings;
* :mod:`~spec_format.parsers.header_errors`: the error kinds (one per H rule) and ``HeaderError``;
* :mod:`~spec_format.parsers.byte_sources`: random access to a file's bytes, counted;
* :mod:`~spec_format.base.json_cursor`: strict JSON read one member at a time;
* :mod:`~spec_format.parsers.tensor_table`: the tensor list held by column;
* :mod:`~spec_format.parsers.header_reader`: one header, every problem the library would refuse;
* :mod:`~spec_format.parsers.shard_index`: ``model.safetensors.index.json``.

Why our own reader instead of ``safetensors.safe_open``:

* **Header only.** ``safe_open`` maps the whole file and needs a local path; we read
  ``8 + N`` bytes from any :class:`ByteSource` and count them, so the audit of a 16 GB
  checkpoint reads a few kilobytes.
* **Remote byte ranges.** The same code reads the header of a file on the Hugging Face Hub
  through two HTTP range requests (see :mod:`spec_format.parsers.checkpoint`).
* **Precise findings.** The library stops at the first problem with one message
  ("Error while deserializing header: ..."). We run the same checks in the same order but
  report each problem with its own kind (which is a rule id), the tensor it concerns and a
  fix, and we keep going through the per-tensor checks so one bad entry does not hide the
  next. We also enforce what the format's README requires but the library does not (no
  duplicate tensor names).
* **No torch, no numpy.** Config-only validation must stay cheap to import.
"""

from __future__ import annotations

from spec_format.base.json_cursor import MAX_JSON_DEPTH
from spec_format.facts.safetensors_dtypes import DTYPE_BITS, NUMPY_DTYPES, iter_dtypes
from spec_format.parsers.byte_sources import ByteSource, BytesSource, FileSource
from spec_format.parsers.header_errors import FATAL_KINDS, HeaderError, HeaderErrorKind
from spec_format.parsers.header_reader import (
    MAX_HEADER_SIZE,
    MAX_REPORTED_ERRORS,
    Header,
    HeaderScan,
    read_header,
    scan_header,
)
from spec_format.parsers.shard_index import (
    INDEX_NAME,
    MAX_INDEX_SIZE,
    SINGLE_NAME,
    ShardIndex,
    ShardIndexError,
    parse_index,
    safe_shard_name,
)
from spec_format.parsers.tensor_table import TensorInfo, TensorTable

__all__ = [
    "DTYPE_BITS",
    "FATAL_KINDS",
    "INDEX_NAME",
    "MAX_HEADER_SIZE",
    "MAX_INDEX_SIZE",
    "MAX_JSON_DEPTH",
    "MAX_REPORTED_ERRORS",
    "NUMPY_DTYPES",
    "SINGLE_NAME",
    "ByteSource",
    "BytesSource",
    "FileSource",
    "Header",
    "HeaderError",
    "HeaderErrorKind",
    "HeaderScan",
    "ShardIndex",
    "ShardIndexError",
    "TensorInfo",
    "TensorTable",
    "iter_dtypes",
    "parse_index",
    "read_header",
    "safe_shard_name",
    "scan_header",
]
