"""Reader tests run only when asked for (``pytest -m readers``, SPECFMT_READERS=1 or
SPECFMT_INTEROP=1), like the interop group; a reader environment that is missing skips its
tests with the reason, except in CI (CI=true), where it fails them. Every release the
selected tests ask about is probed once per session (tests/readers/probes.py)."""

from __future__ import annotations

import os

import pytest

from tests.readers import probes


def pytest_collection_modifyitems(config, items):
    wanted = (
        "readers" in (config.getoption("-m") or "")
        or os.environ.get("SPECFMT_READERS") == "1"
        or os.environ.get("SPECFMT_INTEROP") == "1"
    )
    if wanted:
        return
    skip = pytest.mark.skip(
        reason="reader tests run with `pytest -m readers` (envs: scripts/reader-envs.sh)"
    )
    for item in items:
        if item.get_closest_marker("readers"):
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _probe_session(request, tmp_path_factory):
    """The session's probes: run on the first answer a test asks for, then shared."""
    session = probes.Session(request.session.items, lambda: tmp_path_factory.mktemp("probes"))
    probes.begin(session)
    yield session
    if session.seconds:
        slowest = sorted(session.seconds.items(), key=lambda kv: -kv[1])[:3]
        request.config.stash[_TIMES] = (
            f"{len(session.seconds)} release probes, {session.wall:.0f} s wall "
            f"(two at a time), {session.cpu:.0f} s CPU; slowest "
            + ", ".join(f"{rid} {s:.0f} s" for rid, s in slowest)
        )


_TIMES = pytest.StashKey[str]()


def pytest_terminal_summary(terminalreporter, config):
    if _TIMES in config.stash:
        terminalreporter.write_line(f"readers: {config.stash[_TIMES]}")
