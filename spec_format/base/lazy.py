"""Names a package resolves on first use (PEP 562), so importing the package stays cheap."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_getattr(namespace: dict[str, Any], homes: dict[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` for ``namespace`` (a module's ``globals()``): ``homes`` maps
    each lazy name to the module that defines it; a resolved name is kept in ``namespace``,
    so each is imported once."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__
