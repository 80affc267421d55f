"""Migrated documents as text: save_pretrained's formatting and diffs (written by
:mod:`spec_format.parsers.outfile`)."""

from __future__ import annotations

import difflib
import io
import json
import re
from typing import Any

_ENCODER = json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False)


def dumps(document: dict[str, Any]) -> str:
    """JSON text the way ``save_pretrained`` writes it: sorted keys, indent 2, newline.

    The text of ``json.dumps(..., indent=2, sort_keys=True, ensure_ascii=False)``, gathered
    in a buffer as it is encoded: ``json.dumps`` with an indent first lists every piece (a
    config of 1.4M integers: 5M strings, 6x the size of the text)."""
    buffer = io.StringIO()
    write = buffer.write
    for chunk in _ENCODER.iterencode(document):
        write(chunk)
    write("\n")
    return buffer.getvalue()


_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff as ``diff -u`` and ``git diff`` write it, including the ``\\ No
    newline at end of file`` marker after a last line that has no newline. ``name`` is the
    file's path as given: a relative one gets git's ``a/`` and ``b/`` (``git apply`` and
    ``patch -p1`` take it), an absolute one is written as it is (``patch -p0``)."""
    absolute = name.startswith("/")
    lines = difflib.unified_diff(
        _LINE.findall(before),  # only "\n" ends a line (str.splitlines also splits at U+2028)
        _LINE.findall(after),
        fromfile=name if absolute else f"a/{name}",
        tofile=name if absolute else f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}" for line in lines)


_DIFF_STYLE = (("+++", "1"), ("---", "1"), ("@@", "36"), ("+", "32"), ("-", "31"))


def colour_diff(diff: str) -> str:
    """``diff`` with the colours of ``git diff`` (ANSI SGR): headers bold, hunks cyan, added
    lines green, removed lines red."""
    out = []
    for line in diff.splitlines(keepends=True):
        sgr = next((code for prefix, code in _DIFF_STYLE if line.startswith(prefix)), None)
        body = line.rstrip("\n")
        out.append(f"\x1b[{sgr}m{body}\x1b[0m" + line[len(body) :] if sgr else line)
    return "".join(out)
