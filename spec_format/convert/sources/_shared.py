"""What the z-lab DFlash and native MTP source kinds share: a plan under construction (config
values with their provenance, tensor moves, notes), the verifier block and the format's own
defaults. (The values readers read differently are made explicit by ``fix`` after planning,
in :func:`spec_format.convert.run.make_plan`, for every kind.)"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from spec_format.convert.plan import (
    ConvertRefused,
    Origin,
    Plan,
    Provenance,
    Request,
    Source,
    TensorMove,
)
from spec_format.convert.run import verifier_name
from spec_format.convert.write import TORCH_NAMES
from spec_format.facts import catalog, schemas
from spec_format.facts.contract import ExpectedTensor
from spec_format.parsers.checkpoint import TensorRecord
from spec_format.rewrites.migration.records import pointer

#: top-level keys a source kind sets itself; the schema defaults fill in the rest
_NOT_DEFAULTED = frozenset({"dtype", "torch_dtype", "auto_map", "transformers_version"})


def target_line(request: Request, model_type: str) -> str:
    """The format line to write (``"0.9"``; ``"0.9.0"`` is read as its line)."""
    asked = request.format_version or catalog.latest_version()
    line = asked if asked in catalog.versions() else ".".join(asked.split(".")[:2])
    catalog.version_entry(line)  # a usage error listing the known versions
    if model_type not in catalog.version_entry(line).types:
        have = ", ".join(catalog.versions_with_type(model_type))
        raise ConvertRefused(
            f"--format-version {asked}: format {line} has no {model_type!r} type; "
            f"pass a version that has it ({have})"
        )
    return line


class Draft:
    """A plan being built: every config value is set with where it came from."""

    def __init__(self, kind: str, model_type: str, line: str) -> None:
        self.kind, self.model_type, self.line = kind, model_type, line
        self.config: dict[str, Any] = {}
        self.provenance: dict[str, Provenance] = {}
        self.moves: list[TensorMove] = []
        self.notes: list[str] = []
        self.lossy: list[str] = []

    def set(self, path: tuple[str, ...], value: Any, origin: Origin, detail: str) -> None:
        node = self.config
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        where = pointer(*path)
        self.provenance.pop(where, None)  # keep report order = order of the decisions
        self.provenance[where] = Provenance(where, origin, detail)

    def copy(self, name: str, target: str, reason: str) -> None:
        self.moves.append(TensorMove((name,), target, "copy", reason))

    def drop(self, name: str, reason: str) -> None:
        self.moves.append(TensorMove((name,), None, "drop", reason))

    def unknown(self, name: str, request: Request, what: str) -> None:
        """A tensor the mapping does not know: refused, or dropped under --allow-lossy."""
        if not request.allow_lossy:
            raise ConvertRefused(
                f"{name}: {what}; the conversion would lose it. Pass --allow-lossy to drop "
                "it (the report lists it), or convert with a tool that knows it"
            )
        self.drop(name, f"{what}; dropped because --allow-lossy was given")
        self.lossy.append(f"{name}: {what}")

    def verifier(
        self,
        request: Request,
        architectures: list[str] | None,
        origin: Origin = "verifier",
        detail: str = "architectures",
    ) -> None:
        base = ("speculators_config", "verifier")
        if request.verifier_ref or request.verifier_name or request.verifier:
            self.set((*base, "name_or_path"), *verifier_name(request))
        else:
            self.set((*base, "name_or_path"), None, "default", "no --verifier given")
        self.set((*base, "architectures"), list(architectures or []), origin, detail)

    def greedy(self, tokens: int, origin: Origin, detail: str) -> None:
        sc = ("speculators_config",)
        self.set((*sc, "algorithm"), self.model_type, "derived", "speculators_model_type")
        method = {
            "proposal_type": "greedy",
            "speculative_tokens": tokens,
            "verifier_accept_k": 1,
            "accept_tolerance": 0.0,
        }
        self.set((*sc, "proposal_methods"), [method], origin, detail)
        self.set((*sc, "default_proposal_method"), "greedy", "derived", "the only method")

    def header(self) -> None:
        """Type, version and architectures as the release's ``save_pretrained`` writes them."""
        rec = catalog.record(self.model_type)
        self.set(
            ("speculators_model_type",), self.model_type, "derived", f"source kind {self.kind}"
        )
        self.set(
            ("speculators_version",),
            catalog.version_entry(self.line).release,
            "derived",
            f"the release that writes format {self.line}",
        )
        self.set(
            ("architectures",), list(rec.architectures), "derived", "the catalog's model class"
        )

    def dtype(self, records: list[TensorRecord]) -> None:
        """``dtype``: the float dtype of the copied tensors (bytes are never re-cast)."""
        floats = sorted({r.dtype for r in records if r.dtype in TORCH_NAMES})
        if len(floats) == 1:
            self.set(("dtype",), TORCH_NAMES[floats[0]], "derived", "the copied tensors' dtype")
        elif floats:
            self.notes.append(
                f"the copied tensors mix {', '.join(floats)}; dtype is left out (pass --dtype "
                "to re-cast them to one)"
            )

    def defaults(self) -> None:
        """Every other field of the type's schema with a default: written out like
        ``save_pretrained`` does, so no reader has to supply its own."""
        props = schemas.type_schema(self.line, self.model_type).get("properties", {})
        for key, node in props.items():
            if key in self.config or key in _NOT_DEFAULTED or "default" not in node:
                continue
            self.set(
                (key,), copy.deepcopy(node["default"]), "default", f"format {self.line} default"
            )

    def plan(self) -> Plan:
        return Plan(
            kind=self.kind,
            config=self.config,
            moves=tuple(self.moves),
            provenance=tuple(self.provenance.values()),
            notes=tuple(self.notes),
            lossy=tuple(self.lossy),
        )


@dataclass(frozen=True)
class Kind:
    """A :class:`~spec_format.convert.plan.SourceKind` from a kind module's ``detect`` and
    ``plan`` functions; its refusals name the source checkpoint."""

    name: str
    description: str
    detector: Callable[[Mapping[str, Any], frozenset[str]], bool]
    planner: Callable[[Source, Request], Plan]

    def detect(self, config: Mapping[str, Any], tensor_names: frozenset[str]) -> bool:
        return self.detector(config, tensor_names)

    def plan(self, source: Source, request: Request) -> Plan:
        try:
            return self.planner(source, request)
        except ConvertRefused as exc:
            raise ConvertRefused(f"{source.path}: {exc}") from None


def check_shape(name: str, record: TensorRecord, expected: ExpectedTensor, why: str = "") -> None:
    if not expected.shape_matches(record.shape):
        raise ConvertRefused(
            f"{name}: shape {list(record.shape)}, but the mapping expects "
            f"{expected.describe_shape()}{why}; the source does not match its own config"
        )


def hidden_size_agrees(source_hidden: Any, request: Request, where: str) -> None:
    """The draft consumes the verifier's hidden states: the sizes must be equal."""
    theirs = request.verifier.hidden_size if request.verifier else None
    if theirs is not None and source_hidden is not None and source_hidden != theirs:
        raise ConvertRefused(
            f"{where} is {source_hidden}, but the verifier's hidden_size is {theirs} "
            f"({request.verifier.where('hidden_size')}): the draft was built for another model; "
            "pass --verifier with its own verifier"
        )
