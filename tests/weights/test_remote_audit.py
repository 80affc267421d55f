"""An audit of many hf:// drafts (``specfmt validate hf://ORG/A hf://ORG/B ...``) fetches
``--jobs`` drafts at once (spec_format/runner/fetch_ahead.py) against the fake Hub on
127.0.0.1: the same report as one draft at a time, in the same order; connections reused;
a draft whose Hub stalls holds no other beyond its deadline; a signal ends the run at once
with what it finished."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("huggingface_hub")

from spec_format.render import render  # noqa: E402
from spec_format.runner.validation import ValidateOptions, validate  # noqa: E402
from spec_format.testing.builder import build_checkpoint, tiny_config  # noqa: E402
from tests.hostile.limits import ROOT, child_env, run_limited  # noqa: E402
from tests.weights.fake_hub import FakeHub, running  # noqa: E402


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", "hf_fake_token_for_the_test_server")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    with running(FakeHub()) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        yield server


@pytest.fixture(scope="module")
def drafts(tmp_path_factory):
    """A valid draft (weights over 64 KiB: the header's range answer is cut from a larger
    file, as on the Hub), a broken one, and one without config.json."""
    root = tmp_path_factory.mktemp("drafts")
    ok = build_checkpoint(root / "ok", tiny_config("eagle3"), data="zeros").path
    assert (ok / "model.safetensors").stat().st_size > 128 * 1024
    broken = build_checkpoint(
        root / "broken", tiny_config("eagle3"), drop=["norm.weight"], data="zeros"
    ).path
    bare = build_checkpoint(root / "bare", tiny_config("eagle3"), data="zeros").path
    (bare / "config.json").unlink()
    return {"ok": ok, "broken": broken, "bare": bare}


def json_report(urls: list[str], **options) -> str:
    out = io.StringIO()
    render(validate(urls, ValidateOptions(**options)), "json", out)
    return out.getvalue()


def test_an_audit_reports_what_a_sequential_run_reports_in_the_same_order(hub, drafts):
    urls = []
    for i in range(12):
        kind = ("ok", "broken", "bare", "missing")[i % 4]
        if kind != "missing":
            hub.add(f"org/d{i}", drafts[kind])
        urls.append(f"hf://org/d{i}")
    sequential = json_report(urls, jobs=1)
    for jobs in (3, 16):
        assert json_report(urls, jobs=jobs) == sequential
    files = json.loads(sequential)["files"]
    assert [f["path"] for f in files] == urls
    assert [f["status"] for f in files[:4]] == ["ok", "fail", "unreadable", "unreadable"]


def test_each_range_answer_is_read_to_its_end_so_the_connection_is_reused(hub, drafts):
    """Eight drafts one at a time: one connection to the Hub and one to the file host, not
    one per draft (a range answer left unread closes its connection)."""
    for i in range(8):
        hub.add(f"org/d{i}", drafts["ok"])
    json_report([f"hf://org/d{i}" for i in range(8)], jobs=1)
    assert len([r for r in hub.log if r.server == "cdn"]) == 8
    assert hub.connections["hub"] <= 2 and hub.connections["cdn"] <= 2, hub.connections
    hub.connections.update(hub=0, cdn=0)
    json_report([f"hf://org/d{i}" for i in range(8)], jobs=4)
    assert hub.connections["hub"] <= 5 and hub.connections["cdn"] <= 5, hub.connections


def test_a_stalled_draft_holds_no_other_beyond_its_deadline(hub, drafts, monkeypatch):
    """Four drafts whose listing never answers among four that do: each stalled one ends at
    its own 2-second deadline, all at once, not 8 s one after the other; the others pass."""
    monkeypatch.setenv("SPECFMT_HF_DEADLINE", "2")
    urls = []
    for i in range(8):
        hub.add(f"org/d{i}", drafts["ok"])
        if i % 2 == 0:
            hub.stall_repos.add(f"org/d{i}")
        urls.append(f"hf://org/d{i}")
    start = time.monotonic()
    report = validate(urls, ValidateOptions(jobs=8))
    elapsed = time.monotonic() - start
    statuses = [f.status.value for f in report.files]
    assert statuses == ["unreadable", "ok"] * 4, statuses
    assert all("deadline" in report.files[i].findings[0].message for i in (0, 2, 4, 6))
    assert 2 <= elapsed < 5, elapsed


def test_a_signal_ends_an_audit_at_once_with_what_it_finished(hub, drafts):
    """Two drafts checked, the third's Hub stalled under a 60-second deadline: SIGTERM ends
    the run within a few seconds, its JSON closed with the two reports and
    ``"interrupted": true``, exit 143."""
    for i in range(3):
        hub.add(f"org/d{i}", drafts["ok"])
    hub.stall_repos.add("org/d2")
    env = child_env(
        {
            "HF_ENDPOINT": hub.endpoint,
            "HF_HUB_OFFLINE": "0",
            "HF_TOKEN": "hf_fake_token_for_the_test_server",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "SPECFMT_HF_DEADLINE": "60",
        }
    )
    args = ["validate", "--format", "json", *(f"hf://org/d{i}" for i in range(3))]
    proc = subprocess.Popen(
        [sys.executable, "-m", "spec_format", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        cdn = ("/cdn/org/d0/", "/cdn/org/d1/")
        waited = time.monotonic()
        while not (
            "/api/models/org/d2/tree/main" in hub.started  # stalled: never answered
            and all(any(r.path.startswith(p) for r in hub.log) for p in cdn)
        ):
            assert proc.poll() is None and time.monotonic() - waited < 60, hub.log
            time.sleep(0.05)
        time.sleep(0.5)  # the two fetched drafts are checked (a loaded machine: slowly)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        ended = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert ended < 5, ended
    doc = json.loads(out)
    assert doc["interrupted"] is True
    assert [f["path"] for f in doc["files"]] == ["hf://org/d0", "hf://org/d1"]
    assert "Traceback" not in err


@pytest.mark.parametrize("jobs", ["0", "-1", "65", "100000000000000000000", "two"])
def test_jobs_out_of_range_is_a_usage_error(jobs, drafts):
    run = run_limited("validate", "--jobs", jobs, drafts["ok"], memory_mb=1024, cpu_s=30)
    assert run.returncode == 2, run.output
    assert "jobs" in run.stderr and "Traceback" not in run.output
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_jobs_of_the_python_api_are_checked():
    from spec_format.base.errors import UsageError

    for jobs in (0, -3, 65, 2.0, "4", True):
        with pytest.raises(UsageError, match="jobs"):
            ValidateOptions(jobs=jobs)
    assert ValidateOptions(jobs=64).jobs == 64


def test_an_audit_shows_its_progress_on_a_terminal_without_cutting_the_report(hub, drafts):
    """A bar counts the drafts on a terminal and is taken off while a report is written
    (each report's first line starts a line of its own); piped, no bar."""
    from tests.test_terminal import ANSI, in_terminal, piped

    hub.latency_s = 0.05
    for i in range(6):
        hub.add(f"org/d{i}", drafts["broken" if i % 2 else "ok"])
    env = {"HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0", "HF_TOKEN": "hf_fake_token"}
    env["HF_HUB_DISABLE_TELEMETRY"] = "1"
    urls = [f"hf://org/d{i}" for i in range(6)]
    code, raw = in_terminal("validate", "-j", "2", *urls, env=env)
    assert code == 1
    pieces = [p for line in ANSI.sub("", raw).split("\n") for p in line.split("\r")]
    assert any(p.startswith("checking 6 hf:// drafts") for p in pieces), pieces
    for i in (1, 3, 5):
        assert f"fail hf://org/d{i}: eagle3, format 0.9 (declared)" in pieces, pieces
    result = piped("validate", "-j", "2", *urls, env=env)
    assert result.returncode == 1 and "hf:// drafts" not in result.stderr + result.stdout


def test_an_audit_holds_a_bounded_number_of_drafts(hub, drafts):
    """Peak memory of a 400-draft audit is about that of 40 drafts: the drafts read ahead
    are at most twice --jobs, and each reported draft is dropped (the CLI in a child,
    its peak RSS from the kernel's accounting)."""
    hub.add("org/d0", drafts["ok"])
    for i in range(1, 400):
        hub.repos[f"org/d{i}"] = hub.repos["org/d0"]
    env = child_env(
        {"HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0", "HF_TOKEN": "hf_fake_token"}
    )
    env["HF_HUB_DISABLE_TELEMETRY"] = "1"
    peaks = {}
    for n in (40, 400):
        args = ["validate", "-q", "-j", "16", *(f"hf://org/d{i}" for i in range(n))]
        proc = subprocess.Popen(
            [sys.executable, "-m", "spec_format", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
        )
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0 and f"{n} inputs checked".encode() in out
        peaks[n] = usage.ru_maxrss / 1024  # MiB
    assert peaks[400] - peaks[40] < 16, peaks


def test_an_audit_without_threads_fetches_in_turn(hub, drafts, monkeypatch):
    """Where no worker thread can start (a tight ``ulimit -v``), each draft is fetched in
    the main thread as it is checked: the same report."""
    import threading

    for i in range(4):
        hub.add(f"org/d{i}", drafts["ok" if i % 2 else "broken"])
    urls = [f"hf://org/d{i}" for i in range(4)]
    sequential = json_report(urls, jobs=1)

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    assert json_report(urls, jobs=8) == sequential
