"""What a conversion will do, before any byte is written: the contract between a source
kind (``spec_format/convert/sources/<kind>.py``) and the writer.

A source kind reads the source checkpoint's config and tensor header (never tensor bytes) and
returns a :class:`Plan`: the complete speculators config, one :class:`TensorMove` per source
tensor (mapped or dropped, each with its reason) and where every config value came from. The
writer executes the plan (copy bytes, stream, write atomically, re-validate); ``--dry-run``
prints it. A source kind refuses with :class:`ConvertRefused`, naming the tensor or field.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from spec_format.base.errors import UsageError
from spec_format.parsers.checkpoint import TensorRecord
from spec_format.parsers.verifier import VerifierInfo

#: Where a config value came from (the report prints one per field).
Origin = Literal["source", "verifier", "flag", "default", "derived"]


class Provenance(NamedTuple):
    pointer: str  # JSON pointer into the output config, e.g. "/speculators_config/..."
    origin: Origin
    detail: str  # e.g. "eagle_config.eagle_aux_hidden_state_layer_ids", "--aux-layer-ids"


class TensorMove(NamedTuple):
    """One output tensor made from source tensors, or one source tensor dropped.

    ``op`` "copy": one source, bytes unchanged; "stack"/"cat": several sources joined along
    ``axis`` in the order given (bytes of each source unchanged, e.g. fused MoE experts);
    "drop": ``target`` is None and ``reason`` says why the format does not carry it;
    "derive": ``target`` computed from the values of ``sources`` by the function of
    :mod:`spec_format.convert.derive` that ``derive`` names (a vocabulary map rebuilt from
    the other one), never guessed.
    """

    sources: tuple[str, ...]
    target: str | None
    op: Literal["copy", "stack", "cat", "drop", "derive"]
    reason: str
    axis: int = 0
    derive: str = ""  # op "derive": a key of spec_format.convert.derive.DERIVERS
    #: the output's shape when it is not the one ``op`` gives: the same bytes read as this
    #: shape (fused MoE ``gate_up_proj`` [E, 2I, H]: gate and up rows of each expert
    #: concatenated, experts in order, i.e. "cat" of g0, u0, g1, u1, ... along axis 0)
    shape: tuple[int, ...] | None = None


class Plan(NamedTuple):
    kind: str  # source kind name, e.g. "safeailab-eagle3"
    config: dict[str, Any]  # the complete output config.json
    moves: tuple[TensorMove, ...]
    provenance: tuple[Provenance, ...]
    notes: tuple[str, ...] = ()  # choices the user should know about
    lossy: tuple[str, ...] = ()  # what --allow-lossy let through (empty: lossless)


class Source(NamedTuple):
    """The source checkpoint as a source kind sees it (header only)."""

    path: Path
    config: Mapping[str, Any]  # its config.json
    tensors: Mapping[str, TensorRecord]  # every tensor of its safetensors file(s)


class Request(NamedTuple):
    """What the user asked for (flags of ``specfmt convert``)."""

    verifier: VerifierInfo | None
    verifier_ref: str | None  # as given: a path or hf://ORG/NAME[@REV]
    aux_layer_ids: tuple[int, ...] | None
    format_version: str  # target format version (default: latest)
    allow_lossy: bool = False
    dtype: str | None = None  # re-cast tensors to this safetensors dtype (None: copy bytes)
    #: --verifier-name ORG/NAME: what speculators_config.verifier.name_or_path says (None:
    #: derived from --verifier, see spec_format.convert.run.verifier_name)
    verifier_name: str | None = None


class ConvertRefused(UsageError):
    """The conversion cannot be done exactly as asked; nothing was written (exit 2).
    The message names the tensor or field and what would make it possible."""


class SourceKind(Protocol):
    name: str  # e.g. "safeailab-eagle3", "zlab-dflash", "native-mtp"
    description: str  # one line for --help and the report

    def detect(self, config: Mapping[str, Any], tensor_names: frozenset[str]) -> bool:
        """True when the checkpoint is this kind (no other kind may also claim it)."""

    def plan(self, source: Source, request: Request) -> Plan:
        """The full plan, or :class:`ConvertRefused`."""
