"""Findings and reports: what every check produces and every renderer consumes.

A *finding* is one problem (or note) at one place in one file, tagged with the stable id of
the rule that found it. A *file report* groups the findings of one input (a config.json or
a checkpoint directory). A *report* is one run over many inputs; its ``exit_code`` is the
documented contract of ``specfmt validate``:

* 0: no errors (warnings and notes allowed)
* 1: at least one error finding
* 2: usage error (raised before any report exists)
* 3: at least one input could not be read or parsed at all, or has no weights where
  ``--deep`` / ``--scan-weights`` asked to read them (I013)
* 70: checking at least one input hit a bug in specfmt (that input's report says so with
  an I012 finding; every other input is still checked and reported)

Every list is bounded: at most :data:`MAX_FINDINGS_PER_RULE` findings of one rule per
input, then one finding of the same rule that says how many were left out.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

from spec_format.base.errors import ExitCode
from spec_format.base.wording import plural, severity_word

MAX_FINDINGS_PER_RULE = 100


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class Status(str, enum.Enum):
    OK = "ok"  # no error findings
    FAIL = "fail"  # at least one error finding
    UNREADABLE = "unreadable"  # the input could not be read or parsed; nothing else ran


@dataclass(frozen=True)
class Edit:
    """One change a finding's advice makes to its config: ``value`` (JSON text) written at
    ``pointer`` (RFC 6901, into the config file), or the key removed when ``value`` is
    None. The value is kept as text so a finding stays hashable; :attr:`data` parses it."""

    pointer: str
    value: str | None

    @classmethod
    def set(cls, pointer: str, value: object) -> Edit:
        import json

        return cls(pointer, json.dumps(value))

    @classmethod
    def remove(cls, pointer: str) -> Edit:
        return cls(pointer, None)

    @property
    def data(self) -> object:
        import json

        return None if self.value is None else json.loads(self.value)

    def to_dict(self) -> dict:
        """The edit as one JSON Patch (RFC 6902) operation."""
        if self.value is None:
            return {"op": "remove", "path": self.pointer}
        return {"op": "add", "path": self.pointer, "value": self.data}


@dataclass(frozen=True)
class Finding:
    """One problem at one place.

    ``pointer`` is an RFC 6901 JSON pointer into ``file`` when ``file`` is JSON; ``tensor``
    names the tensor when the finding is about a safetensors file. ``line``/``column`` are
    1-based positions when known (used by the GitHub and SARIF renderers).
    """

    rule: str
    name: str
    severity: Severity
    message: str
    file: str
    pointer: str | None = None
    tensor: str | None = None
    line: int | None = None
    column: int | None = None
    #: the specfmt command line (argv) that makes the change the message advises, when the
    #: change is known and one command makes it; the message quotes it
    command: tuple[str, ...] | None = None
    #: the edits to the config that the advice of the message makes ("set X to Y"), as
    #: data: :func:`spec_format.runner.recheck.prove` applies them and checks again
    edit: tuple[Edit, ...] | None = None

    def location(self) -> str:
        """``file:line:column`` (as far as known), then the JSON pointer or the tensor."""
        where = self.file + "".join(f":{n}" for n in (self.line, self.column) if n is not None)
        at = self.pointer if self.pointer else self.tensor
        return f"{where} {at}" if at else where

    def __repr__(self) -> str:
        return f"<Finding {self.rule} {self.severity.value} {self.location()}: {self.message}>"

    def _repr_html_(self) -> str:
        return _findings_table([self])

    def to_dict(self) -> dict:
        out = {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.file,
        }
        for key in ("pointer", "tensor", "line", "column"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.command is not None:
            out["command"] = list(self.command)
        if self.edit is not None:
            out["edit"] = [e.to_dict() for e in self.edit]
        return out


class PositionSource(Protocol):
    """Maps JSON pointers of one file to (line, column); see spec_format.base.jsonload.Loaded."""

    path: object

    def locate(self, pointer: str | None) -> tuple[int | None, int | None]: ...


@dataclass
class Coverage:
    """What the checks of one input read (for the "checked ..." line of a passing input):
    the config, the weights' headers (tensor count, data bytes, dtypes), the tensor contract
    the W rules compared them with, and the opt-in layers that ran."""

    config: bool = False
    tensors: int | None = None  # None: no weights were read
    tensor_bytes: int | None = None
    dtypes: tuple[str, ...] = ()
    contract: str | None = None  # the model type whose tensor contract was checked
    vocab_maps: bool = False  # --deep rules ran
    nan_scan: bool = False  # --scan-weights rule ran
    verifier: str | None = None  # the verifier config the V rules compared with

    def to_dict(self) -> dict:
        return {
            "config": self.config,
            "tensors": self.tensors,
            "tensor_bytes": self.tensor_bytes,
            "dtypes": list(self.dtypes),
            "contract": self.contract,
            "vocab_maps": self.vocab_maps,
            "nan_scan": self.nan_scan,
            "verifier": self.verifier,
        }


@dataclass
class FileReport:
    """Everything found about one input path.

    Line and column numbers are presentation: they are looked up from ``positions`` the
    first time findings are listed for output (``sorted_findings``/``to_dict``), not while
    checking, so validating many files stays fast.
    """

    path: str
    findings: list[Finding] = field(default_factory=list)
    model_type: str | None = None
    format_version: str | None = None
    version_source: str | None = None  # "declared", "inferred" or "requested"
    skipped: list[str] = field(default_factory=list)  # checks not run, and why
    unreadable: bool = False
    internal_error: bool = False  # a bug in specfmt stopped the checks of this input
    #: a checkpoint (directory or hf://) without weights: only its config was checked
    weights_absent: bool = False
    #: weights the run was asked to read (--deep, --scan-weights) are not there (exit 3)
    weights_required: bool = False
    coverage: Coverage | None = None  # what was read and checked (None: not recorded)
    positions: PositionSource | None = field(default=None, repr=False, compare=False)

    def extend(self, findings: Iterable[Finding]) -> None:
        self.findings.extend(findings)

    @property
    def status(self) -> Status:
        if self.unreadable:
            return Status.UNREADABLE
        if any(f.severity is Severity.ERROR for f in self.findings):
            return Status.FAIL
        return Status.OK

    def counts(self) -> Counter:
        return Counter(f.severity.value for f in self.findings)

    def _locate(self, findings: list[Finding]) -> list[Finding]:
        if self.positions is None:
            return findings
        file = str(self.positions.path)
        located = []
        for f in findings:
            if f.file == file and f.pointer is not None and f.line is None:
                line, column = self.positions.locate(f.pointer)
                if line is not None:
                    f = replace(f, line=line, column=column)
            located.append(f)
        return located

    def located_findings(self) -> list[Finding]:
        """Findings with line/column filled in where a JSON pointer can be located."""
        if self.positions is not None:
            self.findings = self._locate(self.findings)
            self.positions = None
        return self.findings

    def sorted_findings(self, keep: Callable[[Finding], bool] | None = None) -> list[Finding]:
        """The findings (only those ``keep`` accepts, when given) in output order, located.
        With ``keep``, only the kept findings are located (``-q`` prints errors only: the
        positions of the others are never computed)."""
        chosen = (
            self.located_findings()
            if keep is None
            else self._locate([f for f in self.findings if keep(f)])
        )
        return sorted(
            chosen,
            key=lambda f: (f.file, -f.severity.rank, f.line or 0, f.pointer or "", f.rule),
        )

    def headline(self) -> str:
        """``path: status, type format (source), counts``: one line for people."""
        what = " ".join(x for x in (self.model_type, self.format_version) if x)
        source = f" ({self.version_source})" if self.version_source else ""
        return (
            f"{self.path}: {self.status.value}"
            + (f", {what}{source}" if what else "")
            + f", {_counted(self.counts())}"
        )

    def __repr__(self) -> str:
        return f"<FileReport {self.headline()}>"

    def _repr_html_(self) -> str:
        return f"<p><b>{_html(self.headline())}</b></p>" + _findings_table(self.sorted_findings())

    def to_dict(self) -> dict:
        out = {
            "path": self.path,
            "status": self.status.value,
            "speculators_model_type": self.model_type,
            "format_version": self.format_version,
            "version_source": self.version_source,
            "findings": [f.to_dict() for f in self.sorted_findings()],
        }
        if self.skipped:
            out["skipped"] = list(self.skipped)
        if self.coverage is not None:
            out["checked"] = self.coverage.to_dict()
        return out


@dataclass
class Report:
    """One run over many inputs."""

    files: list[FileReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # run-level remarks (skipped layers, ...)

    @property
    def ok(self) -> bool:
        return all(f.status is Status.OK for f in self.files)

    def tally(self) -> Tally:
        return Tally.of(self.files)

    @property
    def exit_code(self) -> int:
        return self.tally().exit_code

    def counts(self) -> Counter:
        return self.tally().severities

    def summary(self) -> str:
        return self.tally().summary()

    def __repr__(self) -> str:
        return f"<Report {self.summary()}; exit code {self.exit_code}>"

    def _repr_html_(self) -> str:
        parts = [f"<p><b>{_html(self.summary())}</b> (exit code {self.exit_code})</p>"]
        parts += [f._repr_html_() for f in self.files]
        parts += [f"<p><i>note:</i> {_html(n)}</p>" for n in self.notes]
        return "\n".join(parts)

    def statistics(self) -> list[dict]:
        """Findings counted per rule code, most frequent first (``--statistics``); the
        severity is the worst one the rule was reported with."""
        rows: dict[str, dict] = {}
        for f in (f for fr in self.files for f in fr.findings):
            row = rows.setdefault(
                f.rule, {"code": f.rule, "name": f.name, "count": 0, "s": f.severity}
            )
            row["count"] += 1
            if f.severity.rank > row["s"].rank:
                row["s"] = f.severity
        ordered = sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))
        return [
            {**{k: v for k, v in r.items() if k != "s"}, "severity": r["s"].value} for r in ordered
        ]

    def to_dict(self) -> dict:
        tally = self.tally()  # counted once
        return {
            "status": "ok" if tally.ok else "fail",
            "exit_code": tally.exit_code,
            "summary": tally.summary(),
            "counts": {k: tally.severities.get(k, 0) for k in ("error", "warning", "info")},
            "notes": list(self.notes),
            "files": [f.to_dict() for f in self.files],
        }


@dataclass
class Tally:
    """What a run's exit status and summary need of its files, counted as each file is
    reported (a streamed run keeps this, not the files)."""

    inputs: int = 0
    statuses: Counter = field(default_factory=Counter)  # Status -> files
    severities: Counter = field(default_factory=Counter)  # "error"/"warning"/"info" -> findings
    internal_errors: int = 0
    weights_required: bool = False

    @classmethod
    def of(cls, files: Iterable[FileReport]) -> Tally:
        tally = cls()
        for f in files:
            tally.add(f)
        return tally

    def add(self, f: FileReport) -> None:
        self.inputs += 1
        self.statuses[f.status] += 1
        self.severities.update(finding.severity.value for finding in f.findings)
        self.internal_errors += f.internal_error
        self.weights_required |= f.weights_required

    @property
    def ok(self) -> bool:
        return self.statuses[Status.OK] == self.inputs

    @property
    def exit_code(self) -> int:
        if self.internal_errors:
            return int(ExitCode.INTERNAL)
        if self.statuses[Status.UNREADABLE] or self.weights_required:
            return int(ExitCode.UNREADABLE)
        if self.statuses[Status.FAIL]:
            return int(ExitCode.FINDINGS)
        return int(ExitCode.OK)

    def summary(self) -> str:
        c = self.severities
        n = self.inputs
        parts = [f"{plural(n, 'input')} checked"]
        parts.append(f"{self.statuses[Status.OK]} ok")
        if self.statuses[Status.FAIL]:
            parts.append(f"{self.statuses[Status.FAIL]} failed")
        if self.statuses[Status.UNREADABLE]:
            parts.append(f"{self.statuses[Status.UNREADABLE]} unreadable")
        if self.internal_errors:
            parts.append(f"{self.internal_errors} hit a bug in specfmt")
        parts.append(_counted(c))
        return ": ".join([parts[0], ", ".join(parts[1:])])


def _counted(c: Counter) -> str:
    return ", ".join(plural(c.get(k, 0), severity_word(k)) for k in ("error", "warning", "info"))


def _html(text: object) -> str:
    from html import escape

    return escape(str(text))


def _findings_table(findings: list[Finding]) -> str:
    """Findings as an HTML table (notebooks show it for ``_repr_html_``)."""
    if not findings:
        return "<p>no findings</p>"
    head = "".join(f"<th>{h}</th>" for h in ("rule", "severity", "where", "message"))
    rows = "".join(
        f"<tr><td><code>{_html(f.rule)}</code> {_html(f.name)}</td><td>{f.severity.value}</td>"
        f"<td><code>{_html(f.location())}</code></td><td>{_html(f.message)}</td></tr>"
        for f in findings
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def cap_per_rule(
    findings: Iterable[Finding], limit: int = MAX_FINDINGS_PER_RULE
) -> Iterator[Finding]:
    """``findings`` with at most ``limit`` per rule id, each capped rule followed (at the
    end) by one finding saying how many were left out. Consumes lazily: memory stays
    bounded however many findings the source produces."""
    # plain dicts, the overflow ones made only when needed: this wraps every rule of every
    # input, so it must cost next to nothing when nothing is capped
    kept: dict[str, int] = {}
    dropped: dict[str, int] = {}
    last: dict[str, Finding] = {}
    for f in findings:
        n = kept.get(f.rule, 0)
        if n < limit:
            kept[f.rule] = n + 1
            yield f
        else:
            dropped[f.rule] = dropped.get(f.rule, 0) + 1
            last[f.rule] = f
    for rule, n in dropped.items():
        yield overflow(last[rule], n, limit)


def overflow(f: Finding, n: int, limit: int = MAX_FINDINGS_PER_RULE) -> Finding:
    """The finding that stands for ``n`` more of ``f``'s rule past the first ``limit``."""
    return replace(
        f,
        message=f"{n:,} more {f.rule} finding{'s' if n != 1 else ''} in this input not "
        f"listed (the first {limit} are)",
        pointer=None,
        tensor=None,
        line=None,
        column=None,
        command=None,
    )
