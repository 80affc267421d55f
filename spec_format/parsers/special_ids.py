"""The verifier's special token ids: end-of-sequence and padding, from its ``config.json``
and, when one lies beside it, its ``generation_config.json``.

Engines stop generating at every id of ``generation_config.json``'s ``eos_token_id`` (vLLM
and transformers read it there first; ``config.json`` keeps an older or narrower copy), and
pad batches with ``pad_token_id``. Each may be written as an int, a list of ints, a list
nested in a list, ``null`` or not at all; anything that is no whole number (a string, a
bool, an object) is left out, and a ``generation_config.json`` that cannot be read is
treated as absent. Nothing here raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_format.base.jsonload import json_int, load_json

#: a generation_config.json is a few hundred bytes; a larger one is not read
MAX_GENERATION_CONFIG = 1024 * 1024
#: how deep lists of ids are followed ([[1, 2], 3] is two levels)
_MAX_DEPTH = 4
#: the keys read, and what each id is
ROLES = {"eos_token_id": "end-of-sequence", "pad_token_id": "padding"}
GENERATION_CONFIG = "generation_config.json"


@dataclass(frozen=True)
class SpecialId:
    """One special id of the verifier and where it was read."""

    value: int
    role: str  # "end-of-sequence" or "padding"
    where: str  # "generation_config.json eos_token_id", "config.json pad_token_id", ...


def ids_of(value: Any, depth: int = 0) -> list[int]:
    """The whole numbers in ``value``: an int, or lists of them (nested up to a few levels);
    everything else gives none."""
    if isinstance(value, list):
        if depth >= _MAX_DEPTH:
            return []
        return [i for item in value for i in ids_of(item, depth + 1)]
    number = json_int(value, low=0)
    return [] if number is None else [number]


def generation_config(config_path: Any) -> dict[str, Any] | None:
    """``generation_config.json`` beside a local verifier ``config.json`` (None when there
    is none, it cannot be read, or the verifier is remote)."""
    if not isinstance(config_path, Path):  # an hf:// verifier: its config.json only
        return None
    path = config_path.parent / GENERATION_CONFIG
    try:
        if not path.is_file():
            return None
        loaded = load_json(path, max_bytes=MAX_GENERATION_CONFIG)
    except (OSError, ValueError):
        return None
    if not loaded.ok or any(p.fatal for p in loaded.problems):
        return None
    return loaded.data if isinstance(loaded.data, dict) else None


def special_ids(config: dict[str, Any], config_path: Any) -> list[SpecialId]:
    """Every end-of-sequence and padding id of the verifier, each once per place it is
    written: ``generation_config.json`` first (what the engines stop on), then
    ``config.json`` (``config`` is the verifier's merged text config)."""
    out: list[SpecialId] = []
    sources = [(GENERATION_CONFIG, generation_config(config_path)), ("config.json", config)]
    for name, doc in sources:
        if not isinstance(doc, dict):
            continue
        for key, role in ROLES.items():
            for value in dict.fromkeys(ids_of(doc.get(key))):
                out.append(SpecialId(value, role, f"{name} {key}"))
    return out
