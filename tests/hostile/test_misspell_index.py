"""The misspelled-key check's cheap prefilter (spec_format.facts.misspell._index) never drops a
key the full distance would match: generated near-misses of every declared key (one or two
edits, swaps included) and random keys get the answer of a brute-force reference."""

from __future__ import annotations

import json
import random

from hypothesis import given
from hypothesis import strategies as st

from spec_format.facts import catalog, misspell


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
    return misspell.nearest(scored)


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
    """Through :func:`misspell.find`, at the top level and in transformer_layer_config of a
    config of every type: each generated key gets the reference's answer."""
    from spec_format.testing.builder import tiny_config

    rng = random.Random(23)
    line = "0.9"
    checked = found = 0
    for model_type in sorted(catalog.versions()[line].types):
        try:
            base = tiny_config(model_type)
        except (KeyError, ValueError):  # a type the builder does not make
            continue
        for pointer, parts in misspell.OBJECTS[:1] + misspell.OBJECTS[4:]:
            declared = misspell._declared(line, model_type, parts)
            if not declared:
                continue
            ever = misspell._ever_declared(parts, parts == ())
            keys = []
            for known in sorted(declared):
                for _ in range(4):
                    key = known
                    for _ in range(rng.randrange(1, 4)):
                        key = slip(rng, key)
                    keys.append(key)
            keys += [
                "".join(rng.choice("abcdefghij_") for _ in range(rng.randrange(1, 20)))
                for _ in range(100)
            ]
            for key in keys:
                config = json.loads(json.dumps(base))
                obj = config if pointer == "" else config.get(parts[0])
                if not isinstance(obj, dict) or key in obj or key in declared:
                    continue
                obj[key] = 1
                got = [m.known for m in misspell.find(config, model_type, line)
                       if m.parent == pointer and m.key == key]  # fmt: skip
                assert (got[0] if got else ()) == reference(key, declared, ever), key
                checked += 1
                found += bool(got)
    assert checked > 1000 and found > 100, (checked, found)


def test_an_object_of_many_unknown_keys_gets_the_same_answers():
    """All the generated keys in one object (more than PATTERN_AFTER unknown keys: the
    prefilter settles most of them before _close), odd characters included: each key gets
    the reference's answer, and the memo it leaves answers a second config alike."""
    from spec_format.testing.builder import tiny_config

    rng = random.Random(29)
    line, checked, found = "0.9", 0, 0
    odd = ["İ", "ß", "Σ", "\n", "ﬀ", "-", "_", "K"]  # lowering that grows, folds, newlines
    for model_type in sorted(catalog.versions()[line].types):
        try:
            base = tiny_config(model_type)
        except (KeyError, ValueError):
            continue
        for pointer, parts in misspell.OBJECTS[:1] + misspell.OBJECTS[4:]:
            declared = misspell._declared(line, model_type, parts)
            obj = base if pointer == "" else base.get(parts[0])
            if not declared or not isinstance(obj, dict):
                continue
            ever = misspell._ever_declared(parts, parts == ())
            keys = set()
            for known in sorted(declared):
                for _ in range(6):
                    key = known
                    for _ in range(rng.randrange(1, 4)):
                        key = slip(rng, key)
                    if rng.random() < 0.2:
                        i = rng.randrange(len(key) + 1)
                        key = key[:i] + rng.choice(odd) + key[i:]
                    keys.add(key)
            keys -= declared | obj.keys()
            assert len(keys) > misspell.PATTERN_AFTER, (model_type, pointer)
            for _ in range(2):  # the second pass answers from the memo the first left
                config = json.loads(json.dumps(base))
                target = config if pointer == "" else config[parts[0]]
                target.update(dict.fromkeys(keys, 1))
                got = {m.key: m.known for m in misspell.find(config, model_type, line)
                       if m.parent == pointer}  # fmt: skip
                for key in keys:
                    assert got.get(key, ()) == reference(key, declared, ever), key
                checked += len(keys)
                found += len(got)
    assert checked > 2000 and found > 200, (checked, found)


def _full_distance(a: str, b: str) -> int:
    """Optimal string alignment distance over the whole table (no band, no early exit)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(
                d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            )
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


@given(
    a=st.text("ab_c", max_size=10),
    b=st.text("ab_c", max_size=10),
    limit=st.integers(0, 3),
)
def test_the_banded_distance_is_the_full_one_up_to_its_limit(a, b, limit):
    assert misspell._distance(a, b, limit) == min(_full_distance(a, b), limit + 1)
