"""The command line: exit codes, output formats, and no tracebacks for user mistakes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.common import EXAMPLES, ROOT

GOOD = EXAMPLES[0]


def test_ok_exit_0_text(cli):
    result = cli("validate", GOOD)
    assert result.exit_code == 0
    assert "1 input checked: 1 ok" in result.output


def test_errors_exit_1_json(cli, write_config):
    config = json.loads((GOOD / "config.json").read_text())
    config["speculators_config"]["proposal_methods"] = []
    path = write_config(config)
    result = cli("validate", path, "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["status"] == "fail" and doc["exit_code"] == 1
    (fr,) = doc["files"]
    finding = next(f for f in fr["findings"] if f["rule"] == "S103")
    assert finding["pointer"] == "/speculators_config/proposal_methods"
    assert finding["severity"] == "error"
    assert finding["line"] > 1


def test_unreadable_exit_3_and_others_still_checked(cli, write_config):
    bad = write_config(b"{not json", name="bad")
    result = cli("validate", bad, GOOD, "--format", "json")
    assert result.exit_code == 3
    statuses = [f["status"] for f in json.loads(result.output)["files"]]
    assert statuses == ["unreadable", "ok"]


def test_usage_error_exit_2(cli):
    assert cli("validate").exit_code == 2
    assert cli("validate", GOOD, "--profile", "lenient").exit_code == 2
    result = cli("validate", GOOD, "--format-version", "7.0")
    assert result.exit_code == 2
    assert "unknown format version" in result.output


def test_missing_path_and_directory_without_config(cli, tmp_path):
    result = cli("validate", tmp_path / "nope", tmp_path)
    assert result.exit_code == 3
    assert "I001" in result.output and "I011" in result.output


def test_recursive_finds_drafts_and_skips_plain_model_configs(cli, tmp_path):
    import shutil

    for ex in EXAMPLES[:3]:
        shutil.copytree(ex, tmp_path / "drafts" / ex.name)
    verifier = tmp_path / "verifiers" / "qwen3-8b"
    verifier.mkdir(parents=True)
    (verifier / "config.json").write_text(json.dumps({"model_type": "qwen3", "hidden_size": 4096}))
    result = cli("validate", tmp_path, "--recursive", "--format", "json")
    doc = json.loads(result.output)
    assert result.exit_code == 0
    assert len(doc["files"]) == 3


def test_select_and_ignore(cli):
    ids = lambda r: {f["rule"] for fr in json.loads(r.output)["files"] for f in fr["findings"]}  # noqa: E731
    everything = ids(cli("validate", *EXAMPLES, "--format", "json"))
    assert {"C006", "C009"} <= everything
    only = ids(cli("validate", *EXAMPLES, "--format", "json", "--select", "C006"))
    assert only == {"C006"}
    without = ids(cli("validate", *EXAMPLES, "--format", "json", "--ignore", "c006,C009"))
    assert without == everything - {"C006", "C009"}


def test_quiet_shows_only_errors(cli):
    result = cli("validate", GOOD, "-q")
    assert "C001" not in result.output and "1 input checked" in result.output


def test_color_only_when_asked(cli):
    plain = cli("validate", GOOD)
    assert "\x1b[" not in plain.output
    forced = cli("validate", GOOD, "--color", "always")
    assert "\x1b[" in forced.output


def test_no_color_env_is_honoured_in_a_terminal():
    # a real pseudo-terminal: rich colours by default, NO_COLOR turns it off
    import pty

    def run(env):
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - child
            os.execvpe(
                sys.executable, [sys.executable, "-m", "spec_format", "validate", str(GOOD)], env
            )
        out = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.waitpid(pid, 0)
        return out

    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    assert b"\x1b[" in run(env)
    assert b"\x1b[" not in run({**env, "NO_COLOR": "1"})


def test_explain_and_rules(cli):
    result = cli("explain", "c001")
    assert result.exit_code == 0 and "implicit-default-disagreement" in result.output
    assert cli("explain", "norm-flags-exclusive").exit_code == 0
    result = cli("explain", "Z999")
    assert result.exit_code == 2 and "specfmt rules" in result.output
    listing = json.loads(cli("rules", "--json").output)
    assert {r["id"] for r in listing} >= {"S101", "X003", "C001"}


def test_version_flag(cli):
    result = cli("--version")
    assert result.exit_code == 0 and result.output.startswith("specfmt ")


def test_console_script_entry_point_and_broken_pipe():
    proc = subprocess.run(
        f"{sys.executable} -m spec_format validate {' '.join(map(str, EXAMPLES))} --format json | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout == '{\n  "files'  # the document is streamed, files first
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_traceback_for_a_directory_named_config_json(cli, tmp_path, fmt):
    (tmp_path / "ckpt" / "config.json").mkdir(parents=True)
    result = cli("validate", tmp_path / "ckpt" / "config.json", "--format", fmt)
    assert result.exit_code == 3
    assert "Traceback" not in result.output
