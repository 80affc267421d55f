"""Tiny SafeAILab EAGLE-3 sources and their verifier, built per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec_format.testing import builder, safeailab


class Made:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.verifier = root / "verifier"
        builder.build_verifier(self.verifier, safeailab.verifier_config())

    def source(self, name: str = "src", overrides=None, *, extra=None, drop=(), **shape_kw):
        config = safeailab.safeailab_config(overrides=overrides)
        shapes = dict(safeailab.safeailab_shapes(**shape_kw))
        shapes.update(extra or {})
        for n in drop:
            shapes.pop(n)
        return safeailab.build_safeailab(self.root / name, config, shapes)


@pytest.fixture
def made(tmp_path) -> Made:
    return Made(tmp_path)


def tree(path: Path) -> list[str]:
    """Every entry below ``path`` (what a failed conversion must not leave)."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))
