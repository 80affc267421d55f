"""The reader table: what each released reader (speculators, vLLM) makes of a config.

One JSON file per reader release in ``schema/readers/`` (format: ``schema/readers/README.md``,
``reader.schema.json``); every row is checked against the executed release by the
``readers`` test group. Loaded lazily with the standard library only.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache, wraps
from typing import Any, NamedTuple

from spec_format.facts import package_data

HOWS = ("given", "absent", "null", "empty", "ignored", "rejected")
# a Hub repository id: optional namespace, names of [A-Za-z0-9_.-], no "--" or "..",
# not starting or ending with "-" or ".", 96 characters at most
_HUB_NAME = r"(?!.*(--|\.\.))[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
_HUB_ID = re.compile(rf"^(?:{_HUB_NAME}/)?{_HUB_NAME}$")
_MISSING = object()


def per_table(fn):
    """``fn``'s answers kept for the loaded table, by its arguments: for a fact that depends
    only on the table and on a type or a release name, which rules ask per config. A
    reloaded table (``_load.cache_clear()``) starts afresh; unhashable arguments are not
    kept; at most 1,024 answers (a batch names few types; a hostile one, many)."""
    kept: dict = {}
    table: list = [None]

    @wraps(fn)
    def answer(*args):
        loaded = _load()
        if table[0] is not loaded or len(kept) >= 1024:
            kept.clear()
            table[0] = loaded
        try:
            return kept[args]
        except KeyError:
            found = kept[args] = fn(*args)
            return found
        except TypeError:  # unhashable: asked every time
            return fn(*args)

    answer.uncached = fn
    return answer


class Reading(NamedTuple):
    """What a reader behaves as if the field held (in the config field's own terms)."""

    value: Any
    how: str  # one of HOWS: which case of the row decided the value


class Release(NamedTuple):
    name: str
    version: str
    data: dict

    @property
    def id(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def representative(self) -> str:
        """The version whose table file this release shares (its reader source digests the
        same: ``members``, checked by scripts/vllm-digests.py); the executed one."""
        return self.data["version"]

    @property
    def members(self) -> list[str]:
        """Every release this release's table file covers (itself when it lists none)."""
        return sorted(self.data.get("members") or [self.data["version"]], key=_vkey)

    def serves(self, model_type: str) -> bool:
        types = self.data["types"]
        return model_type in types["accepted"] and model_type not in types.get("fails", {})

    def fields(self, model_type: str) -> dict[str, dict]:
        return self.data.get("models", {}).get(model_type, {}).get("fields", {})

    def row(self, model_type: str, name: str) -> dict | None:
        return self.fields(model_type).get(name)

    def reading(self, model_type: str, name: str, config: dict) -> Reading:
        """The value this release reads for ``name`` of ``config`` (a top-level key)."""
        row = self.row(model_type, name)
        if row is None or row.get("ignored"):
            return Reading(None, "ignored")
        value = config.get(name, _MISSING)
        case = _case(value)
        rule = row.get(case) if case != "given" else None
        if case == "empty" and rule is None:
            case, rule = "given", None
        if rule is None:  # given (or a case the row leaves to the given rule)
            for entry in row.get("given_rejects", []):
                if _match(entry["when"], value, config):
                    return Reading(None, "rejected")
            return Reading(value if value is not _MISSING else None, "given")
        if "rejects" in rule:
            return Reading(None, "rejected")
        return Reading(rule["reads"], case)

    def verifier_form(self, value: Any) -> str:
        return verifier_form(value)

    def rejections(self, config: dict) -> list[tuple[str, str]]:
        """(JSON pointer, the reader's message) for everything this release refuses."""
        model_type = config.get("speculators_model_type")
        cacheable = isinstance(model_type, str)
        key = (id(self.data), model_type if cacheable else None)
        known = _REFUSALS.get(key) if cacheable else None
        if known is not None and known[0] is self.data:  # the same table, not a look-alike
            plan = known[1]
        else:
            plan = _refusal_plan(self.data, model_type, self.serves(model_type))
            if cacheable and len(_REFUSALS) < 1024:
                _REFUSALS[key] = (self.data, plan)  # kept alive: its id stays its own
        top_level, requires, refused_type, verifier, model_requires, fields, layer, walks = plan
        found = _walk_all(config, walks)  # every pointer the checks ask, each walked once
        out: list[tuple[str, str]] = []
        for name, allowed, message in top_level:
            if name in config and config[name] not in allowed:
                out.append((f"/{name}", message))
        for pointer, at, message in requires:
            if found[at] is _MISSING:
                out.append((pointer, message))
        if refused_type is not None:
            out.append(("/speculators_model_type", refused_type))
            return out
        if verifier is not None:
            pointer, at, rejects, message = verifier
            value = found[at]
            if value is not _MISSING and verifier_form(value) in rejects:
                out.append((pointer, message))
        for pointer, at, message in model_requires:
            if found[at] is _MISSING:
                out.append((pointer, message))
        for name, by_case, given_rejects in fields:
            value = config.get(name, _MISSING)
            message = by_case.get(_case(value)) if by_case else None
            if message is not None:
                out.append((f"/{name}", message))
            for entry in given_rejects:
                if value is not _MISSING and _match(entry["when"], value, config):
                    out.append((f"/{name}", entry["message"]))
        if layer:
            value = found[-1]  # the layer model type, walked last
            value = layer["absent"] if value is _MISSING else value
            if value not in layer["accepts"]:
                out.append(
                    ("/transformer_layer_config/model_type", layer["message"].format(value=value))
                )
        return out


#: (id of a release's table, type) -> (the table, what :meth:`Release.rejections` checks
#: for the type), worked out once
_REFUSALS: dict[tuple[int, str | None], tuple[dict, tuple]] = {}


def _refusal_plan(data: dict, model_type: Any, serves: bool) -> tuple:
    """The table's refusals of one release for one type, in the order they are reported:
    top-level keys, required pointers, the type (its message when refused), the verifier
    form, the type's required pointers (with those of the release) and the fields that can
    refuse a case or a given value, and the layer model type; the pointers are walked
    together (:func:`_walk_all`), the checks name them by their place in ``walks``."""
    walks: list[tuple[str, ...]] = []

    def at(pointer: str) -> int:
        parts = _parts(pointer)
        if parts not in walks:
            walks.append(parts)
        return walks.index(parts)

    top_level = tuple(
        (key, entry.get("except", []), entry["message"])
        for key, entry in data.get("top_level", {}).items()
    )
    requires = [(p, at(p), m) for p, m in data.get("requires", {}).items()]
    if not serves:
        types = data["types"]
        refused = types.get("fails", {}).get(model_type) or type_refusal(data, model_type)
        return top_level, tuple(requires), refused, None, (), (), None, tuple(walks)
    verifier = data.get("verifier")
    checked = None
    if verifier:
        p = verifier["pointer"]
        checked = (p, at(p), verifier["rejects"], verifier["message"])
    model = data.get("models", {}).get(model_type, {})
    model_requires = [(p, at(p), m) for p, m in model.get("requires", {}).items()]
    fields = []
    for name, row in model.get("fields", {}).items():
        by_case = {
            case: rule["rejects"]
            for case in ("absent", "null", "empty", "given")
            if isinstance(rule := row.get(case), dict) and "rejects" in rule
        }
        given = tuple(row.get("given_rejects", []))
        if by_case or given:
            fields.append((name, by_case, given))
    layer = model.get("layer_model_type")
    if layer:  # last, wherever else it is asked
        walks.append(("transformer_layer_config", "model_type"))
    return (
        top_level,
        tuple(requires),
        None,
        checked,
        tuple(model_requires),
        tuple(fields),
        layer,
        tuple(walks),
    )


def type_refusal(data: dict, model_type: Any) -> str:
    """A release's refusal of a type it does not serve, in words: the types it reads and
    the kind of error it raises (the table keeps the engine's own text, whose repr of the
    reader's dispatch dict is no sentence)."""
    accepted = data["types"]["accepted"]
    raised = data["types"]["message"].split(":", 1)[0]
    kind = f" ({raised} when loading)" if raised.isidentifier() else ""
    shown = repr(model_type) if isinstance(model_type, str) else "absent or not a string"
    return (
        f"speculators_model_type {shown} is not a type it serves: it reads "
        f"{', '.join(accepted) or 'none'}{kind}"
    )


@per_table
def serving(name: str, model_type: str) -> str:
    """The covered releases of reader ``name`` that serve ``model_type``, as :func:`spans`
    (``""``: none)."""
    return spans(name, lambda release: release.serves(model_type))


def verifier_form(value: Any) -> str:
    """Classify a verifier ``name_or_path`` as the table's ``verifier.rejects`` names it."""
    if value is None:
        return "null"
    if not isinstance(value, str):
        return "non-string"
    if type(value) is str and len(value) <= 256:  # the few ids of a batch, classified once
        return _string_form(value)
    return _form_of(value)


@lru_cache(maxsize=4096)
def _string_form(value: str) -> str:
    return _form_of(value)


def _form_of(value: str) -> str:
    if "://" in value:
        return "url"
    if value.startswith("/"):
        return "absolute-path"
    if value.startswith(("./", "../", "~")) or value in (".", ".."):
        return "relative-path"
    if len(value) > 96 or not _HUB_ID.match(value):
        return "malformed-id"
    return "hub-id"


def _case(value: Any) -> str:
    if value is _MISSING:
        return "absent"
    if value is None:
        return "null"
    if value == [] and isinstance(value, list):
        return "empty"
    return "given"


def _match(when: dict, value: Any, config: dict) -> bool:
    """A ``given_rejects`` condition: the value (``in`` / ``not_in``) and other fields (``with``)."""
    if "in" in when and value not in when["in"]:
        return False
    if "not_in" in when and value in when["not_in"]:
        return False
    return all(config.get(k, _MISSING) == v for k, v in when.get("with", {}).items())


def _lookup(doc: Any, pointer: str) -> Any:
    return _walk(doc, _parts(pointer))


def _parts(pointer: str) -> tuple[str, ...]:
    return tuple(pointer.strip("/").split("/"))


def _walk_all(doc: Any, walks: tuple[tuple[str, ...], ...]) -> list[Any]:
    """:func:`_walk` of each of ``walks``, in one call."""
    out = []
    for parts in walks:
        node = doc
        for part in parts:
            if isinstance(node, dict):
                node = node.get(part, _MISSING)
                if node is _MISSING:
                    break
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                node = _MISSING
                break
        out.append(node)
    return out


def _walk(doc: Any, parts: tuple[str, ...]) -> Any:
    node = doc
    for part in parts:
        if isinstance(node, dict):
            node = node.get(part, _MISSING)
            if node is _MISSING:
                return _MISSING
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def table_dir():
    """The folder of reader files (``schema/readers``; in a wheel ``spec_format.schema``)."""
    return package_data.schema_folder().joinpath("readers")


@cache
def _load() -> dict[str, Release]:
    """Every covered release: each file's own release and the member releases it lists."""
    out = {}
    files = [p for p in table_dir().iterdir() if p.name.endswith(".json") and "-" in p.name]
    for path in sorted(files, key=lambda p: p.name):
        data = package_data.read_json(path)
        for version in data.get("members") or [data["version"]]:
            rel = Release(data["reader"], version, data)
            out[rel.id] = rel
    return out


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _key(rid: str) -> tuple:
    name, version = rid.split("==")
    return (name, _vkey(version))


def releases() -> list[str]:
    """Every covered reader release, as ``name==version``, sorted by name then version."""
    return list(_orders()[1])


def representatives() -> list[str]:
    """One release per table file (the executed one of its group), sorted like releases()."""
    return list(_orders()[2])


#: the table :func:`_load` returned last, its release ids sorted, its representatives:
#: rules ask them per config, so they are sorted once per table (a reloaded table,
#: ``_load.cache_clear()``, is sorted anew)
_ORDERS: list = [None, (), ()]


def _orders() -> list:
    table = _load()
    if _ORDERS[0] is not table:
        ids = tuple(sorted(table, key=_key))
        reps = tuple(r for r in ids if table[r].version == table[r].representative)
        _ORDERS[:] = [table, ids, reps]
    return _ORDERS


def newest(name: str) -> Release:
    """The newest covered release of a reader (``--engine vllm`` without a version)."""
    found = [r for r in releases() if r.startswith(f"{name}==")]
    if not found:
        raise KeyError(f"no reader table for {name}")
    return _load()[found[-1]]


class Coverage(NamedTuple):
    """What the table covers of one reader: the statement every README, page and test
    derives instead of spelling the newest release or a count."""

    name: str
    first: str  # the first covered release ("0.10.1")
    newest: str  # the newest covered release
    releases: int  # covered releases, patch releases included
    groups: int  # table files (release groups), each executed through its representative


def coverage(name: str) -> Coverage:
    """The covered releases of reader ``name`` in numbers (KeyError when it has none)."""
    found = [r.split("==")[1] for r in releases() if r.startswith(f"{name}==")]
    if not found:
        raise KeyError(f"no reader table for {name}")
    groups = [r for r in representatives() if r.startswith(f"{name}==")]
    return Coverage(name, found[0], found[-1], len(found), len(groups))


@per_table
def covered_range(name: str) -> str:
    """``"vllm==0.10.1 to vllm==X.Y.Z (N releases: ...)"``: what an unknown version is told."""
    found = [r.split("==")[1] for r in releases() if r.startswith(f"{name}==")]
    if not found:
        return "none"
    every = ", ".join(found)
    return f"{name}=={found[0]} to {name}=={found[-1]} ({len(found)} releases: {every})"


def release_of_line(name: str = "speculators") -> dict[str, str]:
    """Format line -> the covered release of reader ``name`` that stands for it (the newest
    of the line in the reader table): ``{"0.4": "0.4.0.1", ..., "0.9": "0.9.0"}``. A line
    without a covered release (a new format version before its release) is absent."""
    from spec_format.facts import versions

    out: dict[str, str] = {}
    for rid in releases():
        reader, version = rid.split("==")
        if reader == name:
            out[versions.parse(version).line] = version  # sorted: the newest wins
    return out


def aux_count(value: Any) -> int:
    """How many aux hidden states a list of aux layer ids taps (3, the default, when unset)."""
    return len(value) if isinstance(value, list) and value else 3


#: ``fc_aux_layers`` of a release that sizes ``fc`` by the draft's own layer count
DRAFT_LAYERS = "transformer_layer_config.num_hidden_layers"


def draft_family(config: dict) -> str:
    """The decoder family a draft's ``transformer_layer_config`` names (Llama when unset)."""
    layer = config.get("transformer_layer_config")
    family = layer.get("model_type") if isinstance(layer, dict) else None
    return family if isinstance(family, str) and family else "llama"


def class_weights(weights: dict, config: dict) -> dict:
    """A ``models.<type>.weights`` block as it holds for the draft class the release builds
    for ``config``'s decoder family: the block's ``per_class`` entry for that class (its
    ``classes`` name it) overrides the type-wide facts (0.24+: the Qwen3-layer EAGLE-3 class
    sizes ``fc`` from the aux layer ids, the Llama one for three)."""
    cls = weights.get("classes", {}).get(draft_family(config))
    override = weights.get("per_class", {}).get(cls) if cls else None
    return {**weights, **override} if override else weights


def fc_aux_layers(release: Release, weights: dict, model_type: str, config: dict) -> int | None:
    """How many aux hidden states ``release`` sizes a draft's ``fc`` for, from its
    ``models.<type>.weights`` block ``weights`` (as it holds for the class built for the
    draft's family, :func:`class_weights`): a fixed count, the key whose reading (the ids
    the release's reader passes on) it takes the length of, or the draft's decoder layer
    count (``None`` when the config does not say it)."""
    sized = class_weights(weights, config)["fc_aux_layers"]
    if sized == DRAFT_LAYERS:
        layer = config.get("transformer_layer_config")
        count = layer.get("num_hidden_layers") if isinstance(layer, dict) else None
        return count if type(count) is int and count > 0 else None
    if isinstance(sized, str):
        reading = release.reading(model_type, sized, config)
        sized = aux_count(reading.value if reading.how != "ignored" else None)
    return sized


def fc_mismatch(model_type: str, config: dict, count: int) -> tuple[str, list[int]]:
    """The covered vLLM releases (as :func:`spans`) that serve ``model_type`` but size the
    draft's ``fc`` of ``config`` for another number of aux hidden states than ``count``,
    and the numbers they size it for."""
    sizes: set[int] = set()

    def other(release: Release) -> bool:
        weights = release.data.get("models", {}).get(model_type, {}).get("weights")
        if not release.serves(model_type) or weights is None:
            return False
        sized = fc_aux_layers(release, weights, model_type, config)
        if sized is None or sized == count:
            return False
        sizes.add(sized)
        return True

    found = spans("vllm", other)
    return found, sorted(sizes)


def spans(name: str, test) -> str:
    """The covered releases of reader ``name`` for which ``test(release)`` holds, as runs of
    consecutive covered releases (``"0.20.0 to 0.26.0, 0.31.0"``; ``""`` when none): what
    a message says instead of restating the table in prose."""
    runs: list[list[str]] = []
    extend = False
    for rid in releases():
        rel = _load()[rid]
        if rel.name != name:
            continue
        holds = bool(test(rel))
        if holds and extend:
            runs[-1].append(rel.version)
        elif holds:
            runs.append([rel.version])
        extend = holds
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}" for run in runs)


def release(name: str, version: str) -> Release:
    try:
        return _load()[f"{name}=={version}"]
    except KeyError:
        raise KeyError(
            f"no reader table for {name}=={version} (covered: {covered_range(name)})"
        ) from None
