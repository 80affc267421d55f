"""Seeded generator of hostile safetensors files (shared by the property test and fuzz/).

Hypothesis drives the seeds; building the bytes with ``random.Random`` keeps one example
well under a millisecond, so CI can afford tens of thousands of them.
"""

from __future__ import annotations

import json
import random
import struct

import safetensors

from spec_format.parsers.safetensors import DTYPE_BITS

DTYPES = [*DTYPE_BITS, "bf16", "F128", "", "I4"]
NAME_CHARS = "ab.0_\u00e9\U0001f600"
ODD_VALUES = [None, True, 1.0, -0.0, "3", [], {}, 2**64, -1]


def _name(r: random.Random) -> str:
    return "".join(r.choice(NAME_CHARS) for _ in range(r.randint(0, 5)))


def _dim(r: random.Random):
    roll = r.random()
    if roll < 0.85:
        return r.randint(0, 6)
    if roll < 0.95:
        return r.choice([2**32, 2**63, 2**64 - 1, 2**64, -1, -(2**70)])
    return r.choice(ODD_VALUES)


def _entry(r: random.Random, start: int) -> tuple[dict, int]:
    dtype = r.choice(DTYPES) if r.random() < 0.2 else r.choice(list(DTYPE_BITS))
    shape = [_dim(r) for _ in range(r.randint(0, 3))] if r.random() < 0.95 else r.choice(ODD_VALUES)
    honest = isinstance(shape, list) and all(
        isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 64 for d in shape
    )
    n = 1
    for d in shape if honest else []:
        n *= d
    size = n * DTYPE_BITS.get(dtype, 8) // 8 if honest else r.randint(0, 40)
    if r.random() < 0.1:
        size += r.choice([-1, 1])
    offsets: object = [start, start + size]
    if r.random() < 0.08:
        offsets = r.choice(
            [
                [start],
                [start, start + size, 0],
                [-1, size],
                [start + 1, start + size + 1],
                None,
                [1.0, 2.0],
            ]
        )
    entry = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
    if r.random() < 0.05:
        entry.pop(r.choice(sorted(entry)))
    if r.random() < 0.05:
        entry["extra"] = r.choice(ODD_VALUES)
    return entry, start + max(size, 0)


def generated(seed: int) -> bytes:
    """A header of random entries, laid out mostly as a writer would, with some data."""
    r = random.Random(seed)
    header: dict = {}
    pos = 0
    for _ in range(r.randint(0, 6)):
        entry, pos = _entry(r, pos)
        header[_name(r)] = entry
    if r.random() < 0.3:
        header["__metadata__"] = r.choice(
            [{"format": "pt"}, {"n": 1}, None, ["pt"], {_name(r): _name(r)}]
        )
    items = list(header.items())
    r.shuffle(items)
    body = json.dumps(dict(items)).encode()
    if r.random() < 0.05 and items:  # a duplicated key, which dict() would have merged
        dup = json.dumps({items[0][0]: items[0][1]}).encode()[1:-1]
        body = body[:-1] + b", " + dup + b"}"
    if r.random() < 0.02:  # valid JSON, but not an object
        body = json.dumps(r.choice([[], "model", 3, None, [header]])).encode()
    body = (b" " * r.randint(0, 2) if r.random() < 0.05 else b"") + body
    body += b" " * (-len(body) % 8 if r.random() < 0.8 else r.randint(0, 7))
    data = bytes(max(0, pos + r.choice([0, 0, 0, 0, 1, -1])))
    return struct.pack("<Q", len(body)) + body + data


def mutated(seed: int) -> bytes:
    """A generated file with byte-level damage: flips, cuts, insertions, a new length."""
    r = random.Random(seed ^ 0x5EED)
    blob = bytearray(generated(seed))
    for _ in range(r.randint(1, 4)):
        op = r.choice(["flip", "cut", "insert", "length", "truncate", "json"])
        if op == "flip" and blob:
            blob[r.randrange(len(blob))] = r.randrange(256)
        elif op == "cut" and blob:
            i = r.randrange(len(blob))
            del blob[i : i + r.randint(1, 8)]
        elif op == "insert":
            i = r.randint(0, len(blob))
            blob[i:i] = bytes(r.randrange(256) for _ in range(r.randint(1, 8)))
        elif op == "length" and len(blob) >= 8:
            n = r.choice([r.randint(0, 300), r.randint(0, 2**64 - 1), 100_000_001])
            blob[:8] = struct.pack("<Q", n)
        elif op == "truncate":
            del blob[r.randint(0, len(blob)) :]
        elif op == "json" and len(blob) > 9:
            token = r.choice([b"NaN", b"[[[[", b"\\ud800", b"-0", b"1e400", b'"', b"}", b"\xff"])
            i = r.randint(8, len(blob))
            blob[i:i] = token
    return bytes(blob)


def library_accepts(blob: bytes) -> bool:
    """Whether the safetensors library itself loads ``blob`` (the judge of the header reader)."""
    try:
        safetensors.deserialize(blob)
        return True
    except Exception:
        return False
