"""Helpers of the z-lab DFlash and native MTP convert tests: plans through the real
``make_plan`` (detect, plan, fix, contract check) and the provenance walk."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spec_format.convert.plan import Plan, Request
from spec_format.convert.run import load_source, make_plan
from spec_format.facts import catalog
from spec_format.parsers.verifier import verifier_view


def request(
    verifier: Mapping[str, Any] | None = None,
    ref: str | None = None,
    *,
    aux: tuple[int, ...] | None = None,
    lossy: bool = False,
    line: str | None = None,
) -> Request:
    return Request(
        verifier=verifier_view(verifier, Path(ref or "verifier/config.json")) if verifier else None,
        verifier_ref=ref,
        aux_layer_ids=aux,
        format_version=line or catalog.latest_version(),
        allow_lossy=lossy,
    )


def plan_of(path: Path, req: Request) -> Plan:
    return make_plan(load_source(path), req)


def leaves(node: Any, prefix: str = "") -> list[str]:
    """JSON pointers of every scalar or list value (lists count as one value)."""
    if isinstance(node, dict) and node:
        out = []
        for k, v in node.items():
            out += leaves(v, f"{prefix}/{k}")
        return out
    return [prefix]


def unexplained(plan: Plan) -> list[str]:
    """Config values no provenance entry covers (itself or a parent)."""
    covered = {p.pointer for p in plan.provenance}
    out = []
    for leaf in leaves(plan.config):
        parts = leaf.split("/")
        if not any("/".join(parts[:i]) in covered for i in range(2, len(parts) + 1)):
            out.append(leaf)
    return out


def moves_by_source(plan: Plan) -> dict[str, Any]:
    return {s: m for m in plan.moves for s in m.sources}
