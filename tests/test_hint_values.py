"""Hints name what specfmt knows: the checked path instead of a placeholder (``CKPT``,
``CONFIG``), no format version for a config that has no key of the format, and "the same
format version" only when migrating keeps the config's declared one."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from spec_format.testing.safeailab import build_safeailab, safeailab_config, safeailab_shapes
from spec_format.testing.sources import build_zlab_dflash, zlab_dflash_config
from tests.common import EXAMPLES

_PLACEHOLDER = re.compile(r"\b(CKPT|CONFIG)\b")


@pytest.fixture
def third_party(tmp_path):
    sa = build_safeailab(tmp_path / "sa", safeailab_config(), safeailab_shapes())
    zl = build_zlab_dflash(tmp_path / "zl", zlab_dflash_config())
    return [sa, zl.path]


def _findings(output: str) -> list[dict]:
    doc = json.loads(output)
    docs = doc if isinstance(doc, list) else [doc]
    return [f for d in docs for fr in d["files"] for f in fr["findings"]]


def test_a_third_party_config_has_no_format_version(cli, third_party):
    """It was shown as "format 0.9 (inferred)": inferred from no key of the format."""
    doc = json.loads(cli("validate", *map(str, third_party), "--format", "json").output)
    for file in doc["files"]:
        assert file["format_version"] is None and file["version_source"] is None, file
    text = cli("validate", *map(str, third_party)).output
    assert "inferred" not in text and "format 0.9" not in text, text


def test_hints_fill_in_the_paths_they_know(cli, third_party):
    paths = [*map(str, third_party), *map(str, EXAMPLES)]
    findings = _findings(cli("validate", *paths, "--format", "json").output)
    s004 = [f for f in findings if f["rule"] == "S004"]
    assert len(s004) == 2
    for finding in s004:
        folder = finding["file"].removesuffix("/config.json")
        assert f"specfmt convert {folder}" in finding["message"], finding["message"]
    c006 = [f for f in findings if f["rule"] == "C006"]
    assert c006  # the examples have some
    for finding in c006:
        assert f"--verifier DIR -i {finding['file']}" in finding["message"], finding["message"]
    leftover = [f["message"] for f in findings if _PLACEHOLDER.search(f["message"])]
    assert not leftover, leftover


def test_standard_input_keeps_the_placeholder(third_party):
    import subprocess
    import sys

    text = (third_party[1] / "config.json").read_text(encoding="utf-8")
    argv = [sys.executable, "-m", "spec_format", "validate", "-", "--format", "json"]
    result = subprocess.run(argv, input=text, capture_output=True, text=True)
    (finding,) = [f for f in _findings(result.stdout) if f["rule"] == "S004"]
    assert "specfmt convert CKPT" in finding["message"]


def test_same_format_version_only_when_it_is(cli, tmp_path):
    example = next(e for e in EXAMPLES if e.name == "gemma-4-31b-dflash")  # M006 and C009
    draft = tmp_path / "draft"
    shutil.copytree(example, draft)
    declared = _findings(cli("validate", str(draft), "--format", "json").output)
    m006 = next(f for f in declared if f["rule"] == "M006")
    assert "in the same format version" in m006["message"]
    asked = _findings(
        cli("validate", str(draft), "--format-version", "0.6", "--format", "json").output
    )
    for finding in asked:
        assert "same format version" not in finding["message"], finding["message"]
    m006 = next(f for f in asked if f["rule"] == "M006")
    assert "format 0.6, as it was checked" in m006["message"]


@pytest.mark.parametrize(
    ("layers", "ids"),
    [(3, None), (4, None), (5, None), (6, None), (7, [2, 3, 4]), (36, [2, 18, 33]), (True, None)],
)
def test_reader_default_aux_ids_are_three_distinct_increasing_layers_or_none(layers, ids):
    """The readers' guess (2, L//2, L-3) is offered only where it names three distinct
    layers in order: for 4 to 6 layers it repeats or reverses one (4 layers: [2, 2, 1])."""
    from spec_format.facts.effective import reader_default_aux_ids

    assert reader_default_aux_ids(layers) == ids
