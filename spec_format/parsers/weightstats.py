"""Cheap per-tensor statistics gathered in the ``--scan-weights`` pass: does a tensor look
untrained?

The NaN/Inf scan (``rules/vocab.py``, D010) streams every float tensor once; it hands each
chunk to :meth:`Observer.observe` of the tensor's observer, and D011 reads the summaries.
Only exact facts are kept, so a trained tensor can never match them:

* **zero**: every element is 0 or -0; **constant**: every element has the same bit pattern
  (a norm weight at its initial 1.0). Checked chunk by chunk until the first chunk that is not constant, which for
  a trained tensor is the first one: the rest of the tensor costs nothing.
* **fingerprint**: a BLAKE2b digest of the first :data:`FINGERPRINT_BYTES` of the tensors
  that share dtype and shape with another tensor of the checkpoint. Two trained tensors
  differ there already; a pair with equal fingerprints is a candidate that D011 confirms by
  comparing the two tensors in full (a byte-identical pair is a layer written twice). The
  scan itself never hashes more than that prefix, so it stays as fast as without it.

Memory is the observers' few bytes each; the chunks are the scan's own buffer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: how much of a tensor the fingerprint covers (two trained tensors differ within a few
#: bytes; a pair that agrees here is compared in full anyway)
FINGERPRINT_BYTES = 1 << 16
#: the bytes of a chunk looked at first when testing it for zeros
_HEAD = 4096
#: tensors that legitimately equal another one (tied or verifier-copied embeddings)
_SHARED = ("embed_tokens", "lm_head")


@dataclass
class Observer:
    """What one tensor's chunks showed; ``observe`` is called once per chunk, in order."""

    itemsize: int
    digest: Any = None  # hashlib object when the tensor has a same-shaped sibling
    hashed: int = 0  # bytes of the tensor's prefix in the digest
    constant: bool = True  # every element so far has the bit pattern ``first``
    zero: bool = True  # every element so far is +0 or -0
    first: bytes | None = None
    elements: int = 0
    _pattern: bytes = field(default=b"", repr=False)  # ``first`` repeated to a chunk's size

    def observe(self, chunk: bytes | memoryview) -> None:
        n = len(chunk)
        if self.digest is not None and self.hashed < FINGERPRINT_BYTES:
            take = min(n, FINGERPRINT_BYTES - self.hashed)
            self.digest.update(chunk[:take])
            self.hashed += take
        self.elements += n // self.itemsize
        if n == 0 or not (self.constant or self.zero):
            return
        if self.constant:
            if self.first is None:
                self.first = bytes(chunk[: self.itemsize])
            # a chunk is constant when it equals the first element repeated (one memcmp)
            if len(self._pattern) != n:
                self._pattern = self.first * (n // self.itemsize)
            if chunk == self._pattern:
                # constant so far: zero exactly when that element is +0 or -0
                self.zero = self.zero and _all_zero(self.first, self.itemsize)
                return
            self.constant = False
            self._pattern = b""
        if self.zero:  # +0 mixed with -0 is still zero; one pass, until a nonzero chunk
            # its first elements tell a trained chunk without a pass over all of it
            self.zero = _all_zero(chunk[:_HEAD], self.itemsize) and _all_zero(chunk, self.itemsize)

    def value(self, dtype: str) -> float | None:
        """The constant value, as a float (None: not constant or not decodable)."""
        if not self.constant or self.first is None:
            return None
        return decode(self.first, dtype)


_UNSIGNED = {1: "u1", 2: "<u2", 4: "<u4", 8: "<u8"}


def _all_zero(chunk: bytes | memoryview, itemsize: int) -> bool:
    """Every element of the chunk is zero but for its sign bit."""
    import numpy as np

    view = _UNSIGNED.get(itemsize)
    if view is None:
        return not any(chunk)
    values = np.frombuffer(chunk, dtype=view)
    magnitude = values.dtype.type((1 << (8 * itemsize - 1)) - 1)
    return not np.bitwise_and(values, magnitude).any()


def decode(raw: bytes, dtype: str) -> float | None:
    """One little-endian element of a float dtype, as a Python float."""
    import struct

    if dtype == "F32":
        return struct.unpack("<f", raw)[0]
    if dtype == "F64":
        return struct.unpack("<d", raw)[0]
    if dtype == "F16":
        return struct.unpack("<e", raw)[0]
    if dtype == "BF16":
        return struct.unpack("<f", b"\0\0" + raw)[0]
    if raw == bytes(len(raw)):
        return 0.0  # zero in every float format
    return None


def observers(tensors: Mapping[str, Any], floats: Iterable[str]) -> dict[str, Observer]:
    """An observer per float tensor (records with ``dtype``, ``shape``, ``nbytes``); the ones
    that share dtype and shape with another tensor also hash their bytes."""
    names = [n for n in floats if n in tensors]
    groups: dict[tuple, list[str]] = {}
    for n in names:
        r = tensors[n]
        if r.nbytes and not any(s in n for s in _SHARED):
            groups.setdefault((r.dtype, tuple(r.shape)), []).append(n)
    siblings = {n for g in groups.values() if len(g) > 1 for n in g}
    out = {}
    import hashlib  # here: a config-only run imports this module but never hashes

    from spec_format.parsers.safetensors import DTYPE_BITS

    for n in names:
        r = tensors[n]
        itemsize = max(1, DTYPE_BITS.get(r.dtype, 8) // 8)
        digest = hashlib.blake2b(digest_size=16) if n in siblings else None
        out[n] = Observer(itemsize, digest)
    return out


#: where the scan leaves its observers on the check context (``ctx.options``)
CACHE = "_weight_observers"


def for_scan(options: dict, tensors: Mapping[str, Any], floats: Iterable[str]) -> dict:
    """The observers of one scan, left in ``options`` for D011; a tensor whose scan fails
    is dropped from them by the caller (``pop``)."""
    options[CACHE] = seen = observers(tensors, floats)
    return seen


def candidate_pairs(seen: Mapping[str, Observer]) -> list[tuple[str, str]]:
    """(first, later) names of tensors whose fingerprints are equal: candidates for a
    byte-identical pair, to confirm in full (constant tensors left out: they are reported
    as constant)."""
    by_digest: dict[bytes, str] = {}
    pairs = []
    for name in sorted(seen):
        o = seen[name]
        if o.digest is None or o.constant or o.zero:
            continue
        key = o.digest.digest()
        if key in by_digest:
            pairs.append((by_digest[key], name))
        else:
            by_digest[key] = name
    return pairs
