"""What each executed vLLM release group reads, per draft class (``schema/readers/reads/``).

One file per group, ``vllm-<group>.json`` (format: ``reads.schema.json``), recorded by
``python -m tests.readers.reads`` from the release's own code: per draft class it builds, the
draft config fields it reads (top level, ``speculators_config.*``,
``transformer_layer_config.*``), the verifier config attributes it reads and the tensor names
it loads, skips and leaves at their initial value. ``accounted.json`` says, for every field
some release reads, the rules that check it or why it needs no check (inert); a field in
neither is what ``tests/test_reads.py`` fails on.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from spec_format.facts import catalog, package_data, readers

#: the markers around the generated counts in ``schema/readers/README.md``
BEGIN, END = "<!-- read counts (python -m tests.readers.reads) -->", "<!-- end of read counts -->"


def folder():
    return readers.table_dir().joinpath("reads")


@cache
def groups() -> dict[str, dict]:
    """group version -> its recorded reads, in release order."""
    found = {}
    for item in folder().iterdir():
        if item.name.startswith("vllm-") and item.name.endswith(".json"):
            data = package_data.read_json(item)
            found[data["version"]] = data
    return dict(sorted(found.items(), key=lambda kv: tuple(map(int, kv[0].split(".")))))


@cache
def accounted() -> dict[str, dict[str, dict]]:
    """side (``draft``, ``verifier``) -> field -> ``{"rules": [...]}`` or ``{"inert": why}``."""
    data = package_data.read_json(folder().joinpath("accounted.json"))
    return {side: data[side] for side in ("draft", "verifier")}


def _known(side: str, field: str) -> dict | None:
    table = accounted()[side]
    if field in table:
        return table[field]
    # an entry for a key of any nesting ("speculators_config.verifier.*")
    parts = field.split(".")
    for n in range(len(parts) - 1, 0, -1):
        entry = table.get(".".join(parts[:n]) + ".*")
        if entry is not None:
            return entry
    return None


class Count(NamedTuple):
    group: str
    read: int
    accounted: int
    missing: tuple[str, ...]  # "draft:field" / "verifier:field"


def count(version: str, data: dict) -> Count:
    read: set[str] = set()
    for entry in data["classes"].values():
        read |= {f"draft:{f}" for f in entry["draft"]}
        read |= {f"verifier:{f}" for f in entry["verifier"]}
    missing = tuple(sorted(r for r in read if _known(*r.split(":", 1)) is None))
    return Count(version, len(read), len(read) - len(missing), missing)


def summary() -> list[str]:
    """One line per group: ``vllm 0.24.0: fields read: N, accounted for: N``."""
    return [
        f"vllm {c.group}: fields read: {c.read}, accounted for: {c.accounted}"
        for c in (count(v, d) for v, d in groups().items())
    ]


def readme_text(current: str) -> str:
    """``current`` (the reader table's README) with the counts between its markers replaced
    by :func:`summary`."""
    head, _, rest = current.partition(BEGIN)
    _, _, tail = rest.partition(END)
    body = "\n".join(f"- {line}" for line in summary())
    return f"{head}{BEGIN}\n{body}\n{END}{tail}"


#: the types whose drafter takes the verifier's aux hidden states (the catalog's aux_key):
#: vLLM's model runner turns its aux hidden-state outputs on for the methods they are served
#: as and refuses a verifier class without ``SupportsEagle3``
AUX_TYPES = catalog.types_where(lambda record: record.aux_key is not None)


class Serving(NamedTuple):
    """What a group's model registry says of one verifier architecture."""

    known: bool  # a generation architecture of the registry
    serves: bool | None  # implements SupportsEagle3 (None: the class is picked at run time)


def serving(version: str, arch: str) -> Serving | None:
    """The group ``version``'s answer for ``arch`` (``None``: the group has no recording)."""
    data = groups().get(version, {}).get("verifier_architectures")
    if data is None:
        return None
    if arch in data["aux_hidden_states"]:
        return Serving(True, True)
    if arch in data["without"]:
        return Serving(True, False)
    return Serving(arch in data["unresolved"], None)


def first_serving(model_type: str, arch: str) -> str | None:
    """The first covered vLLM release (a group's representative) that serves ``model_type``
    and whose class for ``arch`` implements the interface."""
    for version in groups():
        rel = readers.release("vllm", version)
        found = serving(version, arch)
        if rel.serves(model_type) and found is not None and found.serves:
            return rel.id
    return None


def eagle3_target_types(version: str) -> tuple[str, ...] | None:
    """The strings of which group ``version``'s SpeculativeConfig wants one in an EAGLE-3
    target's text model_type (``None``: the group has no such check, or no recording)."""
    found = groups().get(version, {}).get("eagle3_target_model_types")
    return None if found is None else tuple(found)


def first_accepting_target(model_type: str) -> str | None:
    """The first covered vLLM release (a group's representative) whose EAGLE-3 target check
    lets a verifier of text model_type ``model_type`` through."""
    for version in groups():
        allowed = eagle3_target_types(version)
        if allowed is None or any(item in model_type for item in allowed):
            return readers.release("vllm", version).id
    return None


def mtp_count_read(version: str, model_type: str, layout: str) -> tuple[bool, str | None]:
    """(whether group ``version``'s MTP config rewrite knows ``model_type`` for a config
    holding its MTP layer count at ``layout`` ("top" or "text_config"), the key path it
    reads the count from there, None for none)."""
    answers = (groups().get(version, {}).get("mtp_n_predict") or {}).get(model_type) or {}
    return layout in answers, answers.get(layout)


def first_reading_mtp_count(model_type: str, layout: str) -> str | None:
    """The first covered vLLM release that reads ``model_type``'s MTP layer count from a
    config holding it at ``layout``."""
    for version in groups():
        known, path = mtp_count_read(version, model_type, layout)
        if known and path is not None:
            return readers.release("vllm", version).id
    return None
