"""What each SGLang release can serve beside a draft (``schema/readers/sglang/sglang.json``).

SGLang reads no speculators config: no release's source reads ``speculators_model_type``, and
a speculators ``config.json`` names an architecture its registry does not know
(``Eagle3Speculator``). What it serves are third-party layouts (SafeAILab / SpecForge
EAGLE-3, z-lab DFlash), and whether it can serve one beside a verifier depends on the
verifier's model class: the runner calls the class's capture method
(``set_eagle3_layers_to_capture`` for EAGLE-3, ``set_dflash_layers_to_capture`` or
``set_dspark_layers_to_capture`` for DFlash and DSpark) at start-up. The table holds, per
architecture, the spans of releases whose registry has it and whose class has each capture
method; ``scripts/sglang-facts.py`` derives it from every release's wheel and
``tests/readers/test_sglang_facts.py`` checks it against them.

Release strings are PEP 440 (``0.5.6.post2``): :class:`packaging.version.Version` orders them.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from spec_format.facts import fc_width, package_data
from spec_format.facts.release_spans import ReleaseSpans

ENGINE = "sglang"


class Release(NamedTuple):
    """One covered SGLang release."""

    version: str

    name = ENGINE

    @property
    def id(self) -> str:
        return f"{ENGINE}=={self.version}"

    @property
    def representative(self) -> str:
        return self.version

    def serves(self, model_type: str) -> bool:
        """SGLang serves no speculators type (it reads no speculators config)."""
        return False


@cache
def table() -> dict:
    folder = package_data.schema_folder().joinpath("readers").joinpath("sglang")
    return package_data.read_json(folder.joinpath("sglang.json"))


@cache
def _releases() -> ReleaseSpans:
    return ReleaseSpans(table()["releases"])


def versions() -> tuple[str, ...]:
    """Every covered release, oldest first."""
    return tuple(table()["releases"])


def release(version: str) -> Release:
    if version not in _releases().at:
        raise KeyError(f"{ENGINE}=={version} is not covered")
    return Release(version)


def _within(spans: list, version: str) -> bool:
    return _releases().within(spans, version)


def reads_speculators(version: str) -> bool:
    return _within(table()["reads_speculators"], version)


def registered(version: str, architecture: str) -> bool:
    row = table()["architectures"].get(architecture)
    return row is not None and _within(row.get("registered", []), version)


def captures(version: str, architecture: str, family: str) -> bool | None:
    """Whether the release's class for ``architecture`` has ``family``'s capture method
    (``None``: the release does not register the architecture, or its class forwards
    unknown attributes to a model it picks at run time)."""
    if not registered(version, architecture):
        return None
    row = table()["architectures"][architecture]
    if _within(row.get(family, []), version):
        return True
    return None if delegates(version, architecture) else False


def delegates(version: str, architecture: str) -> bool:
    """Whether the release's class forwards unknown attributes (``__getattr__``)."""
    row = table()["architectures"].get(architecture, {})
    return _within(row.get("delegates", []), version)


def first(test, after: str | None = None) -> str | None:
    """The first covered release (after ``after``) for which ``test(version)`` holds, or
    None: the release a message names as the one to serve with."""
    return _releases().first(test, after)


def first_capturing(architecture: str, family: str, after: str | None = None) -> str | None:
    """The first covered release (after ``after``) whose class for ``architecture`` captures
    for ``family``, or None."""
    return first(lambda v: captures(v, architecture, family), after)


def capture_method(family: str) -> str:
    return " or ".join(table()["captures"][family])


#: catalog family -> the capture the runner asks the verifier's class for
_CAPTURE_OF_FAMILY = {"chain": "eagle3", "block": "dflash"}


def capture_family(model_type: str) -> str | None:
    """``"eagle3"`` or ``"dflash"``: the capture a draft of ``model_type`` needs from the
    verifier's class, or None (a type that reads no aux hidden states)."""
    from spec_format.facts import catalog

    record = catalog.record(model_type)
    if record is None or record.aux_key is None:
        return None
    return _CAPTURE_OF_FAMILY.get(record.family)


def eagle3_head(version: str, architecture: str, tied: bool, draft_vocab_given: bool) -> str | None:
    """What the release's EAGLE-3 draft class ``architecture`` (``LlamaForCausalLMEagle3``,
    ``Eagle3DeepseekV2ForCausalLM``) makes its ``lm_head``, executed from its ``__init__``:
    ``embed`` (the draft's embedding), ``target`` (the verifier's head, installed by the
    worker) or ``fresh`` (a new head only the checkpoint's ``lm_head.weight`` fills); None
    where the table has no answer (another class, a release without it)."""
    if tied:
        case = "tied"
    else:
        case = "untied-draft-vocab" if draft_vocab_given else "untied-no-draft-vocab"
    cases = table()["eagle3_head"].get(architecture, {})
    for outcome, spans in cases.get(case, {}).items():
        if _within(spans, version):
            return outcome
    return None


def head_classes() -> tuple[str, ...]:
    """The EAGLE-3 draft classes whose head decision the table holds."""
    return tuple(table()["eagle3_head"])


def layer_refusal(version: str, architecture: str) -> str | None:
    """The error the release's EAGLE-3 class raises for a draft of more than one decoder
    layer (executed from its ``__init__``), or None when it builds them."""
    for message, spans in table()["eagle3_layer_refusal"].get(architecture, {}).items():
        if _within(spans, version):
            return message
    return None


def _fc_case(version: str, architecture: str):
    return fc_width.case_reader(table()["eagle3_fc"], _within, version, architecture)


def fc_states(version: str, architecture: str, config: dict) -> int | None:
    """How many hidden states the release's EAGLE-3 class ``architecture`` builds ``fc`` for,
    for a source config (executed from its ``__init__``: :mod:`spec_format.facts.fc_width`);
    None where the table has no answer."""
    return fc_width.states(_fc_case(version, architecture), config)


def sizes_fc_from(version: str, architecture: str) -> list[str]:
    """The config keys the release's class sizes ``fc`` from, preferred first."""
    return fc_width.sizes_from(_fc_case(version, architecture))


def runner_reads_use_aux(version: str) -> bool:
    """Whether the release's model runner reads ``eagle_config.use_aux_hidden_state`` (read
    from its source): one that does not captures aux states for every EAGLE-3 head."""
    return _within(table().get("runner_reads_use_aux", []), version)
