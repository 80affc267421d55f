"""Strict JSON read one object member at a time, for files of millions of entries.

``json.loads`` of a safetensors header with a million tensors (88 MB) builds every entry
as Python dicts and lists at once: about 600 MB and seconds of work that is thrown away as
soon as each entry is checked. :class:`JsonCursor` walks the outer objects itself (the same
grammar and the same error wording as the standard library's ``JSONObject``) and hands each
member's value to the standard library's C scanner, so the caller turns one entry into a
compact record and drops it before the next one is parsed.

Values come back as the C scanner builds them, with objects as tuples of ``(key, value)``
pairs (duplicate keys stay visible; arrays stay lists). The text is held to what
serde_json, the safetensors library's parser, accepts: ``NaN``/``Infinity`` are refused,
``-0`` is read as :class:`NegativeZero` (only when the text has one, so ordinary files keep
the C fast path for integers), and :func:`limit_problem` finds nesting past 128 levels and
lone UTF-16 surrogate escapes.
"""

from __future__ import annotations

import json
import re
from json.decoder import JSONDecodeError, scanstring

#: serde_json's default recursion limit; the library refuses deeper headers.
MAX_JSON_DEPTH = 128

_BLANK = re.compile(r"[ \t\n\r]*")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: a ``-0`` token (conservative: one inside a string also selects the slow integer path)
_MINUS_ZERO = re.compile(r"-0(?![0-9.eE])")


class NegativeZero(int):
    """``-0`` in JSON: Python reads 0, the library's parser refuses it as a size."""


def _parse_int(text: str) -> int:
    return NegativeZero(0) if text == "-0" else int(text)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


class JsonCursor:
    """A position in one JSON text. Raises :class:`json.JSONDecodeError` (the standard
    library's messages), ``ValueError`` for ``NaN``/``Infinity`` and ``RecursionError`` for
    a value nested past the interpreter's limit."""

    def __init__(self, text: str) -> None:
        if text.startswith("\ufeff"):
            raise JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        self.text = text
        self.position = 0
        #: the text has a surrogate escape: strings need :func:`limit_problem`'s check
        self.surrogates = _SURROGATE_ESCAPE.search(text) is not None
        minus_zero = _MINUS_ZERO.search(text) is not None
        decoder = json.JSONDecoder(
            object_pairs_hook=tuple,
            parse_constant=_reject_constant,
            parse_int=_parse_int if minus_zero else None,
        )
        self._scan = decoder.scan_once
        self._first: list[bool] = []  # per open object: no member read yet

    def _skip(self, i: int) -> int:
        return _BLANK.match(self.text, i).end()

    def enter_object(self) -> bool:
        """Step into the object that starts here; false (nothing consumed) if none does."""
        i = self._skip(self.position)
        if self.text[i : i + 1] != "{":
            return False
        self.position = i + 1
        self._first.append(True)
        return True

    def next_key(self) -> str | None:
        """The next member's key (the cursor then stands on its value), or ``None`` at the
        closing brace of the innermost open object (which is then left)."""
        s = self.text
        i = self._skip(self.position)
        c = s[i : i + 1]
        if c == "}":
            self._first.pop()
            self.position = i + 1
            return None
        if not self._first[-1]:
            if c != ",":
                raise JSONDecodeError("Expecting ',' delimiter", s, i)
            i = self._skip(i + 1)
            c = s[i : i + 1]
        self._first[-1] = False
        if c != '"':
            raise JSONDecodeError("Expecting property name enclosed in double quotes", s, i)
        key, i = scanstring(s, i + 1, True)
        i = self._skip(i)
        if s[i : i + 1] != ":":
            raise JSONDecodeError("Expecting ':' delimiter", s, i)
        self.position = i + 1
        return key

    def value(self) -> object:
        """The whole value that starts here (objects as tuples of pairs)."""
        i = self._skip(self.position)
        try:
            value, self.position = self._scan(self.text, i)
        except StopIteration as stop:
            raise JSONDecodeError("Expecting value", self.text, stop.value) from None
        return value

    def finish(self) -> None:
        """Only blanks may follow the document."""
        i = self._skip(self.position)
        if i != len(self.text):
            raise JSONDecodeError("Extra data", self.text, i)


def json_type(value: object) -> str:
    """The JSON name of a value read by :class:`JsonCursor`."""
    if isinstance(value, tuple):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _flat(value: object) -> bool:
    """Holds no container deeper than one array of scalars (a tensor entry as written)."""
    if isinstance(value, tuple):
        return all(
            not isinstance(v, tuple)
            and not (isinstance(v, list) and any(isinstance(x, (list, tuple)) for x in v))
            for _, v in value
        )
    return not isinstance(value, list) or not any(isinstance(x, (list, tuple)) for x in value)


def limit_problem(value: object, depth: int, *, surrogates: bool) -> str | None:
    """What Python's json accepts but serde_json refuses, in ``value`` found at nesting
    ``depth`` (the document is depth 1): containers 128 levels deep, and (``surrogates``:
    the text has a surrogate escape) strings holding a lone UTF-16 surrogate."""
    if not surrogates and depth + 2 < MAX_JSON_DEPTH and _flat(value):
        return None
    stack: list[tuple[object, int]] = [(value, depth)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, str):
            if surrogates and not _utf8_encodable(node):
                return "a string holds a lone UTF-16 surrogate escape"
        elif isinstance(node, (list, tuple)):
            if level >= MAX_JSON_DEPTH:
                return f"nested more than {MAX_JSON_DEPTH} levels deep"
            if isinstance(node, tuple):
                for key, item in node:
                    stack.append((key, level))
                    stack.append((item, level + 1))
            else:
                stack.extend((item, level + 1) for item in node)
    return None


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
