"""Parameters and bytes of a draft checkpoint, by role, from its safetensors headers.

Every tensor is looked up in the type's tensor contract (``schema/tensors/``), whose entry
names a role; the roles table (``symbols.json``) gives the role's group and whether a draft
step multiplies by it. The *compute-relevant* count is every tensor except those that it
does not (the ``embed_tokens`` copy, a row lookup, and the ``t2d``/``d2t`` index maps), the
definition of the seed document's section 3. A draft head the checkpoint leaves out because
the engine shares the verifier's (``lm_head`` when the draft vocabulary is the verifier's,
MTP) is read at every draft step all the same: it is added to the compute count, named.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from spec_format.facts.contract import ExpectedSet, roles
from spec_format.parsers.checkpoint import Checkpoint

#: Group of tensors the contract does not know (counted as compute: the seed's definition
#: excludes only the embedding copy and the vocabulary maps).
OTHER = "not in the tensor contract"
COMPUTE_DEFINITION = "every tensor except the embed_tokens copy and the t2d/d2t vocabulary maps"


@dataclass
class Group:
    name: str
    compute: bool
    tensors: int = 0
    parameters: int = 0
    bytes: int = 0


@dataclass
class DraftParams:
    groups: dict[str, Group]  # in the order of the roles table, OTHER last
    dtypes: dict[str, int]  # dtype -> number of tensors
    file_bytes: int  # size of the weight files
    files: list[str]
    unknown: list[str] = field(default_factory=list)  # tensors in OTHER
    #: (tensor, parameters) of a head the engine shares from the verifier
    shared_head: tuple[str, int] | None = None
    #: where the tensors were counted: "headers" (the safetensors headers) or "config" (a
    #: draft without weights: the tensors its config implies, inspect.run.ConfigOnly)
    source: str = "headers"

    @property
    def total(self) -> int:
        return sum(g.parameters for g in self.groups.values())

    @property
    def total_bytes(self) -> int:
        return sum(g.bytes for g in self.groups.values())

    @property
    def compute(self) -> int:
        """The compute-relevant parameters of one draft forward."""
        own = sum(g.parameters for g in self.groups.values() if g.compute)
        return own + (self.shared_head[1] if self.shared_head else 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": self.total,
            "bytes": self.total_bytes,
            "compute_parameters": self.compute,
            "compute_definition": COMPUTE_DEFINITION,
            "groups": [
                {
                    "group": g.name,
                    "tensors": g.tensors,
                    "parameters": g.parameters,
                    "bytes": g.bytes,
                    "compute": g.compute,
                }
                for g in self.groups.values()
            ],
            "shared_head": None
            if self.shared_head is None
            else {"tensor": self.shared_head[0], "parameters": self.shared_head[1]},
            "not_in_contract": list(self.unknown),
            "dtypes": dict(self.dtypes),
            "file_bytes": self.file_bytes,
            "files": list(self.files),
            "counted_from": self.source,
        }


def draft_params(ckpt: Checkpoint, expected: ExpectedSet) -> DraftParams:
    """Sum the checkpoint's tensors by the group of their contract role."""
    table = roles()
    groups: dict[str, Group] = {}
    for spec in table.values():
        groups.setdefault(spec.group, Group(spec.group, spec.compute))
    unknown = []
    dtypes: Counter[str] = Counter()
    for name, record in ckpt.tensors.items():
        role = _role(expected, name)
        if role is None:
            group = groups.setdefault(OTHER, Group(OTHER, True))
            unknown.append(name)
        else:
            group = groups[table[role].group]
        group.tensors += 1
        group.parameters += record.numel
        group.bytes += record.nbytes
        dtypes[record.dtype] += 1
    files = [w.name for w in ckpt.files]
    file_bytes = sum(w.header.file_size for w in ckpt.files if w.header is not None)
    return DraftParams(
        groups={k: g for k, g in groups.items() if g.tensors},
        dtypes=dict(dtypes.most_common()),
        file_bytes=file_bytes,
        files=files,
        unknown=sorted(unknown),
        shared_head=_shared_head(ckpt, expected),
        source="config" if getattr(ckpt, "from_config", False) else "headers",
    )


def _role(expected: ExpectedSet, name: str) -> str | None:
    hit = expected.match(name)
    if hit is not None:
        return hit.role
    absent = expected.absent.get(name)  # present although this config rules it out
    return absent.spec.role if absent is not None else None


def _shared_head(ckpt: Checkpoint, expected: ExpectedSet) -> tuple[str, int] | None:
    for t in expected.by_role("lm_head"):
        if t.name not in ckpt.tensors and not t.required and all(d for d in t.shape):
            parameters = 1
            for d in t.shape:
                parameters *= d  # type: ignore[operator]
            return t.name, parameters
    return None
