"""``specfmt forward`` on the command line: output, dump/compare, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from forward_helpers import build, tiny_config
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from spec_format.cli.app import app
from spec_format.facts import catalog

ROOT = Path(__file__).resolve().parents[2]


def cli(*args):
    return CliRunner().invoke(app, ["forward", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def eagle(tmp_path):
    return build(tmp_path / "eagle", tiny_config("eagle3"))


def test_text_output(eagle):
    result = cli(eagle, "--tokens", "6", "--steps", "2")
    assert result.exit_code == 0, result.output
    assert "eagle3 (llama layers) on cpu, float32" in result.output
    assert "proposal (verifier ids):" in result.output
    assert "+2" in result.output  # the second chained step


def test_json_output(tmp_path):
    path = build(tmp_path / "d", tiny_config("dspark"))
    result = cli(path, "--tokens", "9", "--anchor", "4", "--top-k", "3", "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["status"] == "ok" and doc["model_type"] == "dspark" and doc["anchor"] == 4
    assert [row["slot"] for row in doc["rows"]] == [0, 1, 2, 3]  # DSpark: sample_from_anchor
    assert [row["position"] for row in doc["rows"]] == [4, 5, 6, 7]
    assert all(len(row["top"]) == 3 and "confidence" in row["extras"] for row in doc["rows"])
    assert doc["proposal"] == [row["token_id"] for row in doc["rows"]]


def test_dump_then_compare(eagle, tmp_path):
    dump = tmp_path / "out.safetensors"
    assert cli(eagle, "--steps", "2", "--dump", dump).exit_code == 0
    tensors = load_file(str(dump))
    assert tensors["logits"].dtype == torch.float32 and tensors["logits"].shape == (16, 64)
    assert tensors["draft_token_ids"].dtype == torch.int64
    assert tensors["chain_logits"].shape == (2, 64)

    same = cli(eagle, "--steps", "2", "--compare", dump)
    assert same.exit_code == 0 and "match" in same.output

    tensors["logits"][3, 5] += 0.01
    save_file(tensors, str(dump))
    changed = cli(eagle, "--steps", "2", "--compare", dump, "--atol", "1e-3")
    assert changed.exit_code == 1
    assert "MISMATCH" in changed.output and "row 3, draft id 5" in changed.output
    assert cli(eagle, "--steps", "2", "--compare", dump, "--atol", "0.02").exit_code == 0


@pytest.mark.parametrize("model_type", catalog.forward_types())
def test_every_type_dumps_and_compares_with_itself(tmp_path, model_type):
    path = build(tmp_path / model_type, tiny_config(model_type))
    dump = tmp_path / "out.safetensors"
    assert cli(path, "--tokens", "7", "--dump", dump).exit_code == 0
    assert cli(path, "--tokens", "7", "--compare", dump, "--atol", "0").exit_code == 0


def test_compare_across_dtypes_within_tolerance(tmp_path):
    path = build(tmp_path / "x", tiny_config("xpress"))
    dump = tmp_path / "f32.safetensors"
    assert cli(path, "--dump", dump).exit_code == 0
    result = cli(path, "--dtype", "bfloat16", "--compare", dump, "--atol", "0.02")
    assert result.exit_code == 0, result.output


def test_broken_checkpoint_exit_1_without_traceback(tmp_path):
    path = build(tmp_path / "e", tiny_config("eagle3"), drop=["norm.weight"])
    result = CliRunner().invoke(app, ["forward", str(path)])
    assert result.exit_code == 1
    assert "norm.weight" in result.output and "Traceback" not in result.output


def test_usage_and_input_errors(eagle, tmp_path):
    assert cli(eagle, "--anchor", "3").exit_code == 2
    assert cli(eagle, "--device", "tpu").exit_code == 2
    assert cli(tmp_path / "missing").exit_code == 3


def test_options_reach_the_library(monkeypatch, eagle):
    seen = {}

    def fake(options):
        seen["options"] = options
        raise SystemExit(0)

    monkeypatch.setattr("spec_format.forward.run_forward", fake)
    cli(
        eagle,
        "--verifier",
        eagle,
        "--tokens",
        "9",
        "--seed",
        "4",
        "--steps",
        "1",
        "--top-k",
        "2",
        "--device",
        "cpu",
        "--dtype",
        "bfloat16",
        "--atol",
        "0.5",
    )
    options = seen["options"]
    assert (options.tokens, options.seed, options.steps, options.top_k) == (9, 4, 1, 2)
    assert (options.device, options.dtype, options.atol) == ("cpu", "bfloat16", 0.5)
    assert (
        options.verifier == str(eagle) and options.anchor is None
    )  # as given: the library reads it


def test_importing_the_cli_and_forward_package_does_not_import_torch():
    code = (
        "import sys\nimport spec_format.forward\nimport spec_format.cli.app\n"
        "print('torch' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert proc.stdout.strip() == "False"


def test_an_hf_verifier_is_refused_with_the_command_that_fetches_it(tmp_path):
    result = cli(tmp_path / "no-such-draft", "--verifier", "hf://Qwen/Qwen3-8B@main")
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "huggingface-cli download Qwen/Qwen3-8B --revision main --local-dir DIR" in message
