"""The readers pass of ``fix`` and ``migrate``: make the engines read what the writer meant.

After the format edits, every field the engines (``--engine``, or the newest covered
release of each) read differently from the writer of the output's format version is set to
a value under which they all mean what the writer means (:func:`spec_format.disputes.reconcile`).
Where no value does, or the format version has no such field, the disagreement is a
problem: lossy when the engine was named (``migrate`` then refuses without
``--allow-lossy``), a warning when it was only assumed.
"""

from __future__ import annotations

from collections.abc import Sequence

from spec_format import disputes, schemas, unread
from spec_format.migration.records import Editor, pointer

#: the rule of the problem (``specfmt explain C001``, readers-disagree)
PROBLEM = "C001"
#: flags an engine never reads although the draft was trained with them (named, assumed)
UNREAD = ("C015", "C016")


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
