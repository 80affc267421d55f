"""Shared helpers: build a tiny checkpoint, validate it, look at the rule ids found."""

from __future__ import annotations

import pytest

from spec_format.runner.validation import ValidateOptions, validate
from spec_format.testing.builder import build_checkpoint, tiny_config


def findings(report, prefix: str = ""):
    return [f for fr in report.files for f in fr.findings if f.rule.startswith(prefix)]


def rule_ids(report, prefixes: str = "HWDV") -> set[str]:
    """Rule ids of the weights-related layers (config-layer findings are the lead's)."""
    return {f.rule for fr in report.files for f in fr.findings if f.rule[0] in prefixes}


def check(path, **options):
    return validate([str(path)], ValidateOptions(**options))


@pytest.fixture
def build(tmp_path):
    """``build(model_type, overrides=None, **builder_kwargs) -> checkpoint directory``."""
    counter = iter(range(10_000))

    def _build(model_type: str, overrides=None, **kwargs):
        config = tiny_config(model_type, overrides)
        return build_checkpoint(tmp_path / f"{model_type}-{next(counter)}", config, **kwargs).path

    return _build
