"""``-`` as an input: a config read from standard input, named ``<stdin>`` in findings.

Read by :func:`spec_format.base.bounded.read_stdin`: the same size limit as a file, and a closed
standard input is a refusal, not a crash."""

from __future__ import annotations

from pathlib import Path

from spec_format.base.bounded import ReadRefused, read_stdin
from spec_format.base.errors import InputError
from spec_format.base.jsonload import MAX_JSON_BYTES, Loaded, Problem, parse_json_bytes

DASH = "-"
NAME = "<stdin>"


def is_stdin(path: object) -> bool:
    return str(path) == DASH


def read_bytes(limit: int = MAX_JSON_BYTES) -> bytes:
    """Everything on standard input, at most ``limit`` bytes (an InputError beyond, or when
    standard input is closed)."""
    try:
        return read_stdin(limit=limit)
    except ReadRefused as refused:
        raise InputError(refused.message) from None


def load_json() -> Loaded:
    """Standard input parsed as strictly as a config.json file (see jsonload); a refused
    read is a fatal problem, as for a file."""
    try:
        raw = read_stdin(limit=MAX_JSON_BYTES)
    except ReadRefused as refused:
        return Loaded(path=Path(NAME), problems=[Problem(refused.kind, refused.message, True)])
    return parse_json_bytes(raw, Path(NAME))
