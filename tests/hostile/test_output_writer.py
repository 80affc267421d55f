"""The one output writer (spec_format.parsers.outfile.write_output) behind -o, --in-place and
--backup: atomic, keeps owner/mode/xattrs, writes devices and FIFOs through, never
overwrites a backup, cleans up after killed runs."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from spec_format.base.errors import UsageError
from spec_format.parsers import outfile
from tests.hostile.limits import ROOT, run_limited

EXAMPLE = ROOT / "examples" / "qwen3-8b-eagle3" / "config.json"


@pytest.fixture
def old_config(tmp_path):
    """A config that `migrate --to 0.9` rewrites (an older speculators_version)."""
    doc = json.loads(EXAMPLE.read_text())
    doc["speculators_version"] = "0.5.0"
    path = tmp_path / "ckpt" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    return path


def test_kill_at_every_system_call_of_the_rewrite(tmp_path, old_config):
    pristine = tmp_path / "work" / "pristine"
    pristine.mkdir(parents=True)
    shutil.copy(old_config, pristine / "config.json")
    shutil.copy(old_config, pristine / "other.json")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("kill_rewrite.py")), str(tmp_path / "work")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=True,
    )
    results = json.loads(proc.stdout.splitlines()[-1])
    kills = [r for r in results if r["killed"]]
    assert len(kills) >= 8, results  # open, write, fchmod, fsync, close, link, replace, ...
    assert not results[-1]["killed"] and results[-1]["exit"] == 0
    for r in results:
        # before the rename the original is intact; after it the new file is complete
        assert r["original_intact"] or r["parses"], r
        assert all(r["backups_hold_original"].values()), r
        assert not any(n.startswith(".specfmt-") for n in r["after_next_run"]), r
        assert {"config.json", "other.json"} <= set(r["after_next_run"]), r


def test_devices_and_fifos_are_written_through(tmp_path):
    outfile.write_output("/dev/null", "{}\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    written = outfile.write_output(fifo, "through\n")
    reader.join(10)
    assert got == [b"through\n"] and not written.replaced
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dash_o_dev_stdout_symlink_reaches_stdout(tmp_path, old_config):
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    run = run_limited("migrate", old_config, "--to", "0.9", "-o", link)
    assert run.returncode == 0, run.output
    doc, _ = json.JSONDecoder().raw_decode(run.stdout)  # the report follows the document
    assert doc["speculators_version"] == "0.9.0"
    assert link.is_symlink()


def test_mode_owner_and_xattrs_are_kept_and_backups_numbered(old_config):
    os.chmod(old_config, 0o640)
    try:
        os.setxattr(old_config, "user.origin", b"hub")
        xattrs = True
    except OSError:
        xattrs = False
    original = old_config.read_bytes()
    for _ in range(3):
        run = run_limited("migrate", old_config, "--to", "0.9", "--in-place", "--backup")
        assert run.returncode == 0, run.output
        doc = json.loads(old_config.read_text())
        doc["speculators_version"] = "0.5.0"  # make the next run change it again
        old_config.write_text(json.dumps(doc))
    names = sorted(p.name for p in old_config.parent.iterdir())
    assert names == ["config.json", "config.json.bak", "config.json.bak.1", "config.json.bak.2"]
    assert (old_config.parent / "config.json.bak").read_bytes() == original
    for p in old_config.parent.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o640, p
        if xattrs:
            assert os.getxattr(p, "user.origin") == b"hub", p


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another owner needs root")
def test_owner_is_kept_when_run_as_root(old_config):
    os.chown(old_config, 4321, 4321)
    run = run_limited("migrate", old_config, "--to", "0.9", "--in-place", "--backup")
    assert run.returncode == 0, run.output
    for p in (old_config, old_config.with_name("config.json.bak")):
        assert (p.stat().st_uid, p.stat().st_gid) == (4321, 4321)


def test_a_name_near_name_max_can_be_rewritten(tmp_path, old_config):
    long = old_config.with_name("c" * 250 + ".json")
    old_config.rename(long)
    run = run_limited("migrate", long, "--to", "0.9", "--in-place")
    assert run.returncode == 0, run.output
    assert json.loads(long.read_text())["speculators_version"] == "0.9.0"


def test_missing_output_directories_are_created_and_a_file_in_the_way_is_a_usage_error(
    tmp_path, old_config
):
    run = run_limited("migrate", old_config, "--to", "0.9", "-o", tmp_path / "no" / "x.json")
    assert run.returncode == 0, run.output
    assert json.loads((tmp_path / "no" / "x.json").read_text())["speculators_version"] == "0.9.0"
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="file is not a directory"):
        outfile.write_output(tmp_path / "file" / "sub" / "x.json", "{}")
    assert (tmp_path / "file").read_text() == ""


def test_file_changed_since_read_is_not_overwritten(tmp_path):
    target = tmp_path / "c.json"
    target.write_text("new content from someone else")
    with pytest.raises(outfile.OutputError, match="changed while specfmt was working"):
        outfile.write_output(target, "{}", expect=b"what we read")
    assert target.read_text() == "new content from someone else"


def test_stale_temp_files_of_dead_processes_are_removed(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(proc.stdout)
    stale = tmp_path / f".specfmt-{dead}-0123abcd.tmp"
    stale.write_text("half")
    live = tmp_path / f".specfmt-{os.getppid()}-0123abcd.tmp"  # a running process owns it
    live.write_text("busy")
    outfile.write_output(tmp_path / "out.json", "{}")
    assert not stale.exists() and live.exists()


def test_a_concurrent_rewrite_of_the_same_file_stops_and_writes_nothing(old_config):
    import fcntl

    before = old_config.read_bytes()
    with open(old_config, "rb") as held:  # another run holds the file
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        run = run_limited("migrate", old_config, "--to", "0.9", "--in-place", "--backup")
    assert run.returncode == 3 and "another process is rewriting this file" in run.output
    assert old_config.read_bytes() == before
    assert sorted(p.name for p in old_config.parent.iterdir()) == ["config.json"]
