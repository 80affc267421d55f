"""Where the bundled data (``spec_format/schema/``: schemas, catalog, reader table, tensor
contracts) is read from.

An installed package is a folder on disk: a plain :class:`~pathlib.Path` serves it, and
start-up does not import :mod:`importlib.resources` (with ``zipfile`` and ``tempfile``).
A package that is not a folder (a zip import) is read through ``importlib.resources``.
Both have the same ``/``, ``joinpath``, ``iterdir``, ``is_dir`` and ``read_text``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import orjson


@cache
def schema_folder():
    import spec_format.schema as package

    folder = Path(package.__file__).parent if getattr(package, "__file__", None) else None
    if folder is not None and folder.is_dir():
        return folder
    from importlib import resources  # pragma: no cover - zip imports

    return resources.files("spec_format.schema")  # pragma: no cover


def read_json(item) -> Any:
    """A bundled JSON file (a path below :func:`schema_folder`): specfmt's own data, well
    formed, so orjson reads it (about twice as fast as ``json``, at every start-up)."""
    return orjson.loads(item.read_bytes())
