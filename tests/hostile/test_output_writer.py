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
import time
from pathlib import Path

import pytest

from spec_format.base.errors import UsageError
from spec_format.parsers import outfile
from tests.hostile.limits import ROOT, run_limited

EXAMPLE = ROOT / "examples" / "qwen3-8b-eagle3" / "config.json"


def _dead_pid() -> int:
    """The pid of a process that has exited."""
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


@pytest.fixture
def live_pid():
    """The pid of a running process of ours, which checking it must leave running (a
    mutant of the liveness check that sent it a real signal once hung up mutmut's own
    parent process, when these tests used their parent's pid)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield proc.pid
        with pytest.raises(subprocess.TimeoutExpired):  # a signal sent to it ends it by now
            proc.wait(timeout=0.5)
    finally:
        proc.kill()
        proc.wait()


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


def test_stale_temp_files_of_dead_processes_are_removed(tmp_path, live_pid):
    dead = _dead_pid()
    stale = tmp_path / f".specfmt-{dead}-0123abcd.tmp"
    stale.write_text("half")
    live = tmp_path / f".specfmt-{live_pid}-0123abcd.tmp"  # a running process owns it
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


# -- what the writer returns, folder outputs and directory outputs (in-process: the mutation
# sample of issue 38 runs these for the writer's functions) ------------------------------


def test_written_says_where_the_bytes_went_and_whether_the_file_was_replaced(tmp_path):
    target = tmp_path / "a" / "c.json"
    assert outfile.write_output(target, "{}") == outfile.Written(target, replaced=True)
    again = outfile.write_output(target, '{"x": 1}', backup=True)
    assert again == outfile.Written(target, replaced=True, backup=tmp_path / "a" / "c.json.bak")
    assert (tmp_path / "a" / "c.json.bak").read_text() == "{}"
    assert target.read_text() == '{"x": 1}'
    assert outfile.write_output(os.devnull, "{}") == outfile.Written(Path(os.devnull), False)


def test_write_into_creates_subfolders_and_refuses_paths_outside(tmp_path):
    written = outfile.write_into(tmp_path / "out", "sub/dir/f.json", "1")
    assert written == outfile.Written(tmp_path / "out/sub/dir/f.json", replaced=True)
    assert (tmp_path / "out/sub/dir/f.json").read_text() == "1"
    for bad in ("../f.json", "/abs.json", ""):
        with pytest.raises(UsageError, match="not a file name inside the output folder"):
            outfile.write_into(tmp_path / "out", bad, "1")
    (tmp_path / "out/file").write_text("x")
    with pytest.raises(UsageError, match=r"file is a regular file, not a directory"):
        outfile.write_into(tmp_path / "out", "file/f.json", "1")
    (tmp_path / "out/adir").mkdir()
    with pytest.raises(UsageError, match=r"adir is a directory, not a regular file"):
        outfile.write_into(tmp_path / "out", "adir", "1")


def test_only_temporary_files_of_dead_processes_are_cleaned(tmp_path, live_pid):
    pid = _dead_pid()
    stale = tmp_path / f".specfmt-{pid}-0123abcd.tmp"
    stale.write_text("half")
    a_dir = tmp_path / f".specfmt-{pid}-4567abcd.tmp"  # a directory of that name is not ours
    a_dir.mkdir()
    other = tmp_path / f"specfmt-{pid}-0123abcd.tmp"
    other.write_text("not a temporary of ours")
    assert outfile.clean_stale_temps(tmp_path) == [stale]
    assert a_dir.is_dir() and other.exists()
    assert outfile.clean_stale_temps(tmp_path / "missing") == []
    assert outfile.in_use(live_pid, time.time(), time.time())
    assert not outfile.in_use(os.getpid(), time.time(), time.time())  # ours: never busy
    assert not outfile.in_use(live_pid, 0.0, outfile.STALE_AFTER_S + 1.0)  # too old
    assert not outfile.in_use(pid, time.time(), time.time())  # dead


def test_a_directory_output_appears_whole_or_not_at_all(tmp_path):
    dest = tmp_path / "parents" / "ckpt"
    with outfile.directory_output(dest) as tmp:
        assert tmp.parent == dest.parent and tmp.name.startswith(".ckpt.specfmt-")
        assert tmp.name.endswith(".tmp") and not dest.exists()
        (tmp / "config.json").write_text("{}")
    assert (dest / "config.json").read_text() == "{}"
    assert os.listdir(dest.parent) == ["ckpt"]
    failed = tmp_path / "failed"
    with pytest.raises(RuntimeError), outfile.directory_output(failed) as tmp:
        (tmp / "config.json").write_text("{}")
        raise RuntimeError("interrupted")
    assert not failed.exists() and os.listdir(tmp_path) == ["parents"]


def test_a_directory_output_keeps_the_mode_of_an_empty_destination(tmp_path):
    dest = tmp_path / "ckpt"
    dest.mkdir(mode=0o700)
    os.chmod(dest, 0o750)
    with outfile.directory_output(dest) as tmp:
        (tmp / "f").write_text("1")
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o750 and (dest / "f").exists()


def test_stale_temporary_directories_of_a_conversion_are_removed(tmp_path, live_pid):
    dead = _dead_pid()
    stale = tmp_path / f".ckpt.specfmt-{dead}-0123abcd.tmp"
    stale.mkdir()
    busy = tmp_path / f".ckpt.specfmt-{live_pid}-0123abcd.tmp"
    busy.mkdir()
    other = tmp_path / f".other.specfmt-{dead}-0123abcd.tmp"
    other.mkdir()
    tmp = outfile.temp_dir_for(tmp_path / "ckpt")
    assert tmp.is_dir() and not stale.exists() and busy.exists() and other.exists()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d.mkdir() or (d / "f").write_text("x"), "the directory exists and is not empty"),
        (lambda d: d.write_text("x"), "exists and is not a directory; choose a new directory"),
    ],
)
def test_a_directory_output_never_goes_over_something(tmp_path, setup, message):
    dest = tmp_path / "ckpt"
    setup(dest)
    with pytest.raises(UsageError) as refused:
        outfile.check_destination(dest)
    assert str(refused.value).startswith(f"-o {dest}: {message}")
    outfile.check_destination(tmp_path / "new")  # absent: fine
    (tmp_path / "empty").mkdir()
    outfile.check_destination(tmp_path / "empty")  # empty: fine
