"""What each vLLM release makes of an EAGLE-3 draft it reads as it is
(``schema/readers/native/vllm.json``, written by scripts/vllm-native-facts.py from every
release's wheel and checked against them by tests/readers/test_vllm_native_facts.py).

vLLM serves a SafeAILab / SpecForge EAGLE-3 checkpoint (``LlamaForCausalLMEagle3``) without
a speculators config: its ``Eagle3LlamaForCausalLM`` reads the draft's own ``config.json``.
The table holds, per release, how many hidden states that class builds ``fc`` for on each
input it may size it from (executed from the model's ``__init__``; 0: no fc, for a head that
declares ``eagle_config.use_aux_hidden_state: false``), and whether ``load_weights`` then
skips the checkpoint's ``fc.*``. The reader table (:mod:`spec_format.facts.readers`) is the
speculators path; this one is the source layout's.
"""

from __future__ import annotations

from functools import cache

from spec_format.facts import fc_width, package_data
from spec_format.facts.release_spans import ReleaseSpans

ENGINE = "vllm"


@cache
def table() -> dict:
    folder = package_data.schema_folder().joinpath("readers").joinpath("native")
    return package_data.read_json(folder.joinpath("vllm.json"))


@cache
def _releases() -> ReleaseSpans:
    return ReleaseSpans(table()["releases"])


def versions() -> tuple[str, ...]:
    return tuple(table()["releases"])


def covered(version: str) -> bool:
    return version in _releases().at


def architecture() -> str:
    """The architecture name the table's class is registered for."""
    return table()["architecture"]


def _within(spans: list, version: str) -> bool:
    return _releases().within(spans, version)


def _fc_case(version: str, architecture: str):
    return fc_width.case_reader(table()["eagle3_fc"], _within, version, architecture)


def fc_states(version: str, arch: str, config: dict) -> int | None:
    """How many hidden states the release builds the draft's ``fc`` for (0: none)."""
    return fc_width.states(_fc_case(version, arch), config)


def sizes_fc_from(version: str, arch: str) -> list[str]:
    return fc_width.sizes_from(_fc_case(version, arch))


def skips_fc_without_aux(version: str, arch: str) -> bool:
    """Whether ``load_weights`` skips the checkpoint's ``fc.*`` when the release built no fc."""
    return _within(table()["skips_fc_without_aux"].get(arch, []), version)


def reads_use_aux(version: str, arch: str) -> bool:
    """Whether the release acts on ``eagle_config.use_aux_hidden_state`` (builds no fc)."""
    return _fc_case(version, arch)("no_aux") == 0


def first(test, after: str | None = None) -> str | None:
    """The first covered release (after ``after``) for which ``test(version)`` holds."""
    return _releases().first(test, after)
