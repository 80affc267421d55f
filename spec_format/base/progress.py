"""Progress of long work (the NaN/Inf scan of every tensor, loading a checkpoint for
``forward``), reported by the library and shown by whoever installed a display.

The library calls :func:`task` around the work and :func:`advance` as it goes; both cost
one check of a global when nothing is shown, which is the default (the Python API, tests,
piped output). The CLI installs a display with :func:`showing` only when stderr is a
terminal and the output format is text (``spec_format.cli.common.progress_display``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol


class Handle(Protocol):
    def advance(self, amount: int) -> None: ...

    def close(self) -> None: ...


Display = Callable[[str, int, str], Handle]  # (label, total, unit) -> a running bar

_display: Display | None = None
_current: _Shown | _Unshown | None = None


@contextlib.contextmanager
def showing(display: Display | None) -> Iterator[None]:
    """Show the tasks started inside the block with ``display`` (None: show nothing)."""
    global _display
    previous, _display = _display, display
    try:
        yield
    finally:
        _display = previous


@contextlib.contextmanager
def task(label: str, total: int, unit: str = "bytes") -> Iterator[None]:
    """One piece of long work of ``total`` units; :func:`advance` inside moves it on.
    One bar at a time: a task inside a shown one is not shown (its advances go nowhere)."""
    global _current
    if _display is None or total <= 0:
        yield
        return
    previous = _current
    shown = _UNSHOWN if previous is not None else _Shown(_display, label, total, unit)
    _current = shown
    try:
        yield
    finally:
        _current = previous
        shown.close()


@contextlib.contextmanager
def hidden() -> Iterator[None]:
    """The current bar taken off the terminal within the block, and shown again where it
    was after it: for output written to the same terminal meanwhile (a report streamed
    between two inputs of a long run), which the bar's redrawing would otherwise cut."""
    shown = _current
    if not isinstance(shown, _Shown):
        yield
        return
    shown.close()
    try:
        yield
    finally:
        shown.reopen()


class _Shown:
    """A task on display: what it is and how far it got, so that it can be shown again."""

    def __init__(self, display: Display, label: str, total: int, unit: str) -> None:
        self.display, self.label, self.total, self.unit = display, label, total, unit
        self.done = 0
        self.handle: Handle | None = display(label, total, unit)

    def advance(self, amount: int) -> None:
        self.done += amount
        if self.handle is not None:
            self.handle.advance(amount)

    def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            handle.close()

    def reopen(self) -> None:
        if self.handle is None:
            self.handle = self.display(self.label, self.total, self.unit)
            if self.done:
                self.handle.advance(self.done)


class _Unshown:
    def advance(self, amount: int) -> None:
        pass

    def close(self) -> None:
        pass


_UNSHOWN = _Unshown()


def advance(amount: int) -> None:
    if _current is not None:
        _current.advance(amount)
