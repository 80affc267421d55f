"""The rule base class, the check context and validation profiles.

A rule is one unit: a stable id, a kebab-case name, a layer, a severity, the model types
and format versions it applies to, a check, a one-line docstring and its page text in fixed
sections, ``spec_format/rules/docs/ID.md``, which become its documentation page
(``specfmt explain ID``, ``docs/rules/ID.md``). Rules do not know
about profiles or output formats: they yield :class:`Hit` objects and the engine turns
them into :class:`~spec_format.base.report.Finding` objects.
"""

from __future__ import annotations

import enum
import functools
import inspect
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from spec_format.base.report import MAX_FINDINGS_PER_RULE, Edit, Finding, Severity, overflow
from spec_format.base.wording import fill

#: Sections every rule page text must have, in this order (extra sections may follow).
DOC_SECTIONS = ("What it checks", "Why it matters", "Example", "Use instead")
#: where a rule's page text lives inside the package: ``docs/<ID>.md`` beside this module
DOC_FOLDER = "docs"

_ID_RE = re.compile(r"^[A-Z][0-9]{3}$")
_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_RELEASE_RE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+$")
#: the keyword arguments of :meth:`Rule.emit` that say where a finding is, not what
_WHERE = ("profile", "pointer", "tensor", "line", "column")


class Stability(str, enum.Enum):
    """Where a rule id stands in the registry's contract (see ``rules/registry.py``)."""

    STABLE = "stable"  # id, name and meaning are fixed; findings may be relied on in CI
    PREVIEW = "preview"  # new: the id stays, but what it flags may still change
    REMOVED = "removed"  # retired: the registry redirects the id to its successor


class Layer(str, enum.Enum):
    """Where a rule looks. The first letter of a rule id names its layer."""

    INPUT = "input"  # I: the file could be read and parsed
    SCHEMA = "schema"  # S: the JSON Schema of the type and format version
    CROSS_FIELD = "cross-field"  # X: relations between fields of one config
    CONSUMER = "consumer"  # C: fields whose absence readers interpret differently
    VERSION = "version"  # M: format version detection and migration hints
    HEADER = "header"  # H: the safetensors container format itself
    WEIGHTS = "weights"  # W: config against the tensor names, shapes and dtypes
    VOCAB = "vocab"  # D: vocabulary maps and tensor values (opt-in, reads data)
    VERIFIER = "verifier"  # V: config against the verifier's config.json
    REWRITE = "rewrite"  # R: what `migrate` and `fix` report but cannot rewrite


LAYER_PREFIX = {
    Layer.INPUT: "I",
    Layer.SCHEMA: "S",
    Layer.CROSS_FIELD: "X",
    Layer.CONSUMER: "C",
    Layer.VERSION: "M",
    Layer.HEADER: "H",
    Layer.WEIGHTS: "W",
    Layer.VOCAB: "D",
    Layer.VERIFIER: "V",
    Layer.REWRITE: "R",
}


class Profile(str, enum.Enum):
    """How strictly findings are graded.

    * ``legacy``: what was validly published at the time passes; old-but-loadable shapes
      are warnings (each rule's ``legacy_severity``).
    * ``current`` (default): the contract of the current format.
    * ``strict``: every warning is an error.
    """

    LEGACY = "legacy"
    CURRENT = "current"
    STRICT = "strict"


@dataclass(frozen=True)
class Hit:
    """What a rule reports; the engine adds the rule's identity, severity and position."""

    message: str
    pointer: str | None = None
    tensor: str | None = None
    file: str | None = None  # defaults to the config file of the context
    #: the command (argv) that makes the change the message advises (Context.command)
    command: tuple[str, ...] | None = None
    #: the config edits the message advises, as data (Finding.edit)
    edit: tuple[Edit, ...] | None = None


class _Once:
    """A read-only view of a :class:`Context` computed on first use and kept in the
    instance (later reads are plain attribute reads): ``functools.cached_property`` without
    its lock, which costs more than the views themselves."""

    def __init__(self, compute: Any) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, ctx: Any, owner: type | None = None) -> Any:
        if ctx is None:
            return self
        value = ctx.__dict__[self.name] = self.compute(ctx)
        return value


@dataclass
class Context:
    """Everything a check may look at. Optional parts are ``None`` when not available;
    rules declare what they need in ``requires`` and are skipped otherwise."""

    config: dict[str, Any]
    config_path: Path
    model_type: str
    format_version: str
    speculators_version: str | None = None
    checkpoint: Any = None  # spec_format.parsers.checkpoint.Checkpoint, when weights exist
    verifier: dict[str, Any] | None = None  # the verifier's text config
    verifier_path: Path | None = None
    detection: Any = None  # spec_format.facts.versions.Detection of the config, computed once
    options: dict[str, Any] = field(default_factory=dict)

    # -- small helpers shared by many rules ---------------------------------------------
    def command(self, *args: str) -> tuple[str, ...] | None:
        """``specfmt ARGS... CONFIG``: the command line that rewrites this config (None for
        a remote one or standard input, which no command rewrites in place)."""
        path = self.path_text
        if path.startswith("hf://") or path in ("-", "<stdin>"):
            return None
        return ("specfmt", *args, path)

    @_Once
    def path_text(self) -> str:
        """``str(config_path)``: what findings and commands name the config by."""
        return str(self.config_path)

    @property
    def version_kept(self) -> str:
        """How a hint says that ``migrate --to <the checked version>`` keeps the format
        version: "the same format version" only when the config declares that version; a
        version inferred from its keys, or requested with --format-version, is named."""
        det = self.detection
        if det is not None and det.source == "declared" and det.line == self.format_version:
            return "the same format version"
        return f"format {self.format_version}, as it was checked"

    @property
    def verifier_given(self) -> str | None:
        """The verifier as the user named it (a path or hf://...), for commands to repeat."""
        given = self.options.get("verifier_given")
        return given or (str(self.verifier_path) if self.verifier_path is not None else None)

    # the config's parts most rules read, worked out once per context on first use (the
    # config is not changed while rules run): see _Once
    @_Once
    def layer_config(self) -> dict[str, Any]:
        tlc = self.config.get("transformer_layer_config")
        return tlc if isinstance(tlc, dict) else {}

    @_Once
    def spec_config(self) -> dict[str, Any]:
        sc = self.config.get("speculators_config")
        return sc if isinstance(sc, dict) else {}

    @_Once
    def proposal_methods(self) -> list[dict[str, Any]]:
        methods = self.spec_config.get("proposal_methods")
        if not isinstance(methods, list):
            return []
        return [m for m in methods if isinstance(m, dict)]


class RuleDoc:
    """``Rule.doc``: the rule's docstring (its one-line statement), a blank line and its page
    text, ``spec_format/rules/docs/<ID>.md`` (read through importlib.resources, so an
    installed wheel works; read on first use, so importing the rules reads no page). A rule
    class may set ``doc`` itself instead (a rule made at run time, as the tests do)."""

    def __get__(self, instance: object, owner: type[Rule]) -> str:
        if owner.__dict__.get("abstract", False) or not hasattr(owner, "id"):
            return ""  # the base classes have no page
        return _page_of(owner)


@functools.cache
def _page_of(rule: type[Rule]) -> str:
    summary = inspect.cleandoc(rule.__doc__ or "").strip()
    name = f"{DOC_FOLDER}/{rule.id}.md"
    try:
        from importlib import resources

        text = (resources.files(__package__) / DOC_FOLDER / f"{rule.id}.md").read_text("utf-8")
    except FileNotFoundError:
        raise TypeError(
            f"rule {rule.id} ({rule.__name__}): no page text: write spec_format/rules/{name} "
            "(scripts/new_rule.py scaffolds one)"
        ) from None
    positions = [text.find(f"## {s}") for s in DOC_SECTIONS]
    if any(p < 0 for p in positions) or positions != sorted(positions):
        raise TypeError(
            f"rule {rule.id} ({rule.__name__}): spec_format/rules/{name} needs the sections "
            + ", ".join(f"'## {s}'" for s in DOC_SECTIONS)
            + " in this order"
        )
    return f"{summary}\n\n{text.strip()}"


class Rule:
    """Base class of every rule. Subclasses set the class attributes and ``check``."""

    id: ClassVar[str]
    name: ClassVar[str]
    layer: ClassVar[Layer]
    severity: ClassVar[Severity]
    #: severity under ``--profile legacy``; ``None`` means the same as ``severity``.
    legacy_severity: ClassVar[Severity | None] = None
    #: the format release since which the rule exists: the release that introduced the
    #: type or field it is about ("0.7.0" for a rule about a 0.7 field), else "0.1.0".
    #: Every rule class sets its own (a guard test checks), never a layer base class.
    since: ClassVar[str]
    status: ClassVar[Stability] = Stability.STABLE
    #: speculators_model_type values the rule applies to; empty means every type
    applies_to: ClassVar[tuple[str, ...]] = ()
    #: PEP 440 specifier over format versions (for example ">=0.7"); empty means all
    versions: ClassVar[str] = ""
    #: optional inputs the check needs: "weights", "verifier", "deep", "scan"
    requires: ClassVar[frozenset[str]] = frozenset()
    #: real-world reports this rule comes from ("vllm-project/vllm#50170", ...)
    references: ClassVar[tuple[str, ...]] = ()
    #: True for rules whose findings the engine emits itself (parse errors, dispatch)
    engine_emitted: ClassVar[bool] = False
    #: the message of an engine-emitted finding, a ``str.format`` template over the
    #: parameters the engine or parser passes (a dict of templates when the rule has
    #: several wordings, chosen by the ``variant`` parameter); see :meth:`render`
    template: ClassVar[str | dict[str, str]] = ""
    #: where the readers word the rules of a layer (``header_messages``, ``input_messages``:
    #: templates by rule name on the base floor); a rule named there takes its template
    templates: ClassVar[Mapping[str, str | dict[str, str]] | None] = None

    #: the one-line docstring and the page text, read on first use (see :class:`RuleDoc`)
    doc: ClassVar[str] = RuleDoc()  # type: ignore[assignment]

    # filled by __init_subclass__
    source_file: ClassVar[str] = ""
    source_line: ClassVar[int] = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("abstract", False):
            return
        if cls.templates is not None and "template" not in cls.__dict__:
            cls.template = cls.templates[cls.name]
        missing = [a for a in ("id", "name", "layer", "severity") if not hasattr(cls, a)]
        if "since" not in cls.__dict__:
            missing.append("since (set on the rule class itself)")
        if missing:
            raise TypeError(f"rule {cls.__name__} lacks {', '.join(missing)}")
        if not _RELEASE_RE.match(cls.since):
            raise TypeError(f"rule {cls.id}: since {cls.since!r} must be a release like 0.7.0")
        if not _ID_RE.match(cls.id) or cls.id[0] != LAYER_PREFIX[cls.layer]:
            raise TypeError(
                f"rule {cls.__name__}: id {cls.id!r} must be {LAYER_PREFIX[cls.layer]}NNN "
                f"for layer {cls.layer.value}"
            )
        if not _NAME_RE.match(cls.name):
            raise TypeError(f"rule {cls.__name__}: name {cls.name!r} must be kebab-case")
        if not (cls.__doc__ or "").strip():
            raise TypeError(
                f"rule {cls.id} ({cls.__name__}): no docstring (its one-line statement)"
            )
        if not cls.engine_emitted and cls.check is Rule.check:
            raise TypeError(f"rule {cls.id}: no check() and not engine_emitted")
        if cls.engine_emitted and not cls.template:
            raise TypeError(f"rule {cls.id}: an engine-emitted rule words its findings (template)")
        # where the class statement is (for "view source" links); inspect.getsourcelines
        # would re-read and tokenize the module for every rule, which costs start-up time
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__") != cls.__module__:
            frame = frame.f_back
        if frame is not None:
            cls.source_file = frame.f_code.co_filename
            cls.source_line = frame.f_lineno

    # -- metadata helpers ---------------------------------------------------------------
    @classmethod
    def summary(cls) -> str:
        """The docstring: a one-line statement of the rule."""
        return cls.doc.split("\n\n", 1)[0].replace("\n", " ").strip()

    @classmethod
    def section(cls, title: str) -> str:
        m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", cls.doc, re.S | re.M)
        return m.group(1).strip() if m else ""

    @classmethod
    def applies(cls, model_type: str | None, format_version: str | None) -> bool:
        if cls.applies_to and model_type not in cls.applies_to:
            return False
        if cls.versions and format_version:
            return _in_versions(cls.versions, format_version)
        return True

    @classmethod
    def severity_for(cls, profile: Profile) -> Severity:
        if profile is Profile.LEGACY and cls.legacy_severity is not None:
            return cls.legacy_severity
        if profile is Profile.STRICT and cls.severity is Severity.WARNING:
            return Severity.ERROR
        return cls.severity

    # -- checking -------------------------------------------------------------------------
    def check(self, ctx: Context) -> Iterable[Hit]:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def render(cls, variant: str | None = None, **params: Any) -> str:
        """The message of one finding of this rule, from its template and ``params``."""
        return fill(cls.template, variant, cls.id, **params)

    @classmethod
    def emit(cls, file: str | Path, *, variant: str | None = None, **params: Any) -> Finding:
        """A finding of this engine-emitted rule, worded by :meth:`render`. Where it is
        (``profile``, ``pointer``, ``tensor``, ``line``, ``column``) goes to :meth:`finding`;
        every other parameter fills the template."""
        where = {key: params.pop(key) for key in _WHERE if key in params}
        return cls.finding(cls.render(variant, **params), file, **where)

    @classmethod
    def finding(
        cls,
        message: str,
        file: str | Path,
        *,
        profile: Profile = Profile.CURRENT,
        pointer: str | None = None,
        tensor: str | None = None,
        line: int | None = None,
        column: int | None = None,
        command: tuple[str, ...] | None = None,
    ) -> Finding:
        """Build a finding of this rule directly (used by the engine and parsers). Messages,
        pointers and tensor names are bounded (a 10 MB string in a config stays a short
        finding)."""
        return _new_finding(
            cls, message, str(file), profile, pointer, tensor, line, column, command
        )


def _new_finding(
    rule: type[Rule],
    message: str,
    file: str,
    profile: Profile,
    pointer: str | None,
    tensor: str | None,
    line: int | None,
    column: int | None,
    command: tuple[str, ...] | None,
    edit: tuple[Edit, ...] | None = None,
) -> Finding:
    """:meth:`Rule.finding` without its keyword handling (the engine's hot path calls this)."""
    # the usual short ASCII text is kept as it is, without a call to bounded()
    if len(message) > MAX_MESSAGE or not message.isascii():
        message = bounded(message, MAX_MESSAGE)
    if pointer is not None and (len(pointer) > MAX_NAME or not pointer.isascii()):
        pointer = bounded(pointer, MAX_NAME)
    return Finding(  # by position, in the order of FINDING_FIELDS (keywords cost a third more)
        rule.id,
        rule.name,
        rule.severity if profile is Profile.CURRENT else rule.severity_for(profile),
        message,
        file,
        pointer,
        None if tensor is None else bounded(tensor, MAX_NAME),
        line,
        column,
        command,
        edit,
    )


#: the fields of Finding in the order :func:`_new_finding` passes them (a test holds it)
FINDING_FIELDS = (
    "rule",
    "name",
    "severity",
    "message",
    "file",
    "pointer",
    "tensor",
    "line",
    "column",
    "command",
    "edit",
)


def shown(command: tuple[str, ...] | None) -> str:
    """A command as a message quotes it: ```specfmt fix --in-place path```."""
    import shlex  # only where a finding quotes a command: not at start-up

    return f"`{shlex.join(command)}`" if command else ""


MAX_MESSAGE = 2000
MAX_NAME = 300


def bounded(text: str, limit: int) -> str:
    """``text``, or its start and end around a note of how much was left out; a lone
    surrogate read from the input (no UTF-8 output can hold it) is shown escaped."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}...[{len(text) - 2 * keep:,} characters left out]...{text[-keep:]}"


@functools.lru_cache(maxsize=4096)  # a few rules' ranges times the format versions
def _in_versions(versions: str, format_version: str) -> bool:
    from packaging.specifiers import SpecifierSet  # no rule has a range yet: imported late

    return SpecifierSet(versions).contains(format_version, prereleases=True)


_INSTANCES: dict[type[Rule], Rule] = {}  # rules hold no state: one instance per class


def run_rule(rule: type[Rule], ctx: Context, profile: Profile) -> list[Finding]:
    """Run one rule's check and turn its hits into findings: at most
    MAX_FINDINGS_PER_RULE, then one that counts the rest (as cap_per_rule words it); the
    hits past the cap are counted, never kept."""
    instance = _INSTANCES.get(rule) or _INSTANCES.setdefault(rule, rule())
    hits = iter(instance.check(ctx))
    for first in hits:
        return _capped(rule, first, hits, ctx, profile)
    return []


#: one step of a plan: the rule class and its instance
Step = tuple[type[Rule], Rule]


def plan_of(rules: Iterable[type[Rule]]) -> tuple[Step, ...]:
    """The rules as a plan :func:`run_plan` runs: each rule with its instance, looked up
    once (per type, version and selection), not per config. The check is looked up on
    the instance at each call, so a check replaced on the class (a test's) is the one run."""
    return tuple(
        (rule, _INSTANCES.get(rule) or _INSTANCES.setdefault(rule, rule())) for rule in rules
    )


def run_plan(plan: tuple[Step, ...], ctx: Context, profile: Profile, out: list[Finding]) -> None:
    """Run every step of ``plan`` on ``ctx``, appending their findings to ``out``: the same
    findings, in the same order, as :func:`run_rule` for each rule in turn. A check returns
    its hits as a list or tuple (empty when it finds nothing: then it costs its call and a
    truth test) or yields them (a generator is always true: it costs one step of the
    iterator); only a generator or more hits than the cap go through :func:`_capped`."""
    for rule, instance in plan:
        hits = instance.check(ctx)
        if not hits:
            continue
        kind = hits.__class__
        if (kind is tuple or kind is list) and len(hits) <= MAX_FINDINGS_PER_RULE:
            for hit in hits:  # under the cap: a finding per hit, as _capped would make
                out.append(_finding(rule, hit, ctx, profile))
            continue
        hits = iter(hits)
        for first in hits:
            out.extend(_capped(rule, first, hits, ctx, profile))
            break


def _capped(
    rule: type[Rule], first: Hit, rest: Iterator[Hit], ctx: Context, profile: Profile
) -> list[Finding]:
    """:func:`run_rule`'s cap over a check's hits, the first already taken."""
    out = [_finding(rule, first, ctx, profile)]
    dropped = 0
    last: Hit | None = None
    for hit in rest:
        if len(out) < MAX_FINDINGS_PER_RULE:
            out.append(_finding(rule, hit, ctx, profile))
        else:
            dropped += 1
            last = hit
    if last is not None:
        out.append(overflow(_finding(rule, last, ctx, profile), dropped))
    return out


def _finding(rule: type[Rule], hit: Hit, ctx: Context, profile: Profile) -> Finding:
    file = hit.file
    return _new_finding(
        rule,
        hit.message,
        str(file) if file else ctx.path_text,
        profile,
        hit.pointer,
        hit.tensor,
        None,
        None,
        hit.command,
        hit.edit,
    )
