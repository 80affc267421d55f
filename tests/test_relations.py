"""The relation rules (W014, D005, V015, V016: spec_format/rules/relations.py) stay silent
on the bundled examples and their correct pairings, and the verifier's special ids are read
in every spelling without a traceback (parsers/special_ids.py).

Each example is checked as a whole checkpoint: its config, weights built for it from the
tensor contract (sparse files: real shapes, no bytes), ``--deep``, and the verifier its
``speculators_config`` names with a ``generation_config.json`` holding that family's
special ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from spec_format.parsers.special_ids import ids_of, special_ids
from spec_format.runner.validation import ValidateOptions, validate
from spec_format.testing.builder import build_checkpoint

RELATIONS = {"W014", "D005", "V015", "V016"}
#: any JSON value, with the special-id keys likely
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["eos_token_id", "pad_token_id", "bos_token_id", "x"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=12,
)
DATA = ROOT / "tests" / "data" / "verifiers"
EXAMPLES = ROOT / "examples"

#: example -> its verifier (as tests/test_pairing.py pairs them)
PAIRS = {
    "gemma-4-31b-dflash": "gemma-4-31B-it",
    "gpt-oss-20b-eagle3": "gpt-oss-20b",
    "llama-3.1-8b-eagle3-0.2": "Llama-3.1-8B-Instruct",
    "llama-3.1-8b-eagle3-0.9": "Llama-3.1-8B-Instruct",
    "qwen3-32b-dflash2": "Qwen3-32B",
    "qwen3-8b-dflash": "Qwen3-8B",
    "qwen3-8b-dspark": "Qwen3-8B",
    "qwen3-8b-eagle3": "Qwen3-8B",
    "qwen3-8b-peagle": "Qwen3-8B",
    "qwen3-8b-xpress": "Qwen3-8B",
    "qwen3-next-80b-mtp": "Qwen3-Next-80B-A3B-Instruct",
}
#: the special ids of each family's generation_config.json (end of turn and of text)
GENERATION = {
    "gemma": {"bos_token_id": 2, "eos_token_id": [1, 106], "pad_token_id": 0},
    "gpt-oss": {"bos_token_id": 199998, "eos_token_id": [200002, 199999, 200012]},
    "Llama": {"bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009]},
    "Qwen3": {"bos_token_id": 151643, "eos_token_id": [151645, 151643], "pad_token_id": 151643},
}


def _generation(verifier: str) -> dict:
    return next(v for k, v in GENERATION.items() if verifier.startswith(k))


def _spellings(verifier: str) -> list[str]:
    return [s for s in ("v4", "v5") if (DATA / s / f"{verifier}.json").exists()]


def _cases() -> list[tuple[str, str]]:
    return [(name, s) for name in sorted(PAIRS) for s in _spellings(PAIRS[name])]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    """Each example with weights built for it (sparse: shapes without bytes)."""
    root = tmp_path_factory.mktemp("examples")
    out = {}
    for name in sorted(PAIRS):
        config = json.loads((EXAMPLES / name / "config.json").read_text())
        try:
            build_checkpoint(root / name, config, data="sparse")
        except ValueError:  # the contract cannot size every tensor from this config
            continue
        out[name] = root / name
    return out


@pytest.mark.parametrize(("name", "spelling"), _cases())
def test_examples_with_their_verifiers_raise_no_relation(tmp_path, checkpoints, name, spelling):
    if name not in checkpoints:
        pytest.skip(f"{name}: the tensor contract does not size every tensor from its config")
    verifier = PAIRS[name]
    folder = tmp_path / verifier
    folder.mkdir()
    (folder / "config.json").write_bytes((DATA / spelling / f"{verifier}.json").read_bytes())
    (folder / "generation_config.json").write_text(json.dumps(_generation(verifier)))
    report = validate(
        [checkpoints[name]],
        ValidateOptions(verifier=str(folder), deep=True),
    )
    findings = report.files[0].findings
    assert not [f for f in findings if f.rule == "I012"], findings  # never an internal error
    assert not [f"{f.rule} {f.message}" for f in findings if f.rule in RELATIONS]


def test_a_broken_example_is_reported(tmp_path):
    # the same build and validate as above, with one relation broken: the test can fail
    config = json.loads((EXAMPLES / "qwen3-8b-eagle3" / "config.json").read_text())
    config["transformer_layer_config"]["tie_word_embeddings"] = True
    build_checkpoint(tmp_path / "draft", config, data="sparse")
    report = validate([tmp_path / "draft"], ValidateOptions())
    assert "W014" in {f.rule for f in report.files[0].findings}


# -- special ids: every spelling, never a traceback ------------------------------------


@pytest.mark.parametrize(
    ("value", "ids"),
    [
        (7, [7]),
        ([7, 8], [7, 8]),
        ([[7], [8, [9]]], [7, 8, 9]),
        (None, []),
        ("7", []),
        (True, []),
        ({"id": 7}, []),
        (-1, []),
        (7.0, []),
        ([[[[[7]]]]], []),  # past the depth any config uses
    ],
)
def test_ids_of_every_spelling(value, ids):
    assert ids_of(value) == ids


@pytest.mark.parametrize(
    "text",
    [
        '{"eos_token_id": [1, 2]}',
        "not json",
        "[1, 2]",
        '{"eos_token_id": {"a": 1}, "pad_token_id": "x"}',
        '{"eos_token_id": 1, "eos_token_id": 2}',
        "",
        "\ufeff{}",
    ],
)
def test_generation_config_in_any_state_is_read_without_a_traceback(tmp_path, text):
    (tmp_path / "config.json").write_text('{"eos_token_id": 5, "pad_token_id": [6]}')
    (tmp_path / "generation_config.json").write_text(text, encoding="utf-8")
    found = special_ids({"eos_token_id": 5, "pad_token_id": [6]}, tmp_path / "config.json")
    assert {(s.value, s.role) for s in found} >= {(5, "end-of-sequence"), (6, "padding")}
    assert all(s.where.startswith(("config.json", "generation_config.json")) for s in found)


def test_generation_config_comes_first_and_names_where(tmp_path):
    (tmp_path / "generation_config.json").write_text('{"eos_token_id": [9, 5]}')
    found = special_ids({"eos_token_id": 5}, tmp_path / "config.json")
    assert [(s.value, s.where) for s in found] == [
        (9, "generation_config.json eos_token_id"),
        (5, "generation_config.json eos_token_id"),
        (5, "config.json eos_token_id"),
    ]


def test_a_remote_verifier_has_no_generation_config():
    assert special_ids({"eos_token_id": 1}, "hf://org/name/config.json")[0].where == (
        "config.json eos_token_id"
    )


@settings(max_examples=300, deadline=None)
@given(config=JSON, generation=JSON)
def test_special_ids_take_any_json(tmp_path_factory, config, generation):
    folder = tmp_path_factory.mktemp("verifier")
    (folder / "generation_config.json").write_text(json.dumps(generation))
    doc = config if isinstance(config, dict) else {"eos_token_id": config}
    for found in special_ids(doc, folder / "config.json"):
        assert isinstance(found.value, int) and found.value >= 0
