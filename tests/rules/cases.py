"""Rule cases as data: load ``tests/rules/cases/<ID>.json`` and run one case.

A case names its input (a config, a tiny checkpoint built from the tensor contract and
broken on purpose, a verifier, raw bytes), the command that runs (validate, fix, migrate)
and what must come out: the rule fires (``fail``), it does not (``pass``), or the rewrite
writes this document and the rule is then quiet (``fix``). ``case.schema.json`` beside this
module is the format; ``README.md`` explains it with examples.

Checkpoints are built once per distinct build (in a folder of the session's temporary
directory) and copied for each case, so the cases of a file share their builds.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import os
import shutil
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spec_format import FixOptions, MigrateOptions, ValidateOptions, fix, migrate, validate
from spec_format.base.errors import SpecfmtError
from spec_format.facts import catalog
from spec_format.facts.readers import Release
from spec_format.parsers.safetensors import read_header
from spec_format.parsers.verifier import verifier_view
from spec_format.rules import registry
from spec_format.rules.base import Context
from spec_format.testing.builder import (
    TensorData,
    build_checkpoint,
    tiny_config,
    tiny_verifier,
    write_safetensors,
)
from tests.common import ROOT

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
SCHEMA = HERE / "case.schema.json"
EXAMPLES_DIR = ROOT / "examples"
VERIFIERS_DIR = ROOT / "tests" / "data" / "verifiers"


@dataclass(frozen=True)
class RuleCase:
    rule: str
    name: str
    expect: str
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.expect}-{self.name}"

    @property
    def description(self) -> str:
        return self.data["description"]

    @property
    def options(self) -> dict[str, Any]:
        return copy.deepcopy(self.data.get("options", {}))

    @property
    def config(self) -> dict[str, Any]:
        """The config document the case feeds (for a raw or path input: none)."""
        d = self.data
        if "config" in d:
            doc = copy.deepcopy(d["config"])
        elif "tiny" in d:
            doc = _tiny(d["tiny"])
        elif "example" in d:
            doc = _example(d["example"])
        else:
            raise ValueError(f"{self.id}: a raw input has no config document")
        return edited(doc, d.get("set"), d.get("unset"))

    def as_fixture(self) -> dict[str, Any]:
        """The shape the config-fixture consumers read: description, expect, config, options."""
        out = {
            "description": self.description,
            "expect": [self.rule, *self.data.get("also", [])],
            "config": self.config,
        }
        if "reproduces" in self.data:
            out["reproduces"] = self.data["reproduces"]
        if "options" in self.data:
            out["options"] = self.options
        return out


def case_files() -> list[Path]:
    return sorted(CASES_DIR.glob("*.json"))


#: the keys that say what the input is; ``from`` takes them from another case of the file
_INPUT_KEYS = ("config", "tiny", "example", "raw", "input", "checkpoint", "verifier", "options")


@functools.cache
def _load(path: Path) -> tuple[str, tuple[RuleCase, ...]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    by_name = {c["name"]: c for c in doc["cases"]}
    cases = []
    for c in doc["cases"]:
        if "from" in c:  # the input of another case, with this case's edits on top
            base = by_name[c["from"]]
            merged = {k: copy.deepcopy(base[k]) for k in _INPUT_KEYS if k in base}
            merged.update({k: v for k, v in c.items() if k not in ("set", "unset", "from")})
            merged["set"] = {**base.get("set", {}), **c.get("set", {})}
            merged["unset"] = [*base.get("unset", []), *c.get("unset", [])]
            c = merged
        cases.append(RuleCase(doc["rule"], c["name"], c["expect"], c))
    return doc["rule"], tuple(cases)


def load_file(path: Path) -> tuple[str, tuple[RuleCase, ...]]:
    """(the rule the file names, its cases)."""
    return _load(path)


def all_cases() -> list[RuleCase]:
    return [c for p in case_files() for c in _load(p)[1]]


# -- documents ----------------------------------------------------------------------------


@functools.cache
def _tiny_cached(model_type: str) -> str:
    return json.dumps(tiny_config(model_type))


def _tiny(model_type: str) -> dict[str, Any]:
    return json.loads(_tiny_cached(model_type))


@functools.cache
def _example_text(name: str) -> str:
    return (EXAMPLES_DIR / name / "config.json").read_text(encoding="utf-8")


def _example(name: str) -> dict[str, Any]:
    return json.loads(_example_text(name))


#: a value of ``set`` that stands for the latest format version's release ("0.9.0" today):
#: what ``migrate`` stamps, so a case need not change when scripts/new_version.py adds one
LATEST = "$latest"


def edited(doc: dict[str, Any], sets: dict | None, unsets: list | None) -> dict[str, Any]:
    """``doc`` with dotted paths set (creating objects on the way) and removed."""
    for path, value in (sets or {}).items():
        *parents, last = path.split(".")
        node = doc
        for part in parents:
            node = node.setdefault(part, {})
        if value == LATEST:
            value = catalog.version_entry(catalog.latest_version()).release
        node[last] = copy.deepcopy(value)
    for path in unsets or []:
        *parents, last = path.split(".")
        node = doc
        for part in parents:
            node = node[part]
        del node[last]
    return doc


# -- inputs on disk ---------------------------------------------------------------------


def place_input(case: RuleCase, folder: Path, builds: Path) -> Path:
    """Write the case's input under ``folder``; returns the path the command is given."""
    d = case.data
    folder.mkdir(parents=True, exist_ok=True)
    if "input" in d:
        kind = d["input"]
        if kind == "absent":
            return folder / "absent" / "config.json"
        if kind == "empty-directory":
            (folder / "draft").mkdir()
            return folder / "draft"
        (folder / "draft").mkdir()
        os.mkfifo(folder / "draft" / "config.json")
        return folder / "draft" / "config.json"
    draft = folder / "draft"
    if "raw" in d:
        draft.mkdir()
        raw = d["raw"]
        blob = raw["text"].encode() if "text" in raw else base64.b64decode(raw["base64"])
        (draft / "config.json").write_bytes(blob)
        return draft / "config.json"
    config = case.config
    if "checkpoint" not in d:
        draft.mkdir()
        (draft / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        return draft / "config.json"
    spec = d["checkpoint"]
    built = _built(builds, config, spec)
    edits_weights = "weights_file" in spec or spec.get("edits")
    copy = shutil.copy2 if edits_weights else _link_weights
    shutil.copytree(built, draft, symlinks=True, copy_function=copy)
    (draft / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    if "weights_file" in spec:
        (draft / "model.safetensors").write_bytes(_weights_bytes(spec["weights_file"]))
    for edit in spec.get("edits", []):
        _edit_files(draft, edit)
    return draft


def _link_weights(source: str, target: str) -> None:
    """Weight files are linked, not copied: a copy writes a sparse multi-GB build out in
    full (the suite filled a CI disk that way). Every writer specfmt has renames a new file
    into place, so a command under test never writes through the link."""
    if source.endswith(".safetensors"):
        try:
            os.link(source, target)
            return
        except OSError:  # another file system (a --basetemp elsewhere): copied
            pass
    shutil.copy2(source, target)


#: what a build depends on (the rest of a checkpoint spec edits the files afterwards)
_BUILD_KEYS = ("drop", "rename", "reshape", "retype", "extra", "dtype", "shards", "data")
_VALUE_KEYS = ("fill", "poke", "permute", "nan", "inf", "copy_layer")


def _built(builds: Path, config: dict[str, Any], spec: dict[str, Any]) -> Path:
    """The checkpoint of this build, written on first use; later cases reuse it."""
    weights_for = spec.get("weights_for", {})
    source = edited(copy.deepcopy(config), weights_for.get("set"), weights_for.get("unset"))
    key = {k: spec[k] for k in (*_BUILD_KEYS, *_VALUE_KEYS) if k in spec}
    text = json.dumps([source, key], sort_keys=True)
    folder = builds / hashlib.sha256(text.encode()).hexdigest()[:16]
    if not folder.is_dir():
        _build(folder, source, spec)
    return folder


def _build(folder: Path, config: dict[str, Any], spec: dict[str, Any]) -> None:
    kwargs: dict[str, Any] = {k: spec[k] for k in _BUILD_KEYS if k in spec}
    if "reshape" in kwargs:
        kwargs["reshape"] = {n: tuple(s) for n, s in kwargs["reshape"].items()}
    if "extra" in kwargs:
        kwargs["extra"] = {n: (t, tuple(s)) for n, (t, s) in kwargs["extra"].items()}
    mutate = {}
    for name, value in spec.get("fill", {}).items():
        mutate[name] = functools.partial(_filled, value=value)
    for name, pokes in spec.get("poke", {}).items():  # after a fill of the same tensor
        mutate[name] = _then(mutate.get(name), functools.partial(_poked, pokes=pokes))
    for name in spec.get("permute", []):
        mutate[name] = _permuted
    kwargs.update(mutate=mutate, nan=spec.get("nan", ()), inf=spec.get("inf", ()))
    staging = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    build_checkpoint(staging, config, **kwargs)
    if "copy_layer" in spec:
        _copy_layer(staging / "model.safetensors", *spec["copy_layer"])
    staging.rename(folder)


def _then(first, second):
    return second if first is None else lambda array: second(first(array))


def _filled(array, value):
    return np.full_like(array, value)


def _poked(array, pokes):
    array = array.copy()
    for index, value in pokes:
        array.flat[index] = value
    return array


def _permuted(array):
    return np.random.default_rng(99).permutation(array.reshape(-1)).reshape(array.shape)


def _tensors(path: Path) -> dict:
    header = read_header(path)
    blob = path.read_bytes()
    return {
        n: TensorData(t.dtype, t.shape, blob[slice(*header.absolute_offsets(n))])
        for n, t in header.tensors.items()
    }


def _write(path: Path, tensors: dict) -> None:
    write_safetensors(path, tensors, {"format": "pt"})


def _copy_layer(path: Path, source: int, target: int) -> None:
    tensors = _tensors(path)
    prefix, into = f"layers.{source}.", f"layers.{target}."
    for name in list(tensors):
        if name.startswith(into):
            tensors[name] = tensors[name.replace(into, prefix, 1)]
    _write(path, tensors)


def _weights_bytes(spec: dict[str, Any]) -> bytes:
    if "raw_base64" in spec:
        return base64.b64decode(spec["raw_base64"])
    header = spec["header"]
    body = base64.b64decode(header) if spec.get("header_base64") else header.encode()
    length = spec.get("length", len(body))
    return struct.pack("<Q", length) + body + bytes(spec.get("data", 0))


def _shards(draft: Path) -> list[Path]:
    return sorted(draft.glob("model-*.safetensors"))


def _edit_files(draft: Path, edit: dict[str, Any]) -> None:
    ((op, arg),) = edit.items()
    weights = draft / "model.safetensors"
    index_path = draft / "model.safetensors.index.json"
    if op == "truncate":
        os.truncate(weights, weights.stat().st_size - arg)
    elif op == "pad_header_front":
        blob = weights.read_bytes()
        (n,) = struct.unpack("<Q", blob[:8])
        weights.write_bytes(struct.pack("<Q", n + arg) + b" " * arg + blob[8:])
    elif op == "symlink_loop":
        weights.unlink()
        weights.symlink_to(weights)
    elif op == "delete":
        target = _shards(draft)[int(arg.split(":")[1]) - 1] if arg.startswith("shard:") else None
        (target or draft / arg).unlink()
    elif op == "add_file":
        _write(draft / arg, {"x": TensorData("F32", (2,), bytes(8))})
    elif op == "copy_first_into_second_shard":
        first, second = _shards(draft)[:2]
        moved = _tensors(first)
        name = sorted(moved)[0]
        target = _tensors(second)
        target[name] = moved[name]
        _write(second, target)
    else:
        index = json.loads(index_path.read_text())
        weight_map = index["weight_map"]
        if op == "index_set":
            weight_map.update(arg)
        elif op == "index_drop_first":
            weight_map.pop(sorted(weight_map)[0])
        elif op == "index_move_first":
            shards = sorted(set(weight_map.values()))
            name = next(n for n, s in weight_map.items() if s == shards[0])
            weight_map[name] = shards[1]
        else:  # the schema lists every edit; a new one needs code here
            raise ValueError(f"unknown checkpoint edit {op!r}")
        index_path.write_text(json.dumps(index))


def place_verifier(spec: dict[str, Any], folder: Path) -> Path:
    if "tiny" in spec:
        doc = tiny_verifier()
    elif "data" in spec:
        doc = json.loads((VERIFIERS_DIR / f"{spec['data']}.json").read_text(encoding="utf-8"))
    else:
        doc = copy.deepcopy(spec["config"])
    doc = edited(doc, spec.get("set"), spec.get("unset"))
    name = spec.get("folder") or (spec["data"].split("/")[-1] if "data" in spec else "verifier")
    target = folder / "verifiers" / name
    target.mkdir(parents=True)
    (target / "config.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    if "generation_config" in spec:
        text = json.dumps(spec["generation_config"], indent=2)
        (target / "generation_config.json").write_text(text, encoding="utf-8")
    return target


# -- running ------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What the command produced: the rules it raised with their messages, and for a
    rewrite the document it wrote."""

    messages: dict[str, list[str]]
    document: dict[str, Any] | None = None
    error: str | None = None
    #: the severities each rule's findings have
    severities: dict[str, set[str]] = field(default_factory=dict)

    @property
    def rules(self) -> set[str]:
        return set(self.messages)

    @property
    def findings(self) -> dict[str, list[str]]:
        """rule -> its findings' severities: the form a case's ``findings`` states."""
        return {r: sorted(self.severities.get(r, ())) for r in sorted(self.messages)}

    def add(self, rule: str, severity: str, message: str) -> None:
        self.messages.setdefault(rule, []).append(message)
        self.severities.setdefault(rule, set()).add(severity)


def run(case: RuleCase, folder: Path, builds: Path, monkeypatch=None) -> Outcome:
    """Run the case's command on its input (a fix case: the rewrite; see :func:`validated`)."""
    path = place_input(case, folder, builds)
    options = case.options
    if "verifier" in case.data:
        options["verifier"] = str(place_verifier(case.data["verifier"], folder))
    command = case.data.get("command", "fix" if case.expect == "fix" else "validate")
    if command == "validate":
        if "inject_bug" in case.data:
            _inject_bug(case.data["inject_bug"], monkeypatch)
        return validated(path, options)
    if command == "check":
        return checked(case, path, options)
    rewrite, kind = (fix, FixOptions) if command == "fix" else (migrate, MigrateOptions)
    try:
        result = rewrite(path, kind(**options))
    except SpecfmtError as e:
        return Outcome({}, error=str(e))
    outcome = Outcome({}, document=result.document)
    for p in result.problems:
        outcome.add(p.rule, p.severity, p.message)
    return outcome


def validated(path: Path | str, options: dict[str, Any]) -> Outcome:
    """The findings ``validate`` reports on ``path``, by rule."""
    report = validate([str(path)], ValidateOptions(**options))
    outcome = Outcome({})
    for f in (f for fr in report.files for f in fr.findings):
        outcome.add(f.rule, f.severity.value, f.message)
    return outcome


def checked(case: RuleCase, path: Path, options: dict[str, Any]) -> Outcome:
    """The rule's check alone, on a context the engine would build (for a rule the engine
    reaches only with a reader release the table does not cover yet: ``engines`` may name
    any release)."""

    config = json.loads(path.read_text(encoding="utf-8"))
    context_options: dict[str, Any] = {
        "engines": tuple(Release(*e.split("=="), {}) for e in options.get("engines", ()))
    }
    verifier = None
    if "verifier" in options:
        info = verifier_view(json.loads(Path(options["verifier"], "config.json").read_text()))
        context_options["verifier_info"] = info
        verifier = info.config
    ctx = Context(
        config=config,
        config_path=path,
        model_type=config["speculators_model_type"],
        format_version=options.get("format_version", "0.9"),
        verifier=verifier,
        options=context_options,
    )
    rule = registry.BY_ID[case.rule]
    outcome = Outcome({})
    for hit in rule().check(ctx):  # the check alone: the rule's own severity
        outcome.add(case.rule, rule.severity.value, hit.message)
    return outcome


def write_document(document: dict[str, Any], folder: Path) -> Path:
    target = folder / "config.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return target


def _inject_bug(rule_id: str, monkeypatch) -> None:
    def broken(self, ctx):
        raise RuntimeError(f"a bug injected into {rule_id}")

    monkeypatch.setattr(registry.BY_ID[rule_id], "check", broken)
