"""Run the real ``specfmt`` in a child process under ``resource`` limits.

Memory and CPU bounds are asserted by the kernel, not by timing: the child gets an
address-space limit (``RLIMIT_AS``) and a CPU-seconds limit (``RLIMIT_CPU``); going over
either kills it (MemoryError / SIGXCPU), which the test sees as a failed run. The wall-clock
``timeout`` is only a safety net so that a broken build cannot hang the suite.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    #: the child's CPU seconds (user + system), from the kernel's accounting
    cpu_s: float = 0.0

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def set_limits(memory_mb: int, cpu_s: int) -> None:
    """In the child, before exec: RLIMIT_AS of ``memory_mb`` and RLIMIT_CPU of ``cpu_s``."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a specfmt child: this checkout first, no SPECFMT_DEBUG."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra or {})}
    env.pop("SPECFMT_DEBUG", None)
    return env


def run_limited(
    *args: str | os.PathLike[str],
    memory_mb: int = 1024,
    cpu_s: int = 30,
    env: dict[str, str] | None = None,
    timeout_s: float = 120,
    user: int | None = None,
) -> Run:
    """``user``: run as this uid and gid (needs root; for tests of permissions, which the
    kernel does not enforce for root)."""

    def limit() -> None:
        set_limits(memory_mb, cpu_s)
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)

    environ = child_env(env)
    if user is not None:  # no caches in root's home
        environ.update(HOME="/tmp", PYTHONDONTWRITEBYTECODE="1", HF_HOME="/tmp/specfmt-hf-home")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "spec_format", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=environ,
        cwd=ROOT,
        preexec_fn=limit,
        timeout=timeout_s,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Run(proc.returncode, proc.stdout, proc.stderr, cpu)
