"""Interop: every supported format version judged by the speculators release of that line.

Run with ``pytest -m interop`` after ``scripts/interop-envs.sh`` (environments cached under
$SPECFMT_INTEROP_CACHE, default .cache/interop). Without them every test here skips with
the reason. Each release runs its own code in a subprocess (tests/interop/probe.py); one
subprocess per release answers all requests, because importing speculators takes 6-17 s.

Checks, for every target line V whose release is installed:
* each reconstructed fixture migrated to V loads with V's ``SpeculatorModelConfig.from_dict``
  and means the same as the original read by its own release: declared fields, proposal
  settings, the layer config's sizes, heads, RoPE theta/scaling and layer types; a value the
  source release reads must not end up in a key V does not declare;
* configs V writes itself (config-only, its own classes) pass ``validate --format-version V``
  with no errors and ``migrate --to <release>`` changes nothing but documented explicit
  defaults.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from spec_format.base.errors import MigrationRefused
from spec_format.facts import catalog, disputes, readers, versions
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.rules.base import Profile
from spec_format.runner.validation import ValidateOptions, validate_config
from tests.migrate.conftest import fixture_id, load, release_fixtures

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SPECFMT_INTEROP_CACHE", ROOT / ".cache" / "interop"))
PROBE = Path(__file__).resolve().parent / "probe.py"
#: the release installed per format line (patch releases write the same configs): the
#: speculators release of the reader table that stands for the line
RELEASES = readers.release_of_line("speculators")
#: types a release can write config-only (independent never reads back; mlp collides with
#: transformers >= 4.56's dtype property)
WRITABLE = tuple(t for t in catalog.records() if t not in ("independent", "mlp"))
#: steps whose changes are explicit defaults or documented writer corrections
EXPLICIT_STEPS = {"explicit", "era", "readers"}


def env(line: str) -> Path | None:
    target = CACHE / "envs" / RELEASES[line]
    ok = (target / ".ok").is_file() and (CACHE / "base" / "bin" / "python").exists()
    return target if ok else None


def run_probe(line: str, requests: list[dict]) -> list[dict]:
    target = env(line)
    proc = subprocess.run(
        [str(CACHE / "base" / "bin" / "python"), str(PROBE)],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        timeout=900,
        env={
            **os.environ,
            "PYTHONPATH": str(target),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        },
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe for {RELEASES[line]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def skip_unless_asked(request) -> None:
    """Skip unless interop tests were asked for (``pytest -m interop`` or SPECFMT_INTEROP=1)."""
    asked = (
        "interop" in (request.config.getoption("-m") or "")
        or os.environ.get("SPECFMT_INTEROP") == "1"
    )
    if not asked:
        pytest.skip("interop tests run with `pytest -m interop` (envs: scripts/interop-envs.sh)")


def run_with_specfmt(target: Path, script: Path, *args: str, stdin: str | None = None) -> Any:
    """Run ``script`` with the base interpreter, the release environment ``target`` and this
    checkout importable (spec_format's own dependencies fall back to the running venv's
    site-packages); returns the JSON on the last line of its output."""
    proc = subprocess.run(
        [str(CACHE / "base" / "bin" / "python"), str(script), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={
            **os.environ,
            "PYTHONPATH": f"{target}{os.pathsep}{ROOT}",
            "SPECFMT_PROBE_FALLBACK_PATH": sysconfig.get_paths()["purelib"],
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _migrations():
    """(fixture, source line, target line, migrated result) for every non-refused pair."""
    out = []
    for path in release_fixtures():
        doc = load(path)
        source = versions.detect(doc).line
        for target in RELEASES:  # a line without a release yet has nothing to read it
            try:
                result = migrate(copy.deepcopy(doc), MigrateOptions(to=RELEASES[target]))
            except MigrationRefused:
                continue
            out.append((path, source, target, result))
    return out


@pytest.fixture(scope="session")
def judged():
    """Run every release once; returns {line: {key: answer}}."""
    available = [v for v in RELEASES if env(v) is not None]
    if not available:
        pytest.skip(
            f"no interop environments under {CACHE}; build them with scripts/interop-envs.sh"
        )
    requests: dict[str, list[tuple[str, dict]]] = {v: [] for v in available}
    for path in release_fixtures():
        line = versions.detect(load(path)).line
        if line in requests:
            requests[line].append((f"src:{fixture_id(path)}", {"op": "read", "config": load(path)}))
    for path, _source, target, result in _migrations():
        if target in requests:
            requests[target].append(
                (f"mig:{fixture_id(path)}", {"op": "read", "config": result.document})
            )
    for v in available:
        for t in WRITABLE:
            if t in catalog.version_entry(v).types:
                requests[v].append((f"write:{t}", {"op": "write", "type": t}))

    def one(v):
        keys, reqs = zip(*requests[v], strict=True) if requests[v] else ((), ())
        return v, dict(zip(keys, run_probe(v, list(reqs)), strict=True))

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, available))


def _need(judged, line):
    if line not in judged:
        pytest.skip(f"speculators {RELEASES[line]} is not installed under {CACHE}")


MIGRATIONS = _migrations()


@pytest.mark.parametrize(
    ("path", "source", "target", "result"),
    MIGRATIONS,
    ids=[f"{fixture_id(p)}->{t}" for p, _s, t, _r in MIGRATIONS],
)
def test_migrated_config_means_the_same_to_the_target_release(judged, path, source, target, result):
    _need(judged, source)
    _need(judged, target)
    before = judged[source][f"src:{fixture_id(path)}"]
    after = judged[target][f"mig:{fixture_id(path)}"]
    if not before["ok"] and result.original.get("speculators_model_type") == "mlp":
        pytest.skip(
            "speculators 0.2-0.4 cannot build mlp configs on transformers >= 4.56 (its "
            "torch_dtype field collides with the dtype property): a library limitation"
        )
    assert before["ok"], (
        f"speculators {RELEASES[source]} cannot read the fixture: {before['error']}"
    )
    if (
        not after["ok"]
        and result.document.get("speculators_model_type") == "mlp"
        and target != "0.1"
    ):
        pytest.skip("speculators 0.2-0.4 cannot build mlp configs on transformers >= 4.56")
    assert after["ok"], (
        f"speculators {RELEASES[target]} cannot read the migrated config: {after['error']}"
    )
    fixed = {c.pointer for c in result.changes if c.step in EXPLICIT_STEPS}
    problems = meaning_changes(
        before, after, result.document, fixed, scoped=_scoped(result, source, target)
    )
    assert not problems, "\n".join(problems)


def _scoped(result, source: str, target: str) -> dict:
    """key -> (meaning to the source release, meaning to the target release) for the fields
    whose effect depends on the layer (the reader table's ``scope``): those are compared by
    what they do in each draft layer, not by value."""
    out = {}
    model_type = result.document.get("speculators_model_type")
    releases = (disputes.writer_of(source), disputes.writer_of(target))
    if None in releases or not isinstance(model_type, str):
        return out
    for key in releases[1].fields(model_type):
        views = (
            disputes.view(releases[0], model_type, key, result.original),
            disputes.view(releases[1], model_type, key, result.document),
        )
        if any(v is not None and isinstance(v.meaning, tuple) for v in views):
            out[key] = tuple(v.meaning if v is not None else None for v in views)
    return out


def meaning_changes(
    before: dict, after: dict, migrated: dict, fixed: set[str], scoped: dict | None = None
) -> list[str]:
    out = []
    assert before["type"] == after["type"]
    shared = set(before["fields"]) & set(after["fields"])
    for key, (was, now) in (scoped or {}).items():
        if was is not None and now is not None and was != now:
            out.append(f"{key}: the source runs the layers {was}, the target {now}")
    for key in sorted(shared - {"architectures"}):
        if f"/{key}" in fixed or key in (scoped or {}):
            continue
        if before["fields"][key] != after["fields"][key]:
            out.append(
                f"{key}: source reads {before['fields'][key]!r}, target reads {after['fields'][key]!r}"
            )
    for key in sorted(set(before["fields"]) - set(after["fields"])):
        if before["fields"][key] != before["defaults"].get(key):
            out.append(
                f"{key} = {before['fields'][key]!r} means something to the source; the target has no such field"
            )
    for key in sorted(set(after["fields"]) - set(before["fields"])):
        if f"/{key}" not in fixed and after["fields"][key] != after["defaults"].get(key):
            out.append(
                f"{key}: new in the target with a non-default value {after['fields'][key]!r}"
            )
    for key in migrated:
        if key not in after["declared"] and key in before["declared"] and key in before["fields"]:
            out.append(f"{key} is meaningful to the source but the target does not declare it")
    p0, p1 = before["proposal"], after["proposal"]
    if p0 and p1:
        keys = ("proposal_type", "speculative_tokens", "verifier_accept_k", "accept_tolerance")
        m0, m1 = ([{k: m.get(k) for k in keys} for m in p["methods"]] for p in (p0, p1))
        if m0 != m1 and not any(
            f.startswith("/speculators_config/proposal_methods") for f in fixed
        ):
            out.append(f"proposal methods: {m0} -> {m1}")
        if p0["verifier"].get("name_or_path") != p1["verifier"].get("name_or_path"):
            out.append("verifier name_or_path changed")
    l0, l1 = before["layer"], after["layer"]
    if l0 and l1:
        for key in (
            "class",
            "hidden_size",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "num_hidden_layers",
            "vocab_size",
            "intermediate_size",
            "rope_theta",
            "rope_scaling",
            "layer_types",
        ):
            if l0.get(key) != l1.get(key):
                out.append(f"transformer_layer_config {key}: {l0.get(key)!r} -> {l1.get(key)!r}")
    return out


@pytest.mark.parametrize("line", list(RELEASES))
@pytest.mark.parametrize("model_type", WRITABLE)
def test_release_written_config_validates_and_migrates_unchanged(judged, line, model_type):
    if model_type not in catalog.version_entry(line).types:
        pytest.skip(f"format {line} has no {model_type}")
    _need(judged, line)
    answer = judged[line][f"write:{model_type}"]
    assert answer["ok"], (
        f"speculators {RELEASES[line]} could not write {model_type}: {answer['error']}"
    )
    written = answer["config"]
    report = validate_config(written, ValidateOptions(format_version=line, profile=Profile.LEGACY))
    errors = [
        f"{f.rule} {f.pointer}: {f.message}" for f in report.findings if f.severity.value == "error"
    ]
    assert not errors, "\n".join(errors)
    result = migrate(copy.deepcopy(written), MigrateOptions(to=RELEASES[line]))
    unexpected = [c.describe() for c in result.changes if c.step not in EXPLICIT_STEPS]
    assert not unexpected, "\n".join(unexpected)
    assert result.target_errors == []
