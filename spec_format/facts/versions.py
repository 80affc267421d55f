"""Format versions: parse ``speculators_version`` and detect the writer from the keys.

A *format version* (or *line*) is a speculators release line, ``"0.1"`` … ``"0.9"``; the
catalog (``schema/catalog.json``) lists them. A config says which build wrote it in
``speculators_version``, but that string is only a hint:

* the library stamps it once and never updates it, so a file loaded and re-saved by a
  newer release keeps the old string next to the new release's keys;
* dev builds are numbered ``X.Y.0.devN`` from the last tag reachable from ``main``. The 0.5.0
  and 0.7.0 releases were cut on side branches, so ``0.5.0.dev85`` … ``dev172`` were built
  from main *after* the 0.5.0 release although PEP 440 sorts them before it (the same for
  ``0.7.0.dev149`` … ``dev195``). :func:`order_key` puts them where they belong;
* hand-written files often carry no version, or a meaningless one (``"1"``).

So the key fingerprint decides too: every field a release declares is always written, which
makes the presence (and, for library-written files, the absence) of keys a reliable sign of
the writer. :func:`detect` combines both and reports declared vs inferred.

``packaging`` parses the strings; only the off-main ordering is ours, because PEP 440
cannot know which builds came from which branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, NamedTuple

from packaging.version import InvalidVersion, Version

from spec_format.facts import catalog

#: dev builds counted on main after a release that was cut on a side branch:
#: line -> the last devN that is older than the release (the branch's merge base)
OFF_MAIN_MERGE_BASE = {"0.5": 84, "0.7": 148}

#: the highest devN main reached before the next release line began counting
LAST_DEV_ON_MAIN = {"0.1": 35, "0.2": 36, "0.5": 172, "0.7": 195}


# -- the catalog's lines (the table is spec_format.facts.catalog.versions) -------------------------
def line_index(line: str) -> int:
    return list(catalog.versions()).index(line)


@cache
def _line_key(line: str) -> tuple[int, int]:
    major, minor = line.split(".")
    return int(major), int(minor)


def next_line(line: str) -> str:
    major, minor = _line_key(line)
    return f"{major}.{minor + 1}"


@cache
def option_version(text: str, option: str = "--format-version") -> tuple[str, str]:
    """A version option (``--format-version``, ``--to``, ``schema --version``) -> (format
    line, release to stamp). Every option accepts the same spellings: a line (``0.5``,
    ``v0.5``), a release of a line (``0.5.0``, ``0.6.0.2``) or ``latest`` (the newest line,
    the default of each option); anything else is a usage error listing the lines."""
    from spec_format.base.errors import UsageError

    known = ", ".join(catalog.versions())
    stripped = str(text).strip()
    bare = stripped[1:] if stripped[:1] in ("v", "V") else stripped
    if bare.lower() == "latest":
        bare = catalog.latest_version()
    if bare in catalog.versions():
        return bare, catalog.version_entry(bare).release
    try:
        v = Version(bare) if len(bare) <= 64 else None
    except InvalidVersion:
        v = None
    if v is None or v.is_prerelease or v.is_devrelease or v.is_postrelease or v.local:
        raise UsageError(
            f"{option} {text!r} is not a format version; use a line ({known}), a release "
            "such as 0.5.0, or latest"
        )
    line = f"{v.release[0]}.{v.release[1] if len(v.release) > 1 else 0}"
    if line not in catalog.versions() or len(v.release) < 3:
        raise UsageError(f"{option} {text}: unknown format version {line}; known: {known}")
    return line, bare


# -- parsing ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ParsedVersion:
    """A ``speculators_version`` string, understood."""

    text: str
    version: Version
    line: str  # the format line this build belongs to
    after_release: bool = False  # a main build newer than its off-main release
    note: str = ""  # why the line is not the obvious one, for reports
    #: lines whose format the build may write: a build between two releases writes the
    #: older one's format plus whatever had landed on main by then
    candidates: tuple[str, ...] = ()

    @property
    def key(self) -> tuple:
        return order_key(self.version)

    def __str__(self) -> str:
        return self.text


class VersionStringError(ValueError):
    """``speculators_version`` is not something a speculators build could have written."""


def parse(text: str) -> ParsedVersion:
    """Parse a ``speculators_version``; raises :class:`VersionStringError` when it is not one.

    >>> parse("0.5.0.dev150").line
    '0.6'
    >>> parse("0.2.0.dev11").line
    '0.2'
    """
    if not isinstance(text, str) or not text.strip():
        raise VersionStringError(f"{text!r} is not a version string")
    if len(text) > 64:  # packaging would convert every digit run to an int
        raise VersionStringError(f"{text[:20]!r}... ({len(text):,} characters) is not a version")
    return _parse(text)


@cache  # the same few version strings recur across thousands of configs
def _parse(text: str) -> ParsedVersion:
    try:
        v = Version(text.strip())
    except InvalidVersion:
        raise VersionStringError(f"{text!r} is not a PEP 440 version") from None
    if v.epoch or len(v.release) < 2:
        raise VersionStringError(f"{text!r} is not a speculators version (expected X.Y.Z[.devN])")
    line = f"{v.release[0]}.{v.release[1]}"
    after = _after_off_main_release(v)
    note = ""
    if after:
        note = (
            f"{text} was built from main after the {line}.0 release (which was cut on a side "
            f"branch), so it is newer than {line}.0 and belongs to the {next_line(line)} line"
        )
        line = next_line(line)
    elif v.dev is not None and line in LAST_DEV_ON_MAIN and v.dev > LAST_DEV_ON_MAIN[line]:
        note = (
            f"{text} has a dev number main never reached for {line}; it was probably built "
            "from a clone without release tags, so the key fingerprint decides"
        )
    between = after or v.is_prerelease or v.dev is not None
    candidates = (line,)
    if between:
        older = line if after else _prev_or_none(line)
        candidates = (older, line) if older and not after else (line,)
        if after:
            candidates = (f"{v.release[0]}.{v.release[1]}", line)
    return ParsedVersion(
        text=text, version=v, line=line, after_release=after, note=note, candidates=candidates
    )


def _prev_or_none(line: str) -> str | None:
    major, minor = _line_key(line)
    return f"{major}.{minor - 1}" if minor > 0 else None


def try_parse(text: Any) -> ParsedVersion | None:
    try:
        return parse(text)
    except VersionStringError:
        return None


def _after_off_main_release(v: Version) -> bool:
    line = f"{v.release[0]}.{v.release[1]}"
    base = OFF_MAIN_MERGE_BASE.get(line)
    return (
        base is not None
        and v.dev is not None
        and v.pre is None
        and v.release[2:] in ((), (0,))
        and v.dev > base
    )


@cache  # Version objects hash by value; a handful of distinct builds recur
def order_key(v: Version | str) -> tuple:
    """A sort key that orders builds by when they were made, not by PEP 440.

    Within a line: pre-release builds (devN, aN, rcN) < releases and patch releases <
    main builds made after an off-main release. Lines are ordered by (major, minor).
    """
    if isinstance(v, str):
        v = Version(v)
    major, minor = v.release[0], v.release[1] if len(v.release) > 1 else 0
    rest = tuple(v.release[2:]) + (0,) * (3 - len(v.release[2:]))
    if _after_off_main_release(v):
        return (major, minor, 2, (), v.dev)
    if v.is_prerelease or v.dev is not None:
        # dev-only builds sort before aN/bN/rcN; among those, PEP 440 order
        rank, num = (-1, 0) if v.pre is None else ({"a": 0, "b": 1, "rc": 2}[v.pre[0]], v.pre[1])
        return (major, minor, 0, rest, (rank, num, v.dev if v.dev is not None else float("inf")))
    return (major, minor, 1, rest, (v.post or 0,))


def in_range(version: ParsedVersion | None, low: str, high: str) -> bool:
    """Whether ``low <= version <= high`` in build order (both ends inclusive)."""
    if version is None:
        return False
    return order_key(low) <= version.key <= order_key(high)


# -- detection by key fingerprint ------------------------------------------------------------
class Evidence(NamedTuple):
    """One thing a config shows about its writer: the lines consistent with it (a named
    tuple: tuples of them key the cache of :func:`_allowed_lines`, hashed in C)."""

    what: str  # "key norm_output present", "type dflash", ...
    low: str | None  # oldest line that writes it (None: no lower bound)
    high: str | None  # newest line that writes it (None: no upper bound)
    strong: bool = True  # False: only holds for files the library wrote itself

    def allows(self, line: str) -> bool:
        k = _line_key(line)
        return (self.low is None or _line_key(self.low) <= k) and (
            self.high is None or k <= _line_key(self.high)
        )

    def describe(self) -> str:
        if self.low and self.high:
            span = self.low if self.low == self.high else f"{self.low}-{self.high}"
        elif self.low:
            span = f">= {self.low}"
        elif self.high:
            span = f"<= {self.high}"
        else:
            span = "any"
        return f"{self.what} ({span})"


@cache
def _fields() -> tuple[tuple[str, str, str, str | None], ...]:
    """(type, key, first line declaring it, last line declaring it or None if still current)
    for every fingerprint key of the catalog, read from the schemas of each line."""
    from spec_format.facts import schemas

    out = []
    for rec in catalog.records().values():
        for key in rec.fingerprint_keys:
            spans = [
                v
                for v in catalog.versions_with_type(rec.name)
                if key in schemas.type_schema(v, rec.name).get("properties", {})
            ]
            if spans:
                out.append(
                    (
                        rec.name,
                        key,
                        spans[0],
                        None if spans[-1] == catalog.latest_version() else spans[-1],
                    )
                )
    return tuple(out)


@lru_cache(maxsize=1024)
def removed_fields(model_type: str) -> dict[str, str]:
    """Fingerprint keys of a type that a former line declared and the latest does not:
    key -> the last line that declared it (cached per type: do not change it)."""
    return {key: until for owner, key, _, until in _fields() if owner == model_type and until}


def fingerprint(config: dict[str, Any]) -> list[Evidence]:
    """What the keys of ``config`` say about the release line that wrote it."""
    return list(_evidence_of(_signature(config)))


#: the longest string a signature holds (longer ones are not cached, nor kept by a cache)
_CACHED_TEXT = 64


class _Signature(NamedTuple):
    """Everything :func:`fingerprint` reads of a config: the evidence is a function of it
    (cached per signature: a batch shows a handful)."""

    model_type: str | None  # a string of at most 64 characters, else None
    present: tuple[bool, ...]  # which of its fingerprint keys the config has
    noise: tuple[bool, ...]  # which serialization-noise keys of _noise_evidence it has
    non_greedy: bool  # a sampling or tree proposal method
    old_verifier: bool  # speculators_config.verifier.hidden_size
    auto_map_module: str | None  # the module of auto_map[""] when the catalog dates it
    eagle3_architecture: bool
    top_level_dtype: bool  # dtype without torch_dtype
    rope_parameters: bool  # transformer_layer_config.rope_parameters
    transformers_5: str | None  # transformers_version when its major is 5 or more


def _signature(config: dict[str, Any]) -> _Signature:
    model_type = config.get("speculators_model_type")
    if isinstance(model_type, str) and len(model_type) <= _CACHED_TEXT:
        present = tuple(map(config.__contains__, _fingerprint_keys(model_type)))
    else:
        model_type, present = None, ()
    noise = tuple(map(config.__contains__, _noise_keys()))
    non_greedy = old_verifier = False
    spec = config.get("speculators_config")
    if isinstance(spec, dict):
        methods = spec.get("proposal_methods")
        if isinstance(methods, list):
            for m in methods:  # a loop, not any(): one method is the common case
                if isinstance(m, dict):
                    kind = m.get("proposal_type")
                    if isinstance(kind, str) and kind in _NON_GREEDY:
                        non_greedy = True
                        break
        verifier = spec.get("verifier")
        old_verifier = isinstance(verifier, dict) and "hidden_size" in verifier
    module = None
    auto_map = config.get("auto_map")
    if isinstance(auto_map, dict) and isinstance(auto_map.get(""), str):
        module = auto_map[""].split(".")[0]
        module = module if module in catalog.auto_map_modules() else None
    archs = config.get("architectures")
    tlc = config.get("transformer_layer_config")
    tv = config.get("transformers_version")
    major = tv.split(".")[0] if isinstance(tv, str) else ""
    return _Signature(
        model_type,
        present,
        noise,
        non_greedy,
        old_verifier,
        module,
        isinstance(archs, list) and "Eagle3DraftModel" in archs,
        "dtype" in config and "torch_dtype" not in config,
        isinstance(tlc, dict) and "rope_parameters" in tlc,
        tv if major.isdecimal() and len(major) <= 4 and int(major) >= 5 else None,
    )


#: proposal methods no 0.3+ release writes
_NON_GREEDY = frozenset({"sampling", "static_tree", "dynamic_tree"})


def _evidence_of(sig: _Signature) -> tuple[Evidence, ...]:
    if sig.transformers_5 is not None and len(sig.transformers_5) > _CACHED_TEXT:
        return _evidence(sig)  # a cache would keep the long string
    return _cached_evidence(sig)


def _evidence(sig: _Signature) -> tuple[Evidence, ...]:
    out = list(_key_evidence(sig.model_type, sig.present)) if sig.model_type is not None else []
    noise = zip(_noise_evidence(), sig.noise, strict=True)
    out += [evidence for (_, evidence), here in noise if here]
    if sig.non_greedy:
        out.append(Evidence("non-greedy proposal method", None, "0.2"))
    if sig.old_verifier:
        out.append(Evidence("pre-0.1.0 verifier keys", None, "0.1", strong=False))
    if sig.auto_map_module is not None:
        span = catalog.auto_map_modules()[sig.auto_map_module]
        out.append(Evidence(f"auto_map module {sig.auto_map_module}", *span, strong=False))
    if sig.eagle3_architecture:
        out.append(Evidence("architectures Eagle3DraftModel", "0.3", None))
    if sig.top_level_dtype:
        out.append(Evidence("top-level dtype (transformers >= 4.56)", "0.2", None, strong=False))
    if sig.rope_parameters:
        out.append(Evidence("nested rope_parameters (transformers 5)", "0.5", None))
    if sig.transformers_5 is not None:
        out.append(Evidence(f"transformers_version {sig.transformers_5}", "0.5", None))
    lines = catalog.versions()
    return tuple(e for e in out if e.low is None or e.low in lines)


_cached_evidence = lru_cache(maxsize=1024)(_evidence)


@cache
def _noise_keys() -> tuple[str, ...]:
    return tuple(key for key, _ in _noise_evidence())


@cache
def _noise_evidence() -> tuple[tuple[str, Evidence], ...]:
    """(key, the evidence of its presence) for each serialization-noise key that bounds
    the writer's line."""
    return tuple(
        (key, Evidence(f"key {key} present ({noise.why})", None, noise.last_version))
        for key, noise in catalog.noise_keys().items()
        if noise.last_version
    )


@lru_cache(maxsize=1024)
def _fingerprint_keys(model_type: str) -> tuple[str, ...]:
    return tuple(key for owner, key, _, _ in _fields() if owner == model_type)


@lru_cache(maxsize=1024)  # a handful of types times the key combinations a batch shows
def _key_evidence(model_type: str, present: tuple[bool, ...]) -> tuple[Evidence, ...]:
    """The evidence of the type and of its fingerprint keys being present or absent
    (``present`` follows :func:`_fingerprint_keys`)."""
    out: list[Evidence] = []
    spans = catalog.versions_with_type(model_type)
    if spans:
        out.append(Evidence(f"type {model_type}", spans[0], spans[-1]))
    fields = [(key, since, until) for owner, key, since, until in _fields() if owner == model_type]
    for (key, since, until), here in zip(fields, present, strict=True):
        if here:
            # removed fields survive a load/save of a newer release (extra="allow"),
            # so their presence bounds the writer only weakly from above
            out.append(Evidence(f"key {key} present", since, None))
            if until is not None:
                out.append(Evidence(f"key {key} present", None, until, strong=False))
        else:
            # a release that declares the field always writes it
            out.append(Evidence(f"key {key} absent", None, _prev(since), strong=False))
            if until is not None:
                out.append(Evidence(f"key {key} absent", next_line(until), None, strong=False))
    return tuple(out)


def _prev(line: str) -> str | None:
    i = line_index(line)
    return list(catalog.versions())[i - 1] if i > 0 else None


@dataclass
class Detection:
    """Declared vs inferred format version of one config."""

    line: str  # the version to use
    source: str  # "declared", "inferred" or "requested"
    declared: str | None  # the speculators_version string, verbatim
    declared_line: str | None  # its line, when it parses
    inferred: tuple[str, ...]  # lines the fingerprint allows, oldest first
    evidence: list[Evidence] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # declared string issues
    parsed: ParsedVersion | None = None
    discarded: list[Evidence] = field(default_factory=list)  # weak evidence that contradicted
    strong: tuple[str, ...] = ()  # lines the strong evidence alone allows

    @property
    def inferred_line(self) -> str | None:
        return self.inferred[-1] if self.inferred else None

    @property
    def agrees(self) -> bool:
        if self.parsed is None or self.declared_line is None:
            return True
        return any(c in self.strong for c in self.parsed.candidates)

    @property
    def inferred_span(self) -> str:
        if not self.inferred:
            return "none"
        return (
            self.inferred[0]
            if len(self.inferred) == 1
            else f"{self.inferred[0]}-{self.inferred[-1]}"
        )

    def label(self) -> str:
        if self.source == "declared":
            return f"{self.line} (declared {self.declared})"
        if self.source == "requested":
            return f"{self.line} (requested)"
        return f"{self.line} (inferred from keys)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": self.line,
            "source": self.source,
            "declared": self.declared,
            "declared_line": self.declared_line,
            "inferred": list(self.inferred),
            "evidence": [e.describe() for e in self.evidence],
            "problems": list(self.problems),
        }


def detect(config: dict[str, Any], requested: str | None = None) -> Detection:
    """Decide which format version ``config`` is in.

    The declared version wins when the strong key evidence (keys a release introduced or
    stopped writing) allows it; absent keys alone never overrule it, because hand-written
    files omit fields freely. Without a usable declared version, the newest line all the
    evidence allows is used and labelled inferred. ``requested`` (``--format-version``)
    overrides both.

    The decision depends on the config only through its signature and its
    ``speculators_version`` (cached on both: a batch shows a handful of each); every call
    returns a Detection of its own.
    """
    sig = _signature(config)
    declared = config.get("speculators_version")
    if declared is None or isinstance(declared, str):
        stamp: str | _NotAString | None = declared
    else:  # 1, 1.0 and True are equal keys: the type is what the decision reads
        stamp = _NotAString(type(declared).__name__)
    if (isinstance(stamp, str) and len(stamp) > _CACHED_TEXT) or (
        sig.transformers_5 is not None and len(sig.transformers_5) > _CACHED_TEXT
    ):
        decided = _decide(sig, stamp, requested)  # a cache would keep the long string
    else:
        decided = _cached_decision(sig, stamp, requested)
    line, source, declared_line, allowed, evidence, problems, parsed, discarded, strong = decided
    return Detection(
        line=line,
        source=source,
        declared=stamp if isinstance(stamp, str) else None,
        declared_line=declared_line,
        inferred=allowed,
        evidence=list(evidence),  # copies: the cached tuples are shared
        problems=list(problems),
        parsed=parsed,
        discarded=list(discarded),
        strong=strong,
    )


class _NotAString(NamedTuple):
    """A ``speculators_version`` that is no string, by its type's name."""

    type_name: str


def _decide(sig: _Signature, declared: str | _NotAString | None, requested: str | None) -> tuple:
    """(line, source, declared line, inferred lines, evidence, problems, parsed version,
    discarded evidence, strong lines) of :func:`detect`."""
    evidence = _evidence_of(sig)
    strong, allowed, discarded = _allowed_lines(evidence)
    problems: list[str] = []
    parsed = None
    declared_line = None
    if isinstance(declared, _NotAString):
        problems.append(f"speculators_version is {declared.type_name}, not a string")
    elif declared is not None:
        try:
            parsed = parse(declared)
        except VersionStringError as exc:
            problems.append(str(exc))
        else:
            if parsed.note:
                problems.append(parsed.note)
            if parsed.line in catalog.versions():
                declared_line = parsed.line
            else:
                problems.append(
                    f"{declared} names no known format version (known: {', '.join(catalog.versions())})"
                )
    fits: list[str] = []
    if parsed is not None and declared_line is not None:
        fits = [c for c in parsed.candidates if c in strong]
        # among the lines a between-releases build may write, prefer what the keys say
        fits = [c for c in fits if c in allowed] or fits
    if requested is not None:
        line, source = requested, "requested"
    elif fits:
        line, source = fits[-1], "declared"
    else:
        line, source = allowed[-1], "inferred"
    return (
        line,
        source,
        declared_line,
        allowed,
        evidence,
        tuple(problems),
        parsed,
        discarded,
        strong,
    )


_cached_decision = lru_cache(maxsize=1024)(_decide)


@lru_cache(maxsize=1024)  # evidence tuples recur across files written by the same tool
def _allowed_lines(
    evidence: tuple[Evidence, ...],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Evidence, ...]]:
    """(lines every strong piece of evidence allows, those narrowed by each weak piece that
    does not contradict what is left, the weak pieces that did)."""
    evidence = list(evidence)
    candidates = [v for v in catalog.versions() if all(e.allows(v) for e in evidence if e.strong)]
    if not candidates:  # the type against every other key: the type is the one mistyped value
        keys = [e for e in evidence if e.strong and not e.what.startswith("type ")]
        candidates = [v for v in catalog.versions() if keys and all(e.allows(v) for e in keys)]
    if not candidates:  # contradicting strong evidence: trust the newest lower bound
        lows = [e.low for e in evidence if e.strong and e.low]
        candidates = [max(lows, key=_line_key)] if lows else list(catalog.versions())
    strong = tuple(candidates)
    discarded = []
    for e in (e for e in evidence if not e.strong):
        narrowed = [v for v in candidates if e.allows(v)]
        if narrowed:
            candidates = narrowed
        else:
            discarded.append(e)
    return strong, tuple(candidates), tuple(discarded)
