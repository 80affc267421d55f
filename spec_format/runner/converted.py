"""A third-party draft checked as ``specfmt convert`` would write it (issue 35, part 5).

When the config has no speculators type and a registered source reader
(:mod:`spec_format.runner.source_readers`; ``spec_format.convert`` provides it) knows its
layout, S004 says what the checkpoint is and what ``convert`` needs, or why convert would
refuse it, naming what is missing. Then every rule layer runs over the converted view:
schema, cross-field, consumer and version rules on the converted config, the weight rules
on the converted tensor table (the source's headers mapped by the plan; with ``--deep`` the
vocabulary maps' values, read from the source tensors they copy; ``--scan-weights`` stays
with the written checkpoint), the verifier
rules with ``--verifier``, the reader rules with ``--engine``. Each finding is reported
against the source files (a config value that came from a key of the source config points
at that key; a converted tensor names the source tensors it is made from), its message
prefixed "as converted:".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from spec_format.base.jsonload import Loaded
from spec_format.base.report import FileReport, Finding
from spec_format.parsers.verifier import VerifierInfo
from spec_format.rules import native_layouts, registry
from spec_format.rules import schema as schema_rules
from spec_format.rules.base import Layer
from spec_format.runner.config_checks import check_config, engines_of, sglang_of
from spec_format.runner.input_paths import Target
from spec_format.runner.source_readers import SeenThrough, see_through
from spec_format.runner.validate_options import ValidateOptions
from spec_format.runner.weight_checks import run_weight_rules

#: the dispatch findings a seen-through checkpoint's S004 replaces
_DISPATCH = ("S001", "S004")
PREFIX = "as converted: "
#: the converted config's verifier block comes from convert's flags, not from the source:
#: what the config rules say of it is about the flags of this view, not about the draft.
#: The verifier rules' findings on its architectures are kept: those rules run only with
#: --verifier, and then the architectures are the verifier's own.
_FROM_FLAGS = "/speculators_config/verifier"
_VERIFIERS_OWN = _FROM_FLAGS + "/architectures"
#: rules about the speculators format itself, which the source layout is not in: SGLang
#: reads no speculators config (C023), but reads the layout seen through
_ABOUT_THE_FORMAT = frozenset({"C023"})


def check_converted(
    config: Any,
    target: Target,
    checkpoint,
    report: FileReport,
    options: ValidateOptions,
    verifier: VerifierInfo | None,
) -> None:
    """Add the converted view's findings to ``report`` (nothing when no reader knows it)."""
    if not isinstance(config, Mapping) or "speculators_model_type" in config:
        return
    tensors = None
    if checkpoint is not None and checkpoint.has_weights and checkpoint.complete:
        tensors = checkpoint.tensors
    file = str(target.config_path) if target.config_path is not None else target.shown
    seen = see_through(config, tensors, verifier, file)
    if seen is None:
        return
    verdict = _verdict(seen)
    at = next((i for i, f in enumerate(report.findings) if f.rule in _DISPATCH), None)
    if at is None:  # S006 or no dispatch finding: the verdict is not replaced
        return
    named = tuple(options.engines)
    vllm = tuple(r for r in engines_of(named) if r.name == "vllm")
    report.findings.extend(
        native_layouts.findings(config, tensors, sglang_of(named), vllm, options.profile, file)
    )
    report.findings[at] = schema_rules.ThirdPartyConfig.emit(
        file,
        profile=options.profile,
        pointer="",
        variant=seen.variant,
        what=seen.description,
        verdict=verdict,
    )
    if seen.config is None:
        return
    view = FileReport(path=file)
    view_options = replace(options, scan_weights=False, format_version=None)
    ctx = check_config(Loaded(path=Path(file), data=seen.config), view, view_options, verifier)
    if ctx is not None:
        available = {"verifier"} if verifier is not None else set()
        if seen.tensors is not None:
            ctx.checkpoint = _View(seen.tensors, seen.origins, checkpoint)
            available.add("weights")
            if options.deep:  # the vocabulary maps, read from the source tensors they copy
                available.add("deep")
        run_weight_rules(ctx, available, verifier, view, view_options)
    report.findings.extend(
        _on_source(f, seen, file)
        for f in view.findings
        if not _from_flags(f) and f.rule not in seen.of_the_view and f.rule not in _ABOUT_THE_FORMAT
    )


def _from_flags(finding: Finding) -> bool:
    pointer = finding.pointer or ""
    if not pointer.startswith(_FROM_FLAGS):
        return False
    verifier_rule = registry.get(finding.rule).layer is Layer.VERIFIER
    return not (verifier_rule and pointer.startswith(_VERIFIERS_OWN))


def _verdict(seen: SeenThrough) -> str:
    noted = "".join(f"; {n}" for n in seen.notes)
    if seen.refused is None:
        return (
            f"{seen.needs} converts it; the findings marked 'as converted' are what validate "
            f"finds on the checkpoint it would write{noted}"
        )
    text = f"{seen.needs} would refuse it: {seen.refused}" if seen.needs else seen.refused
    if seen.config is not None:
        text += (
            f"; the findings marked 'as converted' check the rest with {'; '.join(seen.assumed)}"
        )
    return text + noted


def _on_source(finding: Finding, seen: SeenThrough, file: str) -> Finding:
    """A finding of the converted view, said of the source files."""
    message = PREFIX + finding.message
    pointer = None
    if finding.pointer:
        pointer = _source_pointer(finding.pointer, seen.pointers)
        if pointer is None:
            message += f" ({finding.pointer} of the converted config)"
    tensor = finding.tensor
    if tensor is not None and tensor in seen.origins:
        sources = seen.origins[tensor]
        if sources != (tensor,):
            message += f" (source tensor {' + '.join(sources)})"
            tensor = sources[0]
    return replace(
        finding,
        message=message,
        file=file if finding.pointer or finding.tensor is None else finding.file,
        pointer=pointer,
        tensor=tensor,
        line=None,
        column=None,
        command=None,
    )


def _source_pointer(pointer: str, pointers: Mapping[str, str]) -> str | None:
    """The source config's pointer for a pointer of the converted config (a value inside a
    mapped one keeps its path below it), or None."""
    at = pointer
    while at:
        if at in pointers:
            return pointers[at] + pointer[len(at) :]
        at = at.rpartition("/")[0]
    return None


class _View:
    """The source checkpoint with the converted tensor table in place of its own."""

    def __init__(self, tensors: Mapping[str, Any], origins, checkpoint) -> None:
        self.tensors = tensors
        self._origins = origins
        self._checkpoint = checkpoint
        self.issues: list = []
        self.malformed: set[str] = set()
        self.complete = True

    @property
    def has_weights(self) -> bool:
        return True

    def read_tensor(self, name: str, max_bytes: int) -> bytes:
        """A converted tensor's bytes, read from the one source tensor it copies as it is
        (the vocabulary maps); one that convert builds from several, or casts, has no bytes
        before it is written."""
        sources = self._origins.get(name, (name,))
        source = self._checkpoint.tensors.get(sources[0]) if len(sources) == 1 else None
        mine = self.tensors[name]
        if source is None or (source.dtype, tuple(source.shape)) != (mine.dtype, tuple(mine.shape)):
            raise ValueError(
                f"{name} is made from {' + '.join(sources)} by convert: its values are checked "
                "on the written checkpoint"
            )
        return self._checkpoint.read_tensor(sources[0], max_bytes)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._checkpoint, name)

    def close(self) -> None:  # the source checkpoint is closed by its own checks
        pass
