"""Engine release strings as a user writes them (``--engine``, ``engine = [...]``).

What pip takes, parsed with ``packaging``: a name (its newest covered release), a pin
(``vllm==0.33`` is 0.33.0 by PEP 440 equality; any member release of a group), or
specifiers (``vllm>=0.28,<0.33``, ``vllm~=0.30.0``): every covered release in the range,
one per release group of the reader table (members of a group read alike, so the table
answers for them all and no probe runs). A pin newer than the table is judged with the
newest covered release and :attr:`EngineSpec.newer` says so (rule C021 reports it); a pin
older than the engine's first reader, a malformed string, an unknown engine and a range
no covered release satisfies are usage errors naming what is accepted.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from spec_format.base.errors import UsageError
from spec_format.facts import readers, sglang

#: the command that adds a release to the reader table (what a newer release is told)
ADD_RELEASE = "scripts/add-release.py"


class EngineSpec(NamedTuple):
    """One engine string, resolved against the reader table."""

    text: str  # as written
    name: str  # "vllm"
    #: one per covered group in the range, oldest first (SGLang: sglang.Release, one each)
    releases: tuple[readers.Release | sglang.Release, ...]
    newer: str | None = None  # a pinned version newer than the table (judged as releases[-1])

    @property
    def judged_as(self) -> str:
        """``"vllm==0.33.0"``: the release a newer pin is judged with."""
        return self.releases[-1].id

    def newer_message(self) -> str:
        asked = f"{self.name}=={self.newer}"
        return (
            f"{asked} is newer than the reader table (its newest {self.name} release is "
            f"{self.judged_as}): judged as {self.judged_as}, which may read drafts "
            f"differently; add the release with `{ADD_RELEASE} {self.name} {self.newer}`"
        )


def engines() -> list[str]:
    """The engine names the tables cover (``sglang``, ``speculators``, ``vllm``)."""
    return sorted({r.split("==")[0] for r in readers.releases()} | {sglang.ENGINE})


def reads_speculators(spec: EngineSpec) -> bool:
    """Whether the engine reads speculators configs (every covered one but SGLang)."""
    return spec.name != sglang.ENGINE


def readers_named(specs) -> tuple[EngineSpec, ...]:
    """The specs of engines that read speculators configs."""
    return tuple(s for s in specs if reads_speculators(s))


@cache
def _versions(name: str) -> tuple[tuple[Version, str], ...]:
    """(parsed, as written) of every covered release of ``name``, oldest first."""
    if name == sglang.ENGINE:
        return tuple((Version(v), v) for v in sglang.versions())
    found = [r.split("==")[1] for r in readers.releases() if r.startswith(f"{name}==")]
    return tuple((Version(v), v) for v in found)


def _release(name: str, version: str):
    return sglang.release(version) if name == sglang.ENGINE else readers.release(name, version)


#: what the first covered release of an engine is the first of
_FIRST = {
    sglang.ENGINE: "SGLang release whose verifier classes capture aux hidden states for EAGLE-3",
}


#: the forms an engine string takes
FORMS = (
    "write NAME, NAME==VERSION or NAME with version specifiers as pip takes them "
    "(vllm==0.33, vllm>=0.28,<0.33, vllm~=0.30.0)"
)


def accepted() -> str:
    """The one line a malformed string is told: the forms and the covered ranges."""
    ranges = ", ".join(
        f"{e} {_versions(e)[0][1]} to {_versions(e)[-1][1]}" for e in engines() if _versions(e)
    )
    return f"{FORMS}; covered: {ranges}"


def parse(text: str) -> EngineSpec:
    """One engine string -> the covered releases it names (a usage error otherwise)."""
    # imported when a string is given: the requirement parser costs ~25 ms of start-up
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name

    written = str(text).strip()
    try:
        req = Requirement(written) if written and len(written) <= 200 else None
    except InvalidRequirement:
        req = None
    if req is None or req.extras or req.url or req.marker:
        raise UsageError(f"--engine {written!r}: not an engine release; {accepted()}")
    name = canonicalize_name(req.name)
    if name not in engines():
        raise UsageError(
            f"--engine {written!r}: {name} is not an engine the reader table covers; {accepted()}"
        )
    versions = _versions(name)
    first, newest = versions[0], versions[-1]
    spec = req.specifier
    if not spec:  # a bare name: its newest covered release
        return EngineSpec(written, name, (_release(name, newest[1]),))
    pinned = _pin(spec)
    if pinned is not None and pinned.local:  # a build of a release (0.33.0+cpu): the release
        pinned = Version(pinned.public)
        spec = SpecifierSet(f"=={pinned}")
    if pinned is not None and pinned > newest[0]:
        return EngineSpec(written, name, (_release(name, newest[1]),), str(pinned))
    if pinned is not None and pinned < first[0]:
        raise UsageError(
            f"--engine {written!r}: {name} {pinned} is older than {first[1]}, the first "
            f"{_FIRST.get(name, f'{name} release that reads speculators drafts')}; "
            f"covered: {name} {first[1]} to "
            f"{newest[1]}"
        )
    covered = [v for parsed, v in versions if spec.contains(parsed, prereleases=True)]
    if not covered:
        what = (
            f"{name} {pinned} is not a {name} release"
            if pinned is not None
            else "no covered release satisfies it"
        )
        raise UsageError(
            f"--engine {written!r}: {what}; the covered {name} releases are "
            + ", ".join(v for _, v in versions)
            + f"; {FORMS}"
        )
    groups: dict[str, readers.Release | sglang.Release] = {}
    for version in covered:
        rel = _release(name, version)
        groups.setdefault(rel.representative, rel)  # the first member in the range
    return EngineSpec(written, name, tuple(groups.values()))


def _pin(spec) -> Version | None:
    """The version of a single ``==V`` or ``===V`` (no wildcard), else ``None``."""
    items = list(spec)
    if len(items) != 1 or items[0].operator not in ("==", "===") or "*" in items[0].version:
        return None
    try:
        return Version(items[0].version)
    except InvalidVersion:
        return None


def split(texts) -> list[str]:
    """The engine strings of ``--engine`` values, each of which may list several separated by
    commas: a comma starts a new string only before a name (``vllm>=0.28,<0.33`` is one)."""
    out: list[str] = []
    for text in texts or ():
        for part in str(text).split(","):
            part = part.strip()
            if not part:
                continue
            if out and not part[0].isalpha():
                out[-1] = f"{out[-1]},{part}"
            else:
                out.append(part)
    return out


def parse_all(texts) -> tuple[EngineSpec, ...]:
    return tuple(parse(t) for t in split(texts))
