"""The config checks of one run, shared by identical documents.

What the config checks find (format version, type dispatch, JSON Schema, the cross-field,
consumer and version rules) is a function of the parsed document and of what one run holds
fixed: its options and its verifier. A batch often holds one document many times (the
``checkpoint-N`` folders of a training run, mirrors and quantized copies of one draft), so
a run checks each distinct document once and hands the others the same findings under
their own path.

The key is the document as orjson writes it: it tells apart what JSON tells apart (``1``,
``1.0`` and ``true``; the order of keys, which messages follow), and it is the whole key,
not a digest of it. A document is checked on its own, never shared, when its parse reported
a problem (a duplicate key or a non-finite number: what the parser kept is not all the file
says), when its path is one a shell would quote (messages quote commands that name it), and
for standard input and ``hf://`` paths (no command rewrites those in place).

A run whose first documents do not repeat stops looking (GIVE_UP_AFTER), so that a batch
of distinct configs pays neither for the keys nor for the copies. The findings of a shared
document are computed under a placeholder path and given each
file's own on the way out; tests/test_config_memo.py checks a batch against each file
checked alone.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from spec_format.base.jsonload import Loaded, TextPositions
from spec_format.base.report import Finding, PositionSource

#: the path a shared document is checked under (shell-safe: quoted the same in any command)
PLACEHOLDER = "specfmt-shared-config-path.json"
#: distinct documents one run remembers (a few MiB at most); later ones are checked alone
LIMIT = 4096
#: after this many distinct documents with fewer than a quarter as many repeats, a run
#: stops looking for repeats (a batch of distinct configs pays for neither key nor copy)
GIVE_UP_AFTER = 256
#: the bytes of files a run keeps to share their positions
TEXT_BYTES = 8 << 20
#: a message this long may have been shortened around its middle (rules/base.bounded),
#: where a longer or shorter path would have cut it elsewhere: such a document is not shared
LONG_MESSAGE = 1000
#: what shlex.quote leaves unquoted
_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


@dataclass(frozen=True)
class Outcome:
    """What the config checks found of one document, under the path they were given."""

    version: str
    source: str
    #: facts.versions.Detection; None when the version was requested, and in a stored
    #: outcome (the version rules that read it have run; a later reader detects again)
    detection: Any
    model_type: str | None  # the dispatched type, or the declared one (bounded) when none
    dispatched: bool  # False: the type could not be checked (a dispatch finding says why)
    findings: tuple[Finding, ...]


class _Shared:
    """A stored outcome with its findings cut at the placeholder: each file's copy joins the
    pieces around its own path (searching every message again per file costs more)."""

    __slots__ = ("outcome", "pieces")

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.pieces = [
            (
                f.__dict__,
                f.message.split(PLACEHOLDER) if PLACEHOLDER in f.message else None,
                None if f.file == PLACEHOLDER else f.file.split(PLACEHOLDER),
                None if f.command is None else [a.split(PLACEHOLDER) for a in f.command],
            )
            for f in outcome.findings
        ]

    def at(self, file: str) -> Outcome | None:
        """The outcome for ``file`` (None when a message would come out too long)."""
        moved = []
        for fields, message, name, command in self.pieces:
            copy = object.__new__(Finding)
            # fields set directly: a frozen dataclass's __init__ sets each one through
            # object.__setattr__, which was most of a shared document's cost
            mine = copy.__dict__
            mine.update(fields)
            mine["file"] = file if name is None else file.join(name)
            if message is not None:
                mine["message"] = text = file.join(message)
                if len(text) > LONG_MESSAGE:
                    return None
            if command is not None:
                mine["command"] = tuple([file.join(a) for a in command])
            moved.append(copy)
        o = self.outcome
        return Outcome(o.version, o.source, o.detection, o.model_type, o.dispatched, tuple(moved))


class ConfigMemo:
    """The outcomes of the documents one run has checked (see the module docstring)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = LIMIT if limit is None else limit
        #: outcomes by document (None: checked alone, every time); None once given up
        self._seen: dict[bytes, _Shared | None] | None = {}
        self.shared = 0  # documents that took a stored outcome (for tests and benches)
        #: the positions of the first file of each text, shared by files of the same text
        self._texts: dict[bytes, TextPositions] = {}
        self._text_bytes = 0

    def outcome(self, loaded: Loaded, check: Callable[[str], Outcome]) -> Outcome:
        """``check(file)`` for ``loaded``, or the stored outcome of an identical document."""
        file = str(loaded.path)
        seen = self._seen
        key = None if seen is None else _key(loaded, file)
        if key is None:
            return check(file)
        stored = seen.get(key, _UNSEEN)
        if stored is _UNSEEN:
            checked = check(PLACEHOLDER)
            stored = None
            if all(len(f.message) <= LONG_MESSAGE for f in checked.findings):
                # detection: what the version rules read, and they have run
                stored = _Shared(dataclasses.replace(checked, detection=None))
            if len(seen) < self.limit:  # a copy: orjson's buffer is larger than its bytes
                seen[memoryview(key).tobytes()] = stored
            if len(seen) == GIVE_UP_AFTER and self.shared * 4 < GIVE_UP_AFTER:
                self._seen = None  # the documents of this run do not repeat: stop looking
                self._texts = {}
        else:
            self.shared += 1
        here = stored.at(file) if stored is not None else None
        return here if here is not None else check(file)

    def positions(self, loaded: Loaded) -> PositionSource | None:
        """Where ``loaded``'s findings are, from the first file of this run with the same
        text when there is one (tokenised once for all of them: a batch that repeats a
        document repeats its findings, and placing them would tokenise each copy)."""
        mine = loaded.positions()
        raw = loaded.raw  # the same bytes, the same text and positions
        if mine is None or self._seen is None or not raw:
            return mine
        first = self._texts.get(raw)
        if first is not None:
            return _SameText(mine.path, first)
        if self._text_bytes + len(raw) <= TEXT_BYTES:
            self._texts[raw] = mine
            self._text_bytes += len(raw)
        return mine


class _SameText:
    """The positions of a file whose text another file of the run has (see ConfigMemo.positions)."""

    __slots__ = ("path", "_first")

    def __init__(self, path: object, first: TextPositions) -> None:
        self.path, self._first = path, first

    def locate(self, pointer: str | None) -> tuple[int | None, int | None]:
        return self._first.locate(pointer)


_UNSEEN: Any = object()


def _key(loaded: Loaded, file: str) -> bytes | None:
    if loaded.problems or file == "-" or file.startswith("hf://"):
        return None
    if not _SHELL_SAFE.fullmatch(file) or PLACEHOLDER in file:
        return None
    if loaded.compact is not None:  # written by the parser's fast path
        return loaded.compact
    try:
        return orjson.dumps(loaded.data)
    except (orjson.JSONEncodeError, TypeError):  # an integer past 64 bits, say
        return None
