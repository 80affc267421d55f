"""Strict, bounded loading of JSON files (config.json, verifier configs, indexes).

Python's :mod:`json` is lenient where other readers are not: it keeps the last of two
duplicate keys, accepts ``NaN``/``Infinity``, and rejects a UTF-8 byte-order mark with a
confusing message. This module reads with the standard parser (fast, C-accelerated) and
turns each of those cases into a :class:`Problem` with a JSON pointer and a line, so the
caller can report it as a finding instead of a traceback. A problem names the I rule that
reports it and the parameters of the message; the rule words it (``Rule.template``).

Positions: the standard parser keeps no positions, so :class:`Locator` re-scans the text
(only when a finding needs a line number) with a small scanner of its own.
"""

from __future__ import annotations

import contextlib
import json
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec_format.rules import input as rules
from spec_format.rules.base import Rule

MAX_JSON_BYTES = 16 * 1024 * 1024  # configs are a few KB; indexes of huge models ~ 1 MB
MAX_DEPTH = 64  # real configs nest 4 levels deep
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the bytes or the JSON text: the I rule that reports it and the
    parameters its message template needs."""

    rule: type[Rule]
    fatal: bool
    params: dict[str, Any] = field(default_factory=dict)
    variant: str | None = None
    pointer: str | None = None
    line: int | None = None
    column: int | None = None

    @property
    def message(self) -> str:
        return self.rule.render(self.variant, **self.params)


@dataclass
class Loaded:
    """A parsed JSON document (``data`` is ``None`` when a fatal problem stopped parsing)."""

    path: Path
    data: Any = None
    text: str = ""
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.data is not None and not any(p.fatal for p in self.problems)

    _locator: Locator | None = None

    def locate(self, pointer: str | None) -> tuple[int | None, int | None]:
        """1-based (line, column) of the value at ``pointer`` (or its nearest parent)."""
        if pointer is None or not self.text:
            return None, None
        if self._locator is None:
            self._locator = Locator(self.text)
        return self._locator.find(pointer)


def json_int(value: Any) -> int | None:
    """``value`` when it is a JSON integer, else ``None`` (Python's bool is an int: excluded)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def escape_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer_from_parts(parts) -> str:
    return "".join("/" + escape_pointer_token(str(p)) for p in parts)


def load_json(path: Path, *, require_object: bool = True, max_bytes: int | None = None) -> Loaded:
    """Read and parse ``path``; never raises for bad input."""
    max_bytes = MAX_JSON_BYTES if max_bytes is None else max_bytes
    out = Loaded(path=path)
    try:
        st = path.stat()
        size = st.st_size
    except FileNotFoundError:
        out.problems.append(Problem(rules.PathNotFound, True, {"path": path}, "file"))
        return out
    except OSError as exc:
        out.problems.append(_unreadable(path, exc))
        return out
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        out.problems.append(
            Problem(rules.FileUnreadable, True, {"path": path, "kind": kind}, "not-a-file")
        )
        return out
    if size > max_bytes:
        out.problems.append(
            Problem(
                rules.FileUnreadable,
                True,
                {"path": path, "size": size, "limit": max_bytes},
                "too-large",
            )
        )
        return out
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.problems.append(_unreadable(path, exc))
        return out
    return parse_json_bytes(raw, path, require_object=require_object, out=out)


def _unreadable(path: Path, exc: OSError) -> Problem:
    return Problem(rules.FileUnreadable, True, {"path": path, "reason": exc.strerror or exc}, "os")


def parse_json_bytes(
    raw: bytes, path: Path, *, require_object: bool = True, out: Loaded | None = None
) -> Loaded:
    out = out or Loaded(path=path)
    if not raw.strip():
        out.problems.append(Problem(rules.EmptyFile, True, {"path": path}))
        return out
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
        out.problems.append(
            Problem(
                rules.Utf8Bom,
                False,
                {"path": path},
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
                rules.NotUtf8,
                True,
                {"path": path, "line": line, "column": col, "byte": raw[exc.start]},
                line=line,
                column=col,
            )
        )
        return out
    out.text = text
    duplicates: list[str] = []
    non_finite: list[str] = []

    def pairs_hook(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj:
                duplicates.append(key)
            obj[key] = value
        return obj

    def constant_hook(name):
        non_finite.append(name)
        return float(name.replace("Infinity", "inf"))

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=constant_hook)
    except json.JSONDecodeError as exc:
        out.problems.append(
            Problem(
                rules.InvalidJson,
                True,
                {"path": path, "line": exc.lineno, "column": exc.colno, "detail": exc.msg},
                line=exc.lineno,
                column=exc.colno,
            )
        )
        return out
    except RecursionError:
        out.problems.append(Problem(rules.NestedTooDeep, True, {"path": path}, "recursion"))
        return out
    # nesting deeper than MAX_DEPTH needs at least that many brackets; most files have fewer
    if text.count("{") + text.count("[") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        out.problems.append(
            Problem(rules.NestedTooDeep, True, {"path": path, "limit": MAX_DEPTH}, "limit")
        )
        return out
    if require_object and not isinstance(data, dict):
        out.problems.append(
            Problem(
                rules.NotAnObject,
                True,
                {"path": path, "found": _json_type(data)},
                pointer="",
                line=1,
                column=1,
            )
        )
        return out
    out.data = data
    if duplicates or non_finite:
        locator = Locator(text)
        out._locator = locator
        for pointer, line, col in locator.duplicates:
            out.problems.append(
                Problem(
                    rules.DuplicateKey,
                    False,
                    {"key": pointer.rsplit("/", 1)[-1]},
                    pointer=pointer,
                    line=line,
                    column=col,
                )
            )
        for pointer, literal, line, col in locator.non_finite:
            out.problems.append(
                Problem(
                    rules.NonFiniteNumber,
                    False,
                    {"literal": literal},
                    pointer=pointer,
                    line=line,
                    column=col,
                )
            )
    return out


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _depth(value: Any) -> int:
    depth, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        depth = max(depth, d)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((v, d + 1) for v in children if isinstance(v, (dict, list)))
    return depth if isinstance(value, (dict, list)) else 0


_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERAL = re.compile(r"true|false|null|NaN|-?Infinity")


class Locator:
    """Maps JSON pointers to positions in the original text.

    A small scanner (the text already parsed, so it trusts the grammar); it also collects
    the pointers of duplicate keys and of non-finite number literals.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.positions: dict[str, int] = {}
        self.duplicates: list[tuple[str, int, int]] = []
        self.non_finite: list[tuple[str, str, int, int]] = []
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        # the text already parsed; a scanner slip only costs line numbers
        with contextlib.suppress(IndexError, AttributeError, RecursionError):
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

    def _skip(self, i: int) -> int:
        return _WS.match(self.text, i).end()

    def _value(self, i: int, pointer: str) -> int:
        self.positions.setdefault(pointer, i)
        ch = self.text[i]
        if ch == "{":
            seen: set[str] = set()
            i = self._skip(i + 1)
            if self.text[i] == "}":
                return i + 1
            while True:
                m = _STRING.match(self.text, i)
                key = json.loads(m.group(0))
                child = pointer + "/" + escape_pointer_token(key)
                if key in seen:
                    line, col = self._linecol(i)
                    self.duplicates.append((child, line, col))
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
                self.non_finite.append((pointer, m.group(0), line, col))
            return m.end()
        return _NUMBER.match(self.text, i).end()
