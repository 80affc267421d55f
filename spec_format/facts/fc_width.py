"""How many hidden states an engine's EAGLE-3 class builds ``fc`` for, for a source config
(a SafeAILab / SpecForge checkpoint the engine reads as it is), from what its facts table
executed on each input the class may size ``fc`` from (scripts/wheel_facts.py's cases):
``num_aux_hidden_states``, the aux layer ids under ``eagle_config`` (4 in the case) or at the
top level (2), alone and in pairs, and a head that declares it reads no aux state. The
engines' fact modules (:mod:`spec_format.facts.sglang`, :mod:`spec_format.facts.vllm_native`)
give the outcome of one case for one release and class; this module applies them to a config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

IDS = "eagle_aux_hidden_state_layer_ids"
#: case -> (the key it sets, the count the case gives when the class reads that key)
_INPUTS = (
    ("num_aux_hidden_states", "num_aux_hidden_states", 1),
    ("eagle_config_ids", f"eagle_config.{IDS}", 4),
    ("top_level_ids", IDS, 2),
)


def case_reader(
    table: Mapping[str, Any], within: Callable[[list, str], bool], version: str, architecture: str
) -> Callable[[str], int | None]:
    """``case(name)``: the count an engine's ``eagle3_fc`` table (``{class: {case: {count:
    spans}}}``) gives ``architecture`` on ``version`` for a case, ``within(spans, version)``
    being the engine's own ordering of its releases."""
    cases = table.get(architecture, {})

    def case(name: str) -> int | None:
        found = cases.get(name, {})
        return next((int(n) for n, spans in found.items() if within(spans, version)), None)

    return case


def _ids(value: Any) -> list | None:
    return value if isinstance(value, list) and value else None


def states(case: Callable[[str], int | None], config: Mapping[str, Any]) -> int | None:
    """The count for ``config``, ``case(name)`` being the release's outcome for a case (None
    where the table has none): 0 when the class builds no fc, None when unknown."""
    default = case("default")
    if default is None:
        return None
    nested = config.get("eagle_config") if isinstance(config.get("eagle_config"), dict) else {}
    count = config.get("num_aux_hidden_states")
    count = count if type(count) is int and count > 0 else None
    inner, top = _ids(nested.get(IDS)), _ids(config.get(IDS))
    if nested.get("use_aux_hidden_state") is False and case("no_aux") == 0:
        return 0
    inner_read = inner is not None and case("eagle_config_ids") == 4
    count_read = count is not None and case("num_aux_hidden_states") == 1
    if count_read and not (inner_read and case("num_and_eagle_config_ids") == 4):
        return count
    if inner_read and not (top is not None and case("both_ids") == 2):
        return len(inner)
    if top is not None and case("top_level_ids") == 2:
        return len(top)
    return default


def sizes_from(case: Callable[[str], int | None]) -> list[str]:
    """The config keys the class sizes ``fc`` from, in the order it prefers them; empty
    when it always builds the default."""
    return [key for name, key, value in _INPUTS if case(name) == value]
