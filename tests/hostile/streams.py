"""Run the real ``specfmt`` in a child process with its standard streams and limits set up
as a hostile environment would: stdout onto ``/dev/full`` or closed, stdin closed or fed
from a file, a file-size limit that fails writes as a full disk does."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .limits import ROOT, Run, child_env, set_limits

PYTHON = [sys.executable, "-m", "spec_format"]


def run_streams(
    *args: str | os.PathLike[str],
    stdout: str = "pipe",
    stdin: str | Path = "devnull",
    stderr: str = "pipe",
    fsize: int | None = None,
    memory_mb: int = 1024,
    cpu_s: int = 60,
    timeout_s: float = 120,
) -> Run:
    """``stdout``: "pipe", "full" (``/dev/full``) or "closed"; ``stdin``: "devnull",
    "closed" or a file to read; ``stderr``: "pipe" or "closed"; ``fsize``: RLIMIT_FSIZE in bytes (writes past it fail with
    EFBIG, SIGXFSZ ignored, as a full disk fails them with ENOSPC)."""
    close = []
    if stdout == "closed":
        close.append(1)
    if stdin == "closed":
        close.append(0)
    if stderr == "closed":
        close.append(2)

    def setup() -> None:
        set_limits(memory_mb, cpu_s)
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        for fd in close:
            os.close(fd)

    env = child_env()
    out_file = open(os.devnull if stdout != "full" else "/dev/full", "w")  # noqa: SIM115
    in_file = (
        open(stdin, "rb")  # noqa: SIM115
        if stdin not in ("devnull", "closed")
        else open(os.devnull, "rb")  # noqa: SIM115
    )
    try:
        proc = subprocess.run(
            [*PYTHON, *(str(a) for a in args)],
            stdin=in_file,
            stdout=subprocess.PIPE if stdout == "pipe" else out_file,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            preexec_fn=setup,
            timeout=timeout_s,
            check=False,
        )
    finally:
        out_file.close()
        in_file.close()
    text = (proc.stdout or b"").decode("utf-8", "replace")
    return Run(proc.returncode, text, (proc.stderr or b"").decode("utf-8", "replace"))


def run_measured(
    *args: str | os.PathLike[str], cpu_s: int = 60, memory_mb: int = 1024, timeout_s: float = 180
) -> tuple[Run, float, int]:
    """Run under RLIMIT_CPU/RLIMIT_AS and return the run, the CPU seconds (user + system)
    and the peak resident memory in KiB the kernel accounted to that one child."""

    def setup() -> None:
        set_limits(memory_mb, cpu_s)

    env = child_env()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            [*PYTHON, *(str(a) for a in args)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
            cwd=ROOT,
            preexec_fn=setup,
        )
        deadline = time.monotonic() + timeout_s
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.05)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        run = Run(
            child.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
        )
    return run, usage.ru_utime + usage.ru_stime, usage.ru_maxrss
