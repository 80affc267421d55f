"""Property tests: the header reader never crashes, and agrees with the safetensors library.

More than 10,000 generated and mutated headers per CI run (a few seconds): hypothesis picks
seeds, :mod:`header_gen` builds the bytes. ``fuzz/fuzz_header.py`` runs the same properties
for as long as you let it.
"""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from spec_format.parsers.safetensors import BytesSource, HeaderErrorKind, HeaderScan, scan_header
from spec_format.rules.base import Layer
from spec_format.rules.registry import by_name
from tests.safetensors.header_gen import generated, library_accepts, mutated

SEEDS = st.integers(0, 2**63)


HEADER_RULES = by_name(Layer.HEADER)


def check_properties(blob: bytes) -> HeaderScan:
    source = BytesSource(blob, "model.safetensors")
    scan = scan_header(source)  # must never raise
    assert isinstance(scan, HeaderScan)
    assert scan.header is not None or scan.errors
    for err in scan.errors:
        assert err.message and err.kind.value in HEADER_RULES
    # never more than the header: 8 bytes, plus N when N is in bounds
    if len(blob) >= 8:
        n = struct.unpack("<Q", blob[:8])[0]
        assert source.bytes_read <= 8 + (n if 8 + n <= len(blob) else 0)
    # agreement with the library: what it refuses we refuse; what we accept it accepts
    ours = scan.ok
    theirs = library_accepts(blob)
    if ours:
        assert theirs, "we accept a file the safetensors library refuses"
    if theirs and not ours:
        assert {e.kind for e in scan.errors} <= {HeaderErrorKind.DUPLICATE_TENSOR_NAME}, scan.errors
    return scan


FAST = settings(max_examples=5_000, deadline=None, derandomize=True, database=None)


@FAST
@given(SEEDS)
def test_generated_headers_never_crash_and_agree_with_the_library(seed):
    check_properties(generated(seed))


@FAST
@given(SEEDS)
def test_mutated_headers_never_crash_and_agree_with_the_library(seed):
    check_properties(mutated(seed))


@settings(max_examples=1_000, deadline=None, derandomize=True, database=None)
@given(st.binary(max_size=96))
def test_random_bytes_never_crash(blob):
    check_properties(blob)


def test_the_generator_reaches_every_error_kind():
    """The property tests only mean something if the generator reaches every check."""
    kinds = set()
    accepted = 0
    for seed in range(3_000):
        for blob in (generated(seed), mutated(seed)):
            scan = scan_header(BytesSource(blob))
            kinds |= {e.kind for e in scan.errors}
            accepted += scan.ok
    assert kinds == set(HeaderErrorKind) - {HeaderErrorKind.FILE_UNREADABLE}
    assert accepted > 500  # and it also produces valid files
