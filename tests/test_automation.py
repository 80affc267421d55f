"""What scripts rely on: a --dry-run diff names its file, ``-f json`` has one shape whatever
the number of inputs, and every command that prints findings has ``-q``."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.common import EXAMPLES, ROOT

OLD = ROOT / "examples" / "llama-3.1-8b-eagle3-0.2" / "config.json"


@pytest.fixture
def two_old(tmp_path):
    paths = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        paths.append(shutil.copy(OLD, tmp_path / name / "config.json"))
    return paths


def test_dry_run_diff_headers_name_each_file_as_given(cli, two_old, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    out = cli("migrate", "--dry-run", "one", "two/config.json").output
    assert "--- a/one/config.json\n+++ b/one/config.json\n" in out
    assert "--- a/two/config.json\n+++ b/two/config.json\n" in out
    assert "a/config.json" not in out
    absolute = cli("migrate", "--dry-run", two_old[0]).output  # an absolute path: as it is
    assert f"--- {two_old[0]}\n+++ {two_old[0]}\n" in absolute


@pytest.mark.parametrize("command", ["migrate", "fix"])
def test_json_report_is_a_list_for_one_input_and_for_several(cli, two_old, command):
    one = json.loads(cli(command, "--dry-run", "-f", "json", two_old[0]).stdout)
    both = json.loads(cli(command, "--dry-run", "-f", "json", *two_old).stdout)
    assert isinstance(one, list) and isinstance(both, list)
    assert [d["path"] for d in one] == [str(two_old[0])]
    assert [d["path"] for d in both] == [str(p) for p in two_old]
    assert one[0].keys() == both[0].keys()


def test_quiet_migrate_and_fix_leave_out_the_list_of_changes(cli, two_old):
    loud = cli("migrate", "--check", *two_old)
    quiet = cli("migrate", "--check", "-q", *two_old)
    assert loud.exit_code == quiet.exit_code == 1
    assert "added /" in loud.output and "added /" not in quiet.output
    # what is left: each input's warnings (the C001 the migration brings), then the summary
    said = quiet.output.splitlines()
    assert said[-1] == "2 of 2 inputs would change"
    assert all("added /" not in line and "  info " not in line for line in said)
    dry = cli("migrate", "--dry-run", "-q", two_old[0]).output
    assert "+++ " in dry and "added /" not in dry  # the diff asked for stays
    fixed = cli("fix", "--dry-run", "-q", EXAMPLES[0] / "config.json")
    assert fixed.exit_code == 0 and "no changes" not in fixed.output


def test_quiet_serving_lists_only_the_groups_not_serving_it_as_trained(cli):
    config = ROOT / "examples" / "qwen3-8b-dflash" / "config.json"
    loud = cli("serving", config).output
    quiet = cli("serving", "-q", config).output
    assert "as trained  -" in loud and "as trained  -" not in quiet
    assert "refuses" in quiet and "first release that serves it as trained" in quiet
    eagle = cli("serving", "-q", ROOT / "examples" / "qwen3-8b-eagle3" / "config.json").output
    assert "verdict" not in eagle  # every group serves it as trained: no table


def test_quiet_inspect_and_convert(cli, tmp_path):
    from spec_format.testing import builder, safeailab

    builder.build_checkpoint(tmp_path / "ckpt", builder.tiny_config("eagle3"))
    builder.build_verifier(tmp_path / "verifier", safeailab.verifier_config())
    loud = cli("inspect", tmp_path / "ckpt", "--verifier", tmp_path / "verifier")
    quiet = cli("inspect", "-q", tmp_path / "ckpt", "--verifier", tmp_path / "verifier")
    assert loud.exit_code == quiet.exit_code == 0, quiet.output
    assert "Draft weights" in loud.output and "Draft weights" not in quiet.output
    assert "break-even" in quiet.output and len(quiet.output) < len(loud.output) / 3

    safeailab.build_safeailab(
        tmp_path / "src", safeailab.safeailab_config(), safeailab.safeailab_shapes()
    )
    args = ("convert", tmp_path / "src", "--verifier", tmp_path / "verifier")
    args += ("--aux-layer-ids", "2,4,5", "--dry-run")
    loud, quiet = cli(*args, "-o", tmp_path / "a"), cli(*args, "-q", "-o", tmp_path / "b")
    assert loud.exit_code == quiet.exit_code == 0, quiet.output
    assert "tensors:" in loud.output and "tensors:" not in quiet.output
    assert "config:" not in quiet.output and "dry run, nothing written" in quiet.output
