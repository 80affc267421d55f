"""Migrated documents as text: save_pretrained's formatting and diffs (written by
:mod:`spec_format.outfile`)."""

from __future__ import annotations

import difflib
import json
from typing import Any


def dumps(document: dict[str, Any]) -> str:
    """JSON text the way ``save_pretrained`` writes it: sorted keys, indent 2, newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def unified_diff(before: str, after: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )
