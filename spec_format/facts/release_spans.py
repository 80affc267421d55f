"""The covered releases of one engine's facts table (SGLang's, vLLM's native one), oldest
first: whether a release lies in one of the table's spans (``[first, last]`` pairs of
covered releases), and the first release a test holds for (the one a message names)."""

from __future__ import annotations

from collections.abc import Callable, Iterable


class ReleaseSpans:
    def __init__(self, versions: Iterable[str]) -> None:
        self.versions = tuple(versions)
        self.at = {v: i for i, v in enumerate(self.versions)}

    def within(self, spans: list, version: str) -> bool:
        """Whether the covered ``version`` lies in one of ``spans``."""
        at = self.at[version]
        return any(self.at[a] <= at <= self.at[b] for a, b in spans)

    def first(self, test: Callable[[str], bool], after: str | None = None) -> str | None:
        """The first covered release (after ``after``) for which ``test(version)`` holds."""
        start = self.at[after] + 1 if after is not None else 0
        return next((v for v in self.versions[start:] if test(v)), None)
