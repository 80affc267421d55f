"""The source kinds ``specfmt convert`` knows: one module per kind, each exposing ``KIND``
(a :class:`~spec_format.convert.plan.SourceKind`). A new kind is a new module plus one line
in :data:`MODULES`."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import import_module
from typing import Any

from spec_format.convert.plan import ConvertRefused, SourceKind

#: module names under spec_format.convert.sources, one per line
MODULES = (
    "safeailab_eagle3",
    "zlab_dflash",
    "native_mtp",
    # a new kind: its module name here
)


@cache
def kinds() -> tuple[SourceKind, ...]:
    return tuple(import_module(f"{__name__}.{name}").KIND for name in MODULES)


def detect(config: Mapping[str, Any], tensor_names: frozenset[str], where: str) -> SourceKind:
    """The one kind that claims this checkpoint, or :class:`ConvertRefused` saying why not."""
    claimed = [k for k in kinds() if k.detect(config, tensor_names)]
    if len(claimed) == 1:
        return claimed[0]
    if claimed:  # a bug in the kinds' detect(): they must exclude each other
        names = ", ".join(k.name for k in claimed)
        raise ConvertRefused(f"{where}: several source kinds claim this checkpoint ({names})")
    if "speculators_model_type" in config:
        raise ConvertRefused(
            f"{where}: this is already a speculators-format checkpoint; use `specfmt migrate` "
            "to change its format version"
        )
    known = "; ".join(f"{k.name}: {k.description}" for k in kinds())
    raise ConvertRefused(f"{where}: not a checkpoint kind specfmt converts (known: {known})")
