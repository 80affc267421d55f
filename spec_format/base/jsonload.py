"""Strict, bounded loading of JSON files (config.json, verifier configs, indexes).

Python's :mod:`json` is lenient where other readers are not: it keeps the last of two
duplicate keys, accepts ``NaN``/``Infinity``, and rejects a UTF-8 byte-order mark with a
confusing message. This module reads with the standard parser (fast, C-accelerated) and
turns each of those cases into a :class:`Problem` with a JSON pointer and a line, so the
caller can report it as a finding instead of a traceback.

Numbers are guarded where they are parsed: a literal that does not fit a 64-bit reader
(an integer of 2**63 or more, more digits than Python converts, ``1e999``) becomes a
``number-out-of-range`` problem, and one that would overflow a float is read as
``inf``; :func:`json_int` and :func:`json_number` are the range-checked accessors every
rule uses, so no value reaches ``range()``, ``float()``, an allocation or a syscall
unchecked. A lone surrogate escape (``"\ud800"``), which no UTF-8 writer can encode, is a
``lone-surrogate`` problem. Every list of problems is capped (:data:`MAX_PROBLEMS`), with
one more problem saying how many were left out.

Speed: a document the hooks would find nothing wrong with is parsed by orjson instead
(:func:`_fast_parse` proves the result the same, else the hooks decide), and its text is
decoded only when a position is asked for; ``fast=False`` forces the reference path.

Positions: the standard parser keeps no positions, so :class:`Locator` re-scans the text
(only when a finding needs a line number) with a small scanner of its own.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from spec_format.base.bounded import ReadRefused, read_file
from spec_format.base.input_messages import message
from spec_format.base.json_cursor import json_type

MAX_JSON_BYTES = 16 * 1024 * 1024  # configs are a few KB; indexes of huge models ~ 1 MB
_WHAT = "a JSON file"
MAX_DEPTH = 64  # real configs nest 4 levels deep
BOM = b"\xef\xbb\xbf"
#: the largest magnitude a JSON integer may have (int64; what C, Rust and Go readers hold)
MAX_INT = 2**63 - 1
#: the largest integer a double holds exactly (readers in JavaScript hold no more)
MAX_EXACT_FLOAT_INT = 2**53
#: longer integer literals are not converted at all (Python refuses more than 4300 digits)
MAX_INT_DIGITS = 400
#: at most this many problems of one kind per file; one more says how many were left out
MAX_PROBLEMS = 100
#: the Locator records positions for at most this many values (memory stays bounded)
MAX_POSITIONS = 200_000
#: the I rule of each problem kind that is counted past MAX_PROBLEMS
_RULE_OF = {
    "duplicate-key": "duplicate-key",
    "non-finite-number": "non-finite-number",
    "number-out-of-range": "non-finite-number",
}
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the bytes or the JSON text. ``kind`` names an I rule
    (``spec_format.rules.input.BY_PROBLEM_KIND``)."""

    kind: str  # not-found, unreadable, empty, too-large, bom, not-utf8, not-json,
    # not-object, too-deep, duplicate-key, non-finite-number, number-out-of-range,
    # lone-surrogate
    message: str
    fatal: bool
    pointer: str | None = None
    line: int | None = None
    column: int | None = None


class Loaded:
    """A parsed JSON document (``data`` is ``None`` when a fatal problem stopped parsing).

    ``text`` is the decoded text; when the fast path parsed the bytes, it is decoded from
    ``raw`` on first use (only positions and rewrites need it)."""

    __slots__ = ("_locator", "_text", "compact", "data", "path", "problems", "raw")

    def __init__(
        self,
        path: Path,
        data: Any = None,
        text: str | None = "",
        raw: bytes = b"",  # the bytes as read (BOM included)
        problems: list[Problem] | None = None,
    ) -> None:
        self.path, self.data, self.raw = path, data, raw
        self._text = text  # None: ``raw`` (no BOM, valid UTF-8) decoded when first asked
        self.problems: list[Problem] = [] if problems is None else problems
        self._locator: Locator | None = None
        #: ``data`` as ``orjson.dumps`` writes it, when the fast path wrote it (the key under
        #: which a run shares the checks of identical documents: runner/config_memo.py)
        self.compact: bytes | None = None

    def __repr__(self) -> str:
        return f"Loaded(path={self.path!r}, ok={self.ok}, problems={self.problems!r})"

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.raw.decode("utf-8")
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._text = value

    @property
    def ok(self) -> bool:
        return self.data is not None and not any(p.fatal for p in self.problems)

    def locate(self, pointer: str | None) -> tuple[int | None, int | None]:
        """1-based (line, column) of the value at ``pointer`` (or its nearest parent)."""
        if pointer is None or not self.text:
            return None, None
        if self._locator is None:
            self._locator = Locator(self.text)
        return self._locator.find(pointer)

    def positions(self) -> TextPositions | None:
        """What a report keeps to place its findings later: the path and the text (or the
        bytes it decodes from), not the parsed data (None when there is no text)."""
        if self._text is None:
            return TextPositions(self.path, None, self.raw)
        return TextPositions(self.path, self._text) if self._text else None


class TextPositions:
    """Line and column of JSON pointers in one file's text, tokenised on first use (the
    text decoded from ``raw`` then too, when it was not decoded yet)."""

    __slots__ = ("_locator", "_raw", "_text", "path")

    def __init__(self, path: Path, text: str | None, raw: bytes = b"") -> None:
        self.path, self._text, self._raw = path, text, raw
        self._locator: Locator | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text, self._raw = self._raw.decode("utf-8"), b""
        return self._text

    def locate(self, pointer: str | None) -> tuple[int | None, int | None]:
        if pointer is None:
            return None, None
        if self._locator is None:
            self._locator = Locator(self.text)
        return self._locator.find(pointer)


def json_int(value: Any, *, low: int = -MAX_INT, high: int = MAX_INT) -> int | None:
    """``value`` when it is a JSON integer in ``[low, high]``, else ``None`` (Python's bool
    is an int: excluded). The one door through which config integers reach arithmetic."""
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return None


def json_whole(value: Any, *, low: int = -MAX_INT, high: int = MAX_INT) -> int | None:
    """As :func:`json_int`, and a float with no fraction that a double holds exactly (``64.0``)
    counts as that integer, as JSON Schema and transformers read it; ``1e20``, ``64.5`` do not."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_EXACT_FLOAT_INT:
        value = int(value)
    return json_int(value, low=low, high=high)


def json_strings(value: Any) -> list[str]:
    """The strings of ``value`` when it is a JSON array (``architectures`` and the like),
    else ``[]``: ``"architectures": 1`` never reaches an ``in`` test or a loop."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def json_number(value: Any) -> float | None:
    """``value`` as a finite float when it is a JSON number whose magnitude a float holds,
    else ``None`` (booleans, strings, ``inf``/``nan`` and integers past 1e308 excluded)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return float(value) if -MAX_INT <= value <= MAX_INT else None
    return value if math.isfinite(value) else None


def escape_pointer_token(token: str) -> str:
    token = token.replace("~", "~0").replace("/", "~1")
    if not token.isascii() and not _encodable(token):  # a lone surrogate: print it escaped
        token = token.encode("utf-8", "backslashreplace").decode("ascii", "replace")
    return token


def pointer_from_parts(parts) -> str:
    return "".join("/" + escape_pointer_token(str(p)) for p in parts)


def read_json_bytes(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    """The bytes of the JSON file ``path`` within the size limit (``ReadRefused`` says why
    not): what :func:`load_json` parses."""
    return read_file(path, limit=MAX_JSON_BYTES if max_bytes is None else max_bytes, what=_WHAT)


def load_json(path: Path, *, require_object: bool = True, max_bytes: int | None = None) -> Loaded:
    """Read and parse ``path``; never raises for bad input.

    :func:`spec_format.base.bounded.read_file` reads it (one open, one fstat and the reads for a
    regular file within the limit) or says why not (missing, not a regular file,
    unreadable, too large): a fatal problem of that kind."""
    out = Loaded(path=path)
    try:
        raw = read_json_bytes(path, max_bytes)
    except ReadRefused as refused:
        out.problems.append(Problem(refused.kind, refused.message, True))
        return out
    return parse_json_bytes(raw, path, require_object=require_object, out=out)


#: what the parser saw of one document (per thread: the hooks below are the decoder's)
_seen = threading.local()


def _pairs_hook(pairs: list) -> dict:
    obj = dict(pairs)
    _seen.counts["duplicate-key"] += len(pairs) - len(obj)
    return obj


def _constant_hook(name: str) -> float:
    _seen.counts["non-finite-number"] += 1
    return float(name.replace("Infinity", "inf"))


def _int_hook(literal: str) -> int | float:
    if len(literal) > MAX_INT_DIGITS:  # int() would refuse or take quadratic time
        _seen.counts["number-out-of-range"] += 1
        return -math.inf if literal.startswith("-") else math.inf
    value = int(literal)
    if not -MAX_INT <= value <= MAX_INT:
        _seen.counts["number-out-of-range"] += 1
    return value


def _float_hook(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e999: Python reads Infinity
        _seen.counts["number-out-of-range"] += 1
    return value


#: one decoder for every document (json.loads with hooks would build one per call)
_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs_hook,
    parse_constant=_constant_hook,
    parse_int=_int_hook,
    parse_float=_float_hook,
)


#: the bytes the fast path looks at, each digit read as ``0`` and ``[`` as ``{`` (one count)
_SHAPE = bytes.maketrans(b"0123456789[", b"0000000000{")
#: a run of digits this long may be an integer past MAX_INT (orjson reads up to 2**64 - 1 as
#: an int and longer ones as floats, where the hooks report them): the slow path decides
_LONG_DIGITS = b"0" * len(str(MAX_INT))
#: larger documents take the slow path, whose memory the hostile-input tests bound (orjson
#: builds a whole document tree first, and an allocation that fails there is not a
#: MemoryError); configs are a few KB, the largest verifier configs tens of KB
FAST_MAX_BYTES = 1 << 20


def _fast_parse(raw: bytes, require_object: bool) -> tuple[Any, bytes] | None:
    """The document parsed by orjson, and ``orjson.dumps`` of it, when that is provably
    what the hook-based parser below would return with no problem at all, else ``None``
    (the slow path decides).

    orjson refuses what the hooks would report (NaN/Infinity, a float that overflows, a
    BOM, bad UTF-8, a lone surrogate escape, trailing commas or data, empty input), reads
    numbers to the same values, and keeps the last of duplicate keys silently. So, on the
    bytes: no backslash (every string is then its bytes, verbatim), no run of 19 digits
    (an integer that may not fit int64), and as many colons as in ``orjson.dumps`` of the
    result: each key of the text brings one, strings carry theirs verbatim into the
    dump, and a dropped duplicate key would take at least its own colon with it."""
    if len(raw) > FAST_MAX_BYTES:
        return None
    shape = raw.translate(_SHAPE)
    if b"\\" in shape or _LONG_DIGITS in shape:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:  # the slow path says what is wrong
        return None
    if require_object and not isinstance(data, dict):
        return None
    # nesting deeper than MAX_DEPTH needs at least that many brackets; most files have fewer
    if shape.count(b"{") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        return None
    compact = orjson.dumps(data)
    if shape.count(b":") != compact.count(b":"):
        return None  # a duplicate key
    return data, compact


def parse_json_bytes(
    raw: bytes,
    path: Path,
    *,
    require_object: bool = True,
    out: Loaded | None = None,
    fast: bool = True,
) -> Loaded:
    """``raw`` parsed, with every problem found in it. ``fast=False`` skips the orjson path
    (the reference: tests/test_jsonload_fast.py compares both)."""
    out = out or Loaded(path=path)
    out.raw = raw
    parsed = _fast_parse(raw, require_object) if fast else None
    if parsed is not None:  # no problem; the text is decoded when a position is asked for
        (out.data, out.compact), out._text = parsed, None
        return out
    if not raw.strip():
        out.problems.append(Problem("empty", message("empty-file", path=path), True))
        return out
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
        out.problems.append(
            Problem(
                "bom",
                message("utf8-bom", path=path),
                False,
                pointer="",
                line=1,
                column=1,
            )
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        out.problems.append(
            Problem(
                "not-utf8",
                message("not-utf8", "byte", path=path, line=line, column=col, byte=raw[exc.start]),
                True,
                line=line,
                column=col,
            )
        )
        return out
    out.text = text
    # how many duplicate keys, NaN/Infinity literals and out-of-range numbers the parser saw
    seen = _seen.counts = {"duplicate-key": 0, "non-finite-number": 0, "number-out-of-range": 0}
    try:
        if text.startswith("\ufeff"):  # a second BOM: what json.loads says of it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        data = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        line, column, detail = _syntax_error(exc)
        out.problems.append(
            Problem(
                "not-json",
                message("invalid-json", path=path, line=line, column=column, detail=detail),
                True,
                line=line,
                column=column,
            )
        )
        return out
    except RecursionError:
        out.problems.append(
            Problem("too-deep", message("nested-too-deep", "recursion", path=path), True)
        )
        return out
    # nesting deeper than MAX_DEPTH needs at least that many brackets; most files have fewer
    if text.count("{") + text.count("[") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        out.problems.append(
            Problem(
                "too-deep",
                message("nested-too-deep", "limit", path=path, limit=MAX_DEPTH),
                True,
            )
        )
        return out
    if require_object and not isinstance(data, dict):
        out.problems.append(
            Problem(
                "not-object",
                message("not-an-object", path=path, found=_json_type(data)),
                True,
                pointer="",
                line=1,
                column=1,
            )
        )
        return out
    out.data = data
    if _SURROGATE_ESCAPE.search(text):
        _lone_surrogates(data, out)
    if any(seen.values()):
        locator = Locator(text)
        out._locator = locator
        listed = [
            (
                "duplicate-key",
                message("duplicate-key", "key", key=pointer.rsplit("/", 1)[-1]),
                pointer,
                line,
                col,
            )
            for pointer, line, col in locator.duplicates
        ]
        listed += [
            (
                "non-finite-number",
                message("non-finite-number", "literal", literal=literal),
                pointer,
                line,
                col,
            )
            for pointer, literal, line, col in locator.non_finite
        ]
        listed += [
            (
                "number-out-of-range",
                message(
                    "non-finite-number", "out-of-range", literal=_shorten(literal), max_int=MAX_INT
                ),
                pointer,
                line,
                col,
            )
            for pointer, literal, line, col in locator.out_of_range
        ]
        for kind, text, pointer, line, col in listed:
            out.problems.append(Problem(kind, text, False, pointer=pointer, line=line, column=col))
        recorded = {
            "duplicate-key": len(locator.duplicates),
            "non-finite-number": len(locator.non_finite),
            "number-out-of-range": len(locator.out_of_range),
        }
        for kind, count in seen.items():
            left_out = count - recorded[kind]
            if left_out <= 0:
                continue
            out.problems.append(
                Problem(
                    kind,
                    message(_RULE_OF[kind], "more", count=left_out, kind=kind),
                    False,
                )
            )
    return out


def _shorten(literal: str, limit: int = 40) -> str:
    if len(literal) <= limit:
        return literal
    return f"{literal[:20]}...({len(literal):,} characters)"


def _lone_surrogates(data: Any, out: Loaded) -> None:
    """A problem per string (key or value) holding a lone surrogate (capped)."""
    bad: list[str] = []
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                child = pointer + "/" + escape_pointer_token(key)
                if not _encodable(key):
                    bad.append(child)
                stack.append((value, child))
        elif isinstance(node, list):
            stack.extend((value, f"{pointer}/{i}") for i, value in enumerate(node))
        elif isinstance(node, str) and not _encodable(node):
            bad.append(pointer)
    for pointer in bad[:MAX_PROBLEMS]:
        out.problems.append(
            Problem(
                "lone-surrogate",
                message("not-utf8", "lone-surrogate"),
                False,
                pointer=pointer,
            )
        )
    if len(bad) > MAX_PROBLEMS:
        out.problems.append(
            Problem(
                "lone-surrogate",
                message("not-utf8", "more", count=len(bad) - MAX_PROBLEMS),
                False,
            )
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_type(value: Any) -> str:
    """``an array``, ``a string``, ``null``: the JSON type of a decoded value, for messages."""
    name = json_type(value)
    return name if name == "null" else f"{'an' if name[0] in 'ao' else 'a'} {name}"


def _depth(value: Any) -> int:
    depth, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        depth = max(depth, d)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((v, d + 1) for v in children if isinstance(v, (dict, list)))
    return depth if isinstance(value, (dict, list)) else 0


_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S
)  # unrolled: no per-character backtracking state
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERAL = re.compile(r"true|false|null|NaN|-?Infinity")


class Locator:
    """Maps JSON pointers to positions in the original text.

    A small scanner (the text already parsed, so it trusts the grammar); it also collects
    the pointers of duplicate keys and of non-finite number literals (the first
    MAX_PROBLEMS of each). It stops after MAX_POSITIONS values, so time and memory stay
    bounded; pointers past that point get no line number.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.positions: dict[str, int] = {}
        self.duplicates: list[tuple[str, int, int]] = []
        self.non_finite: list[tuple[str, str, int, int]] = []
        self.out_of_range: list[tuple[str, str, int, int]] = []
        self._visited = 0
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        # the text already parsed; a scanner slip only costs line numbers
        with contextlib.suppress(
            IndexError, AttributeError, RecursionError, json.JSONDecodeError, _Enough
        ):
            self._value(_WS.match(text, 0).end(), "")

    def _linecol(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self._line_starts[lo] + 1

    def find(self, pointer: str) -> tuple[int | None, int | None]:
        while True:
            if pointer in self.positions:
                return self._linecol(self.positions[pointer])
            if not pointer:
                return None, None
            pointer = pointer.rsplit("/", 1)[0]

    def _record(self, found: list, item: tuple) -> None:
        if len(found) < MAX_PROBLEMS:
            found.append(item)

    def _skip(self, i: int) -> int:
        return _WS.match(self.text, i).end()

    def _value(self, i: int, pointer: str) -> int:
        self._visited += 1
        if self._visited > MAX_POSITIONS:
            raise _Enough
        self.positions.setdefault(pointer, i)
        ch = self.text[i]
        if ch == "{":
            seen: set[str] = set()
            i = self._skip(i + 1)
            if self.text[i] == "}":
                return i + 1
            while True:
                m = _STRING.match(self.text, i)
                key = m.group(0)
                # a key without escapes is its text; json.loads only where one must be read
                key = json.loads(key) if "\\" in key else key[1:-1]
                child = pointer + "/" + escape_pointer_token(key)
                if key in seen:
                    line, col = self._linecol(i)
                    self._record(self.duplicates, (child, line, col))
                    self.positions[child] = i
                seen.add(key)
                i = self._skip(m.end())
                i = self._skip(i + 1)  # the colon
                i = self._skip(self._value(i, child))
                if self.text[i] == ",":
                    i = self._skip(i + 1)
                    continue
                return i + 1  # the closing brace
        if ch == "[":
            index = 0
            i = self._skip(i + 1)
            if self.text[i] == "]":
                return i + 1
            while True:
                i = self._skip(self._value(i, f"{pointer}/{index}"))
                index += 1
                if self.text[i] == ",":
                    i = self._skip(i + 1)
                    continue
                return i + 1
        if ch == '"':
            return _STRING.match(self.text, i).end()
        m = _LITERAL.match(self.text, i)
        if m:
            if m.group(0) in ("NaN", "Infinity", "-Infinity"):
                line, col = self._linecol(i)
                self._record(self.non_finite, (pointer, m.group(0), line, col))
            return m.end()
        end = _NUMBER.match(self.text, i).end()
        if end - i > 18 or "e" in self.text[i:end].lower():  # cheap test before the exact one
            literal = self.text[i:end]
            if _out_of_range(literal):
                line, col = self._linecol(i)
                self._record(self.out_of_range, (pointer, literal, line, col))
        return end


class _Enough(Exception):
    """The Locator has scanned MAX_POSITIONS values."""


def _out_of_range(literal: str) -> bool:
    if any(c in literal for c in ".eE"):
        return not math.isfinite(float(literal))
    return len(literal) > MAX_INT_DIGITS or abs(int(literal)) > MAX_INT


def _syntax_error(exc: json.JSONDecodeError) -> tuple[int, int, str]:
    """Line, column and wording of a syntax error: the parser's, except for a trailing
    comma, which is named and located at the comma (the parser only says what it expected
    after it)."""
    before = exc.doc[: exc.pos].rstrip()
    closing = exc.doc[exc.pos : exc.pos + 1]
    if before.endswith(",") and closing in ("}", "]"):
        pos = len(before) - 1
        line = exc.doc.count("\n", 0, pos) + 1
        column = pos - exc.doc.rfind("\n", 0, pos)
        return line, column, f"trailing comma before '{closing}'; remove it (JSON allows none)"
    return exc.lineno, exc.colno, exc.msg


def spelled(value: Any) -> str:
    """A JSON value the way a message shows it: ``true``, ``false``, ``null`` and numbers
    as JSON spells them (never Python's ``True``/``None``), strings quoted."""
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return repr(value)
