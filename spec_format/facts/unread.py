"""Flags an engine never reads although they change what the draft was trained to compute.

Only boolean flags: an ignored size such as DFlash's ``block_size`` is one the engine takes
from another field (``speculative_tokens``), which X003 compares.

A reader-table row ``ignored: true`` says a release's config conversion drops the field, so
its model code cannot act on it: the release runs one network whatever the value. Every such
flag in the table is an opt-in added after the engine's model code was written, whose
*default* is the behaviour before the flag existed; a release that never reads it therefore
runs the default. A value under which the writer (the speculators release of the format
version) computes something else than under the default, per draft layer for scoped
causality switches, is a network the engine does not run. No config value removes that
disagreement (the value is what the draft was trained with): only another engine release
does. All facts come from the reader table; this module only compares readings.

The same holds for a key of ``transformer_layer_config`` that decides the draft's network
(the table's ``layer_fields``: DFlash2's ``no_rope_layers``, the layers trained without
RoPE): a release whose row is ``ignored`` runs what its ``instead`` says whenever the key is
non-empty (:func:`layer_fields_unread`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from spec_format.facts import disputes, readers


class Unread(NamedTuple):
    """``field`` holds a trained value ``engines`` never read."""

    field: str
    value: Any
    default: Any  # the writer's reading when the field is absent
    engines: tuple[str, ...]  # release ids, e.g. ("vllm==0.28.0",)

    @property
    def pointer(self) -> str:
        return f"/{self.field}"

    def describe(self) -> str:
        who = ", ".join(self.engines)
        verb = "never reads" if len(self.engines) == 1 else "never read"
        return (
            f"{self.field} is {disputes.show(self.value)}, which changes what the draft computes "
            f"(the default is {disputes.show(self.default)}), but {who} {verb} it and run"
            f"{'s' if len(self.engines) == 1 else ''} the draft as if it were "
            f"{disputes.show(self.default)}"
        )


def trained_flags_unread(
    config: dict[str, Any],
    model_type: str,
    writer: readers.Release | None,
    engines: Sequence[readers.Release],
) -> list[Unread]:
    """Fields of ``config`` whose value changes the writer's computation and which one of
    ``engines`` (serving the type) never reads."""
    if writer is None:
        return []
    plan_key, ignored, values_of, scoped = _plan(writer, engines, model_type)
    for name in ignored:
        if isinstance(config.get(name), bool):
            break
    else:  # most configs: no ignored field holds a flag
        return []
    # the answer depends on the ignored fields, the fields the writer's rows of them name
    # and, for a scoped one, the layer kinds: configs that agree on those share it
    values = values_of(config)
    if values is None:  # a value of thousands of items: worked out, not kept
        return _unread(config, model_type, writer, ignored)
    key = (plan_key, *values)
    if scoped:
        key = (*key, disputes.layer_kinds(config))
    found = _FOUND.get(key)
    if found is None:
        if len(_FOUND) > 4096:
            _FOUND.clear()
        _FOUND[key] = found = tuple(_unread(config, model_type, writer, ignored))
    return list(found)


_FOUND: dict[tuple, tuple[Unread, ...]] = {}
#: (id of the writer, id of the engines, type) -> (writer, engines, plan); both are kept,
#: so their ids stay theirs
_PLANS: dict[tuple[int, int, str], tuple] = {}


def _plan(
    writer: readers.Release, engines: Sequence[readers.Release], model_type: str
) -> tuple[tuple, dict[str, list[str]], disputes.ValuesKey, bool]:
    """Per writer, engines and type: the key its answers are kept under, the fields the
    engines ignore, the key of the values an answer depends on, and whether a writer row
    of them has a scope."""
    memo = (id(writer), id(engines), model_type)
    known = _PLANS.get(memo)
    if known is not None and known[0] is writer and known[1] is engines:
        return known[2]
    ignored = disputes.ignored_fields(model_type, tuple(engines))
    names = list(ignored)
    rows = [row for name in ignored if (row := writer.row(model_type, name)) is not None]
    for row in rows:
        for entry in row.get("given_rejects", []):
            names += list(entry["when"].get("with", {}))
    scoped = any(row.get("scope") is not None for row in rows)
    plan_key = (writer.id, tuple(e.id for e in engines), model_type)
    plan = (plan_key, ignored, disputes.ValuesKey(dict.fromkeys(names)), scoped)
    if type(engines) is tuple:  # a list may change: worked out again each time
        if len(_PLANS) > 256:
            _PLANS.clear()
        _PLANS[memo] = (writer, engines, plan)
    return plan


def _unread(
    config: dict[str, Any],
    model_type: str,
    writer: readers.Release,
    ignored: dict[str, list[str]],
) -> list[Unread]:
    out = []
    for name, who in ignored.items():
        if not isinstance(config.get(name), bool):
            continue  # flags only: an ignored size (DFlash block_size) is derived elsewhere
        given = disputes.view(writer, model_type, name, config)
        if given is None or given.how in ("ignored", "rejected"):
            continue
        bare = {k: v for k, v in config.items() if k != name}
        default = disputes.view(writer, model_type, name, bare)
        if default is None or default.how in ("ignored", "rejected"):
            continue
        if given.meaning != default.meaning:
            out.append(Unread(name, given.value, default.value, tuple(who)))
    return out


class UnreadLayerField(NamedTuple):
    """``transformer_layer_config.<field>`` holds ``value``, which ``engines`` never read."""

    field: str
    value: Any
    instead: str  # what the engines run instead, from the table's row
    engines: tuple[str, ...]
    serving: tuple[str, ...]  # the covered releases that act on it (their group's first)

    @property
    def pointer(self) -> str:
        return f"/transformer_layer_config/{self.field}"

    def describe(self) -> str:
        who = ", ".join(self.engines)
        verb = "never reads" if len(self.engines) == 1 else "never read"
        return (
            f"transformer_layer_config.{self.field} is {disputes.show(self.value)}, which "
            f"changes what the draft computes, but {who} {verb} it and {self.instead}"
        )


def layer_fields_unread(
    config: dict[str, Any], model_type: str, engines: Sequence[readers.Release]
) -> list[UnreadLayerField]:
    """Non-empty keys of the layer config that one of ``engines`` (serving the type) never
    reads (its ``layer_fields`` row is ``ignored``), one entry per key."""
    layer = config.get("transformer_layer_config")
    if not isinstance(layer, dict):
        return []
    out = []
    for name in _layer_field_names(model_type):
        value = layer.get(name)
        if not value:  # absent, null, [] and false: what every release runs anyway
            continue
        rows = [
            (e, row)
            for e in engines
            if e.serves(model_type)
            and (row := e.data["models"][model_type].get("layer_fields", {}).get(name))
            and row.get("ignored")
        ]
        if rows:
            out.append(
                UnreadLayerField(
                    name,
                    value,
                    rows[0][1]["instead"],
                    tuple(e.id for e, _ in rows),
                    _acting(model_type, name),
                )
            )
    return out


@readers.per_table
def _layer_field_names(model_type: str) -> tuple[str, ...]:
    """The layer config keys some release's table row names for the type."""
    names: dict[str, None] = {}
    for rid in readers.representatives():
        model = readers.release(*rid.split("==")).data.get("models", {}).get(model_type, {})
        names.update(dict.fromkeys(model.get("layer_fields", {})))
    return tuple(names)


@readers.per_table
def _acting(model_type: str, name: str) -> tuple[str, ...]:
    """The representatives whose row for the layer key is not ``ignored``."""
    out = []
    for rid in readers.representatives():
        rel = readers.release(*rid.split("=="))
        row = rel.data.get("models", {}).get(model_type, {}).get("layer_fields", {}).get(name)
        if row and not row.get("ignored") and rel.serves(model_type):
            out.append(rid)
    return tuple(out)
