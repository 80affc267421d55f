"""What one run finds, shared by identical inputs.

What a config file's checks find is a function of its bytes and of what one run holds fixed
(its options and its verifier); what the config checks of a checkpoint find (format
version, type dispatch, JSON Schema, the cross-field, consumer and version rules) is a
function of its parsed config. A batch often holds one config many times (the
``checkpoint-N`` folders of a training run, mirrors and quantized copies of one draft), so
a run checks each distinct one once and hands the others the same findings under their own
path:

* a config file named on its own (no checkpoint around it) is looked up by its bytes, and
  a repeat is neither parsed nor checked: it takes the whole report of the first
  (:meth:`ConfigMemo.file_report`);
* the config of a checkpoint is looked up by the document as orjson writes it, which tells
  apart what JSON tells apart (``1``, ``1.0`` and ``true``; the order of keys, which
  messages follow): its weights are checked as always (:meth:`ConfigMemo.outcome`).

Keys are whole, never digests. An input is checked on its own, never shared, when its
parse reported a problem (a duplicate key or a non-finite number: what the parser kept is
not all the file says), when its path is one a shell would quote (messages quote commands
that name it), for standard input and ``hf://`` paths (no command rewrites those in
place), and when a message would come out long enough to be shortened. A run whose first
inputs do not repeat stops looking (GIVE_UP_AFTER), so that a batch of distinct configs
pays neither for keys nor for copies. What is shared is computed under a placeholder path
and given each file's own on the way out; tests/test_config_memo.py checks a batch against
each file checked alone.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from spec_format.base.jsonload import Loaded
from spec_format.base.report import FileReport, Finding, PositionSource

#: the path a shared document is checked under (shell-safe: quoted the same in any command)
PLACEHOLDER = "specfmt-shared-config-path.json"
#: distinct documents one run remembers (a few MiB at most); later ones are checked alone
LIMIT = 4096
#: after this many distinct documents with fewer than a quarter as many repeats, a run
#: stops looking for repeats (a batch of distinct configs pays for neither key nor copy)
GIVE_UP_AFTER = 256
#: the bytes of files a run keeps (to share reports and positions by bytes)
TEXT_BYTES = 8 << 20
#: a message this long may have been shortened around its middle (rules/base.bounded),
#: where a longer or shorter path would have cut it elsewhere: such a document is not shared
LONG_MESSAGE = 1000
#: what shlex.quote leaves unquoted
_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


@dataclass(frozen=True)
class Outcome:
    """What the config checks found of one document, under the path they were given."""

    version: str | None  # None: no key of the format to infer one from (a third-party config)
    source: str | None
    #: facts.versions.Detection; None when the version was requested, and in a stored
    #: outcome (the version rules that read it have run; a later reader detects again)
    detection: Any
    model_type: str | None  # the dispatched type, or the declared one (bounded) when none
    dispatched: bool  # False: the type could not be checked (a dispatch finding says why)
    findings: tuple[Finding, ...]


class _Pieces:
    """Findings found under the placeholder, cut at it: each file's copy joins the pieces
    around its own path (searching every message again per file costs more)."""

    __slots__ = ("pieces",)

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.pieces = [
            (
                f.__dict__,
                f.message.split(PLACEHOLDER) if PLACEHOLDER in f.message else None,
                None if f.file == PLACEHOLDER else f.file.split(PLACEHOLDER),
                None if f.command is None else [a.split(PLACEHOLDER) for a in f.command],
            )
            for f in findings
        ]

    def at(self, file: str) -> list[Finding] | None:
        """The findings for ``file`` (None when a message would come out too long)."""
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
        return moved


class _Shared:
    """A stored outcome of the config checks."""

    __slots__ = ("findings", "outcome")

    def __init__(self, outcome: Outcome) -> None:
        self.outcome, self.findings = outcome, _Pieces(outcome.findings)

    def at(self, file: str) -> Outcome | None:
        moved = self.findings.at(file)
        if moved is None:
            return None
        o = self.outcome
        return Outcome(o.version, o.source, o.detection, o.model_type, o.dispatched, tuple(moved))


class _SharedReport:
    """A stored report of a config file, found under the placeholder."""

    __slots__ = ("findings", "report", "skipped")

    def __init__(self, report: FileReport) -> None:
        self.report, self.findings = report, _Pieces(report.findings)
        self.skipped = [s.split(PLACEHOLDER) for s in report.skipped]

    def at(self, shown: str) -> FileReport | None:
        findings = self.findings.at(shown)
        if findings is None:
            return None
        t = self.report
        return FileReport(
            path=shown,
            findings=findings,
            model_type=t.model_type,
            format_version=t.format_version,
            version_source=t.version_source,
            skipped=[shown.join(s) for s in self.skipped],
            unreadable=t.unreadable,
            weights_absent=t.weights_absent,
            weights_required=t.weights_required,
            coverage=t.coverage,
            positions=None if t.positions is None else _SameText(shown, t.positions),
        )


class ConfigMemo:
    """The outcomes of the documents one run has checked (see the module docstring)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = LIMIT if limit is None else limit
        self.active = True  # False once the run's inputs proved not to repeat
        #: config checks by document, reports by file bytes (None: checked alone, always)
        self._seen: dict[bytes, _Shared | None] = {}
        self._files: dict[bytes, _SharedReport | None] = {}
        #: the positions of the first file of each text, shared by files of the same text
        self._texts: dict[bytes, PositionSource] = {}
        self._bytes = 0  # of the files kept in _files and _texts
        self.shared = 0  # inputs that took a stored outcome or report (for tests, benches)

    def _stored(self, table: dict, key: bytes, value: Any, size: int = 0) -> None:
        if len(table) < self.limit and self._bytes + size <= TEXT_BYTES:
            table[key] = value
            self._bytes += size
        distinct = len(self._seen) + len(self._files)
        if distinct == GIVE_UP_AFTER and self.shared * 4 < GIVE_UP_AFTER:
            # the inputs of this run do not repeat: stop looking
            self.active = False
            self._seen, self._files, self._texts = {}, {}, {}

    def file_report(
        self, raw: bytes, shown: str, check: Callable[[], FileReport]
    ) -> FileReport | None:
        """The report of the config file ``shown`` whose bytes are ``raw``, from a file of
        the same bytes or from ``check()`` (its report under the placeholder path); None
        when it must be checked on its own (``shown`` is not shell-safe, or the report
        cannot be moved to it)."""
        if not _SHELL_SAFE.fullmatch(shown) or PLACEHOLDER in shown:
            return None
        stored = self._files.get(raw, _UNSEEN)
        if stored is _UNSEEN:
            report = check()  # a bug in a check raises through: nothing is stored
            stored = None
            if all(len(f.message) <= LONG_MESSAGE for f in report.findings):
                stored = _SharedReport(report)
            self._stored(self._files, raw, stored, len(raw))
        else:
            self.shared += 1
        return stored.at(shown) if stored is not None else None

    def outcome(self, loaded: Loaded, check: Callable[[str], Outcome]) -> Outcome:
        """``check(file)`` for ``loaded``, or the stored outcome of an identical document."""
        file = str(loaded.path)
        key = _key(loaded, file) if self.active else None
        if key is None:
            return check(file)
        stored = self._seen.get(key, _UNSEEN)
        if stored is _UNSEEN:
            checked = check(PLACEHOLDER)
            stored = None
            if all(len(f.message) <= LONG_MESSAGE for f in checked.findings):
                # detection: what the version rules read, and they have run
                stored = _Shared(dataclasses.replace(checked, detection=None))
            # a copy of the key: orjson's buffer is larger than its bytes
            self._stored(self._seen, memoryview(key).tobytes(), stored)
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
        if mine is None or not self.active or not raw:
            return mine
        first = self._texts.get(raw)
        if first is not None:
            return _SameText(mine.path, first)
        if len(self._texts) < self.limit and self._bytes + len(raw) <= TEXT_BYTES:
            self._texts[raw] = mine
            self._bytes += len(raw)
        return mine


class _SameText:
    """The positions of a file whose text another file of the run has (see ConfigMemo.positions)."""

    __slots__ = ("path", "_first")

    def __init__(self, path: object, first: PositionSource) -> None:
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
