"""`fix --engine` and `validate --engine` judged by the executed readers.

For every bundled example and every reconstructed release fixture:

* after ``fix --engine vllm==NEWEST``, the newest executed vLLM release and the executed writer
  (the speculators release of the file's format version) read every field of the reader
  table the same way (by meaning: DFlash causality per layer), unless ``fix`` named the
  field as one no value reconciles;
* ``validate --engine vllm==NEWEST`` has an error exactly when the executed vLLM refuses
  the config.

Run with ``pytest -m readers`` (environments: scripts/interop-envs.sh, scripts/reader-envs.sh).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from spec_format.base.report import Severity
from spec_format.facts import disputes, readers
from spec_format.rewrites.fixing import FixOptions, fix
from spec_format.runner.validation import ValidateOptions, validate_config
from tests.readers import oracle, probes

pytestmark = pytest.mark.readers

ENGINE = readers.newest("vllm").id  # NEWEST: the newest covered release
ROOT = oracle.ROOT
CORPUS = sorted(ROOT.glob("examples/*/config.json")) + sorted(
    (ROOT / "tests" / "fixtures" / "releases").glob("*/*/*.json")
)


def _need(rel: readers.Release) -> None:
    if oracle.env_ready(rel):
        return
    reason = f"{rel.id}: reader environment missing (scripts/reader-envs.sh, interop-envs.sh)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@cache
def _fixed() -> list[tuple[Path, dict, set[str], str]]:
    out = []
    for path in CORPUS:
        config = oracle.load(path)
        model_type = config.get("speculators_model_type")
        if not isinstance(model_type, str):
            continue
        try:
            result = fix(config, FixOptions(engines=(ENGINE,)))
        except Exception:  # a type the format version lacks, a pre-0.1 file: not fixable
            continue
        named = {p.pointer for p in result.problems if p.code == "readers-disagree"}
        out.append((path, result.document, named, result.detection.line))
    return out


def _raw() -> dict[str, dict]:
    out = {}
    for path in CORPUS:
        config = oracle.load(path)
        if isinstance(config.get("speculators_model_type"), str):
            out[str(path)] = config
    return out


@cache
def _jobs() -> dict[str, dict[str, dict]]:
    """release id -> request key -> config: the engine reads the raw and the fixed configs,
    each writer the fixed configs of its format version."""
    engine = readers.release(*ENGINE.split("=="))
    jobs: dict[str, dict[str, dict]] = {engine.id: {f"raw:{p}": c for p, c in _raw().items()}}
    for path, doc, _, line in _fixed():
        writer = disputes.writer_of(line)
        if writer is None or not engine.serves(doc["speculators_model_type"]):
            continue
        jobs[engine.id][f"fixed:{path}"] = doc
        jobs.setdefault(writer.id, {})[f"fixed:{path}"] = doc
    return jobs


probes.ask(
    __name__,
    lambda rid, _: {key: {"config": doc} for key, doc in _jobs().get(rid, {}).items()},
    releases=lambda: _jobs().keys(),
)


def _executed() -> dict[str, dict[str, dict]]:
    """release id -> request key -> the executed release's answer (tests/readers/probes.py:
    each release's probe runs once per session, for every module that asks it)."""
    for rid in _jobs():
        _need(readers.release(*rid.split("==")))
    return {rid: probes.answers(__name__, rid) for rid in _jobs()}


def test_fix_leaves_no_disagreement_the_executed_readers_see():
    engine = readers.release(*ENGINE.split("=="))
    _need(engine)
    checked = 0
    by_writer: dict[str, list] = {}
    for path, doc, named, line in _fixed():
        writer = disputes.writer_of(line)
        if writer is None or not engine.serves(doc["speculators_model_type"]):
            continue
        by_writer.setdefault(writer.id, []).append((path, doc, named))
    assert by_writer, "no config of the corpus is served by the engine"
    executed = _executed()
    failures = []
    for wid, items in sorted(by_writer.items()):
        writer = readers.release(*wid.split("=="))
        for path, doc, named in items:
            model_type = doc["speculators_model_type"]
            a_engine = executed[engine.id][f"fixed:{path}"]
            a_writer = executed[writer.id][f"fixed:{path}"]
            for name, row in engine.fields(model_type).items():
                w_row = writer.row(model_type, name)
                if row.get("ignored") or w_row is None or w_row.get("ignored"):
                    continue
                if f"/{name}" in named:
                    continue
                kind_e, value_e = oracle.observed(engine, row, name, a_engine)
                kind_w, value_w = oracle.observed(writer, w_row, name, a_writer)
                if "rejected" in (kind_e, kind_w):
                    continue
                mean_e = disputes.meaning(row.get("scope"), value_e, doc)
                mean_w = disputes.meaning(w_row.get("scope"), value_w, doc)
                checked += 1
                if mean_e != mean_w:
                    failures.append(
                        f"{path.relative_to(ROOT)} {name}: {engine.id} acts as {mean_e}, "
                        f"{writer.id} as {mean_w} after fix --engine {ENGINE}"
                    )
    assert not failures, "\n".join(failures)
    assert checked > 50


def test_validate_engine_errors_exactly_where_the_engine_refuses():
    engine = readers.release(*ENGINE.split("=="))
    _need(engine)
    docs = _raw()
    answers = {p: _executed()[engine.id][f"raw:{p}"] for p in docs}
    wrong = []
    for path, config in docs.items():
        report = validate_config(config, ValidateOptions(engines=(ENGINE,)), name=path)
        refused = any(f.rule == "C012" and f.severity is Severity.ERROR for f in report.findings)
        if refused != (not answers[path].get("accepted")):
            wrong.append(
                f"{path}: executed {engine.id} "
                f"{'reads' if answers[path].get('accepted') else 'refuses'} it "
                f"({answers[path].get('error')}), validate --engine says "
                f"{'refused' if refused else 'readable'}"
            )
    assert not wrong, "\n".join(wrong)
