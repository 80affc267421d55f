"""Fault injection for ``--in-place``: kill the rewrite at each of its system calls.

Run as a script (``python kill_rewrite.py DIR``): for N = 1, 2, ... it forks a child that
runs ``specfmt migrate DIR/config.json --in-place --backup`` with the N-th call of the
writer's system calls (open, write, fsync, fchmod, fchown, setxattr, link, replace, unlink,
close) replaced by SIGKILL, until a child finishes without reaching call N. After each
kill it records what the directory holds, then runs an ordinary rewrite of another file in
the same directory (the "next run") and records what is left. Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

CALLS = (
    "open",
    "write",
    "fsync",
    "fchmod",
    "fchown",
    "setxattr",
    "link",
    "replace",
    "unlink",
    "close",
)


def _arm(limit: int) -> None:
    """Make the ``limit``-th writer system call kill this process (only inside the writer)."""
    from spec_format.parsers import outfile

    state = {"inside": False, "count": 0}
    for name in CALLS:
        real = getattr(os, name)

        def wrapped(*args, _real=real, _name=name, **kwargs):
            if state["inside"]:
                state["count"] += 1
                if state["count"] == limit:
                    os.kill(os.getpid(), signal.SIGKILL)
            return _real(*args, **kwargs)

        setattr(os, name, wrapped)
    real_write_output = outfile.write_output

    def write_output(*args, **kwargs):
        state["inside"] = True
        try:
            return real_write_output(*args, **kwargs)
        finally:
            state["inside"] = False

    outfile.write_output = write_output
    import spec_format.rewrites.rewrite as rewrite

    rewrite.write_output = write_output


def _cli(*args: str) -> int:
    from spec_format.cli.app import app

    try:
        app(list(args), standalone_mode=False)
    except SystemExit as exc:  # pragma: no cover - typer.Exit is returned, not raised
        return int(exc.code or 0)
    return 0


def main(workdir: Path) -> list[dict]:
    import spec_format.cli.app  # noqa: F401 - imported once, before the forks

    pristine = workdir / "pristine"
    results = []
    for n in range(1, 200):
        case = workdir / f"case{n}"
        shutil.copytree(pristine, case)
        original = (case / "config.json").read_bytes()
        pid = os.fork()
        if pid == 0:  # the child: armed, then the real CLI
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            _arm(n)
            code = _cli(
                "migrate", str(case / "config.json"), "--to", "0.9", "--in-place", "--backup"
            )
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        after_kill = sorted(p.name for p in case.iterdir())
        content = (case / "config.json").read_bytes()
        backups = {p.name: p.read_bytes() == original for p in case.glob("config.json.bak*")}
        # the next run, on another file in the same directory, cleans up what the kill left
        _cli("migrate", str(case / "other.json"), "--to", "0.9", "--in-place")
        results.append(
            {
                "n": n,
                "killed": killed,
                "exit": None if killed else os.WEXITSTATUS(status),
                "after_kill": after_kill,
                "original_intact": content == original,
                "parses": _parses(content),
                "backups_hold_original": backups,
                "after_next_run": sorted(p.name for p in case.iterdir()),
            }
        )
        if not killed:
            break
    return results


def _parses(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
