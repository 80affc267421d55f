"""Reader tests run only when asked for (``pytest -m readers``, SPECFMT_READERS=1 or
SPECFMT_INTEROP=1), like the interop group; a reader environment that is missing skips its
tests with the reason, except in CI (CI=true), where it fails them."""

from __future__ import annotations

import os

import pytest


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
