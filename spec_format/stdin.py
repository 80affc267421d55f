"""``-`` as an input: a config read from standard input, named ``<stdin>`` in findings."""

from __future__ import annotations

import sys
from pathlib import Path

from spec_format.errors import InputError
from spec_format.jsonload import MAX_JSON_BYTES, Loaded, parse_json_bytes

DASH = "-"
NAME = "<stdin>"


def is_stdin(path: object) -> bool:
    return str(path) == DASH


def read_bytes(limit: int = MAX_JSON_BYTES) -> bytes:
    """Everything on standard input, at most ``limit`` bytes (an InputError beyond)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # pragma: no cover - a text-only stdin replaced by the caller
        data = sys.stdin.read(limit + 1).encode("utf-8", "surrogateescape")
    else:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{NAME}: more than {limit:,} bytes; this is not a config.json")
    return data


def load_json() -> Loaded:
    """Standard input parsed as strictly as a config.json file (see jsonload)."""
    return parse_json_bytes(read_bytes(), Path(NAME))
