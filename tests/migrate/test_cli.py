"""`specfmt migrate` / `fix` / `history` from the command line, and --in-place safety."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spec_format.cli.app import app
from spec_format.facts import catalog, readers
from spec_format.rewrites.migration import output
from tests.migrate.conftest import FIXTURES

#: migrate's default target and the release it stamps
LATEST = catalog.latest_version()
LATEST_RELEASE = catalog.version_entry(LATEST).release

DEV11 = FIXTURES / "0.1/eagle3/llama-3.1-8b-converter-0.2.0.dev11.json"
DSPARK = FIXTURES / "0.7/dspark/qwen3-8b-trained-0.7.0.json"
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def cfg(tmp_path) -> Path:
    p = tmp_path / "ckpt" / "config.json"
    p.parent.mkdir()
    shutil.copy(DEV11, p)
    return p


def test_stdout_gets_the_document(cfg):
    r = run("migrate", cfg, "--to", "0.5.0")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["speculators_version"] == "0.5.0" and doc["norm_before_fc"] is False


def test_output_file_is_formatted_like_save_pretrained(cfg, tmp_path):
    out = tmp_path / "out.json"
    r = run("migrate", cfg.parent, "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text == output.dumps(json.loads(text)) and text.endswith("}\n")
    assert "0.1->0.2" in r.stdout and "wrote" in r.stdout


def test_check_exits_1_when_the_file_would_change(cfg):
    before = cfg.read_text()
    assert run("migrate", cfg, "--check").exit_code == 1
    assert cfg.read_text() == before
    assert run("migrate", cfg, "--in-place").exit_code == 0
    assert run("migrate", cfg, "--check").exit_code == 0


def test_dry_run_prints_a_diff_and_writes_nothing(cfg):
    before = cfg.read_text()
    r = run("migrate", cfg, "--dry-run")
    assert r.exit_code == 0
    assert f"--- {cfg}" in r.stdout and f'+  "speculators_version": "{LATEST_RELEASE}"' in r.stdout
    assert cfg.read_text() == before


def test_json_report(cfg):
    r = run("migrate", cfg, "--to", "0.5", "--format", "json", "--dry-run")
    (data,) = json.loads(r.stdout)  # a list, one object per input
    assert data["source"]["format_version"] == "0.1" and data["target_release"] == "0.5.0"
    assert {"pointer": "/norm_before_fc", "op": "add"}.items() <= next(
        c for c in data["changes"] if c["pointer"] == "/norm_before_fc"
    ).items()


def test_in_place_with_backup(cfg):
    original = cfg.read_text()
    assert run("migrate", cfg, "--in-place", "--backup").exit_code == 0
    assert cfg.with_name("config.json.bak").read_text() == original
    assert json.loads(cfg.read_text())["speculators_version"] == LATEST_RELEASE


def test_lossy_downgrade_is_refused_without_a_traceback(tmp_path):
    p = tmp_path / "config.json"
    shutil.copy(FIXTURES / "0.7/eagle3/llama-3.1-8b-trained-0.7.0.json", p)
    r = run("migrate", p, "--to", "0.5", "--in-place")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "norm_output" in r.output and "--allow-lossy" in r.output
    assert json.loads(p.read_text())["speculators_version"] == "0.7.0"
    assert (
        run("migrate", p, "--to", "0.5", "--allow-lossy", "-o", tmp_path / "o.json").exit_code == 0
    )


def test_type_missing_in_target_is_refused(tmp_path):
    r = run("migrate", DSPARK, "--to", "0.6", "--allow-lossy")
    assert r.exit_code == 2 and "dspark" in r.output and "cannot help" in r.output


def test_unreadable_input_names_the_file_and_place(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"speculators_model_type": "eagle3",}')
    r = run("migrate", p)
    assert r.exit_code == 3 and str(p) in r.output and "Traceback" not in r.output


def test_verifier_fills_empty_architectures(tmp_path):
    p = tmp_path / "config.json"
    shutil.copy(FIXTURES / "0.4/eagle3/llama-3.1-8b-trained-0.4.0.json", p)
    v = tmp_path / "verifier"
    v.mkdir()
    (v / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32})
    )
    r = run("migrate", p, "--verifier", v)
    assert json.loads(r.stdout)["speculators_config"]["verifier"]["architectures"] == [
        "LlamaForCausalLM"
    ]
    r = run("migrate", p)
    assert "verifier-architectures-empty" in r.stderr


def test_fix_reports_each_filled_key_with_its_reason(tmp_path):
    p = tmp_path / "config.json"
    doc = json.loads((FIXTURES / "0.9/eagle3/llama-3.1-8b-trained-0.9.0.json").read_text())
    for key in ("norm_before_residual", "fc_norm", "eagle_aux_hidden_state_layer_ids"):
        doc.pop(key, None)
    p.write_text(json.dumps(doc))
    v = tmp_path / "v.json"
    v.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32}))
    r = run("fix", p, "--verifier", v, "--in-place")
    assert r.exit_code == 0, r.output
    # the reason is the reader table's: what the writer and the engines read when absent
    # (every vLLM group reads it the same way: one run, the first to the newest)
    said = " ".join(r.stdout.split())
    cov = readers.coverage("vllm")
    assert (
        f"norm_before_residual = false: speculators==0.9.0 default; vllm=={cov.first} to "
        f"vllm=={cov.newest} ({cov.groups} release groups) read true when absent" in said
    )
    fixed = json.loads(p.read_text())
    # the verifier's default layers are a guess about the training run: reported, not written
    assert "R006" in r.stdout and "eagle_aux_hidden_state_layer_ids" not in fixed
    # every covered reader reads an absent fc_norm as false: nothing to write
    assert "fc_norm" not in fixed and fixed["speculators_version"] == "0.9.0"
    assert run("fix", p, "--check").exit_code == 0


def test_fix_writes_dspark_anchor_false_for_pre_dev82_files():
    r = run("fix", FIXTURES / "0.7/dspark/qwen3-8b-trained-0.7.0.dev60-no-anchor.json")
    assert json.loads(r.stdout)["sample_from_anchor"] is False


def test_history_lists_every_step():
    r = run("history", "--verbose")
    assert r.exit_code == 0
    assert "0.8 -> 0.9" in r.stdout and "touches: transformer_layer_config.rope_theta" in r.stdout
    data = json.loads(run("history", "--format", "json").stdout)
    assert [s["id"] for s in data["steps"]][0] == "0.1->0.2"


def test_validate_reports_declared_and_inferred(tmp_path):
    p = tmp_path / "config.json"
    doc = json.loads(DEV11.read_text())
    doc["fc_norm"] = False
    p.write_text(json.dumps(doc))
    r = run("validate", p, "-f", "json")
    f = json.loads(r.stdout)["files"][0]
    assert f["version_source"] == "inferred" and any(x["rule"] == "M003" for x in f["findings"])
    r = run("validate", DEV11, "--format-version", "0.1", "-f", "json")
    assert json.loads(r.stdout)["files"][0]["version_source"] == "requested"


# -- --in-place safety: the original survives every failure -----------------------------------
def test_disk_full_leaves_the_original_intact(cfg, monkeypatch):
    from spec_format.parsers import outfile

    original = cfg.read_bytes()

    def full(fd, data):
        os.write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outfile, "_write_all", full)
    r = run("migrate", cfg, "--in-place")
    assert r.exit_code == 3 and "No space left" in r.output and "original is unchanged" in r.output
    assert cfg.read_bytes() == original
    assert sorted(p.name for p in cfg.parent.iterdir()) == ["config.json"], "temp file left behind"


def test_failed_validation_writes_nothing(cfg, monkeypatch):
    from spec_format.rewrites.migration import runner

    original = cfg.read_bytes()
    monkeypatch.setattr(
        runner, "schema_errors", lambda doc, line: ["/x: broken"] if line == LATEST else []
    )
    r = run("migrate", cfg, "--in-place")
    assert r.exit_code == 70 and "bug in specfmt" in r.output
    assert cfg.read_bytes() == original


def test_several_paths_each_reported_and_worst_exit_code_wins(tmp_path):
    from spec_format.cli.app import app

    root = tmp_path / "drafts"
    old = root / "old"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "qwen3-8b-eagle3", old)
    broken = root / "broken"
    broken.mkdir(parents=True)
    (broken / "config.json").write_text("{")
    runner = CliRunner()

    result = runner.invoke(app, ["migrate", "--check", str(old), str(old / "config.json")])
    assert result.exit_code == 1
    assert result.output.count("  would change ") == 2
    assert result.output.endswith("\n2 of 2 inputs would change\n")

    result = runner.invoke(app, ["migrate", "--check", str(broken), str(old), "--format", "json"])
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert [("error" in d) for d in doc] == [True, False]
    assert doc[1]["would_change"] is True

    result = runner.invoke(app, ["migrate", str(old), str(old)])
    assert result.exit_code == 2
    assert "use --check, --dry-run or --in-place" in result.output


def test_a_coloured_diff_has_the_colours_of_git_diff():
    diff = output.unified_diff("a\nb\n", "a\nc", "x.json")
    assert diff == (
        "--- a/x.json\n+++ b/x.json\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"
    )
    assert output.colour_diff(diff) == (
        "\x1b[1m--- a/x.json\x1b[0m\n\x1b[1m+++ b/x.json\x1b[0m\n\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n"
        " a\n\x1b[31m-b\x1b[0m\n\x1b[32m+c\x1b[0m\n\\ No newline at end of file\n"
    )
    assert output.colour_diff("+last") == "\x1b[32m+last\x1b[0m"
    assert output.colour_diff("") == ""
