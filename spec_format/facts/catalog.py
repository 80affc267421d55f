"""Typed view of ``schema/catalog.json``: format versions, model types and per-type facts.

The catalog is the one place that lists the format versions, the ``speculators_model_type``
values, how they group into families and what each type is made of (aux-id key and index
convention, decoder families, default layer class per version, architectures, vocabulary
maps, repeated-layer prefix, forward class, named features, draft forward passes per
speculative step). Every list of types in the code and the tests is derived from here, so
adding a type is an edit of the catalog (plus its schema, contract and forward module), not
a hunt through modules.

Only the standard library is imported: the CLI reads the catalog at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

from spec_format.base.errors import UsageError
from spec_format.facts import package_data


class VersionEntry(NamedTuple):
    """One format version (a speculators release line) as the catalog lists it."""

    version: str  # "0.9"
    release: str  # "0.9.0"
    types: tuple[str, ...]
    root: str
    transformers: str  # major transformers version its writer used ("4" or "5")


class RetiredType(NamedTuple):
    name: str
    last_version: str
    what: str
    note: str


class RepeatedLayers(NamedTuple):
    """How a type's repeated decoder layers are named and counted."""

    prefix: str  # tensor name prefix: "layers" -> layers.0.*, layers.1.*
    symbol: str  # contract symbol for the count ("L", "N")
    count: str  # dotted config field that holds the count


class TypeRecord(NamedTuple):
    """Everything the tool knows about one ``speculators_model_type`` beyond its schema."""

    name: str
    family: str  # "chain", "block", "nextn", "legacy" (schema/catalog.json "families")
    what: str
    since: str  # first format version with the type
    #: config key of the verifier layers the draft taps (None: the type taps none)
    aux_key: str | None
    #: id - offset is the verifier layer whose output is tapped (DFlash ids count the
    #: embeddings as 0, so id L is the output of layer L - 1)
    aux_offset: int
    layer_families: tuple[str, ...]  # transformer_layer_config.model_type values readers build
    #: (first version, class) pairs: the layer class a release builds when model_type is absent
    default_layer: tuple[tuple[str, str], ...]
    architectures: tuple[str, ...]  # what speculators writes in ``architectures``
    vocab_maps: bool  # may reduce the draft vocabulary and carry t2d/d2t
    mask_token: bool  # drafts from mask-token placeholders (needs mask_token_id)
    layers: RepeatedLayers | None
    forward: str | None  # "module:Class" under spec_format.forward
    features: tuple[str, ...]  # named behaviours rules and code select types by
    fingerprint_keys: tuple[str, ...]  # fields every writer of the type emits (dating a file)
    #: draft forward passes per speculative step: "per_token" (a chain: one per drafted
    #: token) or "per_step" (one pass drafts them all); None for legacy types
    draft_forwards: str | None = None


class NoiseKey(NamedTuple):
    """A key some writers serialize by accident; no reader uses it."""

    name: str
    why: str
    last_version: str | None  # newest line whose writer still emits it (None: any)


def _root():
    return package_data.schema_folder()


@cache
def data() -> dict[str, Any]:
    return package_data.read_json(_root() / "catalog.json")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


# -- versions --------------------------------------------------------------------------------
# The one version table: every other module asks these functions (no copies, no aliases).
@cache
def versions() -> dict[str, VersionEntry]:
    """Every format version, oldest first."""
    out = {}
    for version, entry in data()["versions"].items():
        out[version] = VersionEntry(
            version=version,
            release=entry["release"],
            types=tuple(entry["types"]),
            root=entry["root"],
            transformers=entry.get("transformers", "5"),
        )
    return dict(sorted(out.items(), key=lambda kv: _version_key(kv[0])))


def latest_version() -> str:
    return data()["latest"]


def version_entry(version: str) -> VersionEntry:
    try:
        return versions()[version]
    except KeyError:
        raise UsageError(
            f"unknown format version {version!r}; known versions: {', '.join(versions())}"
        ) from None


@cache
def versions_with_type(model_type: str) -> tuple[str, ...]:
    """The format versions that have ``model_type``, oldest first."""
    return tuple(v for v, entry in versions().items() if model_type in entry.types)


@cache
def retired_types() -> dict[str, RetiredType]:
    return {
        name: RetiredType(name=name, **entry) for name, entry in data()["retired_types"].items()
    }


def known_types() -> tuple[str, ...]:
    """Every speculators_model_type that any catalogued version knows, newest first."""
    seen: dict[str, None] = {}
    for entry in reversed(list(versions().values())):
        for t in entry.types:
            seen.setdefault(t, None)
    return tuple(seen)


# -- types -----------------------------------------------------------------------------------
@cache
def records() -> dict[str, TypeRecord]:
    out = {}
    for name, raw in data()["types"].items():
        aux = raw.get("aux_ids")
        layers = raw.get("layers")
        out[name] = TypeRecord(
            name=name,
            family=raw["family"],
            what=raw["what"],
            since=raw["since"],
            aux_key=aux["key"] if aux else None,
            aux_offset=aux["offset"] if aux else 0,
            layer_families=tuple(raw["layer_families"]),
            default_layer=tuple((v, cls) for v, cls in raw["default_layer"]),
            architectures=tuple(raw["architectures"]),
            vocab_maps=raw["vocab_maps"],
            mask_token=raw["mask_token"],
            layers=RepeatedLayers(**layers) if layers else None,
            forward=raw.get("forward"),
            features=tuple(raw.get("features", ())),
            fingerprint_keys=tuple(raw.get("fingerprint_keys", ())),
            draft_forwards=raw.get("draft_forwards"),
        )
    return out


def record(model_type: str) -> TypeRecord | None:
    """The record of a type, ``None`` for a name the catalog does not know."""
    return records().get(model_type) if isinstance(model_type, str) else None


def types_where(predicate: Callable[[TypeRecord], bool]) -> tuple[str, ...]:
    """Types whose record satisfies ``predicate``, in catalog order."""
    return tuple(name for name, rec in records().items() if predicate(rec))


@cache
def family(name: str) -> tuple[str, ...]:
    """The types of one family (``"chain"``: EAGLE-3 style, ``"block"``: DFlash style,
    ``"nextn"``: MTP, ``"legacy"``)."""
    if name not in data()["families"]:
        raise KeyError(f"no type family {name!r} in the catalog")
    return types_where(lambda r: r.family == name)


@cache
def with_feature(feature: str) -> tuple[str, ...]:
    """Types that carry a named feature (``"markov-head"``, ``"conv-selector"`` ...)."""
    found = types_where(lambda r: feature in r.features)
    if not found:
        raise KeyError(f"no type has the feature {feature!r} in the catalog")
    return found


@cache
def current_types() -> tuple[str, ...]:
    """Types of the families current readers load (every family but ``legacy``)."""
    return types_where(lambda r: r.family != "legacy")


@cache
def aux_types() -> tuple[str, ...]:
    """Types that tap verifier layers through an aux-id list."""
    return types_where(lambda r: r.aux_key is not None)


@cache
def vocab_map_types() -> tuple[str, ...]:
    return types_where(lambda r: r.vocab_maps)


@cache
def mask_token_types() -> tuple[str, ...]:
    return types_where(lambda r: r.mask_token)


@cache
def forward_types() -> tuple[str, ...]:
    """Types with a reference forward."""
    return types_where(lambda r: r.forward is not None)


def aux_key(model_type: str) -> str | None:
    rec = record(model_type)
    return rec.aux_key if rec else None


def buildable_layers(model_type: str) -> tuple[str, ...]:
    """Layer classes worth suggesting for a type: those readers build, else its default."""
    rec = record(model_type)
    if rec is None:
        return ()
    return rec.layer_families or tuple(cls for _, cls in rec.default_layer[-1:])


def default_layer(model_type: str, version: str) -> str | None:
    """The layer config class the release of ``version`` builds when
    ``transformer_layer_config.model_type`` is missing (``None``: it has no default)."""
    rec = record(model_type)
    chosen = None
    for since, cls in rec.default_layer if rec else ():
        if _version_key(since) <= _version_key(version):
            chosen = cls
    return chosen


@cache
def noise_keys() -> dict[str, NoiseKey]:
    return {name: NoiseKey(name=name, **entry) for name, entry in data()["noise_keys"].items()}


@cache
def auto_map_modules() -> dict[str, tuple[str | None, str | None]]:
    """``auto_map[""]`` module -> (first, last) format version whose writer names it
    (read once: do not change it)."""
    return {m: (span["since"], span["until"]) for m, span in data()["auto_map_modules"].items()}
