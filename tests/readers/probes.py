"""One probe process per reader release per session, shared by every module of the group.

Most of a probe's time is importing the release (vLLM with torch and transformers), so each
release is started once: every test module registers what it asks a release (``ask``), and
the first test that wants an answer (``answers``) runs every release the session's selected
tests need, each with all the modules' requests, two processes at a time (the 2-core CI
machine), the longest first. vLLM releases run release_probe.py (config reading, the
drafter's weight loading, positions), speculators releases tests/interop/probe.py (config
reading). A request whose environment is missing is left out; the test that needs it skips
with the reason, or fails under CI=true (each module checks its own environment).

Request forms (one dict each): ``{"config": {...}}`` for any release, and for vLLM also
``{"draft": DIR, "verifier": DIR}`` (weights_probe.py) and ``{"positions": DIR}``.
"""

from __future__ import annotations

import json
import resource
import subprocess
import time
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from spec_format.facts import readers
from tests.readers import oracle

RELEASE_PROBE = Path(__file__).resolve().parent / "release_probe.py"
#: seconds one release's process may take (import, a few hundred configs, the drafts)
TIMEOUT = 1800
#: rid, session directory -> request key -> request
Requests = Callable[[str, Path], dict[Hashable, dict]]


@dataclass(frozen=True)
class _Ask:
    requests: Requests
    releases: Callable[[], Iterable[str]] | None


_ASKS: dict[str, _Ask] = {}


def ask(module: str, requests: Requests, releases: Callable[[], Iterable[str]] | None = None):
    """Register what the test module ``module`` asks: ``requests(rid, directory)`` gives the
    requests for one release (files they name go under ``directory``, one per session), for
    the releases ``releases()`` names, or, without it, those its selected tests take as
    their ``rid`` parameter."""
    _ASKS[module] = _Ask(requests, releases)


def _weights(request: dict) -> bool:
    return "draft" in request


def _ready(rel: readers.Release, request: dict) -> bool:
    if not oracle.env_ready(rel):
        return False
    return not _weights(request) or (oracle.env_path(rel) / ".model-ok").is_file()


def run(rel: readers.Release, requests: list[dict]) -> list[dict]:
    """The release's answers to ``requests``, in order (one process for all of them)."""
    if rel.name != "vllm":
        return oracle.run(rel, [r["config"] for r in requests])
    target = oracle.env_path(rel)
    weights = any(_weights(r) for r in requests)
    path = [target / "src", target / "deps"] + ([target / "mdeps"] if weights else [])
    proc = subprocess.run(
        [str(oracle.BASE_PYTHON), str(RELEASE_PROBE)] + (["--weights"] if weights else []),
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=oracle.probe_env(":".join(map(str, path))),
    )
    if proc.returncode != 0:
        raise RuntimeError(f"release probe for {rel.id} failed:\n{proc.stderr[-3000:]}")
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(answers) != len(requests):
        raise RuntimeError(
            f"release probe for {rel.id} answered {len(answers)} of {len(requests)} requests:\n"
            f"{proc.stderr[-3000:]}"
        )
    return answers


def _cost(rid: str, requests: list[dict]) -> float:
    """A rough number of seconds, to start the longest jobs first."""
    start = 30.0 if rid.startswith("vllm==") else 15.0
    return start + (10.0 if any(map(_weights, requests)) else 0.0) + 0.01 * len(requests)


class Session:
    """The answers of one pytest session (conftest.py starts it)."""

    def __init__(self, items: list, directory: Callable[[], Path]):
        self._items = items
        self._directory = directory
        self._dir: Path | None = None
        self._answers: dict[str, dict[tuple[str, Hashable], dict]] | None = None
        self._errors: dict[str, str] = {}
        self._mine: dict[tuple[str, str], dict[Hashable, dict]] = {}
        self.seconds: dict[str, float] = {}  # release -> wall seconds of its process
        self.wall = self.cpu = 0.0  # the planned probes together: wall and CPU seconds

    def directory(self) -> Path:
        if self._dir is None:
            self._dir = self._directory()
        return self._dir

    def _wanted(self) -> dict[str, set[str]]:
        """module -> the releases its selected tests ask about."""
        out: dict[str, set[str]] = {}
        for item in self._items:
            module = getattr(item.module, "__name__", None)
            if module not in _ASKS:
                continue
            rids = out.get(module)
            if rids is None:
                found = _ASKS[module].releases
                rids = out[module] = set(found()) if found else set()
            if _ASKS[module].releases is None:
                rid = getattr(getattr(item, "callspec", None), "params", {}).get("rid")
                if rid is not None:
                    rids.add(rid)
        return out

    def _requests(self, module: str, rid: str) -> dict[tuple[str, Hashable], dict]:
        rel = readers.release(*rid.split("=="))
        asked = _ASKS[module].requests(rid, self.directory())
        return {(module, k): r for k, r in asked.items() if _ready(rel, r)}

    def _run(self, rid: str, jobs: dict[tuple[str, Hashable], dict]) -> None:
        # recording requests get a process of their own: a release reads some fields once per
        # process and then caches (vLLM's ModelConfig helpers), so what a recording sees must
        # not depend on what other modules asked first (tests/readers/reads.py records alone)
        recording = {k: r for k, r in jobs.items() if r.get("record")}
        rest = {k: r for k, r in jobs.items() if not r.get("record")}
        for part in (recording, rest):
            if part and rid not in self._errors:
                self._run_one(rid, part)

    def _run_one(self, rid: str, jobs: dict[tuple[str, Hashable], dict]) -> None:
        # the config reader first, as in a process of its own; the drafts after it. A request
        # two modules make (the same config) is asked once.
        keys = sorted(jobs, key=lambda k: _weights(jobs[k]))
        texts = [json.dumps(jobs[k], sort_keys=True) for k in keys]
        unique = list(dict.fromkeys(texts))
        start = time.monotonic()
        try:
            got = run(readers.release(*rid.split("==")), [json.loads(t) for t in unique])
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            self._errors[rid] = str(exc)
            return
        finally:
            self.seconds[rid] = self.seconds.get(rid, 0.0) + time.monotonic() - start
        by_text = dict(zip(unique, got, strict=True))
        self._answers.setdefault(rid, {}).update(
            (k, by_text[t]) for k, t in zip(keys, texts, strict=True)
        )

    def _start(self) -> None:
        self._answers = {}
        plan: dict[str, dict[tuple[str, Hashable], dict]] = {}
        for module, rids in self._wanted().items():
            for rid in rids:
                plan.setdefault(rid, {}).update(self._requests(module, rid))
        order = sorted(
            (rid for rid in plan if plan[rid]),
            key=lambda rid: -_cost(rid, list(plan[rid].values())),
        )
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda rid: self._run(rid, plan[rid]), order))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.wall = time.monotonic() - start
        self.cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

    def answers(self, module: str, rid: str) -> dict[Hashable, dict]:
        """request key -> the release's answer, for the module's requests to ``rid``."""
        if (module, rid) in self._mine:
            return self._mine[module, rid]
        if self._answers is None:
            self._start()
        if rid in self._errors:
            raise RuntimeError(self._errors[rid])
        if not any(k[0] == module for k in self._answers.get(rid, {})):
            # not planned (an environment built while the session ran)
            jobs = self._requests(module, rid)
            if jobs:
                self._run(rid, jobs)
                if rid in self._errors:
                    raise RuntimeError(self._errors[rid])
        mine = {k[1]: a for k, a in self._answers.get(rid, {}).items() if k[0] == module}
        self._mine[module, rid] = mine
        return mine


_SESSION: list[Session] = []


def begin(session: Session) -> None:
    _SESSION[:] = [session]


def answers(module: str, rid: str) -> dict[Hashable, dict]:
    """request key -> answer of release ``rid`` to what ``module`` asks (see ``ask``)."""
    return _SESSION[0].answers(module, rid)


def directory() -> Path:
    """The session's directory for files that requests name."""
    return _SESSION[0].directory()
