"""The documented Python API: its examples run, and the names users import exist."""

from __future__ import annotations

import doctest
import re

import pytest
from conftest import EXAMPLES, ROOT

import spec_format
from spec_format import api, export


@pytest.mark.parametrize("module", [api, export], ids=lambda m: m.__name__)
def test_docstring_examples_run(module, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples name paths relative to the repository root
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module) if t.examples]
    assert tests, f"{module.__name__} has no examples"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


def test_guide_examples_run(monkeypatch):
    """The ``pycon`` blocks of the Python API guide, one session, run from the root."""
    monkeypatch.chdir(ROOT)
    page = ROOT / "docs" / "guide" / "python-api.md"
    blocks = re.findall(r"^```pycon\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)
    assert blocks, f"{page.name} has no examples"
    parser = doctest.DocTestParser()
    test = parser.get_doctest("\n".join(blocks), {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted and result.failed == 0, (
        f"{result.failed} of {result.attempted} examples failed"
    )


def test_public_names():
    for name in spec_format.__all__:
        assert getattr(spec_format, name) is not None, name
    assert {"validate", "load_config", "Finding", "Report", "FileReport"} <= set(
        spec_format.__all__
    )


def test_api_functions_are_the_library_functions():
    from spec_format.migration import MigrationResult, migrate
    from spec_format.validation import ValidateOptions, validate

    assert spec_format.validate is validate and spec_format.migrate is migrate
    assert ValidateOptions is spec_format.ValidateOptions
    assert isinstance(spec_format.validate([EXAMPLES[0]]), spec_format.Report)
    assert isinstance(spec_format.migrate({"speculators_model_type": "mtp"}), MigrationResult)
    with pytest.raises(AttributeError):
        spec_format.no_such_name  # noqa: B018


def test_importing_the_package_is_cheap():
    import subprocess
    import sys

    code = "import sys, spec_format; print(sorted(m for m in ('jsonschema', 'pydantic') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_load_config_returns_the_typed_model(example):
    config = spec_format.load_config(example)
    report = spec_format.validate([example]).files[0]
    assert type(config) is spec_format.model_class(report.format_version, report.model_type)
    assert config.speculators_model_type == report.model_type


def test_load_config_errors(tmp_path):
    from spec_format.errors import InputError

    with pytest.raises(InputError):
        spec_format.load_config(tmp_path / "missing.json")
    bad = tmp_path / "config.json"
    bad.write_text('{"speculators_model_type": "eagle3",}', encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        spec_format.load_config(bad)
    with pytest.raises(spec_format.ConfigInvalid) as info:
        spec_format.load_config({"speculators_model_type": "eagle3"})
    assert {f.rule for f in info.value.report.findings} == {"S101"}
    assert info.value.exit_code == 1
