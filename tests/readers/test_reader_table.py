"""Every row of the reader table (schema/readers/*.json) against the executed reader release.

Run with ``pytest -m readers`` after scripts/interop-envs.sh and scripts/reader-envs.sh. One
subprocess per reader release answers every config of the session (tests/readers/probes.py;
vLLM: vllm_probe.py in release_probe.py; speculators: tests/interop/probe.py). For each row,
a realistic config of the type (a bundled example or a reconstructed release fixture) is written with the field absent, null, [] and
the row's test values, and the release's reading must equal the table's ``reading()``; an
ignored field must change nothing. ``rejections()`` on every example and fixture config
predicts exactly which ones a release refuses. For vLLM releases also: the speculative
settings, the verifier forms, the top-level and required keys, the layer model types, the
target layers tapped and per-layer DFlash causality (``scope``).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

from spec_format.facts import readers
from tests.readers import oracle, probes

pytestmark = pytest.mark.readers

ROOT = oracle.ROOT
ALL_TYPES = ("eagle3", "eagle", "independent", "mlp", "peagle", "dflash", "dflash2", "dspark")
ALL_TYPES += ("xpress", "mtp")
CORPUS = sorted(ROOT.glob("examples/*/config.json")) + sorted(
    (ROOT / "tests" / "fixtures").glob("valid/*.json")
)
CORPUS += sorted((ROOT / "tests" / "fixtures" / "releases").glob("*/*/*.json"))
VERIFIERS = (
    None,
    7,
    "s3://bucket/qwen3-8b",
    "https://huggingface.co/Qwen/Qwen3-8B",
    "/models/Qwen3-8B",
    "./Qwen3-8B",
    "../models/Qwen3-8B",
    "~/models/Qwen3-8B",
    "models/Qwen3/8B",
    "Qwen/Qwen3-8B",
    "Qwen3-8B",
)
TOP_LEVEL = ("qwen3", "llama", "speculators")


def _file(rel: readers.Release) -> str:
    return f"schema/readers/{rel.name}-{rel.version}.json"


def _release(rid: str) -> readers.Release:
    return readers.release(*rid.split("=="))


def _vllm():
    return [r for r in readers.representatives() if r.startswith("vllm==")]


def _rows():
    for rid in readers.representatives():
        rel = _release(rid)
        for model_type in rel.data.get("models", {}):
            for name in rel.fields(model_type):
                yield pytest.param(rid, model_type, name, id=f"{rid}-{model_type}-{name}")


def _requests(rel: readers.Release) -> dict[tuple, dict]:
    """Every config the session asks this release about, by key."""
    out: dict[tuple, dict] = {}
    for model_type in rel.data.get("models", {}):
        base = oracle.base_config(rel.id, model_type)
        out[("base", model_type)] = base
        if "layer_model_type" in rel.data["models"][model_type]:
            for value in (None, "mistral"):
                out[("layer", model_type, repr(value))] = _layer_type(base, value)
        for name, row in rel.fields(model_type).items():
            for case, value in oracle.cases(row):
                out[("row", model_type, name, case, repr(value))] = oracle.variant(
                    base, name, case, value
                )
            if "scope" in row:
                for value in row.get("test_values", []):
                    out[("scope", model_type, name, repr(value))] = _mixed_layers(
                        oracle.variant(base, name, "given", value)
                    )
    for model_type in ALL_TYPES:
        base = oracle.base_config(rel.id, model_type) or _any_config(model_type)
        if base is not None:
            out[("type", model_type)] = base
    for path in CORPUS:
        out[("corpus", str(path.relative_to(ROOT)))] = oracle.load(path)
    if rel.name == "vllm":
        base = oracle.base_config(rel.id, "eagle3")
        for value in VERIFIERS:
            cfg = copy.deepcopy(base)
            cfg["speculators_config"]["verifier"]["name_or_path"] = value
            out[("verifier", repr(value))] = cfg
        for value in TOP_LEVEL:
            out[("top", value)] = {**copy.deepcopy(base), "model_type": value}
        for pointer in rel.data.get("requires", {}):
            out[("requires", pointer)] = _without(base, pointer)
    return out


def _any_config(model_type: str) -> dict | None:
    found = sorted((ROOT / "tests" / "fixtures" / "releases").glob(f"*/{model_type}/*.json"))
    return oracle.load(found[-1]) if found else None


def _mixed_layers(config: dict) -> dict:
    """The config with its first draft layer sliding-window and the rest full attention."""
    out = copy.deepcopy(config)
    layer = out["transformer_layer_config"]
    count = layer.get("num_hidden_layers", 1)
    layer["layer_types"] = ["sliding_attention"] + ["full_attention"] * (count - 1)
    layer.setdefault("sliding_window", 2048)
    return out


def _layer_type(config: dict, value) -> dict:
    out = copy.deepcopy(config)
    out["transformer_layer_config"].pop("model_type", None)
    if value is not None:
        out["transformer_layer_config"]["model_type"] = value
    return out


def _without(config: dict, pointer: str) -> dict:
    out = copy.deepcopy(config)
    parts = pointer.strip("/").split("/")
    node = out
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node.pop(int(parts[-1]))
    else:
        node.pop(parts[-1])
    return out


probes.ask(
    __name__,
    lambda rid, _: {key: {"config": c} for key, c in _requests(_release(rid)).items()},
)


def judged(rid: str) -> dict[tuple, dict]:
    """request key -> the executed release's answer (tests/readers/probes.py: every release
    of the session once, two probes at a time)."""
    rel = _release(rid)
    if not oracle.env_ready(rel):
        reason = f"no reader environment for {rid} at {oracle.env_path(rel)}; build it with " + (
            "scripts/reader-envs.sh" if rel.name == "vllm" else "scripts/interop-envs.sh"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return probes.answers(__name__, rid)


def _expect_rejection(rel, where: str, message: str, answer: dict) -> None:
    kind, text = oracle.observed(rel, {}, "", answer)
    assert kind == "rejected", (
        f"{_file(rel)}: {rel.id} {where}: table says rejected, reader reads it"
    )
    assert message in (text or ""), (
        f"{_file(rel)}: {rel.id} {where}: table message {message!r} not in the reader's {text!r}"
    )


@pytest.mark.parametrize(("rid", "model_type", "name"), list(_rows()))
def test_row(rid, model_type, name):
    rel = _release(rid)
    answers = judged(rid)
    row = rel.row(model_type, name)
    where = f"{model_type}.{name}"
    base_answer = answers[("base", model_type)]
    for case, value in oracle.cases(row):
        config = oracle.variant(oracle.base_config(rid, model_type), name, case, value)
        answer = answers[("row", model_type, name, case, repr(value))]
        label = f"{where} {case}" + (f" {value!r}" if case == "given" else "")
        expected = rel.reading(model_type, name, config)
        if expected.how == "ignored":
            if case != "given":
                continue
            assert _stable(answer) == _stable(base_answer) or not base_answer.get(
                "accepted", base_answer.get("ok")
            ), f"{_file(rel)}: {rid} {label}: table says ignored, but the reading changes"
            continue
        if expected.how == "rejected":
            message = (row.get(case) or {}).get("rejects", "")
            _expect_rejection(rel, label, message, answer)
            continue
        kind, got = oracle.observed(rel, row, name, answer)
        assert kind == "read", f"{_file(rel)}: {rid} {label}: reader rejects it: {got}"
        assert got == expected.value, (
            f"{_file(rel)}: {rid} {label}: table says {expected.value!r} ({expected.how}), "
            f"reader reads {got!r}"
        )


def _stable(answer: dict) -> dict:
    """The part of an answer that a field's value can change (vLLM: draft + speculative)."""
    if "fields" in answer:  # speculators: the declared fields only
        return {"ok": answer.get("ok"), "fields": answer.get("fields")}
    return {k: answer.get(k) for k in ("accepted", "speculative", "draft")}


def _scoped():
    for rid in readers.representatives():
        rel = _release(rid)
        if rel.name != "vllm":
            continue
        for model_type in rel.data.get("models", {}):
            for name, row in rel.fields(model_type).items():
                if "scope" in row:
                    yield pytest.param(rid, model_type, name, id=f"{rid}-{model_type}-{name}")


@pytest.mark.parametrize(("rid", "model_type", "name"), list(_scoped()))
def test_scope_per_layer(rid, model_type, name):
    """The row's scope is the per-layer causality vLLM's DFlash model code computes."""
    rel = _release(rid)
    row = rel.row(model_type, name)
    for value in row.get("test_values", []):
        answer = judged(rid)[("scope", model_type, name, repr(value))]
        assert answer["accepted"], answer["error"]
        layers = answer["draft"]["layer_causal"]
        kinds = answer["draft"]["layer_types"]
        if row["scope"] == "all-layers":
            want = [not value] * len(kinds)
        else:  # sliding-layers: the flag decides sliding layers; full attention stays bidirectional
            want = [(not value) if k == "sliding_attention" else False for k in kinds]
        assert layers == want, (
            f"{_file(rel)}: {rid} {model_type}.{name}={value!r} scope {row['scope']!r}: "
            f"vLLM runs layers {kinds} with causal={layers}"
        )


def _with(key: str):
    for rid in _vllm():
        rel = _release(rid)
        for model_type, model in rel.data["models"].items():
            for name, row in model.get("fields", {}).items():
                if key in row:
                    yield pytest.param(rid, model_type, name, id=f"{rid}-{model_type}-{name}")
            if key in model:
                yield pytest.param(rid, model_type, key, id=f"{rid}-{model_type}-{key}")


@pytest.mark.parametrize(("rid", "model_type", "name"), list(_with("taps")))
def test_target_layers_tapped(rid, model_type, name):
    """The target layers vLLM taps are the aux ids plus the row's offset."""
    rel = _release(rid)
    row = rel.row(model_type, name)
    for value in row["test_values"]:
        answer = judged(rid)[("row", model_type, name, "given", repr(value))]
        tapped = oracle.dig(answer, row["taps"]["into"])
        assert tapped == [i + row["taps"]["offset"] for i in value], (
            f"{_file(rel)}: {rid} {model_type}.{name}={value}: vLLM taps {tapped}"
        )


@pytest.mark.parametrize(("rid", "model_type", "name"), list(_with("layer_model_type")))
def test_layer_model_type(rid, model_type, name):
    """transformer_layer_config.model_type: absent is built as the table's default, other
    values than `accepts` are refused with the table's message."""
    rel = _release(rid)
    base = oracle.base_config(rid, model_type)
    for value in (None, "mistral"):
        config = _layer_type(base, value)
        _check_prediction(
            rel,
            f"{model_type} layer model_type {value!r}",
            config,
            judged(rid)[("layer", model_type, repr(value))],
        )


@pytest.mark.parametrize("rid", readers.representatives())
def test_types(rid):
    """A type the table serves is read; any other is refused (with a message the table has)."""
    rel = _release(rid)
    answers = judged(rid)
    for model_type in ALL_TYPES:
        answer = answers.get(("type", model_type))
        if answer is None:
            continue
        config = oracle.base_config(rid, model_type) or _any_config(model_type)
        if rel.serves(model_type):
            kind, text = oracle.observed(rel, {}, "", answer)
            assert kind == "read", f"{_file(rel)}: {rid} serves {model_type}, reader: {text}"
        else:
            _check_prediction(rel, f"type {model_type}", config, answer)


def _check_prediction(rel, where: str, config: dict, answer: dict) -> None:
    predicted = rel.rejections(config)
    kind, text = oracle.observed(rel, {}, "", answer)
    if not predicted:
        assert kind == "read", (
            f"{_file(rel)}: {rel.id} rejects {where} ({text}); the table predicts no rejection"
        )
        return
    assert kind == "rejected", (
        f"{_file(rel)}: {rel.id} reads {where}; the table predicts {predicted}"
    )
    # a type refusal is said in words (readers.type_refusal); the table keeps the engine's text
    raw = rel.data["types"].get("message", "")
    said = [
        raw if p == "/speculators_model_type" and "not a type it serves" in m else m
        for p, m in predicted
    ]
    assert any(m and m in (text or "") for m in said), (
        f"{_file(rel)}: {rel.id} {where}: reader says {text!r}, table predicts {predicted}"
    )


@pytest.mark.parametrize("rid", _vllm())
def test_speculative_settings(rid):
    """Detection: method, parallel drafting and speculative tokens as the table says, for
    every type the release serves (a type it detects and refuses, 0.34's peagle, is
    test_types')."""
    rel = _release(rid)
    for model_type in filter(rel.serves, rel.data["types"]["accepted"]):
        answer = judged(rid)[("base", model_type)]
        spec = answer["speculative"]
        want = {"method": model_type, "parallel_drafting": False}
        want.update(rel.data["types"].get("serves_as", {}).get(model_type, {}))
        base = oracle.base_config(rid, model_type)
        tokens = base["speculators_config"]["proposal_methods"][0]["speculative_tokens"]
        got = {k: spec[k] for k in want} | {
            "num_speculative_tokens": spec["num_speculative_tokens"]
        }
        assert got == want | {"num_speculative_tokens": tokens}, f"{_file(rel)}: {rid} {model_type}"
        assert answer["draft"]["registered"], f"{rid}: {answer['draft']['architectures']}"


@pytest.mark.parametrize("rid", _vllm())
def test_verifier_forms(rid):
    rel = _release(rid)
    base = oracle.base_config(rid, "eagle3")
    for value in VERIFIERS:
        cfg = copy.deepcopy(base)
        cfg["speculators_config"]["verifier"]["name_or_path"] = value
        answer = judged(rid)[("verifier", repr(value))]
        _check_prediction(rel, f"verifier {value!r} ({readers.verifier_form(value)})", cfg, answer)


@pytest.mark.parametrize("rid", _vllm())
def test_top_level_and_required_keys(rid):
    rel = _release(rid)
    base = oracle.base_config(rid, "eagle3")
    for value in TOP_LEVEL:
        answer = judged(rid)[("top", value)]
        _check_prediction(rel, f"model_type {value!r}", {**base, "model_type": value}, answer)
    for pointer, message in rel.data.get("requires", {}).items():
        _expect_rejection(rel, f"without {pointer}", message, judged(rid)[("requires", pointer)])


@pytest.mark.parametrize(
    "path", CORPUS, ids=[str(p.relative_to(ROOT)).replace("/config.json", "") for p in CORPUS]
)
@pytest.mark.parametrize("rid", readers.representatives())
def test_rejections_predict(rid, path: Path):
    """rejections() says exactly which example and fixture configs the release refuses."""
    rel = _release(rid)
    answer = judged(rid)[("corpus", str(path.relative_to(ROOT)))]
    _check_prediction(rel, str(path.relative_to(ROOT)), oracle.load(path), answer)
