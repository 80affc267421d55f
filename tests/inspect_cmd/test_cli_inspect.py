"""``specfmt inspect`` on the command line: cost models, bad input, plots, header-only reads."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from spec_format.testing.builder import build_checkpoint, tiny_config
from tests.inspect_cmd.conftest import QWEN3_8B

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.fixture
def tiny(tmp_path):
    def make(model_type="eagle3", overrides=None, **kwargs):
        path = tmp_path / f"{model_type}-{len(list(tmp_path.iterdir()))}"
        return build_checkpoint(path, tiny_config(model_type, overrides), **kwargs).path

    return make


def test_block_drafts_use_the_block_cost_model(cli, tiny):
    path = tiny("dflash")
    result = cli("inspect", path, "--cost-ratio", "0.2", "-a", "0.8")
    assert result.exit_code == 0, result.output
    assert "one draft forward drafts the whole block (block cost model: step cost 1 + c)" in (
        result.output
    )
    assert "1 draft forward per step, step cost 1.2000" in result.output
    assert "best gamma: none within this model" in result.output
    doc = json.loads(cli("inspect", path, "--cost-ratio", "0.2", "-f", "json").output)
    econ = doc["economics"][0]
    a = econ["break_even_acceptance"]
    g = econ["gamma"]
    assert (1 - a ** (g + 1)) / (1 - a) == pytest.approx(1.2, abs=1e-9)  # E(a*) = 1 + c
    assert doc["draft_forwards"] == "per_step" and doc["family"] == "block"


def test_without_a_cost_ratio_the_speedup_is_left_out_and_said_why(cli, tiny):
    result = cli("inspect", tiny(), "-a", "0.7")
    assert result.exit_code == 0, result.output
    assert "no cost ratio: pass --verifier" in result.output
    assert "break-even acceptance a*" not in result.output and "speedup" in result.output


def test_gamma_option_when_the_config_has_none(cli, tiny):
    path = tiny(overrides={"speculators_config.proposal_methods": []})
    doc = json.loads(
        cli("inspect", path, "--gamma", "4", "--cost-ratio", "0.1", "-f", "json").output
    )
    assert [g["gamma"] for g in doc["economics"]] == [4]
    assert any(
        "no speculators_config.proposal_methods[0].speculative_tokens" in n for n in doc["notes"]
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--acceptance", "1.5"], 2, "an acceptance rate is a number in [0, 1)"),
        (["--acceptance", "high"], 2, "'high' is not a number"),
        (["--gamma", "0"], 2, "speculative tokens are between 1 and"),
        (["--cost-ratio", "-1"], 2, "a cost ratio is a number from 0 to"),
        (["--plot", "out.pdf"], 2, "must end in .svg or .png"),
        (["--verifier", "/nonexistent/verifier"], 2, "no config.json there"),
    ],
)
def test_bad_options_are_usage_errors(cli, tiny, args, code, message):
    result = cli("inspect", tiny(), *args)
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("model_type", ["eagle3", "dflash", "peagle", "mtp"])
def test_a_config_without_weights_is_counted_from_its_config(cli, tiny, tmp_path, model_type):
    """inspect refused a config-only draft (the bundled examples) with exit 3; it now counts
    the tensors the config implies, and the counts are those of the checkpoint that config
    describes (built by the tiny builder from the same tensor contract)."""
    built = tiny(model_type)
    config_only = tmp_path / "config-only"
    config_only.mkdir()
    (config_only / "config.json").write_text((built / "config.json").read_text())
    result = cli("inspect", config_only, "--cost-ratio", "0.1")
    assert result.exit_code == 0, result.output
    assert "none in the checkpoint: the tensors its config implies" in result.output
    assert "note: no weights:" in " ".join(result.output.split())
    counted = json.loads(cli("inspect", config_only, "--cost-ratio", "0.1", "-f", "json").output)
    weighed = json.loads(cli("inspect", built, "--cost-ratio", "0.1", "-f", "json").output)
    assert counted["draft"]["counted_from"] == "config"
    assert weighed["draft"]["counted_from"] == "headers"
    required = {g["group"]: g["parameters"] for g in counted["draft"]["groups"]}
    actual = {g["group"]: g["parameters"] for g in weighed["draft"]["groups"]}
    assert required and all(actual.get(group) == n for group, n in required.items()), (
        required,
        actual,
    )


def test_token_freq_on_a_config_without_weights_is_one_clear_line(cli, tmp_path):
    config_only = tmp_path / "config-only"
    config_only.mkdir()
    (config_only / "config.json").write_text(json.dumps(tiny_config("eagle3")))
    freq = tmp_path / "freq.json"
    freq.write_text(json.dumps([1] * 256))
    result = cli("inspect", config_only, "--token-freq", freq)
    assert result.exit_code in (2, 3) and "Traceback" not in result.output, result.output
    assert "no model.safetensors" in result.output or "needs numpy" in result.output


def test_unreadable_checkpoints_exit_3(cli, tiny, tmp_path):
    assert "no such checkpoint directory" in cli("inspect", tmp_path / "missing").output
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("inspect", empty)
    assert result.exit_code == 3 and "no config.json" in result.output

    broken = tiny()
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-10])
    result = cli("inspect", broken)
    assert result.exit_code == 3 and "specfmt validate" in result.output

    bad_json = tiny()
    (bad_json / "config.json").write_text("{oops")
    result = cli("inspect", bad_json)
    assert result.exit_code == 3 and "config.json:1:2" in result.output

    retired = tiny()
    (retired / "config.json").write_text(
        json.dumps({**tiny_config("eagle3"), "speculators_model_type": "eagle"})
    )
    result = cli("inspect", retired)
    assert result.exit_code == 3 and "'eagle' is not a type inspect knows" in result.output
    assert "Traceback" not in result.output


def test_unknown_verifier_family_says_how_to_count_it(cli, tiny, tmp_path):
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "config.json").write_text(json.dumps({"model_type": "gemma3"}))
    result = cli("inspect", tiny(), "--verifier", tmp_path / "v")
    assert result.exit_code == 2
    assert "not a decoder family specfmt can count from config.json alone" in result.output
    assert "safetensors files, or hf://ORG/NAME" in result.output


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
def test_plot_is_written(cli, qwen3_8b_draft, qwen3_8b_config, tmp_path):
    pytest.importorskip("matplotlib")
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps([1] * 151936))
    out = tmp_path / "speedup.svg"
    result = cli(
        "inspect",
        qwen3_8b_draft,
        "--verifier",
        qwen3_8b_config,
        "--token-freq",
        counts,
        "--plot",
        out,
        "-a",
        "0.6,0.78",
    )
    assert result.exit_code == 0, result.output
    svg = out.read_text()
    assert svg.startswith("<?xml") and "break-even a* = 0.1279" in svg
    assert "gamma = 2" in svg and "gamma = 3" in svg and "gamma = 4" in svg
    assert "ceiling" in svg
    png = tmp_path / "speedup.png"
    assert cli("inspect", qwen3_8b_draft, "--cost-ratio", "0.3", "--plot", png).exit_code == 0
    assert png.read_bytes().startswith(b"\x89PNG")


def test_plot_without_matplotlib_is_a_clear_usage_error(cli, tiny, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    result = cli("inspect", tiny(), "--cost-ratio", "0.1", "--plot", tmp_path / "x.svg")
    assert result.exit_code == 2
    assert "--plot needs matplotlib (the plot extra), which is not installed: `" in result.output
    assert "-m pip install 'matplotlib>=3.7'` adds it" in " ".join(result.output.split())


def test_header_only_and_no_heavy_imports(qwen3_8b_draft, qwen3_8b_config):
    """Without --token-freq and --plot: no numpy, no torch, and only headers are read."""
    code = (
        "import json, sys\n"
        "from spec_format.cli.app import app\n"
        "from typer.testing import CliRunner\n"
        f"r = CliRunner().invoke(app, ['inspect', {str(qwen3_8b_draft)!r}, '--verifier', "
        f"{str(qwen3_8b_config)!r}, '-f', 'json'])\n"
        "assert r.exit_code == 0, r.output\n"
        "doc = json.loads(r.output)\n"
        "heavy = sorted(m for m in ('torch', 'numpy', 'matplotlib') if m in sys.modules)\n"
        "print(json.dumps({'heavy': heavy, 'bytes_read': doc['bytes_read']}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["heavy"] == []
    size = (qwen3_8b_draft / "model.safetensors").stat().st_size
    assert size > 1.9e9 and result["bytes_read"] < 2 * 1024 * 1024


def test_token_freq_reads_t2d_and_nothing_else(inspect_json, qwen3_8b_draft, tmp_path):
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps({"0": 5, "1": 7}))
    doc = inspect_json(qwen3_8b_draft, "--token-freq", counts)
    t2d_bytes = QWEN3_8B["vocab_size"]  # bool mask
    assert doc["bytes_read"] < t2d_bytes + 64 * 1024
    assert doc["bytes_read"] >= t2d_bytes


def test_a_tensor_the_contract_does_not_know_counts_as_compute(cli, tmp_path):
    """docs/guide/inspect.md: tensors outside the type's contract count in the compute
    parameters (a head or projection the contract does not name still runs)."""
    plain = build_checkpoint(tmp_path / "plain", tiny_config("eagle3"))
    extra = build_checkpoint(
        tmp_path / "extra", tiny_config("eagle3"), extra={"extra_proj.weight": ("BF16", (64, 64))}
    )
    counts = []
    for built in (plain, extra):
        result = cli("inspect", built.path, "-f", "json")
        assert result.exit_code == 0, result.output
        counts.append(json.loads(result.stdout)["draft"]["compute_parameters"])
    assert counts[1] - counts[0] == 64 * 64
