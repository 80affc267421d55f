"""The readers pass of ``fix`` and ``migrate``: make the engines read what the writer meant.

After the format edits, every field the engines (``--engine``, or the newest covered
release of each) read differently from the writer of the output's format version is set to
a value under which they all mean what the writer means (:func:`spec_format.facts.disputes.reconcile`).
Where no value does, or the format version has no such field, the disagreement is a
problem: lossy when the engine was named (``migrate`` then refuses without
``--allow-lossy``), a warning when it was only assumed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from spec_format.base.jsoncopy import copy_json
from spec_format.facts import catalog, disputes, misspell, schemas, unread
from spec_format.parsers.verifier import load_verifier
from spec_format.rewrites.migration import eras
from spec_format.rewrites.migration.records import Editor, StepOutput, pointer
from spec_format.rewrites.migration.steps._common import TLC

#: the rule of the problem (``specfmt explain C001``, readers-disagree)
PROBLEM = "C001"
#: flags an engine never reads although the draft was trained with them (named, assumed)
UNREAD = ("C015", "C016")


class ReaderOptions:
    """What :class:`~spec_format.rewrites.migration.MigrateOptions` and
    :class:`~spec_format.rewrites.fixing.FixOptions` accept alike: ``engines`` may be one string or any
    iterable of them, ``verifier`` a path or ``hf://`` (read as ``--verifier`` reads it)."""

    engines: tuple[str, ...]
    verifier: dict[str, Any] | None

    def __post_init__(self) -> None:
        if isinstance(self.engines, str):
            object.__setattr__(self, "engines", (self.engines,))
        elif not isinstance(self.engines, tuple):
            object.__setattr__(self, "engines", tuple(self.engines))
        if isinstance(self.verifier, (str, os.PathLike)):
            object.__setattr__(self, "verifier", load_verifier(self.verifier).config)


def input_document(document: Any, share_input: bool) -> Any:
    """What migrate and fix rewrite: a caller's dict (copied unless ``share_input``: the
    result then shares the parts no edit went into), or the config a path names."""
    if isinstance(document, dict):
        return document if share_input else copy_json(document)
    from spec_format.parsers.documents import as_document  # read only for a path

    return as_document(document)


def opening(
    doc: dict[str, Any], line: str, verifier: dict[str, Any] | None, *, values: bool = True
) -> StepOutput:
    """What ``migrate`` and ``fix`` do first, in format ``line``: correct what the writer's
    build is known to have got wrong (:func:`spec_format.rewrites.migration.eras.apply_fixups`;
    ``values=False`` only makes implicit meaning explicit), then rename misspelled keys to
    the key meant, before anything writes a default beside them (C014)."""
    era = eras.apply_fixups(doc, verifier, values=values)
    spelling = Editor(era.document, misspell.STEP)
    misspell.rename(spelling, line)
    return StepOutput(
        spelling.doc, [*era.changes, *spelling.changes], [*era.problems, *spelling.problems]
    )


def write_layer_model_type(ed: Editor, line: str) -> bool:
    """Write ``transformer_layer_config.model_type`` when it is missing: the class the
    speculators release of ``line`` builds then (the catalog), with what the engines build
    instead (the reader table). False when the type has no such default."""
    tlc = ed.doc.get(TLC)
    model_type = ed.model_type
    if not isinstance(tlc, dict) or "model_type" in tlc or not isinstance(model_type, str):
        return False
    default = catalog.default_layer(model_type, line)
    if default is None:
        return False
    engines = disputes.absent_layer_class(model_type)
    ed.set(
        pointer(TLC, "model_type"),
        default,
        f"speculators {line} builds a {default} layer config when it is missing"
        + (f"; {engines}" if engines else ""),
    )
    return True


def make_engines_agree(
    ed: Editor, line: str, engines: Sequence = (), *, named: bool = False
) -> None:
    model_type = ed.model_type
    writer = disputes.writer_of(line)
    if writer is None or not isinstance(model_type, str):
        return
    engines = tuple(engines) or disputes.assumed_engines()
    # no value removes these: the value is what the draft was trained with
    for u in unread.trained_flags_unread(ed.doc, model_type, writer, engines):
        ed.problem(
            UNREAD[0] if named else UNREAD[1],
            f"{u.describe()}; no config value removes this: serve with a release that reads "
            f"{u.field}",
            pointer=pointer(u.field),
        )
    for d in disputes.disputes(ed.doc, model_type, writer, engines):
        declared = bool(schemas.resolve(line, model_type, (d.field,)))
        done = disputes.reconcile(ed.doc, model_type, d.field, d.meant, [writer, *engines])
        if done.ok and declared:
            ed.set(
                pointer(d.field),
                done.value,
                f"{d.describe()}: with {disputes.show(done.value)} every reader acts as "
                f"{writer.id} does",
            )
            continue
        why = done.why if not done.ok else f"format {line} has no {d.field} to write"
        ed.problem(
            PROBLEM,
            f"{d.field}: {d.describe()}; {why}",
            pointer=pointer(d.field),
            severity="warning",
            lossy=named,
        )
