"""The misspelled-key check's cheap prefilter (spec_format.misspell._index) never drops a
key the full distance would match: generated near-misses of every declared key (one or two
edits, swaps included) and random keys get the answer of a brute-force reference."""

from __future__ import annotations

import random

from spec_format import catalog, misspell


def reference(key: str, declared: frozenset[str], ever: frozenset[str]) -> tuple[str, ...]:
    """The check without the index: every declared key's distance, as written before."""
    if key in ever or len(key) > 64:
        return ()
    scored = []
    for known in declared:
        if misspell._fold(known) == misspell._fold(key):
            scored.append((0, known))
            continue
        limit = 2 if len(known) >= 12 else 1
        if len(known) < 4 or abs(len(known) - len(key)) > limit:
            continue
        d = misspell._distance(key.lower(), known.lower(), limit)
        if d <= limit:
            scored.append((d, known))
    if not scored:
        return ()
    best = min(d for d, _ in scored)
    return tuple(sorted(k for d, k in scored if d == best))


def slip(rng: random.Random, key: str) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz_-"
    chars = list(key)
    i = rng.randrange(len(chars))
    op = rng.randrange(4)
    if op == 0:
        chars.insert(i, rng.choice(letters))
    elif op == 1 and len(chars) > 1:
        del chars[i]
    elif op == 2:
        chars[i] = rng.choice(letters)
    elif i + 1 < len(chars):
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


def test_the_index_finds_what_the_full_distance_finds():
    rng = random.Random(23)
    line = "0.9"
    entry = catalog.versions()[line]
    checked = 0
    for model_type in sorted(entry.types):
        for _, parts in misspell.OBJECTS:
            declared = misspell._declared(line, model_type, parts)
            if not declared:
                continue
            ever = misspell._ever_declared(parts, parts == ())
            for known in sorted(declared):
                for _ in range(6):
                    key = known
                    for _ in range(rng.randrange(1, 4)):
                        key = slip(rng, key)
                    assert misspell._close(key, declared, ever) == reference(key, declared, ever), (
                        key
                    )
                    checked += 1
            for _ in range(200):
                key = "".join(rng.choice("abcdefghij_") for _ in range(rng.randrange(1, 20)))
                assert misspell._close(key, declared, ever) == reference(key, declared, ever)
    assert checked > 1000
