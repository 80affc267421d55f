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

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


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
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)

    child_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    child_env.pop("SPECFMT_DEBUG", None)
    if user is not None:  # no caches in root's home
        child_env.update(HOME="/tmp", PYTHONDONTWRITEBYTECODE="1", HF_HOME="/tmp/specfmt-hf-home")
    proc = subprocess.run(
        [sys.executable, "-m", "spec_format", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=child_env,
        cwd=ROOT,
        preexec_fn=limit,
        timeout=timeout_s,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
