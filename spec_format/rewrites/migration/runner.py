"""The generic runner: plan, apply each step, stamp, check for losses, re-validate.

Steps stay dumb; everything that is the same for every step lives here (like alembic's
``MigrationContext.run_migrations``): logging each step's change records, refusing lossy
downgrades unless allowed, setting ``speculators_version`` (the library never does), and
re-validating the result against the target version's schema.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from spec_format.base.errors import MigrationRefused
from spec_format.base.jsoncopy import same_json
from spec_format.facts import catalog, disputes, versions
from spec_format.rewrites.migration import eras
from spec_format.rewrites.migration.agree import (
    ReaderOptions,
    input_document,
    make_engines_agree,
    opening,
    write_layer_model_type,
)
from spec_format.rewrites.migration.chain import Chain, PlannedStep, Step, StepContext
from spec_format.rewrites.migration.records import Change, Editor, Problem, pointer
from spec_format.rewrites.migration.steps import STEP_MODULES
from spec_format.rewrites.migration.steps._common import TLC

EXPLICIT_STEP = "explicit"
STAMP_STEP = "stamp"
AGREE_STEP = "readers"


@cache
def chain() -> Chain:
    """The chain built from the step modules, checked against the catalog's versions."""
    return Chain((Step.from_module(m) for m in STEP_MODULES), versions=tuple(catalog.versions()))


def plan(source: str, target: str) -> list[PlannedStep]:
    return chain().plan(source, target)


@dataclass(frozen=True)
class MigrateOptions(ReaderOptions):
    to: str | None = None  # "0.5", "0.5.0", "0.4.0.1"; None: the latest version
    source_version: str | None = None  # override detection ("0.2")
    allow_lossy: bool = False
    verifier: dict[str, Any] | None = None  # the verifier's text config (--verifier)
    #: engines the draft is served with ("vllm==0.28.0"); empty: the newest covered ones
    engines: tuple[str, ...] = ()


@dataclass(repr=False)
class MigrationResult:
    original: dict[str, Any]
    document: dict[str, Any]
    detection: versions.Detection
    target: str  # format line
    target_release: str
    steps: list[PlannedStep]
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    losses: list[Change | Problem] = field(default_factory=list)
    # the input vs its own schema; computed only when the result fails its target schema
    source_errors: list[str] = field(default_factory=list)
    target_errors: list[str] = field(default_factory=list)  # the output vs the target schema

    @property
    def changed(self) -> bool:
        return not same_json(self.original, self.document)

    def __repr__(self) -> str:  # one line in a REPL; the documents are in .original/.document
        return (
            f"<MigrationResult {self.document.get('speculators_model_type')} "
            f"{self.detection.line} -> {self.target}: {_count(self.changes, 'change')}, "
            f"{_count(self.problems, 'problem')}, {_count(self.target_errors, 'schema error')}"
            f"{'' if self.changed else '; unchanged'}>"
        )

    @property
    def is_bug(self) -> bool:
        """The output fails the target schema although the input passed its own."""
        return bool(self.target_errors) and not self.source_errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.detection.to_dict(),
            "target": self.target,
            "target_release": self.target_release,
            "steps": [s.id for s in self.steps],
            "changed": self.changed,
            "changes": [c.to_dict() for c in self.changes],
            "problems": [p.to_dict() for p in self.problems],
            "lossy": [x.to_dict() for x in self.losses],
            "source_errors": list(self.source_errors),
            "target_errors": list(self.target_errors),
        }


def _count(items: list, noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def resolve_target(to: str | None) -> tuple[str, str]:
    """``--to`` -> (format line, release string to stamp)."""
    if to is None:
        line = catalog.latest_version()
        return line, catalog.version_entry(line).release
    return versions.option_version(to, "--to")


def migrate(
    document: dict[str, Any] | str | os.PathLike[str],
    options: MigrateOptions | None = None,
    *,
    share_input: bool = False,
) -> MigrationResult:
    """Migrate a config: a parsed dict, or a ``config.json`` path or its directory. The input
    is never changed (neither the dict nor the file): ``result.document`` is a new document,
    which the caller writes where it wants. Raises :class:`MigrationRefused` when it cannot be
    done as asked; otherwise returns the result (check ``target_errors`` before writing it).

    ``share_input=True``: the caller hands its dict over (as the CLI does with what it
    parsed) and it is not copied; ``result.document`` then shares every part no step edited
    with it, so neither may be changed in place afterwards."""
    options = options or MigrateOptions()
    document = input_document(document, share_input)
    if not isinstance(document, dict):
        raise MigrationRefused(
            f"the config is a {type(document).__name__}, not a JSON object; pass a dict, a "
            "config.json path or its directory"
        )
    _refuse_unmigratable(document)
    source = None
    if options.source_version is not None:  # a usage error when unknown
        source, _ = versions.option_version(options.source_version, "--from")
    detection = versions.detect(document, requested=source)
    target, release = resolve_target(options.to)
    steps = plan(detection.line, target)
    ctx = StepContext(
        source_version=detection.parsed, verifier=options.verifier, target_release=release
    )
    result = MigrationResult(
        original=document,  # never changed: each step copies only what it writes
        document=document,
        detection=detection,
        target=target,
        target_release=release,
        steps=steps,
    )

    def take(out) -> dict[str, Any]:
        """One step's changes and problems, and its document (which shares every part the
        step did not write with the one before: a config of 100k proposal methods is held
        once, whatever the number of steps)."""
        result.changes.extend(out.changes)
        result.problems.extend(out.problems)
        return out.document

    doc = take(opening(document, detection.line, options.verifier))
    doc = take(explicit(doc, detection.line))
    for step in steps:
        doc = take(step.run(doc, ctx))
    doc = take(stamp(doc, release))
    engines = disputes.parse_readers(options.engines)
    agree = Editor(doc, AGREE_STEP)
    make_engines_agree(agree, target, engines, named=bool(engines))
    doc = take(agree.output())
    del agree
    # the writer's known mistakes are the original's: the stamp names the target release
    # now, which would hide a mistake of the build that wrote the file (M007, M008) and
    # blame one on the target release when it falls in a window
    result.problems.extend(eras.problems(_as_written_by(doc, document)))
    result.problems.extend(
        Problem("C021", s.newer_message()) for s in disputes.newer_engines(options.engines)
    )
    result.document = doc
    result.losses = [c for c in result.changes if c.lossy] + [p for p in result.problems if p.lossy]
    if result.losses and not options.allow_lossy:
        raise MigrationRefused(
            f"migrating to {target} would lose information:\n"
            + "\n".join(f"  - {describe_loss(x)}" for x in result.losses)
            + "\nkeep the checkpoint at its version, or pass --allow-lossy to accept the loss"
        )
    result.target_errors = schema_errors(doc, target)
    if result.target_errors:  # a bug of a step, or an input already invalid? (one schema walk
        # less on the common path: a 1.4M-item list costs what validate costs)
        result.source_errors = schema_errors(result.original, detection.line)
    return result


def _as_written_by(doc: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with the ``speculators_version`` of ``original`` (the build that wrote it)."""
    out = {k: v for k, v in doc.items() if k != "speculators_version"}
    if "speculators_version" in original:
        out["speculators_version"] = original["speculators_version"]
    return out


def describe_loss(x: Change | Problem) -> str:
    if isinstance(x, Change):
        return f"{x.pointer} ({x.step}): {x.why}"
    return f"{x.pointer or ''} ({x.step}): {x.message}"


def _refuse_unmigratable(document: dict[str, Any]) -> None:
    if "speculators_model_type" not in document:
        if {"speculators_algorithm", "draft_model"} & document.keys():
            raise MigrationRefused(
                "this is the pre-0.1 draft format (top-level version, speculators_algorithm, "
                "draft_model); no speculators release reads it and specfmt cannot migrate it. "
                "Re-create the config with speculators >= 0.1 (speculators convert)"
            )
        raise MigrationRefused(
            "no speculators_model_type: this is not a speculators config (a verifier's "
            "config.json, or an external EAGLE/DFlash checkpoint that needs `speculators "
            "convert` first)"
        )


def stamp(doc: dict[str, Any], release: str):
    ed = Editor(doc, STAMP_STEP)
    before = doc.get("speculators_version")
    ed.set(
        "/speculators_version",
        release,
        "the library stamps its own version once and never updates it; the migrated file "
        "is in the format of " + release + (f" (was written by {before})" if before else ""),
    )
    return ed.output()


def drop_noise(ed: Editor) -> None:
    """Remove the serialization noise keys (C009): no reader uses them at any version."""
    for key, noise in catalog.noise_keys().items():
        if key in ed.doc:
            ed.remove(pointer(key), f"serialization noise: {noise.why}")


def explicit(doc: dict[str, Any], line: str):
    """Drop serialization noise, and write the keys whose absence readers disagree about
    with the meaning the source version gives them."""
    ed = Editor(doc, EXPLICIT_STEP)
    model_type = ed.model_type
    drop_noise(ed)
    if model_type in catalog.family("chain") and "norm_before_residual" not in doc:
        engines = disputes.absent_readings(model_type, "norm_before_residual")
        ed.set(
            "/norm_before_residual",
            False,
            "speculators default" + (f"; {engines}" if engines else ""),
        )
    tlc = doc.get(TLC)
    written = write_layer_model_type(ed, line)  # the class the source version builds
    if not written and model_type == "eagle" and isinstance(tlc, dict) and "model_type" not in tlc:
        ed.problem(
            "C002",
            "transformer_layer_config.model_type is required for eagle configs "
            '(AutoConfig.for_model needs it); add the verifier family, e.g. "llama"',
            pointer=pointer(TLC, "model_type"),
            severity="error",
        )
    return ed.output()


def schema_errors(doc: dict[str, Any], line: str) -> list[str]:
    """Schema errors of ``doc`` against ``line`` ("pointer: message"), empty when valid."""
    model_type = doc.get("speculators_model_type")
    if model_type not in catalog.version_entry(line).types:
        return [f"/speculators_model_type: {model_type!r} is not a type of format {line}"]
    # capped as validate caps them (S rules): the first ones listed, the rest counted, so a
    # 1.5M-item list of wrong values costs what validate costs
    from spec_format.rules.schema import MAX_SCHEMA_COUNTED, capped_errors

    first, left_out = capped_errors(doc, line, model_type)
    out = [f"{pointer(*e.absolute_path) or '/'}: {_short(e.message)}" for e in first]
    if left_out:
        more = f"at least {left_out:,}" if left_out == MAX_SCHEMA_COUNTED else f"{left_out:,}"
        out.append(f"/: {more} more schema errors not listed (the first {len(first)} are)")
    return out


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "..."
