"""Where readers disagree about a config, and which value would make them agree.

Every fact comes from the reader table (:mod:`spec_format.facts.readers`, ``schema/readers/``);
this module only compares readings. The *writer* is the speculators release of the file's
format version: its reading is what the author meant. The other readers are the engines the
draft is served or trained with (``--engine``), or, when none is named, the newest release
of each engine the table covers (see :func:`assumed_engines`).

Readings are compared by *meaning*: the value itself, except for a field with a ``scope``
(DFlash causality, applied to sliding-window layers by speculators and to every layer by
vLLM), whose meaning is the outcome per draft layer. A release that never reads a field, or
refuses its value, has no say in a comparison (the refusal rules report refusals; C015/C016
reports flags a release ignores).
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, NamedTuple

from spec_format.base.errors import UsageError
from spec_format.facts import catalog, engine_strings, readers

WRITER = "speculators"


# -- which readers ------------------------------------------------------------------------
def parse_engine(text: str) -> readers.Release:
    """One ``--engine`` string -> the newest covered release it names (a pin, a name, or the
    newest release in a range; a pin newer than the table: the newest covered release). A
    malformed or uncovered string is a usage error naming what is accepted
    (:mod:`spec_format.facts.engine_strings`)."""
    return engine_strings.parse(text).releases[-1]


def parse_engines(texts: Iterable[str] | None) -> tuple[readers.Release, ...]:
    """Every covered release group the ``--engine`` strings name (a range: each group in it),
    each once."""
    out: dict[tuple[str, str], readers.Release] = {}
    for spec in engine_strings.readers_named(engine_strings.parse_all(texts)):
        for release in spec.releases:
            out.setdefault((release.name, release.representative), release)
    return tuple(out.values())


def parse_readers(texts: Iterable[str] | None) -> tuple[readers.Release, ...]:
    """:func:`parse_engines` for the jobs that write what readers read (fix, migrate): an
    SGLang string is a usage error there, since SGLang reads no speculators config."""
    for spec in engine_strings.parse_all(texts):
        if not engine_strings.reads_speculators(spec):
            raise UsageError(
                f"--engine {spec.text!r}: SGLang reads no speculators config, so there is no "
                "default of its to write; name the readers you serve with (vllm, speculators), "
                "and check the pairing with `specfmt validate --engine sglang==X`"
            )
    return parse_engines(texts)


def parse_sglang(texts: Iterable[str] | None) -> tuple:
    """The SGLang releases the ``--engine`` strings name (``sglang.Release``, each once):
    SGLang reads no speculators config, so these judge the pairing, not the config."""
    out: dict[str, Any] = {}
    for spec in engine_strings.parse_all(texts):
        if not engine_strings.reads_speculators(spec):
            for release in spec.releases:
                out.setdefault(release.version, release)
    return tuple(out.values())


def newer_engines(texts: Iterable[str] | None) -> tuple[engine_strings.EngineSpec, ...]:
    """The ``--engine`` strings that pin a release newer than the reader table."""
    return tuple(s for s in engine_strings.parse_all(texts) if s.newer)


@cache
def writer_of(line: str) -> readers.Release | None:
    """The speculators release that writes (and reads back) format ``line``. A line of the
    catalog that no covered release writes yet (one scripts/new_version.py just made, which
    starts with the meaning of the line before it) is read as the newest covered line
    before it, until its release joins the reader table."""
    by_line = readers.release_of_line(WRITER)
    if line not in by_line:
        order = list(catalog.versions())
        earlier = [o for o in order[: order.index(line)] if o in by_line] if line in order else []
        if not earlier:
            return None
        line = earlier[-1]
    return readers.release(WRITER, by_line[line])


@cache
def covered() -> tuple[readers.Release, ...]:
    """One release per file of the reader table (a group's members read alike)."""
    return tuple(readers.release(*rid.split("==")) for rid in readers.representatives())


@cache
@readers.per_table
def assumed_engines() -> tuple[readers.Release, ...]:
    """The newest release of each engine the table covers (every reader but the writer)."""
    newest: dict[str, str] = {}
    for rid in readers.releases():  # sorted by name, then version
        name, version = rid.split("==")
        if name != WRITER:
            newest[name] = version
    return tuple(readers.release(n, v) for n, v in newest.items())


def absent_readings(
    model_type: str, name: str, releases: Sequence[readers.Release] | None = None
) -> str:
    """``"vllm==0.28.0 reads true when absent"``: what the engines (default: the newest
    covered release of each) read when field ``name`` is absent; empty when no row says."""
    views = [
        v
        for r in (assumed_engines() if releases is None else releases)
        if r.serves(model_type) and _counts(v := view(r, model_type, name, {}))
    ]
    return describe(views, " when absent")  # type: ignore[arg-type]


def absent_layer_class(model_type: str, releases: Sequence[readers.Release] | None = None) -> str:
    """``"vllm==0.28.0 builds llama"``: the layer class the engines (default: the newest covered
    release of each) build when ``transformer_layer_config.model_type`` is absent; empty when
    the table does not say."""
    groups: dict[str, list[str]] = {}
    for r in assumed_engines() if releases is None else releases:
        layer = r.data.get("models", {}).get(model_type, {}).get("layer_model_type") or {}
        if r.serves(model_type) and "absent" in layer:
            groups.setdefault(layer["absent"], []).append(r.id)
    return "; ".join(
        f"{', '.join(_runs(who))} build{'s' if len(who) == 1 else ''} {value}"
        for value, who in groups.items()
    )


# -- meanings -----------------------------------------------------------------------------
class View(NamedTuple):
    """One reader's reading of one field."""

    reader: str  # "vllm==0.28.0"
    value: Any  # what the reader acts on, in the field's own terms
    how: str  # "given", "absent", "null", "empty", "ignored", "rejected"
    meaning: Any


def describe(views: Iterable[View], suffix: str = "") -> str:
    """``"a==1 reads true; b==2, b==3 read false"``: readers grouped by what they read."""
    groups: dict[tuple[str, str], list[str]] = {}
    for v in views:
        said = "ignores it" if v.how == "ignored" else f"reads {show(v.value)}{suffix}"
        if isinstance(v.meaning, tuple):
            said += f" ({_per_layer(v.meaning)})"
        groups.setdefault((v.how == "ignored", said), []).append(v.reader)
    parts = []
    for (_, said), who in groups.items():
        if len(who) > 1:
            said = said.replace("reads ", "read ", 1).replace("ignores ", "ignore ", 1)
        parts.append(f"{', '.join(_runs(who))} {said}")
    return "; ".join(parts)


def runs(who: list[str]) -> list[str]:
    """:func:`_runs`: release ids with runs of consecutive table files as ``a to b``."""
    return _runs(who)


def _runs(who: list[str]) -> list[str]:
    """Runs of three or more consecutive table files of one reader as ``a to b``: the vLLM
    groups of the table would otherwise be listed one by one."""
    order = {r.id: i for i, r in enumerate(covered())}
    out: list[str] = []
    run: list[str] = []
    for rid in [*who, ""]:
        if run and rid in order and order[rid] == order.get(run[-1], -2) + 1:
            run.append(rid)
            continue
        if len(run) >= 3:
            out.append(f"{run[0]} to {run[-1]} ({len(run)} release groups)")
        else:
            out += run
        run = [rid] if rid in order else ([] if not rid else [rid])
    return out


def _per_layer(meaning: tuple[str, ...]) -> str:
    """``"causal attention in every layer"``, ``"causal in layers 0, 1 of 3"``..."""
    kinds = set(meaning)
    if len(kinds) == 1:
        return f"{meaning[0]} attention in every layer"
    causal = [str(i) for i, m in enumerate(meaning) if m == "causal"]
    return (
        f"causal attention in layers {', '.join(causal)} of {len(meaning)}, bidirectional elsewhere"
    )


def show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null (unset)"
    return str(value)


def layer_kinds(config: dict[str, Any]) -> tuple[str, ...]:
    """``"sliding"`` or ``"full"`` for each draft layer."""
    tlc = config.get("transformer_layer_config")
    tlc = tlc if isinstance(tlc, dict) else {}
    types = tlc.get("layer_types")
    if isinstance(types, list) and types:
        return tuple(["sliding" if t == "sliding_attention" else "full" for t in types[:4096]])
    n = tlc.get("num_hidden_layers")
    n = n if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 4096 else 1
    sliding = tlc.get("use_sliding_window") is True and tlc.get("sliding_window") is not None
    return ("sliding" if sliding else "full",) * n


def meaning(scope: str | None, value: Any, config: dict[str, Any]) -> Any:
    """What a value does: itself, or for a causality switch the attention of each layer
    (layers outside the switch's scope attend over the whole block)."""
    if scope is None:
        return value
    on = "bidirectional" if value else "causal"
    kinds = layer_kinds(config)
    if scope == "all-layers":
        return tuple(on for _ in kinds)
    if scope == "sliding-layers":
        return tuple(on if k == "sliding" else "bidirectional" for k in kinds)
    raise ValueError(f"reader table: unknown scope {scope!r}")


def view(
    release: readers.Release, model_type: str, name: str, config: dict[str, Any]
) -> View | None:
    """``release``'s reading of field ``name`` (``None``: the table has no row for it)."""
    row = release.row(model_type, name)
    if row is None:
        return None
    reading = release.reading(model_type, name, config)
    acted = None if reading.how in ("ignored", "rejected") else reading.value
    return View(release.id, reading.value, reading.how, meaning(row.get("scope"), acted, config))


def _counts(got: View | None) -> bool:
    """Whether a reading takes part in a comparison: a release that never reads the field,
    or refuses the value (the refusal rules report that), has no say in it."""
    return got is not None and got.how not in ("rejected", "ignored")


_IGNORED: dict[tuple[str, tuple[str, ...]], dict[str, list[str]]] = {}


def ignored_fields(model_type: str, releases: Sequence[readers.Release]) -> dict[str, list[str]]:
    """field -> the releases (of ``releases``) that serve the type but never read it."""
    key = (model_type, tuple(r.id for r in releases))
    if key not in _IGNORED:
        out: dict[str, list[str]] = {}
        for r in releases:
            if r.serves(model_type):
                for name, row in r.fields(model_type).items():
                    if row.get("ignored"):
                        out.setdefault(name, []).append(r.id)
        _IGNORED[key] = out
    return _IGNORED[key]


# -- disputes -----------------------------------------------------------------------------
class Dispute(NamedTuple):
    field: str
    meant: View  # the writer's reading
    others: tuple[View, ...]  # readers whose meaning differs

    @property
    def pointer(self) -> str:
        return f"/{self.field}"

    def describe(self) -> str:
        return describe((self.meant, *self.others))

    @property
    def same_value(self) -> bool:
        """Every reader reads the same value but acts on it differently (a scoped switch
        such as DFlash causality, which releases apply to different layers)."""
        return all(v.value == self.meant.value for v in self.others)

    def headline(self, state: str) -> str:
        """``"F is S and readers act differently on it"``, or, when they read the same value,
        that they apply it differently: a disagreement is never claimed between equal values."""
        if self.same_value:
            return (
                f"{self.field} is {state}: every reader reads {show(self.meant.value)} but "
                "they apply it to different layers"
            )
        return f"{self.field} is {state} and readers act differently on it"


_CASES = ("absent", "null", "empty", "given_rejects", "ignored", "scope")
_CONTESTED: dict[tuple[str, str, str], tuple[str, ...]] = {}


def _contested(writer: readers.Release, engine: readers.Release, model_type: str):
    """Fields whose rows differ between the two releases in some case: only those can ever
    be read differently (rows equal in every case read every config the same)."""
    key = (writer.id, engine.id, model_type)
    if key not in _CONTESTED:
        mine, theirs = writer.fields(model_type), engine.fields(model_type)
        _CONTESTED[key] = tuple(
            name
            for name, row in mine.items()
            if name in theirs and any(row.get(c) != theirs[name].get(c) for c in _CASES)
        )
    return _CONTESTED[key]


def disputes(
    config: dict[str, Any],
    model_type: str,
    writer: readers.Release,
    engines: Sequence[readers.Release],
) -> list[Dispute]:
    """Fields on which an engine that serves the type means something else than the writer."""
    plan_key, contested, values_of, scoped = _plan_for(writer, engines, model_type)
    if not contested:  # no field whose rows differ: no config is read differently
        return []
    # the readings depend only on the fields the rows name (a refusal may name another
    # field of the writer's rows) and, for scoped ones, the layer kinds: configs of a batch
    # that agree on those share one answer
    values = values_of(config)
    if values is None:  # a value of thousands of items: worked out, not kept
        return list(_disputes(config, model_type, writer, contested))
    key = (plan_key, *values)
    if scoped:  # the layer kinds matter only to a scoped field's meaning
        key = (*key, layer_kinds(config))
    found = _DISPUTES.get(key)
    if found is None:
        if len(_DISPUTES) > 4096:
            _DISPUTES.clear()
        _DISPUTES[key] = found = _disputes(config, model_type, writer, contested)
    return list(found)


#: (id of the writer, id of the engines, type) -> (writer, engines, plan): the plan of the
#: release objects a run passes again and again, found without building their ids (both
#: are kept, so their ids stay theirs)
_PLAN_OF: dict[tuple[int, int, str], tuple] = {}


def _plan_for(
    writer: readers.Release, engines: Sequence[readers.Release], model_type: str
) -> tuple[tuple, dict[str, list[readers.Release]], ValuesKey, bool]:
    """:func:`_plan` with the key its answers are kept under and the key of the values its
    fields hold, once per writer, engines and type."""
    memo = (id(writer), id(engines), model_type)
    known = _PLAN_OF.get(memo)
    if known is not None and known[0] is writer and known[1] is engines:
        return known[2]
    plan_key = (writer.id, tuple(e.id for e in engines), model_type)
    plan = _PLANS.get(plan_key)
    if plan is None:
        plan = _PLANS[plan_key] = _plan(writer, engines, model_type)
    serving, contested, names, scoped = plan
    found = ((writer.id, serving, model_type), contested, ValuesKey(names), scoped)
    if type(engines) is tuple:  # a list may change: looked up by its ids every time
        if len(_PLAN_OF) > 256:
            _PLAN_OF.clear()
        _PLAN_OF[memo] = (writer, engines, found)
    return found


_PLANS: dict[tuple[str, tuple[str, ...], str], tuple] = {}  # a few per run


def _plan(
    writer: readers.Release, engines: Sequence[readers.Release], model_type: str
) -> tuple[tuple[str, ...], dict[str, list[readers.Release]], tuple[str, ...], bool]:
    """Per writer, engines and type: the ids of the engines that serve the type, the
    contested fields with the engines that contest each, the fields their readings depend
    on (each once), and whether a row of them has a scope (its meaning depends on the
    layer kinds)."""
    serving = [e for e in engines if e.serves(model_type)]
    contested: dict[str, list[readers.Release]] = {}
    for e in serving:
        for name in _contested(writer, e, model_type):
            contested.setdefault(name, []).append(e)
    # a reading of a contested field reads that field and those its refusals name (a row's
    # ``given_rejects`` may ask another field); the other fields are never read
    names = list(contested)
    rows = [
        row
        for name, others in contested.items()
        for r in (writer, *others)
        if (row := r.row(model_type, name)) is not None
    ]
    for row in rows:
        for entry in row.get("given_rejects", []):
            names += list(entry["when"].get("with", {}))
    scoped = any(row.get("scope") is not None for row in rows)
    return tuple(e.id for e in serving), contested, tuple(dict.fromkeys(names)), scoped


class _Unset:
    """An absent field (its own type, so a key's types tell it from every value)."""


_UNSET = _Unset()
_DISPUTES: dict[tuple, tuple[Dispute, ...]] = {}
_SCALARS = (str, int, float, bool, type(None))
#: the types of values a key holds as they are: equal values of these types read alike
_PLAIN = frozenset((*_SCALARS, _Unset))
#: the most values (scalars, arrays, objects) one cache key holds: the configs a batch shares
#: answers between have a few dozen; a 1.4M-item list would make a key of 1.4M tuples
_KEY_ITEMS = 512
#: the longest marshalled key (a few dozen fields of scalars and short lists take ~200 bytes)
_KEY_BYTES = 4096


class ValuesKey:
    """The values of some top-level fields of a config as a cache key: equal keys for
    configs whose fields hold equal values of the same types (``1``, ``1.0`` and ``true``
    read differently, an absent field differs from every value); ``None`` for values too
    many to key by (:data:`_KEY_ITEMS`). Absent fields are looked up in C."""

    __slots__ = ("names", "_unset")

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        self._unset = (_UNSET,) * len(self.names)

    def __call__(self, config: dict[str, Any]) -> tuple | None:
        # most configs: the values and which are present, serialized in C by marshal,
        # whose format names each type (true, 1 and 1.0 differ) and round-trips, so equal
        # bytes are equal values of equal types; version 2 writes no back-references
        names = self.names
        try:
            code = marshal.dumps(
                (tuple(map(config.get, names)), tuple(map(config.__contains__, names))), 2
            )
        except ValueError:  # an object marshal does not write, or nested too deep
            pass
        else:
            if len(code) <= _KEY_BYTES:
                return (code,)
        # a Python caller's objects, or a long value: typed tuples (three sizes of key, so
        # the kinds never meet)
        values = tuple(map(config.get, names, self._unset))
        types = tuple(map(type, values))
        if _PLAIN.issuperset(types):  # scalars: as they are, with their types
            return values, types
        budget = [_KEY_ITEMS - len(values)]  # an array or object: keyed by _hashable
        try:
            parts = [
                v if t in _PLAIN else _hashable(v, budget)
                for v, t in zip(values, types, strict=True)
            ]
        except _TooBig:
            return None
        return tuple(parts), types, None


class _TooBig(Exception):
    """The values a dispute depends on are too many to key a cache entry by."""


def _hashable(value: Any, budget: list[int]) -> Any:
    """A JSON value as a cache-key part that tells equal-looking values of different types
    apart (``1``, ``1.0`` and ``true`` read differently): scalars with their type, arrays
    and objects as tuples. Raises :class:`_TooBig` past ``budget[0]`` values in all."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    kind = type(value)
    if kind in _SCALARS or value is _UNSET:
        return kind, value
    if kind in (list, dict) and len(value) > budget[0]:
        raise _TooBig
    if kind is list:
        items = tuple(value)
        types = tuple(map(type, items))
        if _PLAIN.issuperset(types):  # scalars (layer ids): as they are, with their types
            budget[0] -= len(items)
            return list, items, types
        return list, tuple([_hashable(v, budget) for v in items])
    if kind is dict:
        return dict, tuple((k, _hashable(v, budget)) for k, v in value.items())
    return kind, repr(value)


def _disputes(config, model_type, writer, contested) -> tuple[Dispute, ...]:
    out = []
    for name, others in contested.items():
        meant = view(writer, model_type, name, config)
        if not _counts(meant):
            continue
        # an engine that never reads the field is C015/C016's (for flags) or no dispute: no
        # value of the field changes what it does
        differ = [
            got
            for e in others
            if _counts(got := view(e, model_type, name, config)) and got.meaning != meant.meaning
        ]
        if differ:
            out.append(Dispute(name, meant, tuple(differ)))
    return tuple(out)


class Reconciliation(NamedTuple):
    field: str
    ok: bool
    value: Any = None  # what to write, when ok
    why: str = ""


def reconcile(
    config: dict[str, Any],
    model_type: str,
    name: str,
    meant: View,
    releases: Sequence[readers.Release],
) -> Reconciliation:
    """A value of ``name`` under which every release in ``releases`` means ``meant``."""
    tried = [meant.value]
    if isinstance(meant.value, bool) or meant.value is None:
        tried += [v for v in (True, False) if v is not meant.value]
    for value in tried:
        trial = {**config, name: value}  # the readers only read it: one key differs
        if all(_agrees(r, model_type, name, trial, meant) for r in releases):
            return Reconciliation(name, True, value)
    views = describe(v for r in releases if (v := view(r, model_type, name, config)) is not None)
    return Reconciliation(
        name,
        False,
        why=f"no value of {name} makes every reader act as {meant.reader} does ({views})",
    )


def _agrees(release, model_type, name, config, meant: View) -> bool:
    got = view(release, model_type, name, config)
    return not _counts(got) or got.meaning == meant.meaning


class Refusal(NamedTuple):
    engine: readers.Release
    pointer: str
    message: str  # the engine's own words
    kind: str  # "type", "verifier", "top-level" or "other"


def _kind(release: readers.Release, pointer: str) -> str:
    if pointer == "/speculators_model_type":
        return "type"
    if pointer == release.data.get("verifier", {}).get("pointer"):
        return "verifier"
    if pointer.count("/") == 1 and pointer[1:] in release.data.get("top_level", {}):
        return "top-level"
    return "other"


def rejections(config: dict[str, Any], engines: Sequence[readers.Release]) -> list[Refusal]:
    """Everything the engines refuse in ``config``, with each engine's own message."""
    return [
        Refusal(e, pointer, message, _kind(e, pointer))
        for e in engines
        for pointer, message in e.rejections(config)
    ]
