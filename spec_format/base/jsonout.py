"""JSON output that is always JSON: every ``-f json`` / SARIF document goes through
:func:`dumps`, which never writes ``Infinity`` or ``NaN`` (Python's json does by default;
no other JSON reader accepts them). A non-finite float, which only arithmetic on hostile
input can produce, is written as ``null``."""

from __future__ import annotations

import json
import math
from typing import Any, TextIO


def dumps(doc: Any, **kwargs: Any) -> str:
    try:
        return json.dumps(doc, allow_nan=False, **kwargs)
    except ValueError:  # a non-finite float somewhere: the rare path
        return json.dumps(finite(doc), allow_nan=False, **kwargs)


def dump(doc: Any, stream: TextIO, **kwargs: Any) -> None:
    stream.write(dumps(doc, **kwargs))


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (containers copied)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
