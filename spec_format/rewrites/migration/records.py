"""What a migration step hands back: the new document, change records and problems.

A :class:`Change` is one edit at one JSON pointer, with the value before and after and the
reason; ``lossy`` marks an edit that throws information away (a downgrade dropping a field
the older release cannot express). A :class:`Problem` is something a config edit cannot
fix (weights that need re-conversion, a verifier field nobody recorded); it is reported,
never hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spec_format.base.jsoncopy import copy_json


class _Absent:
    """The value of a key that is not there (distinct from JSON null)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"

    def __bool__(self) -> bool:
        return False

    def __deepcopy__(self, memo: dict) -> _Absent:
        return self


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Change:
    step: str  # "0.6->0.7", "explicit", "era:dspark-anchor", ...
    pointer: str  # RFC 6901 pointer of the key that changed
    before: Any
    after: Any
    why: str
    lossy: bool = False

    @property
    def op(self) -> str:
        if self.before is ABSENT:
            return "add"
        if self.after is ABSENT:
            return "remove"
        return "replace"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "op": self.op, "pointer": self.pointer}
        if self.before is not ABSENT:
            out["before"] = self.before
        if self.after is not ABSENT:
            out["after"] = self.after
        out["why"] = self.why
        if self.lossy:
            out["lossy"] = True
        return out

    def describe(self) -> str:
        def show(v: Any) -> str:
            import json

            return json.dumps(v, sort_keys=True) if v is not ABSENT else "(absent)"

        verb = {"add": "added", "remove": "removed", "replace": "changed"}[self.op]
        values = {
            "add": show(self.after),
            "remove": show(self.before),
            "replace": f"{show(self.before)} -> {show(self.after)}",
        }[self.op]
        return f"{verb} {self.pointer} = {values}: {self.why}"


@dataclass(frozen=True)
class Problem:
    """Something migration cannot fix in the config; always reported.

    ``rule`` is the id of the rule that explains it (``specfmt explain ID``): the
    validation rule of the same fact where there is one, else a rewrite (R) rule.
    """

    rule: str  # a rule id, e.g. "C006"
    message: str  # says what is wrong and what to do
    pointer: str | None = None
    severity: str = "warning"  # "error" | "warning" | "info"
    step: str = ""
    lossy: bool = False  # meaning the target cannot express, although no key changes

    @property
    def code(self) -> str:
        """The rule's kebab-case name, e.g. "verifier-architectures-empty"."""
        return _rule(self.rule).name

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }
        if self.pointer is not None:
            out["pointer"] = self.pointer
        if self.step:
            out["step"] = self.step
        if self.lossy:
            out["lossy"] = True
        return out

    @classmethod
    def of(
        cls,
        rule_id: str,
        message: str | None = None,
        *,
        pointer: str | None = None,
        severity: str | None = None,
        step: str = "",
        lossy: bool = False,
        variant: str | None = None,
        **params: Any,
    ) -> Problem:
        """A problem of rule ``rule_id``: worded by the rule's template unless ``message``
        is given (rules with a check word their findings in place, as checks do), with the
        rule's severity unless ``severity`` is given."""
        rule = _rule(rule_id)
        if message is None:
            message = rule.render(variant, pointer=pointer, **params)
        return cls(rule.id, message, pointer, severity or rule.severity.value, step, lossy)


def _rule(rule_id: str):
    # the registry imports the version rules, which import this package: resolve late
    from spec_format.rules.registry import BY_ID

    return BY_ID[rule_id]


@dataclass
class StepOutput:
    document: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


# -- pointers ---------------------------------------------------------------------------------
def pointer(*parts: str | int) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def split_pointer(ptr: str) -> list[str]:
    if ptr == "":
        return []
    if not ptr.startswith("/"):
        raise ValueError(f"not a JSON pointer: {ptr!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in ptr[1:].split("/")]


def index(node: list, part: str) -> int | None:
    """``part`` as an index of an existing element of ``node`` (RFC 6901: ``0`` or digits
    without a leading zero, ASCII only), or None when it names none."""
    if not (part.isascii() and part.isdigit()) or (part != "0" and part.startswith("0")):
        return None
    i = int(part)
    return i if i < len(node) else None


def get(doc: Any, ptr: str, default: Any = ABSENT) -> Any:
    node = doc
    for part in split_pointer(ptr):
        if isinstance(node, dict):
            if part not in node:
                return default
            node = node[part]
        elif isinstance(node, list) and (i := index(node, part)) is not None:
            node = node[i]
        else:
            return default
    return node


class Editor:
    """Edits a document without changing it, and records every edit as a :class:`Change`.

    Steps use it so they stay pure (the input is never touched) and cannot forget to
    record what they did. ``doc`` shares every part no edit went into with the input: read
    it, never write into it (write through :meth:`set` and :meth:`remove`).
    """

    def __init__(self, document: dict[str, Any], step: str) -> None:
        # copy on write: the root is copied here, a nested object or array only when an
        # edit goes into it (a step touching 3 keys of a config with 100k proposal methods
        # copies 3 paths, not the methods); the input is never changed
        self.doc = dict(document)
        self._own: dict[int, Any] = {id(self.doc): self.doc}  # the containers copied here
        self.step = step
        self.changes: list[Change] = []
        self.problems: list[Problem] = []

    # reading
    def get(self, ptr: str, default: Any = ABSENT) -> Any:
        return get(self.doc, ptr, default)

    def has(self, ptr: str) -> bool:
        return self.get(ptr) is not ABSENT

    @property
    def model_type(self) -> Any:
        return self.doc.get("speculators_model_type")

    # writing
    def set(self, ptr: str, value: Any, why: str, *, lossy: bool = False) -> None:
        current = self.get(ptr)
        if current is not ABSENT and current == value and type(current) is type(value):
            return  # before the path is copied: an edit that changes nothing copies nothing
        parent, key = self._parent(ptr)
        if isinstance(parent, list):
            # an element of an array is replaced; an index past the end names no element
            # (the array would need a hole or a shift the step did not ask for)
            slot = index(parent, key)
            if slot is None:
                raise ValueError(f"{ptr}: {key!r} is no element of its array ({len(parent)})")
            before = parent[slot]
        else:
            slot, before = key, parent.get(key, ABSENT)
        # one copy, shared by the document and the record: an edit into it later copies it
        # first (it is not the editor's own), so the record keeps the value written
        value = copy_json(value)
        parent[slot] = value
        self.changes.append(Change(self.step, ptr, before, value, why, lossy))

    def add_default(self, ptr: str, value: Any, why: str) -> None:
        """Write ``value`` only when the key is absent."""
        if not self.has(ptr):
            self.set(ptr, value, why)

    def remove(self, ptr: str, why: str, *, lossy: bool = False) -> None:
        """Remove the key, or the element of an array (the later elements move down one: a
        step removing several goes from the last to the first); nothing when it is absent."""
        if self.get(ptr) is ABSENT:
            return
        parent, key = self._parent(ptr)  # the whole path exists: get found it
        before = parent.pop(index(parent, key) if isinstance(parent, list) else key)
        self.changes.append(Change(self.step, ptr, before, ABSENT, why, lossy))

    def problem(
        self,
        rule_id: str,
        message: str | None = None,
        *,
        pointer: str | None = None,
        severity: str | None = None,
        lossy: bool = False,
        variant: str | None = None,
        **params: Any,
    ) -> None:
        """Record a problem of rule ``rule_id`` (see :meth:`Problem.of`)."""
        self.problems.append(
            Problem.of(
                rule_id,
                message,
                pointer=pointer,
                severity=severity,
                step=self.step,
                lossy=lossy,
                variant=variant,
                **params,
            )
        )

    def output(self) -> StepOutput:
        return StepOutput(self.doc, self.changes, self.problems)

    def _parent(self, ptr: str) -> tuple[dict | list, str]:
        """The container ``ptr`` ends in, made writable with every container on the way, and
        the last reference token. A missing object on the way is created; a path through a
        scalar or through an array element that does not exist is a step's bug (ValueError),
        never an edit into a throwaway container."""
        parts = split_pointer(ptr)
        if not parts:
            raise ValueError("cannot edit the document root")
        node: Any = self.doc
        for part in parts[:-1]:
            slot: Any = part if isinstance(node, dict) else index(node, part)
            if slot is None:
                raise ValueError(f"{ptr}: {part!r} is no element of its array ({len(node)})")
            if isinstance(node, dict) and part not in node:
                node[part] = self._owned({})
            elif not isinstance(node[slot], (dict, list)):
                raise ValueError(f"{ptr}: {part!r} is not an object; a step must check first")
            node[slot] = self._writable(node[slot])
            node = node[slot]
        return node, parts[-1]

    def _writable(self, node: dict | list) -> dict | list:
        """``node`` itself when this editor made it, else its shallow copy (made once)."""
        if id(node) in self._own:
            return node
        return self._owned(dict(node) if isinstance(node, dict) else list(node))

    def _owned(self, node: dict | list) -> dict | list:
        self._own[id(node)] = node  # held here, so no other object can take its id
        return node
