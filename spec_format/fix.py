"""``specfmt fix``: write out the defaults readers disagree about, without changing version.

The values come from the schema of the config's own format version (its ``default``
keyword, like check-jsonschema's ``--fill-defaults``), and each filled key is reported with
the reason, taken from the property's ``x-consumer-defaults`` where readers disagree. Two
keys are not plain schema defaults: DSpark's ``sample_from_anchor`` when absent means
false for the builds that omitted it (see :mod:`spec_format.migration.eras`), and the
layer config's ``model_type`` defaults to the class the release builds.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from spec_format import catalog, schemas, versions
from spec_format.errors import MigrationRefused, UsageError
from spec_format.migration import eras
from spec_format.migration.records import Change, Editor, Problem, pointer
from spec_format.migration.steps._common import TLC

FIX_STEP = "fix"

#: top-level keys whose absence readers interpret differently or whose default changed
EXPLICIT_KEYS = (
    "norm_before_residual",
    "norm_before_fc",
    "fc_norm",
    "norm_output",
    "sample_from_anchor",
    "sliding_window_non_causal",
)


@dataclass(frozen=True)
class FixOptions:
    format_version: str | None = None  # None: the detected one
    verifier: dict[str, Any] | None = None  # the verifier's config (--verifier)


@dataclass
class FixResult:
    original: dict[str, Any]
    document: dict[str, Any]
    detection: versions.Detection
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.original != self.document

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.detection.to_dict(),
            "format_version": self.detection.line,
            "changed": self.changed,
            "changes": [c.to_dict() for c in self.changes],
            "problems": [p.to_dict() for p in self.problems],
        }


def fix(document: dict[str, Any], options: FixOptions | None = None) -> FixResult:
    options = options or FixOptions()
    model_type = document.get("speculators_model_type") if isinstance(document, dict) else None
    if not isinstance(model_type, str):
        raise MigrationRefused(
            "no speculators_model_type: this is not a speculators config, so there are no "
            "format defaults to write"
        )
    if options.format_version is not None:
        schemas.version_entry(options.format_version)
    detection = versions.detect(document, requested=options.format_version)
    line = detection.line
    if model_type not in versions.types_of(line):
        raise UsageError(
            f"format {line} has no type {model_type!r}; pass --format-version with a version "
            f"that has it ({', '.join(versions.lines_with_type(model_type)) or 'none'})"
        )
    result = FixResult(original=copy.deepcopy(document), document=document, detection=detection)
    era = eras.apply_fixups(document, options.verifier, values=False)
    ed = Editor(era.document, FIX_STEP)
    for key in EXPLICIT_KEYS:
        node = schemas.resolve(line, model_type, (key,))
        if not node or key in ed.doc or "default" not in node:
            continue
        ed.set(pointer(key), node["default"], _why(line, node))
    _fill_aux_ids(ed, model_type, line, options.verifier)
    tlc = ed.doc.get(TLC)
    if isinstance(tlc, dict) and "model_type" not in tlc:
        default = catalog.default_layer(model_type, line)
        if default:
            ed.set(
                pointer(TLC, "model_type"),
                default,
                f"speculators {line} builds a {default} layer config when it is missing, "
                "other releases and vLLM assume other classes",
            )
    result.document = ed.doc
    result.changes = [*era.changes, *ed.changes]
    result.problems = [*era.problems, *ed.problems, *eras.problems(ed.doc)]
    return result


def _why(line: str, node: dict[str, Any]) -> str:
    readers = node.get("x-consumer-defaults") or {}
    others = [
        f"{reader} assumes {_show(value)} when absent"
        for reader, value in readers.items()
        if reader != "speculators" and value != node["default"]
    ]
    head = f"speculators {line} default"
    if others:
        return f"{head}; " + "; ".join(others)
    return f"{head}; written so no reader has to guess (defaults changed between releases)"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _fill_aux_ids(ed: Editor, model_type: str, line: str, verifier: dict | None) -> None:
    key = "eagle_aux_hidden_state_layer_ids"
    if model_type not in catalog.family("chain") or not schemas.resolve(line, model_type, (key,)):
        return
    if ed.doc.get(key) is not None:
        return
    n = verifier.get("num_hidden_layers") if isinstance(verifier, dict) else None
    if isinstance(n, int) and n >= 4:
        ed.set(
            pointer(key),
            [2, n // 2, n - 3],
            f"the default every reader derives from the verifier's {n} layers "
            "(2, L//2, L-3), now explicit; change it if the draft was trained on other layers",
        )
    else:
        ed.problem(
            "R005", pointer=pointer(key), key=key, state="null" if key in ed.doc else "absent"
        )
