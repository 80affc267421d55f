"""Readers of other projects' draft layouts: the checkpoint as ``specfmt convert`` would
write it, so that ``validate`` checks a SafeAILab, SpecForge or z-lab draft through that
view instead of stopping at "not the speculators format" (S004).

The layering choice. Recognising a layout and mapping it (config, tensor names) is the
business of ``spec_format.convert.sources``; a plan is only complete once the rewrite
pipeline has brought its config to the target format version, so that code sits above the
runner and cannot move below it. The runner therefore owns only this registry: what a
reader returns (:class:`SeenThrough`) and the list of readers, which
``spec_format.convert.see_through`` registers into when it is imported. The entry points,
on the top floor of the layers contract, hand the runner a provider that imports it on
first need (:func:`provide`): the CLI (``specfmt validate``) and the Python API
(``spec_format.validate`` is :mod:`spec_format.api`'s). No module imports up a floor, a
run that meets no third-party config imports no converter, and a program that calls the
runner directly without a provider gets S004 as before. This module imports nothing of
the project at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from spec_format.parsers.checkpoint import TensorRecord
    from spec_format.parsers.verifier import VerifierInfo


#: the verifier name a view stands in for one convert would ask for (--verifier-name)
UNNAMED = "verifier/unnamed"


class SeenThrough(NamedTuple):
    """A third-party checkpoint as the speculators checkpoint convert would write."""

    kind: str  # the convert source kind, e.g. "safeailab-eagle3"
    description: str  # one line naming the layout
    #: what ``specfmt convert`` needs for this checkpoint (flags), one phrase
    needs: str
    #: the converted config (None: convert refuses before it has one)
    config: dict[str, Any] | None = None
    #: the converted tensor table (None: no weights were given, only the config)
    tensors: Mapping[str, TensorRecord] | None = None
    #: converted tensor name -> the source tensors it is made from
    origins: Mapping[str, tuple[str, ...]] = {}
    #: JSON pointer of the converted config -> the source config's pointer it came from
    pointers: Mapping[str, str] = {}
    #: why convert refuses the checkpoint as it is, naming what is missing (None: it converts)
    refused: str | None = None
    #: what convert would tell the user about its choices (the plan's notes)
    notes: tuple[str, ...] = ()
    #: what the view assumed or left out to check the rest when convert refuses (the
    #: readers' default aux layer ids, tensors convert does not know)
    assumed: tuple[str, ...] = ()
    #: rules whose findings on this view are about the view, not the draft (left out)
    of_the_view: frozenset[str] = frozenset()
    #: S004's wording: a layout convert knows, or one nothing converts (``needs`` empty)
    variant: str = "convert-source"


class SourceReader(Protocol):
    def __call__(
        self,
        config: Mapping[str, Any],
        tensors: Mapping[str, TensorRecord] | None,
        verifier: VerifierInfo | None,
        where: str,
    ) -> SeenThrough | None:
        """The view of a checkpoint whose layout this reader knows, else None; never raises
        for a broken file (a refusal says what is wrong)."""


_READERS: list[SourceReader] = []
_PROVIDERS: list[Callable[[], None]] = []


def register(reader: SourceReader) -> None:
    if reader not in _READERS:
        _READERS.append(reader)


def provide(provider: Callable[[], None]) -> None:
    """``provider()`` registers readers (importing what it needs); it runs on the first
    :func:`readers` call, so a run that meets no third-party config never imports them."""
    _PROVIDERS.append(provider)


def readers() -> tuple[SourceReader, ...]:
    while _PROVIDERS:
        _PROVIDERS.pop(0)()
    return tuple(_READERS)


def see_through(
    config: Mapping[str, Any],
    tensors: Mapping[str, TensorRecord] | None,
    verifier: VerifierInfo | None,
    where: str,
) -> SeenThrough | None:
    """The first registered reader's view of this checkpoint, or None when none knows it
    (readers are asked only about a mapping without ``speculators_model_type``)."""
    if not isinstance(config, Mapping) or "speculators_model_type" in config:
        return None
    for reader in readers():
        seen = reader(config, tensors, verifier, where)
        if seen is not None:
            return seen
    return None
