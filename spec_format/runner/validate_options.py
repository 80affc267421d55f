"""What a validation run was asked to do: :class:`ValidateOptions` (what ``specfmt
validate``'s flags fill), rule selectors as a caller writes them (:func:`rule_ids`), and the
``--select``/``--ignore`` filter every layer applies (:func:`selected`, :func:`filtered`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from spec_format.base.errors import UsageError
from spec_format.base.report import Finding, cap_per_rule
from spec_format.rules.base import Profile, Rule
from spec_format.rules.registry import entries, expand

#: hf:// drafts a run fetches at once by default, and at most: each holds a connection to
#: the Hub and one to its file host while it is fetched, and a few of its headers after
DEFAULT_JOBS = 16
MAX_JOBS = 64


@dataclass(frozen=True)
class ValidateOptions:
    """What ``specfmt validate`` was asked to do (the CLI fills this and nothing else)."""

    profile: Profile = Profile.CURRENT
    format_version: str | None = None  # None: the version the config was written for
    recursive: bool = False
    #: only these rule ids (empty: all) / never these; a list, tuple, set or comma string
    #: is accepted and checked here (see :func:`rule_ids`)
    select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    #: the target model's config.json, its directory, or hf://ORG/NAME[@REV]
    verifier: str | None = None
    deep: bool = False  # read the vocabulary maps (t2d/d2t)
    scan_weights: bool = False  # stream every tensor looking for NaN/Inf
    #: engines the draft is served with ("vllm==0.28.0"); empty: the newest covered ones
    engines: tuple[str, ...] = ()
    #: confirm valid configs with the compiled check (facts.schema_check) before the
    #: jsonschema walk, walk only what it does not accept, and run the config rules as a
    #: plan (same findings, a few us instead of 1-2 ms per valid config, and jsonschema is
    #: imported only to explain a config that failed; see rules.schema.schema_findings).
    #: False: always walk the whole config and run each rule on its own. None is the
    #: default and means True, for any number of inputs.
    fast_path: bool | None = None
    #: hf:// drafts fetched at once (listing, config and headers; the checks run in order,
    #: and the report is the one a run of ``jobs=1`` gives). 1 to :data:`MAX_JOBS`.
    jobs: int = DEFAULT_JOBS
    #: who asked: "python" (the API, the default) or "cli" (``specfmt validate``, which sets
    #: it): a message names an option as that caller spells it (:meth:`spell`)
    interface: str = "python"

    def __post_init__(self) -> None:
        # what a Python caller writes: a list, a tuple, one id, "C001,C002", "strict"
        set_ = object.__setattr__
        set_(self, "select", rule_ids(self.select, "select"))
        set_(self, "ignore", rule_ids(self.ignore, "ignore"))
        if not isinstance(self.profile, Profile):
            try:
                set_(self, "profile", Profile(str(self.profile).lower()))
            except ValueError:
                known = ", ".join(p.value for p in Profile)
                raise UsageError(f"profile {self.profile!r}: expected one of {known}") from None
        if type(self.jobs) is not int or not 1 <= self.jobs <= MAX_JOBS:
            raise UsageError(
                f"jobs {self.jobs!r}: expected a whole number from 1 to {MAX_JOBS} (remote "
                f"drafts fetched at once; default {DEFAULT_JOBS})"
            )
        if self.interface not in ("python", "cli"):
            raise UsageError(f"interface {self.interface!r}: expected python or cli")
        if isinstance(self.engines, str):
            set_(self, "engines", (self.engines,))
        elif not isinstance(self.engines, tuple):
            set_(self, "engines", tuple(self.engines))

    def spell(self, option: str, value: str = "True") -> str:
        """``recursive`` as this caller writes it: ``--recursive`` on the command line,
        ``recursive=True`` in Python (``value`` is the Python value to show)."""
        if self.interface == "cli":
            return f"--{option.replace('_', '-')}"
        return f"{option}={value}"


@cache
def _known_ids() -> frozenset[str]:
    return frozenset(entries())


def rule_ids(value: str | Iterable[str] | None, option: str = "select") -> frozenset[str]:
    """Rule selectors as a caller gives them (one, a comma list, or an iterable of either)
    -> the rule ids they name: an id, a prefix (``C`` a layer, ``C00`` C001-C009) or ``ALL``,
    like ruff's (see :func:`spec_format.rules.registry.expand`). A selector that names no
    rule is a :class:`UsageError` naming ``option`` with the closest ids."""
    if not value:
        return frozenset()
    if isinstance(value, frozenset) and value <= _known_ids():
        return value  # already expanded (dataclasses.replace re-runs __post_init__)
    items = [value] if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise UsageError(
                f"{option}: {item!r} is not a rule id; pass ids such as 'C001' (a string, "
                "a list of strings or a comma list)"
            )
        out.extend(part.strip() for part in item.split(",") if part.strip())
    return expand(out, option)


def selected(rule: type[Rule], options: ValidateOptions) -> bool:
    if options.select and rule.id not in options.select:
        return False
    return rule.id not in options.ignore


def filtered(findings: list[Finding], options: ValidateOptions) -> list[Finding]:
    """The selected findings, at most MAX_FINDINGS_PER_RULE per rule (see cap_per_rule)."""
    if not findings:
        return findings
    if options.select or options.ignore:
        findings = [
            f
            for f in findings
            if f.rule not in options.ignore and (not options.select or f.rule in options.select)
        ]
    return list(cap_per_rule(findings))
