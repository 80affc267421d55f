"""What the generator refuses: unknown types, versions and fields in rule metadata and
examples, and `specfmt` command lines naming commands or options that do not exist."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet

from docgen.schema_walk import Catalogue, version_known
from spec_format.facts import catalog
from spec_format.rules import registry
from spec_format.rules.base import Layer

# Work in flight elsewhere: mentions of these are accepted until they exist, then checked
# like the rest. The generator fails when an entry here exists already, so the lists clean
# themselves up.
#: commands other work streams add
PENDING_COMMANDS: tuple[str, ...] = ()
#: (command, option) pairs other work streams add: the weights and verifier checks
PENDING_OPTIONS: set[tuple[str, str]] = set()
#: keys rule examples may use before the schema of their format version is catalogued:
#: key -> where it comes from
PENDING_FIELDS: dict[str, str] = {}


_FENCE = re.compile(r"```json\n(.*?)```", re.S)
_BACKTICK = re.compile(r"`([^`\n]+)`")


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def check_rules(cat: Catalogue) -> list[str]:
    problems = []
    known_types = set(cat.types()) | set(catalog.retired_types())
    known_fields = cat.all_field_names()
    for key, where in PENDING_FIELDS.items():
        if key in known_fields:
            problems.append(
                f"PENDING_FIELDS lists {key!r} ({where}) but a catalogued schema defines it "
                "now: remove it from scripts/docgen/checks.py"
            )
    allowed = known_fields | set(PENDING_FIELDS)
    for rule in registry.RULES:
        where = f"{rule.id} ({rule.__name__})"
        for t in rule.applies_to:
            if t not in known_types:
                problems.append(f"{where}: applies_to names unknown type {t!r}")
        if rule.versions:
            for spec in SpecifierSet(rule.versions):
                base = ".".join(spec.version.split(".")[:2])
                if not version_known(base):
                    problems.append(
                        f"{where}: versions {rule.versions!r} names unknown version {base}"
                    )
        for m in re.finditer(r"--format-version[ =](\d+(?:\.\d+)+)", rule.doc):
            if not version_known(m.group(1)):
                problems.append(f"{where}: mentions unknown format version {m.group(1)}")
        named = {m.group(1) for m in _BACKTICK.finditer(rule.doc)}
        for section, failing in (("Example", True), ("Use instead", False)):
            for block in _FENCE.findall(rule.section(section)):
                try:
                    value = json.loads(block)
                except json.JSONDecodeError as exc:
                    if failing and rule.layer is Layer.INPUT:
                        continue  # an input rule's failing example is broken JSON on purpose
                    problems.append(f"{where}: the {section} JSON does not parse: {exc}")
                    continue
                for key in _keys(value):
                    if key in allowed or (failing and key in named):
                        continue
                    problems.append(
                        f"{where}: the {section} example uses {key!r}, which no catalogued "
                        "schema defines"
                        + ("" if failing else " (a passing example must use real fields)")
                    )
    return problems


def _commands():
    import typer

    from spec_format.cli.app import app

    return typer.main.get_command(app)


def _command_lines(text: str) -> Iterator[str]:
    """`specfmt ...` lines of shell code blocks and inline code spans elsewhere."""
    fence: str | None = None  # the language of the open fence ("" for none)
    prose: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
            continue
        if fence is None:
            prose.append(raw)
        elif fence in ("", "console", "bash", "sh", "shell", "yaml"):
            line = line.removeprefix("$ ").removeprefix("- run: ").removeprefix("run: ")
            if line.startswith("specfmt "):
                yield line
    for span in _BACKTICK.findall("\n".join(prose)):
        if span.startswith("specfmt "):
            yield span


def check_cli_mentions(root: Path) -> list[str]:
    top = _commands()
    problems = [
        f"PENDING_COMMANDS lists {name!r}, which exists now: remove it from scripts/docgen/checks.py"
        for name in PENDING_COMMANDS
        if name in top.commands
    ]
    for command, option in sorted(PENDING_OPTIONS):
        sub = top.commands.get(command)
        if sub is not None and any(option in p.opts for p in sub.params):
            problems.append(
                f"PENDING_OPTIONS lists {command} {option}, which exists now: remove it from "
                "scripts/docgen/checks.py"
            )
    sources = [
        (p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted((root / "docs").rglob("*.md"))
        if p.relative_to(root / "docs").parts[0] not in ("reference", "rules")
    ]
    sources += [(f"spec_format/rules/docs/{r.id}.md", r.doc) for r in registry.RULES]
    for where, text in sources:
        for line in _command_lines(text):
            line = re.split(r"\s(?:\||>|&&|\|\||#)\s?", line)[0]
            try:
                words = shlex.split(line)[1:]
            except ValueError:
                problems.append(f"{where}: cannot parse `{line}`")
                continue
            command = top
            path = ["specfmt"]
            while hasattr(command, "commands") and words and not words[0].startswith("-"):
                name = words.pop(0)
                sub = command.commands.get(name)
                if sub is None:
                    if command is top and name in PENDING_COMMANDS:
                        command = None
                        break
                    if name.isupper() or "/" in name or "." in name:
                        words.insert(0, name)
                        break
                    problems.append(f"{where}: `{line}`: {' '.join(path)} has no command {name!r}")
                    command = None
                    break
                command, path = sub, [*path, name]
            if command is None:
                continue
            options = {"--help", "-h"}
            for param in command.params:
                options.update(param.opts)
                options.update(param.secondary_opts)
            for word in words:
                if word.startswith("-") and word != "-":
                    name = word.split("=", 1)[0]
                    if name not in options and (path[-1], name) not in PENDING_OPTIONS:
                        problems.append(f"{where}: `{line}`: {' '.join(path)} has no option {name}")
    return problems


# -- rule page examples: the "Example" fails and the "Use instead" passes -------------------
#: config-only layers whose examples validate_config can judge, and the rewrite layer (its
#: examples go through migrate and fix); the others need bytes, weights or a verifier
_JUDGED_LAYERS = (Layer.SCHEMA, Layer.CROSS_FIELD, Layer.CONSUMER, Layer.VERSION, Layer.REWRITE)


def _rewrite_fires(document: dict, rule_id: str) -> bool:
    """Whether migrating ``document`` to any format version (losses allowed), or fixing it,
    reports a problem of ``rule_id``."""
    import copy

    from spec_format.base.errors import SpecfmtError
    from spec_format.facts import catalog
    from spec_format.rewrites.fixing import fix
    from spec_format.rewrites.migration import MigrateOptions, migrate

    runs = [
        lambda d, v=v: migrate(d, MigrateOptions(to=v, allow_lossy=True))
        for v in catalog.versions()
    ]
    for run in [*runs, fix]:
        try:
            problems = run(copy.deepcopy(document)).problems
        except SpecfmtError:
            continue  # that target refuses the document; another may not
        if any(p.rule == rule_id for p in problems):
            return True
    return False


def _merge(base: Any, part: Any) -> Any:
    if isinstance(base, dict) and isinstance(part, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in part.items()}}
    return part


def _without(base: Any, absent: Any, present: Any) -> Any:
    """``base`` without the keys ``absent`` (the passing example) has and ``present`` (the
    failing one) lacks: an Example shows a problem by leaving a key out."""
    if not (isinstance(base, dict) and isinstance(absent, dict)):
        return base
    present = present if isinstance(present, dict) else {}
    return {
        k: _without(v, absent.get(k), present.get(k))
        for k, v in base.items()
        if not (k in absent and k not in present)
    }


def _nodes(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, dict]]:
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, (*path, i))


def _at(value: Any, path: tuple, part: Any) -> Any:
    """``value`` with ``part`` in place of the node at ``path``."""
    if not path:
        return part
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        return [_at(v, rest, part) if i == head else v for i, v in enumerate(value)]
    return {**value, head: _at(value[head], rest, part)}


def _completed(base: dict, fragment: dict, counterpart: dict | None) -> dict:
    """The fragment put where its keys live in ``base`` (the object sharing most of them,
    the outermost on a tie), keys only the counterpart has removed there."""
    keys = set(fragment) | set(counterpart or {})
    path, node = max(_nodes(base), key=lambda pn: (len(keys & set(pn[1])), -len(pn[0])))
    if counterpart is not None:
        node = _without(node, counterpart, fragment)
    return _at(base, path, _merge(node, fragment))


def _base_config(root: Path, rule, fragment: dict) -> dict | None:
    """The example config a fragment completes: of the type it names, else one of the
    rule's types that has its top-level keys; None for a document that is not a
    speculators config at all (the dispatch rules' examples)."""
    bases = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(root.glob("examples/*/config.json"))
    ]
    model_type = fragment.get("speculators_model_type")
    if model_type is None and rule.layer is Layer.SCHEMA and rule.id < "S100":
        return None
    declared = str(fragment.get("speculators_version", ""))
    # an example about an old version completes best with a config written by that version
    bases.sort(key=lambda b: not str(b.get("speculators_version", "")).startswith(declared[:4]))
    for base in bases:
        kind = base.get("speculators_model_type")
        if model_type is not None:
            if kind == model_type:
                return base
        elif (not rule.applies_to or kind in rule.applies_to) and fragment.keys() <= base.keys():
            return base
    return next(
        (
            b
            for b in bases
            if not rule.applies_to or b.get("speculators_model_type") in rule.applies_to
        ),
        bases[0],
    )


def _options(rule, section: str) -> dict[str, Any]:
    """The validate options a section names in prose ("checked with `--engine vllm==0.28.0`",
    "validated with `--format-version 0.6`")."""
    text = rule.section(section)
    out: dict[str, Any] = {}
    engines = re.findall(r"--engine[ =]([\w.=+-]+)", text)
    if engines:
        out["engines"] = tuple(engines)
    version = re.search(r"--format-version[ =](\d+\.\d+)", text)
    if version:
        out["format_version"] = version.group(1)
    return out


def example_verdicts(root: Path, rule) -> list[tuple[str, bool, bool]]:
    """(section, should fire, fires) for each JSON example of a config-only rule: complete
    documents as written, fragments completed with an example config of the type (the
    n-th Example is paired with the n-th Use instead: keys only the latter has are taken
    out of the completed Example)."""
    from spec_format.runner.validation import ValidateOptions, validate_config

    out: list[tuple[str, bool, bool]] = []
    if rule.layer not in _JUDGED_LAYERS:
        return out
    blocks = {
        s: [json.loads(b) for b in _FENCE.findall(rule.section(s))]
        for s in ("Example", "Use instead")
    }
    for section, failing in (("Example", True), ("Use instead", False)):
        other = blocks["Use instead" if failing else "Example"]
        for n, fragment in enumerate(blocks[section]):
            if rule.layer is Layer.REWRITE:  # documents as written, through migrate and fix
                out.append((section, failing, _rewrite_fires(fragment, rule.id)))
                continue
            complete = "speculators_model_type" in fragment and (
                "speculators_config" in fragment or rule.layer is Layer.SCHEMA
            )
            base = None if complete else _base_config(root, rule, fragment)
            counterpart = other[n] if failing and n < len(other) else None
            config = fragment if base is None else _completed(base, fragment, counterpart)
            options = ValidateOptions(select=frozenset({rule.id}), **_options(rule, section))
            report = validate_config(config, options)
            out.append((section, failing, any(f.rule == rule.id for f in report.findings)))
    return out
