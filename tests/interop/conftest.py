"""Interop tests run only when asked for (``pytest -m interop`` or SPECFMT_INTEROP=1), so the
normal suite stays fast even where the release environments exist."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config, items):
    wanted = "interop" in (config.getoption("-m") or "") or os.environ.get("SPECFMT_INTEROP") == "1"
    if wanted:
        return
    skip = pytest.mark.skip(
        reason="interop tests run with `pytest -m interop` (envs: scripts/interop-envs.sh)"
    )
    for item in items:
        if "interop" in item.keywords:
            item.add_marker(skip)
