"""The migration chain: steps between adjacent format versions, checked as a graph.

Each step module declares its edge (``SOURCE``, ``TARGET``) and two pure functions,
``upgrade`` and ``downgrade``; its docstring's first paragraph is the summary that
``specfmt history`` prints. The chain is built from those declarations alone, so its shape
(one base, one head, no gap between adjacent lines, no duplicate or backward edge) is
checked without running any step, and tests build chains from fake steps.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from spec_format.base.errors import InternalError, UsageError
from spec_format.rewrites.migration.records import StepOutput

StepFn = Callable[[dict[str, Any], "StepContext"], StepOutput]


class ChainError(InternalError):
    """The step modules do not form one straight chain (a bug in specfmt)."""


@dataclass(frozen=True)
class StepContext:
    """What a step may know besides the document (never the file system)."""

    source_version: Any = None  # versions.ParsedVersion of the original file, or None
    verifier: dict[str, Any] | None = None  # the verifier's text config, when given
    target_release: str = ""  # the release string the result will carry


@dataclass(frozen=True)
class Step:
    source: str
    target: str
    upgrade: StepFn
    downgrade: StepFn
    doc: str = ""
    touches: tuple[str, ...] = ()  # keys the step may edit, for `history --verbose`
    module: str = ""

    @property
    def id(self) -> str:
        return f"{self.source}->{self.target}"

    @property
    def summary(self) -> str:
        first = self.doc.split("\n\n", 1)[0].replace("\n", " ").strip()
        prefix = f"{self.source} -> {self.target}:"
        return first[len(prefix) :].strip() if first.startswith(prefix) else first

    @classmethod
    def from_module(cls, module: ModuleType) -> Step:
        for attr in ("SOURCE", "TARGET", "upgrade", "downgrade"):
            if not hasattr(module, attr):
                raise ChainError(f"step module {module.__name__} lacks {attr}")
        doc = inspect.cleandoc(module.__doc__ or "")
        if not doc:
            raise ChainError(f"step module {module.__name__} has no docstring")
        return cls(
            source=module.SOURCE,
            target=module.TARGET,
            upgrade=module.upgrade,
            downgrade=module.downgrade,
            doc=doc,
            touches=tuple(getattr(module, "TOUCHES", ())),
            module=module.__name__,
        )


@dataclass(frozen=True)
class PlannedStep:
    step: Step
    direction: str  # "up" or "down"

    @property
    def id(self) -> str:
        s = self.step
        return f"{s.source}->{s.target}" if self.direction == "up" else f"{s.target}->{s.source}"

    @property
    def from_version(self) -> str:
        return self.step.source if self.direction == "up" else self.step.target

    @property
    def to_version(self) -> str:
        return self.step.target if self.direction == "up" else self.step.source

    def run(self, doc: dict[str, Any], ctx: StepContext) -> StepOutput:
        fn = self.step.upgrade if self.direction == "up" else self.step.downgrade
        return fn(doc, ctx)


class Chain:
    """A straight line of steps from one base version to one head version."""

    def __init__(self, steps: Iterable[Step], versions: Sequence[str] | None = None) -> None:
        self.steps: tuple[Step, ...] = tuple(steps)
        if not self.steps:
            raise ChainError("no migration steps")
        by_source: dict[str, Step] = {}
        by_target: dict[str, Step] = {}
        for step in self.steps:
            if step.source == step.target:
                raise ChainError(f"step {step.id} ({step.module}) loops onto itself")
            if step.source in by_source:
                raise ChainError(
                    f"two steps leave {step.source}: {by_source[step.source].module} and {step.module}"
                )
            if step.target in by_target:
                raise ChainError(
                    f"two steps reach {step.target}: {by_target[step.target].module} and {step.module}"
                )
            by_source[step.source] = step
            by_target[step.target] = step
        bases = [s.source for s in self.steps if s.source not in by_target]
        heads = [s.target for s in self.steps if s.target not in by_source]
        if len(bases) != 1 or len(heads) != 1:
            raise ChainError(
                f"the steps must form one chain; bases {sorted(bases)}, heads {sorted(heads)}"
            )
        self.base, self.head = bases[0], heads[0]
        order = [self.base]
        while order[-1] in by_source:
            order.append(by_source[order[-1]].target)
            if len(order) > len(self.steps) + 1:
                raise ChainError("the steps contain a cycle")
        if len(order) != len(self.steps) + 1:
            raise ChainError("the steps contain a cycle detached from the chain")
        self.versions: tuple[str, ...] = tuple(order)
        self._by_source = by_source
        if versions is not None and tuple(versions) != self.versions:
            missing = [v for v in versions if v not in self.versions]
            extra = [v for v in self.versions if v not in versions]
            raise ChainError(
                "the steps do not link the catalog's versions in order: "
                f"chain {' -> '.join(self.versions)}; catalog {' -> '.join(versions)}"
                + (f"; no step reaches {', '.join(missing)}" if missing else "")
                + (f"; unknown to the catalog: {', '.join(extra)}" if extra else "")
            )

    def ordered(self) -> list[Step]:
        return [self._by_source[v] for v in self.versions[:-1]]

    def plan(self, source: str, target: str) -> list[PlannedStep]:
        """The steps from ``source`` to ``target`` (empty when they are the same)."""
        for v, what in ((source, "source"), (target, "target")):
            if v not in self.versions:
                raise UsageError(
                    f"unknown {what} format version {v!r}; known: {', '.join(self.versions)}"
                )
        i, j = self.versions.index(source), self.versions.index(target)
        ordered = self.ordered()
        if i <= j:
            return [PlannedStep(s, "up") for s in ordered[i:j]]
        return [PlannedStep(s, "down") for s in reversed(ordered[j:i])]
