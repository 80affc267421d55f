"""``--format text``: findings for people, in the shape of ruff and rustc.

Each finding is a headline ``path:line:col: severity ID message`` followed by indented
``why:`` and ``help:`` lines (the parts of the message after the headline: its reasons, then
the change that fixes it; see :func:`split_message`). Each input gets a status line first;
the run ends with its notes and a summary coloured by the worst severity.

Width: lines are wrapped at spaces (never inside a word; a path or other long token stays
whole) to ``COLUMNS`` when set, else to the terminal's width; output that is not a terminal
is not wrapped, so each finding's headline stays one greppable line.

Colour (and any other terminal styling) only when the stream is a terminal and the
``NO_COLOR`` environment variable is unset or empty; ``--color always|never`` overrides.
With colour, Markdown code spans (`` `specfmt fix` ``) are shown as code without their
backticks; plain output keeps the backticks. Lines are built as (text, style) segments:
with colour they go through rich, without it they are written directly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import TextIO

from spec_format.base.report import Coverage, FileReport, Finding, Report, Severity, Status, Tally
from spec_format.base.wording import human_bytes, plural, severity_word

Segment = tuple[str, str]  # (text, rich style or "")
Line = list[Segment]

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
#: the word a finding's severity is shown as ("note", as the summary counts "notes")
WORD = {s: severity_word(s) for s in Severity}
_STATUS_STYLE = {Status.OK: "green", Status.FAIL: "bold red", Status.UNREADABLE: "bold magenta"}
CODE_STYLE = "bold cyan"
#: hanging indents: a headline's continuation lines, and the why:/help: lines
HEAD_INDENT = 4
DETAIL_INDENT = 2

#: the first word of a clause that tells the reader what to do (the ``help:`` part)
_ACTIONS = frozenset(
    [
        "add",
        "align",
        "build",
        "change",
        "check",
        "choose",
        "convert",
        "copy",
        "correct",
        "create",
        "declare",
        "delete",
        "drop",
        "edit",
        "export",
        "fill",
        "fix",
        "give",
        "install",
        "keep",
        "list",
        "load",
        "make",
        "mark",
        "measure",
        "migrate",
        "move",
        "name",
        "open",
        "pass",
        "pick",
        "point",
        "provide",
        "publish",
        "put",
        "quote",
        "re-convert",
        "re-create",
        "re-export",
        "re-run",
        "re-train",
        "reconvert",
        "regenerate",
        "remove",
        "rename",
        "replace",
        "rerun",
        "retrain",
        "rewrite",
        "run",
        "save",
        "see",
        "select",
        "serve",
        "set",
        "spell",
        "split",
        "store",
        "supply",
        "train",
        "update",
        "upgrade",
        "use",
        "write",
    ]
)
_CLAUSE_END = re.compile(r"; |\. (?=[A-Z`\"])")
_BRACKETS = {"(": ")", "[": "]", "{": "}"}


def render_text(
    report: Report,
    stream: TextIO,
    *,
    color: bool | None = None,
    verbosity: int = 1,
    width: int | None = None,
) -> None:
    """verbosity 0: errors and the summary; 1: every finding; 2: also skipped checks.
    ``width``: wrap to this many columns (0: never; None: COLUMNS or the terminal)."""
    out = TextStream(stream, color=color, verbosity=verbosity, width=width)
    for file_report in report.files:
        out.file(file_report)
    out.finish(report.notes, report.tally())


class TextStream:
    """Text output written as each input is reported (what :func:`render_text` writes for
    a whole report): :meth:`file` per input, then :meth:`finish` with the notes and the
    run's tally."""

    def __init__(
        self,
        stream: TextIO,
        *,
        color: bool | None = None,
        verbosity: int = 1,
        width: int | None = None,
    ) -> None:
        tty = isatty(stream)
        if color is None:  # auto: a terminal, and NO_COLOR unset (no-color.org: any value)
            color = tty and not os.environ.get("NO_COLOR")
        if width is None:
            width = terminal_width(stream) if tty or os.environ.get("COLUMNS") else 0
        self.stream, self.color, self.verbosity, self.width = stream, color, verbosity, width
        self._console = None
        self._inputs = 0
        self._waiting: list[FileReport] = []

    def file(self, file_report: FileReport) -> None:
        """A failed or unreadable input (and every input under ``-q``/``-v``) is written
        now; the others wait for :meth:`finish`, which orders them by what matters and
        says a note repeated on many inputs once. A waiting input keeps only its located
        findings, never its file's text."""
        self._inputs += 1
        if self.verbosity == 1 and _rank(file_report) > 0:
            file_report.located_findings()
            self._waiting.append(file_report)
            return
        self._group(_file(file_report, self.verbosity, self.color, self.width))

    def finish(self, notes: list[str], tally: Tally) -> None:
        files = sorted(self._waiting, key=_rank)  # stable: arrival order within a rank
        many = self._inputs > 1
        groups = _grouped_notes(files, self.verbosity) if many else {}
        grouped = frozenset(groups)

        def clean(fr: FileReport) -> bool:
            return _rank(fr) == 3 or (
                fr.status is Status.OK and all(f.rule in grouped for f in fr.findings)
            )

        quiet = [f for f in files if clean(f)] if many else []
        if len(quiet) < 2:  # one clean input keeps its own line, with what was checked
            quiet = []
        for file_report in files:
            if not any(file_report is q for q in quiet):
                self._group(_file(file_report, self.verbosity, self.color, self.width, grouped))
        out: list[Line] = []
        for rule, frs in groups.items():  # repeated notes: once, with the inputs they are on
            out.extend(_group_lines(rule, frs, self.color, self.width))
            out.append([])
        if quiet:  # grouped: one line for every input without findings
            what = "findings" if not grouped else "other findings"
            head: Line = [("ok", _STATUS_STYLE[Status.OK]), (f" {len(quiet)} inputs without ", "")]
            names = ", ".join(f.path for f in quiet)
            out.extend(wrap([*head, (f"{what}: ", ""), (names, "bold")], self.width, HEAD_INDENT))
        for note in notes if self.verbosity > 0 else ():  # -q: findings and the summary only
            note_id, _, text = note.partition(" ")
            head = [("note ", "dim"), (note_id, CODE_STYLE if self.color else ""), (" ", "")]
            out.extend(wrap([*head, *code_spans(text, self.color)], self.width, HEAD_INDENT))
        out.append([(tally.summary(), _summary_style(tally))])
        self._waiting = []
        self._write(out)

    def _group(self, lines: Iterator[Line]) -> None:
        group = list(lines)
        if len(group) > 1:  # an input with findings is set off from the next one
            group.append([])
        self._write(group)

    def _write(self, lines: list[Line]) -> None:
        if not lines:
            return
        if not self.color:
            self.stream.write("".join("".join(text for text, _ in line) + "\n" for line in lines))
            return
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=self.stream, force_terminal=True, highlight=False, soft_wrap=True
            )
        from rich.text import Text

        for line in lines:
            self._console.print(Text.assemble(*line))


def configuration_lines(paths: list, isolated: bool = False) -> str:
    """What ``-v`` says first: the configuration file each group of inputs was checked with
    (``paths``: one per group, None where no file applied)."""
    if isolated:
        return "configuration: none (--isolated)"
    shown = [str(p) if p is not None else "none found (defaults)" for p in dict.fromkeys(paths)]
    return "\n".join(f"configuration: {p}" for p in shown)


def output_width(stream: TextIO) -> int:
    """The width to wrap text for ``stream`` at: a terminal's (with colour or without) or
    ``COLUMNS``; 0 (not wrapped) for a pipe or a file without ``COLUMNS``."""
    return terminal_width(stream) if isatty(stream) or os.environ.get("COLUMNS") else 0


def terminal_width(stream: TextIO | None = None) -> int:
    """``COLUMNS`` when it is a number, else the width of the terminal ``stream`` is (80
    when it cannot be asked)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno() if stream is not None else 1).columns
    except (AttributeError, ValueError, OSError):
        return 80


def isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _rank(fr: FileReport) -> int:
    """What matters first: failed and unreadable inputs, then warnings, then notes, then
    inputs without findings."""
    severities = {f.severity for f in fr.findings}
    if fr.status is not Status.OK or Severity.ERROR in severities:
        return 0
    return 1 if Severity.WARNING in severities else 2 if severities else 3


def _summary_style(tally: Tally) -> str:
    """Coloured by the worst severity of the run."""
    if tally.exit_code != 0 or tally.severities.get("error"):
        return "bold red"
    if tally.severities.get("warning"):
        return "yellow"
    return "green"


#: a note that fires on this many inputs of one run is said once for all of them
GROUP_NOTES_FROM = 3


def _grouped_notes(files: list[FileReport], verbosity: int) -> dict[str, list[FileReport]]:
    """rule -> the inputs it noted, for the notes repeated on many inputs (not with -v)."""
    if verbosity != 1:
        return {}
    by_rule: dict[str, list[FileReport]] = {}
    for fr in files:
        for rule in dict.fromkeys(f.rule for f in fr.findings if f.severity is Severity.INFO):
            by_rule.setdefault(rule, []).append(fr)
    return {r: frs for r, frs in by_rule.items() if len(frs) >= GROUP_NOTES_FROM}


def _group_lines(rule: str, frs: list[FileReport], color: bool, width: int) -> list[Line]:
    from spec_format.rules import registry

    try:
        summary = registry.get(rule).summary()
    except KeyError:  # pragma: no cover - a finding of an unregistered rule
        summary = ""
    head: Line = [("note", _STYLE[Severity.INFO]), (" ", ""), (rule, "bold"), (" ", "")]
    head += [(f"on {len(frs)} inputs: ", ""), *code_spans(summary, color)]
    names = ", ".join(fr.path for fr in frs)
    out = wrap(head, width, HEAD_INDENT)
    out += wrap([("  in: ", "dim"), (names, "")], width, 6)
    hint = f"`specfmt explain {rule}`; -v shows each with its own command"
    out += wrap([("  help: ", "green"), *code_spans(hint, color)], width, 8)
    return out


def _file(
    fr: FileReport, verbosity: int, color: bool, width: int, grouped: frozenset[str] = frozenset()
) -> Iterator[Line]:
    # only the findings printed are located (-q prints errors: a passing input's notes
    # never re-read its file's text)
    shown = fr.sorted_findings(
        lambda f: f.rule not in grouped and (verbosity > 0 or f.severity is Severity.ERROR)
    )
    if not shown and verbosity == 0:
        return
    head: Line = [(fr.status.value, _STATUS_STYLE[fr.status]), (" ", ""), (fr.path, "bold")]
    what = [fr.model_type] if fr.model_type else []
    if fr.format_version:
        what.append(f"format {fr.format_version} ({fr.version_source})")
    if what:
        head += [(": ", ""), (", ".join(what), "dim")]
    checked = coverage_text(fr.coverage)
    if checked and fr.status is Status.OK:
        tail: Line = [("; checked ", "dim"), (checked, "dim")]
        if width and sum(len(t) for t, _ in head + tail) > width:  # its own line, not split
            yield from wrap([*head, (";", "dim")], width, HEAD_INDENT)
            head = [(" " * HEAD_INDENT, ""), ("checked ", "dim"), (checked, "dim")]
        else:
            head += tail
    yield from wrap(head, width, HEAD_INDENT)
    for f in shown:
        yield from finding_lines(f, color, width)
    if verbosity >= 2:
        for skipped in fr.skipped:
            yield from wrap([("  skipped: ", "dim"), (skipped, "dim")], width, 11)


def _is_error(f: Finding) -> bool:
    return f.severity is Severity.ERROR


def coverage_text(c: Coverage | None) -> str:
    """What the checks of one input read, in words (empty when nothing is known)."""
    if c is None or not c.config and c.tensors is None:
        return ""
    parts = ["config"] if c.config else []
    if c.tensors is not None:
        dtypes = "/".join(c.dtypes)
        size = ", ".join(x for x in (human_bytes(c.tensor_bytes or 0), dtypes) if x)
        tensors = f"{plural(c.tensors, 'tensor')} ({size})"
        if c.contract:
            tensors += f" against the {c.contract} tensor contract"
        parts.append(tensors)
    if c.vocab_maps:
        parts.append("vocabulary maps")
    if c.nan_scan:
        parts.append("NaN/Inf scan")
    if c.verifier:
        parts.append(f"verifier {c.verifier}")
    return ", ".join(parts)


def finding_lines(f: Finding, color: bool, width: int) -> list[Line]:
    """The headline of one finding, then its why: and help: lines."""
    where = f.file
    if f.line:
        where += f":{f.line}" + (f":{f.column}" if f.column else "")
    message = _without_location(f.message, f.file, where)
    spot = f.pointer or f.tensor
    if spot and not f.line and spot not in message:
        where += f" ({spot})"  # no line to show it by: name the place once
    head, why, help_ = split_message(message)
    headline: Line = [
        (f"{where}: ", "bold"),
        (WORD[f.severity], _STYLE[f.severity]),
        (" ", ""),
        (f.rule, "bold"),
        (" ", ""),
        *code_spans(head, color),
    ]
    out = wrap(headline, width, HEAD_INDENT)
    for label, text in (("why", why), ("help", help_)):
        if text:
            prefix = " " * DETAIL_INDENT + f"{label}: "
            out += wrap(
                [(prefix, "dim" if label == "why" else "green")] + code_spans(text, color),
                width,
                len(prefix),
            )
    return out


def _without_location(message: str, file: str, where: str) -> str:
    """Drop a leading ``path:line:col:`` (or ``path:``) the headline already shows."""
    for prefix in (f"{where}: ", f"{file}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def split_message(message: str) -> tuple[str, str, str]:
    """``(headline, why, help)`` of a finding's message.

    Messages say what is wrong, then why it matters, then what to do, as clauses joined by
    ``"; "`` (or sentences). The first clause is the headline (its ``", so ..."`` tail is a
    reason); the first later clause that starts with an instruction (``set ...``, ``pass
    ...``, a `` `command` ``) and everything after it is the help; the rest is the why.
    """
    clauses = _clauses(message)
    head, why = clauses[0], []
    so = _top_level(head, ", so ")
    if so is not None:
        head, reason = head[:so], head[so + len(", so ") :]
        why.append(reason)
    rest = []
    for clause in clauses[1:]:  # "X marks Y: load the weights" is a reason, then the help
        colon = _top_level(clause, ": ")
        if colon is not None and not _is_action(clause) and _is_action(clause[colon + 2 :]):
            rest += [clause[:colon], clause[colon + 2 :]]
        else:
            rest.append(clause)
    k = next((i for i, c in enumerate(rest) if _is_action(c)), len(rest))
    why += rest[:k]
    if rest or why:  # a headline is a phrase, not a sentence
        head = head.removesuffix(".")
    return head, _join(why), _join(rest[k:])


def _join(clauses: list[str]) -> str:
    """Clauses back into text: sentences with a space, the others with ``"; "``."""
    out = ""
    for clause in clauses:
        out += (" " if out.endswith(".") else "; ") + clause if out else clause
    return out


def _is_action(clause: str) -> bool:
    text = clause.lstrip("(")
    if text.startswith("`"):
        return True
    if text.lower().startswith(("if ", "when ", "otherwise ")) and ", " in text:
        text = text.split(", ", 1)[1]  # "if these are z-lab ids, add 1 to each"
    words = text.split(maxsplit=2)
    if words and words[0].lower() in ("or", "either", "then") and len(words) > 1:
        words = words[1:]
    return bool(words) and words[0].lower().rstrip(",:") in _ACTIONS


def _clauses(message: str) -> list[str]:
    """``message`` split at ``"; "`` and sentence ends outside brackets, quotes and code."""
    out, start = [], 0
    for m in _CLAUSE_END.finditer(message):
        if _depth_zero(message, start, m.start()):
            piece = message[start : m.start() + (1 if m.group().startswith(".") else 0)]
            if piece.strip():
                out.append(piece.strip())
            start = m.end()
    out.append(message[start:].strip())
    return [c for c in out if c] or [message]


def _depth_zero(text: str, start: int, end: int) -> bool:
    """Whether position ``end`` of ``text`` is outside brackets and code spans (counted from
    ``start``, where a clause begins)."""
    stack: list[str] = []
    code = False
    for ch in text[start:end]:
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch in _BRACKETS:
            stack.append(_BRACKETS[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
    return not stack and not code


def _top_level(text: str, needle: str) -> int | None:
    i = text.find(needle)
    while i != -1:
        if _depth_zero(text, 0, i):
            return i
        i = text.find(needle, i + 1)
    return None


def code_spans(text: str, color: bool, style: str = "") -> Line:
    """``text`` as segments, Markdown code spans styled as code (colour) or kept in
    backticks (plain)."""
    parts = text.split("`")
    if len(parts) % 2 == 0 or not color:  # unbalanced backticks are literal text
        return [(text, style)]
    return [(p, CODE_STYLE if i % 2 else style) for i, p in enumerate(parts) if p]


def _breakable(text: str, style: str) -> list[str]:
    """``text`` split at the spaces a line may break at: none inside a code span (a command
    to copy stays on one line), whether shown in colour (its own segment) or in backticks."""
    if style == CODE_STYLE:
        return [text]
    if text.count("`") % 2:  # unbalanced backticks are literal text
        return text.split(" ")
    pieces, current, inside = [], [], False
    for ch in text:
        if ch == "`":
            inside = not inside
        if ch == " " and not inside:
            pieces.append("".join(current))
            current = []
        else:
            current.append(ch)
    pieces.append("".join(current))
    return pieces


def wrap(line: Line, width: int, indent: int) -> list[Line]:
    """``line`` broken at spaces into lines of at most ``width`` columns, every line after
    the first indented by ``indent``; a word longer than a line stays whole. ``width`` 0:
    one line."""
    if width <= 0:
        return [line]
    words: list[Line] = [[]]  # each word a list of segments; a space ends a word
    for text, style in line:
        for i, piece in enumerate(_breakable(text, style)):
            if i:
                words.append([])
            if piece:
                words[-1].append((piece, style))
    lead = []  # leading spaces of the line (an indent segment) are kept as they are
    while len(words) > 1 and not words[0]:
        lead.append(" ")
        words.pop(0)
    out: list[Line] = []
    current: Line = [("".join(lead), "")] if lead else []
    used = len(lead)
    fresh = True  # nothing but the indent on the current line yet
    for word in words:
        size = sum(len(t) for t, _ in word)
        if not word:
            continue
        # a word or command that does not fit goes to the next line (a command wider than
        # a whole line stands alone there, never broken)
        if not fresh and used + 1 + size > width:
            out.append(current)
            current, used, fresh = [(" " * indent, "")], indent, True
        if not fresh:
            current.append((" ", ""))
            used += 1
        for text, style in word:  # one segment per run of a style, not one per word
            if len(current) > 1 and current[-1] == (" ", "") and current[-2][1] == style:
                current.pop()  # the space joins the run of its neighbours' style
                text = " " + text
            if current and current[-1][1] == style:
                text = current.pop()[0] + text
            current.append((text, style))
        used += size
        fresh = False
    out.append(current)
    return out
