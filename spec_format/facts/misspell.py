"""Misspelled keys: an unknown key one or two typing slips away from a key that readers read.

Every object of a config allows keys its schema does not declare (Hugging Face configs carry
arbitrary keys, and speculators drops unknown nested ones), so ``norm_befor_residual: true``
is valid JSON Schema, and the reader silently uses its default for ``norm_before_residual``.
A key is *misspelled* when it is declared by no schema of any version or type at that place
(a key of another version, ``torch_dtype`` beside ``dtype``, is not a typo) and is close to
a key the schema of the config's own version and type declares there: the same letters
apart from case and ``_``/``-``, or at most one edit (two for keys of 12 or more
characters; an edit is an insertion, deletion, substitution or swap of neighbours). In
``transformer_layer_config``, where every transformers key is legal, only near-misses of the
keys the readers read (the schema's properties) count, never other unknown keys.

The C014 rule reports them; ``fix`` and ``migrate`` rename a misspelled key to the known one
(keeping its value) when that key is absent and the match is unique, and so never write a
default for a field whose misspelling is present.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any, NamedTuple

from spec_format.facts import catalog, schemas

#: the objects checked: pointer of the object -> schema path parts (``*``: every list item)
OBJECTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ()),
    ("/speculators_config", ("speculators_config",)),
    ("/speculators_config/verifier", ("speculators_config", "verifier")),
    ("/speculators_config/proposal_methods/*", ("speculators_config", "proposal_methods", "0")),
    ("/transformer_layer_config", ("transformer_layer_config",)),
)


class Misspelling(NamedTuple):
    parent: str  # JSON pointer of the object ("" for the top level)
    key: str  # the key as written
    known: tuple[str, ...]  # the declared keys it is close to, closest first
    present: bool  # the (single) known key is present too: nothing to rename

    @property
    def pointer(self) -> str:
        return f"{self.parent}/{_escape(self.key)}"

    @property
    def target(self) -> str | None:
        """The pointer to rename to: one known key, absent from the object; else None."""
        if len(self.known) != 1 or self.present:
            return None
        return f"{self.parent}/{_escape(self.known[0])}"


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def find(config: dict[str, Any], model_type: str, line: str) -> list[Misspelling]:
    """Every misspelled key of ``config`` (type ``model_type``, format ``line``)."""
    out: list[Misspelling] = []
    for place in _checked_objects(line, model_type):
        pointer, path, star, clean = place[0], place[1], place[2], place[6]
        node: Any = config
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if star:  # every object of a list (or the object a "*" key holds)
            if isinstance(node, list):
                parent = pointer[:-2]
                for i, item in enumerate(node):
                    if isinstance(item, dict) and not clean.issuperset(item):
                        out += _slips(f"{parent}/{i}", item, place)
                continue
            node = node.get("*") if isinstance(node, dict) else None
        # most objects: keys seen before, none a slip (one set test)
        if isinstance(node, dict) and not clean.issuperset(node):
            out += _slips(pointer, node, place)
    return out


def _slips(where: str, obj: dict[str, Any], place: tuple) -> list[Misspelling]:
    """The misspelled keys of one object, in its order."""
    pointer, _, _, parts, declared, memo, clean = place
    unknown = obj.keys() - declared  # a set difference, in C
    # many unknown keys (a hostile config brings 300,000): most are settled by the tests
    # _close starts with, without its cache and bookkeeping
    may_be_close = _prefilter(declared) if len(unknown) > PATTERN_AFTER else None
    slips = {}
    for key in unknown:
        close = memo.get(key)
        if close is None:
            close = ()
            if isinstance(key, str) and (may_be_close is None or may_be_close(key)):
                close = _close(key, declared)
                if close and key in _ever_declared(parts, pointer == ""):
                    close = ()  # declared by another version or type: never a typo
            if len(memo) < _MEMO:
                memo[key] = close
                if not close:
                    clean.add(key)
        if close:
            slips[key] = close
    out = []
    for key in obj if slips else ():  # in the object's order
        close = slips.get(key)
        if close:
            present = len(close) == 1 and close[0] in obj
            out.append(Misspelling(where, key, close, present))
    return out


@cache
def _prefilter(declared: frozenset[str]) -> Callable[[str], bool]:
    """A test that is False for a key :func:`_close` finds close to no declared key, by the
    tests it starts with (its folded spelling is no declared key's; :func:`_refused`)."""
    folded, near = _index(declared)

    def may_be_close(key: str) -> bool:
        if len(key) > 64:
            return False
        if _fold(key) in folded:
            return True
        return len(key) in near and not _refused(declared, len(key), key.lower())

    return may_be_close


#: the unknown keys remembered per object of a (line, type) with what they are a slip of
#: (the keys transformers writes recur in every config of a batch); bounded, since hostile
#: inputs bring any number of distinct keys
_MEMO = 4096


@lru_cache(maxsize=256)  # per (line, type): what every config of the pair is checked against
def _checked_objects(line: str, model_type: str) -> tuple[tuple, ...]:
    """The objects of :data:`OBJECTS` whose schema declares keys: each pointer with the keys
    that lead to it and whether it stands for every item of a list there (a last ``*``),
    its schema path, the declared keys, the memo of the unknown keys seen there (key ->
    the keys it is a slip of) and the keys known to be no slip there (the declared ones
    and those of the memo that are none): an object of those keys only has nothing to
    report, found by one set test."""
    entry = catalog.versions().get(line)
    if entry is None or model_type not in entry.types:
        return ()
    out = []
    for p, parts in OBJECTS:
        declared = _declared(line, model_type, parts)
        if declared:
            path = tuple(p[1:].split("/")) if p else ()
            star = path[-1:] == ("*",)  # only a last step may be "*"
            out.append((p, path[:-1] if star else path, star, parts, declared, {}, set(declared)))
    return tuple(out)


def _declared(line: str, model_type: str, parts: tuple[str, ...]) -> frozenset[str]:
    """The properties the schema declares at ``parts``, with those of every branch of a
    ``oneOf``/``anyOf``/``allOf`` there (proposal methods are one per proposal type)."""
    return schemas.declared_names(line, model_type, parts)


@cache
def _ever_declared(parts: tuple[str, ...], top: bool) -> frozenset[str]:
    """Keys some schema of any version and type declares at ``parts`` (and, at the top
    level, the serialization noise C009 reports): never a typo."""
    names: set[str] = set(catalog.noise_keys()) if top else set()
    for line, entry in catalog.versions().items():
        for model_type in entry.types:
            names |= _declared(line, model_type, parts)
    return frozenset(names)


@lru_cache(maxsize=1 << 16)  # bounded: hostile inputs bring any number of distinct keys
def _close(key: str, declared: frozenset[str]) -> tuple[str, ...]:
    """The declared keys ``key`` is a slip away from, closest first (cached: unknown keys
    such as transformers' own recur in every config). The caller drops the match when some
    other version or type declares ``key`` (asked only then: that reads every schema)."""
    if len(key) > 64:
        return ()
    folded, near = _index(declared)
    same = folded.get(_fold(key), ())
    scored = [(0, known) for known in same]
    lower = key.lower()
    entries = near.get(len(key), ())
    if entries and _refused(declared, len(key), lower):
        entries = ()  # no piece of any known key of this length intact: none is near
    for known, low, limit, windows in entries:
        if known in same:
            continue
        if not any(lower.find(*window) >= 0 for window in windows):  # none intact: too far
            continue
        d = _distance(lower, low, limit)
        if d <= limit:
            scored.append((d, known))
    return nearest(scored)


def nearest(scored: list[tuple[int, str]]) -> tuple[str, ...]:
    """The keys of the smallest distance among (distance, key) pairs, sorted."""
    if not scored:
        return ()
    best = min(d for d, _ in scored)
    return tuple(sorted(k for d, k in scored if d == best))


@cache
def _index(declared: frozenset[str]):
    """The declared keys by folded spelling, and those near-misses may reach (4 or more
    characters) with their edit limit and ``2 * limit + 1`` pieces, listed under every key
    length within that limit (a key is compared only with the known keys of its length).

    The pieces are a cheap necessary test before the distance: each edit (a swap of
    neighbours included) breaks at most two pieces of the known key, so a key within
    ``limit`` edits holds at least one piece unbroken, and at most ``limit`` characters
    from where the known key has it (only insertions and deletions before it move it):
    each entry holds its pieces as ``(piece, start, end)`` windows for ``str.find``.
    Unknown keys of a hostile config (300,000 of them) are mostly refused by
    :func:`_any_piece`, in C, without the quadratic distance. Nothing is compiled here: a
    run of one config asks about a few lengths."""
    folded: dict[str, tuple[str, ...]] = {}
    near: dict[int, list] = {}  # by the key lengths within each known key's edit limit
    for known in sorted(declared):
        folded[_fold(known)] = (*folded.get(_fold(known), ()), known)
        if len(known) < 4:
            continue
        limit = 2 if len(known) >= 12 else 1
        low = known.lower()
        windows = tuple(
            (piece, max(0, at - limit), at + len(piece) + limit)
            for piece, at in _pieces(low, 2 * limit + 1)
        )
        entry = (known, low, limit, windows)
        for length in range(len(known) - limit, len(known) + limit + 1):
            near.setdefault(length, []).append(entry)
    return folded, {length: tuple(entries) for length, entries in near.items()}


#: keys of one length asked about before the pieces of its known keys are searched as one
#: pattern (compiling it costs about a millisecond: a config brings a few unknown keys, a
#: hostile one hundreds of thousands)
PATTERN_AFTER = 32
_ASKED: dict[tuple[frozenset[str], int], int] = {}


def _refused(declared: frozenset[str], length: int, lower: str) -> bool:
    """True when one search says no piece of a known key near ``length`` is intact in
    ``lower`` (False: each known key's pieces are tested on their own)."""
    asked = _ASKED.get((declared, length), 0)
    if asked < PATTERN_AFTER:
        _ASKED[(declared, length)] = asked + 1
        return False
    return not _any_piece(declared, length).search(lower)


@lru_cache(maxsize=4096)
def _any_piece(declared: frozenset[str], length: int) -> re.Pattern[str]:
    """Every piece of the known keys near ``length`` as one pattern (compiled when a key of
    that length is first asked about): most unknown keys hold none of them, and one search
    in C then settles all the known keys of the length."""
    entries = _index(declared)[1][length]
    return re.compile("|".join(sorted({re.escape(w[0]) for e in entries for w in e[3]})))


def _pieces(text: str, count: int) -> tuple[tuple[str, int], ...]:
    """``text`` cut into ``count`` contiguous pieces of near-equal length, each with where
    it starts."""
    bounds = [len(text) * i // count for i in range(count + 1)]
    return tuple((text[a:b], a) for a, b in zip(bounds, bounds[1:], strict=False) if b > a)


def _fold(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def _distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (edits and swaps of neighbours), or limit + 1
    once it exceeds ``limit``.

    Only the cells within ``limit`` of the diagonal are computed (Ukkonen's band): a cell
    further out is more than ``limit`` edits away, so it stands as ``limit + 1``, and every
    value is capped there (a value within the limit comes from cells within it, computed
    exactly)."""
    n, m, over = len(a), len(b), limit + 1
    if abs(n - m) > limit:
        return over
    prev2: list[int] = []
    prev = [j if j <= limit else over for j in range(m + 1)]
    for i in range(1, n + 1):
        cur = [over] * (m + 1)
        if i <= limit:
            cur[0] = i
        lowest = cur[0]
        for j in range(max(1, i - limit), min(m, i + limit) + 1):
            value = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                value = min(value, prev2[j - 2] + 1)
            cur[j] = value if value < over else over
            if value < lowest:
                lowest = value
        if lowest > limit:
            return over
        prev2, prev = prev, cur
    return prev[m]


#: the step name of the renames in the reports of ``fix`` and ``migrate``
STEP = "spelling"


def rename(ed, line: str) -> None:
    """Rename each misspelled key of the editor's document to its known key (keeping the
    value) where that key is absent and the match unique; report the others (C014)."""
    model_type = ed.model_type
    if not isinstance(model_type, str):
        return
    for m in find(ed.doc, model_type, line):
        if m.target is None:
            if m.present:
                why = f"{m.key} is a misspelling of {m.known[0]}, which is there too: remove it"
            else:
                why = (
                    f"{m.key} is a misspelling of {' or '.join(m.known)}: rename it to the one "
                    "meant (no default is written for them meanwhile)"
                )
            ed.problem("C014", why, pointer=m.pointer, severity="warning")
            continue
        value = ed.get(m.pointer)
        ed.remove(m.pointer, f"a misspelling of {m.known[0]} (C014), which readers read")
        ed.set(m.target, value, f"renamed from {m.key}, keeping its value")
