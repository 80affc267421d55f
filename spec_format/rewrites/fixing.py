"""``specfmt fix``: fix what is fixable in place, without changing the format version: the
defaults readers disagree about (below), serialization noise (C009), a missing or wrong
version stamp (M001-M003, the release of the format the keys say) and the values known
writer builds got wrong (M006: :mod:`spec_format.rewrites.migration.eras`). Every hint for
a change within the config's own format version names ``fix``; ``migrate`` changes the
format version.

Which keys: every field whose absence some reader release of the reader table
(``schema/readers/``) reads differently from the writer, the speculators release of the
config's own format version. The value written is the writer's default (the schema's
``default``, like check-jsonschema's ``--fill-defaults``); then every field the engines
(``--engine``, or the newest covered release of each) still read differently is set to the
value under which they all mean what the writer means, when one exists, and reported with
the reason when none does. Two keys are not plain schema defaults: DSpark's
``sample_from_anchor`` when absent means false for the builds that omitted it (see
:mod:`spec_format.facts.writers`), and the layer config's ``model_type`` defaults to the
class the release builds (the catalog's ``default_layer``).

``fix`` writes a value only when it is what the writer's release used at training time
(its defaults, the release-specific facts of :mod:`spec_format.rewrites.migration.eras`) or the user
passed it (``--aux-layer-ids``, the verifier's architectures from ``--verifier``). The aux
layer ids a verifier's readers would pick are a guess about the training run: reported as
assumed (R006) and not written, so ``validate`` keeps asking (see
:mod:`spec_format.facts.questions`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from spec_format.base.errors import MigrationRefused, UsageError
from spec_format.base.jsoncopy import same_json
from spec_format.facts import catalog, disputes, misspell, schemas, versions
from spec_format.facts.effective import AUX_KEY, default_aux_ids
from spec_format.rewrites.migration import eras
from spec_format.rewrites.migration.agree import (
    ReaderOptions,
    input_document,
    make_engines_agree,
    opening,
    write_layer_model_type,
)
from spec_format.rewrites.migration.records import Change, Editor, Problem, pointer
from spec_format.rewrites.migration.runner import drop_noise

FIX_STEP = "fix"


@dataclass(frozen=True)
class FixOptions(ReaderOptions):
    format_version: str | None = None  # None: the detected one
    verifier: dict[str, Any] | None = None  # the verifier's config (--verifier)
    #: the engines the draft is served with ("vllm==0.28.0"); empty: the newest covered ones
    engines: tuple[str, ...] = ()
    #: the verifier layers the draft was trained on (--aux-layer-ids): the user's answer to
    #: the question only the training run can answer; fix never writes a guessed one
    aux_layer_ids: tuple[int, ...] | None = None


@dataclass(repr=False)
class FixResult:
    original: dict[str, Any]
    document: dict[str, Any]
    detection: versions.Detection
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return not same_json(self.original, self.document)

    def __repr__(self) -> str:  # one line in a REPL; the documents are in .original/.document
        n, p = len(self.changes), len(self.problems)
        return (
            f"<FixResult {self.document.get('speculators_model_type')} {self.detection.line}: "
            f"{n} change{'' if n == 1 else 's'}, {p} problem{'' if p == 1 else 's'}"
            f"{'' if self.changed else '; unchanged'}>"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.detection.to_dict(),
            "format_version": self.detection.line,
            "changed": self.changed,
            "changes": [c.to_dict() for c in self.changes],
            "problems": [p.to_dict() for p in self.problems],
        }


def fix(
    document: dict[str, Any] | str | os.PathLike[str],
    options: FixOptions | None = None,
    *,
    share_input: bool = False,
) -> FixResult:
    """Write out the disputed defaults of a config: a parsed dict, or a ``config.json`` path
    or its directory. The input is never changed (neither the dict nor the file):
    ``result.document`` is a new document, ``result.changes`` says what was written and why.
    ``share_input=True``: as for :func:`spec_format.rewrites.migration.migrate` (the dict is not
    copied; the result shares the parts no edit went into)."""
    options = options or FixOptions()
    document = input_document(document, share_input)
    model_type = document.get("speculators_model_type") if isinstance(document, dict) else None
    if not isinstance(model_type, str):
        raise MigrationRefused(
            "no speculators_model_type: this is not a speculators config, so there are no "
            "format defaults to write"
        )
    requested = None
    if options.format_version is not None:  # a usage error when unknown
        requested, _ = versions.option_version(options.format_version)
    detection = versions.detect(document, requested=requested)
    line = detection.line
    if model_type not in catalog.version_entry(line).types:
        raise UsageError(
            f"format {line} has no type {model_type!r}; pass --format-version with a version "
            f"that has it ({', '.join(catalog.versions_with_type(model_type)) or 'none'})"
        )
    result = FixResult(original=document, document=document, detection=detection)
    engines = disputes.parse_readers(options.engines)
    # a misspelled key is renamed to the key meant (its value kept) first, so no default is
    # written beside it; one that cannot be renamed is reported and its field left alone
    opened = opening(document, line, options.verifier)
    ed = Editor(opened.document, FIX_STEP)
    drop_noise(ed)
    if requested is None:
        _restamp(ed, detection)
    writer = disputes.writer_of(line)
    if writer is not None:
        _write_disputed_defaults(ed, model_type, line, writer)
        make_engines_agree(ed, line, engines, named=bool(engines))
    _fill_aux_ids(ed, model_type, line, options)
    write_layer_model_type(ed, line)
    result.document = ed.doc
    result.changes = [*opened.changes, *ed.changes]
    result.problems = [*opened.problems, *ed.problems, *eras.problems(ed.doc)]
    result.problems += newer_engine_problems(options.engines)
    return result


def newer_engine_problems(texts) -> list[Problem]:
    """C021 for each ``--engine`` release newer than the reader table (judged as the
    newest covered release, as ``validate`` does)."""
    return [Problem("C021", s.newer_message()) for s in disputes.newer_engines(texts)]


def _restamp(ed: Editor, detection: versions.Detection) -> None:
    """Stamp the release of the format the keys say when ``speculators_version`` is absent,
    is no speculators version or names another format (M001-M003): the same format, its
    version written as readers and specfmt detect it."""
    if (
        "speculators_version" in ed.doc
        and detection.parsed is not None
        and detection.declared_line is not None
        and detection.agrees
    ):
        return
    release = catalog.version_entry(detection.line).release
    before = ed.doc.get("speculators_version")
    why = (
        "absent"
        if "speculators_version" not in ed.doc
        else f"{before!r} names no format the keys allow"
        if detection.declared_line is None or detection.parsed is None
        else f"{before!r} names format {detection.declared_line}, the keys say {detection.line}"
    )
    ed.set(
        "/speculators_version",
        release,
        f"{why}: stamped with the release of format {detection.line}, which the keys say",
    )


def _write_disputed_defaults(ed: Editor, model_type: str, line: str, writer) -> None:
    """Write every absent field some covered reader release reads differently when it is
    absent, with the value under which they all read what the writer does (the writer's
    default); a field no value reconciles is left to the engines' pass to report."""
    serving = [r for r in disputes.covered() if r is not writer and r.serves(model_type)]
    bare = dict(ed.doc)
    typos = {k for m in misspell.find(bare, model_type, line) if m.parent == "" for k in m.known}
    for d in disputes.disputes(bare, model_type, writer, serving):
        node = schemas.resolve(line, model_type, (d.field,))
        if d.field in bare or d.field in typos or not node or "default" not in node:
            continue
        done = disputes.reconcile(bare, model_type, d.field, d.meant, [writer, *serving])
        if done.ok:
            why = f"{writer.id} default; " + disputes.describe(d.others, " when absent")
            ed.set(pointer(d.field), done.value, why)


def _fill_aux_ids(ed: Editor, model_type: str, line: str, options: FixOptions) -> None:
    """Write the aux layer ids only when the user passed them: the default layers of the
    verifier are a guess about the training run, reported as assumed (R006) and never
    written, so the rewritten config keeps every warning the original had (C001/X005)."""
    given = options.aux_layer_ids
    key = catalog.aux_key(model_type)
    if given is not None:
        if key is None or not schemas.resolve(line, model_type, (key,)):
            raise UsageError(
                f"--aux-layer-ids: {model_type} (format {line}) has no aux layer ids to write"
            )
        ed.set(pointer(key), list(given), "passed with --aux-layer-ids (the training run's layers)")
        return
    key = AUX_KEY
    if model_type not in catalog.family("chain") or not schemas.resolve(line, model_type, (key,)):
        return
    if ed.doc.get(key) is not None:
        return
    state = "null" if key in ed.doc else "absent"
    ids = default_aux_ids(model_type, line, options.verifier)
    if ids is not None:
        ed.problem(
            "R006",
            pointer=pointer(key),
            key=key,
            state=state,
            ids=ids,
            layers=options.verifier.get("num_hidden_layers"),  # type: ignore[union-attr]
            csv=",".join(map(str, ids)),
        )
    else:
        ed.problem("R005", pointer=pointer(key), key=key, state=state)
