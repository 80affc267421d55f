"""Advice that is proven: a config edit (a finding's "set X to Y", or what ``fix``,
``migrate`` and ``convert`` write) is applied to a copy of the config and the checks run
again. The edit holds when the finding it answers is gone and no finding appears that the
config did not have; an edit that brings a new error is refused.

* :func:`findings` checks a parsed config the way ``validate`` checks a file: the config
  rules, the verifier rules with a verifier, the weights rules with a checkpoint folder;
* :func:`introduced` lists what a rewritten document has that its original had not;
* :func:`apply` writes a finding's :class:`~spec_format.base.report.Edit` list into a copy;
* :func:`prove` applies a finding's edits and says what became of it (:class:`Proof`).

A finding is the same in both runs when its rule, pointer and tensor are: the message may
quote the new value.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_format.base.jsonload import Loaded
from spec_format.base.report import Edit, FileReport, Finding, Severity
from spec_format.parsers.verifier import VerifierInfo, verifier_view
from spec_format.runner.config_checks import check_config
from spec_format.runner.input_paths import CONFIG_NAME, Target
from spec_format.runner.validate_options import ValidateOptions, filtered
from spec_format.runner.weight_checks import check_weights

Key = tuple[str, str | None, str | None]


def key(finding: Finding) -> Key:
    """What makes two findings of two versions of one config the same finding."""
    return finding.rule, finding.pointer, finding.tensor


def findings(
    document: Mapping[str, Any],
    *,
    verifier: VerifierInfo | Mapping[str, Any] | None = None,
    checkpoint: str | Path | None = None,
    options: ValidateOptions | None = None,
    path: str | Path = CONFIG_NAME,
) -> list[Finding]:
    """What ``validate`` reports of ``document`` (a parsed config; nothing is read from or
    written to disk but the weights' headers of ``checkpoint``, a folder), against the
    verifier when one is given (a :class:`VerifierInfo` or a parsed verifier config)."""
    options = options or ValidateOptions()
    if verifier is not None and not isinstance(verifier, VerifierInfo):
        verifier = verifier_view(verifier, Path("the verifier's config.json"))
    shown = Path(path)
    report = FileReport(path=str(shown))
    ctx = check_config(Loaded(path=shown, data=dict(document)), report, options, verifier)
    loaded = None
    if checkpoint is not None:
        from spec_format.parsers.checkpoint import load_checkpoint

        loaded = load_checkpoint(checkpoint)
    folder = Path(checkpoint) if checkpoint is not None else None
    check_weights(ctx, loaded, verifier, Target(str(shown), shown, folder), report, options)
    return filtered(report.findings, options)


def introduced(
    before: Mapping[str, Any] | list[Finding],
    after: Mapping[str, Any],
    *,
    verifier: VerifierInfo | Mapping[str, Any] | None = None,
    checkpoint: str | Path | None = None,
    options: ValidateOptions | None = None,
    path: str | Path = CONFIG_NAME,
) -> list[Finding]:
    """The findings of ``after`` that ``before`` (a document, or its findings) did not
    have, most severe first."""
    if not isinstance(before, list):
        before = findings(
            before, verifier=verifier, checkpoint=checkpoint, options=options, path=path
        )
    had = {key(f) for f in before}
    now = findings(after, verifier=verifier, checkpoint=checkpoint, options=options, path=path)
    new = [f for f in now if key(f) not in had]
    return sorted(new, key=lambda f: -f.severity.rank)


def errors(found: Iterable[Finding]) -> list[Finding]:
    return [f for f in found if f.severity is Severity.ERROR]


def apply(document: Mapping[str, Any], edits: Iterable[Edit]) -> dict[str, Any]:
    """A copy of ``document`` with ``edits`` made (objects on the way are created; an
    array index past the end appends). The document is not changed."""
    out = copy.deepcopy(dict(document))
    for edit in edits:
        parts = _split(edit.pointer)
        if not parts:
            raise ValueError("an edit cannot replace the whole document")
        node: Any = out
        for part in parts[:-1]:
            if isinstance(node, list):
                node = node[int(part)]
            else:
                if not isinstance(node.get(part), (dict, list)):
                    node[part] = {}
                node = node[part]
        last = parts[-1]
        if isinstance(node, list):
            index = int(last)
            if edit.value is None:
                del node[index]
            elif index < len(node):
                node[index] = edit.data
            else:
                node.append(edit.data)
        elif edit.value is None:
            node.pop(last, None)
        else:
            node[last] = edit.data
    return out


def _split(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


@dataclass(frozen=True)
class Proof:
    """What became of a finding once its edits were made: ``gone`` (not reported again) and
    the findings the edited config has that the original had not (``new``)."""

    finding: Finding
    document: dict[str, Any]
    gone: bool
    new: tuple[Finding, ...]

    @property
    def holds(self) -> bool:
        """The advice removes the finding and brings no new error."""
        return self.gone and not errors(self.new)

    def describe(self) -> str:
        edits = ", ".join(
            f"{e.pointer} = {e.value}" if e.value is not None else f"remove {e.pointer}"
            for e in self.finding.edit or ()
        )
        if self.holds:
            return f"{self.finding.rule}: {edits} removes it"
        why = [] if self.gone else ["the finding stays"]
        why += [f"{f.rule} {f.severity.value}: {f.message}" for f in self.new]
        return f"{self.finding.rule}: {edits} does not hold: " + "; ".join(why)


def prove(
    document: Mapping[str, Any],
    finding: Finding,
    *,
    verifier: VerifierInfo | Mapping[str, Any] | None = None,
    checkpoint: str | Path | None = None,
    options: ValidateOptions | None = None,
    before: list[Finding] | None = None,
    path: str | Path = CONFIG_NAME,
) -> Proof:
    """Apply ``finding.edit`` to a copy of ``document`` and check it again."""
    if not finding.edit:
        raise ValueError(f"{finding.rule}: the finding carries no edit to prove")
    run = {"verifier": verifier, "checkpoint": checkpoint, "options": options, "path": path}
    if before is None:
        before = findings(document, **run)
    edited = apply(document, finding.edit)
    after = findings(edited, **run)
    had = {key(f) for f in before}
    gone = key(finding) not in {key(f) for f in after}
    new = tuple(f for f in after if key(f) not in had)
    return Proof(finding, edited, gone, new)


__all__ = ["Proof", "apply", "errors", "findings", "introduced", "key", "prove"]
