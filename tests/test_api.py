"""The documented Python API: its examples run, and the names users import exist."""

from __future__ import annotations

import doctest
import re

import pytest

import spec_format
from spec_format import api
from spec_format.facts import export
from tests.common import EXAMPLES, ROOT


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
    from spec_format.rewrites.migration import MigrationResult, migrate
    from spec_format.runner.validation import ValidateOptions, validate

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
    from spec_format.base.errors import InputError

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


def test_validate_takes_one_path_or_an_iterable(tmp_path):
    one = spec_format.validate(str(EXAMPLES[0]))
    assert [f.path for f in one.files] == [str(EXAMPLES[0])]
    assert [f.path for f in spec_format.validate(EXAMPLES[0]).files] == [str(EXAMPLES[0])]
    several = spec_format.validate(p for p in EXAMPLES[:2])  # a generator
    assert len(several.files) == 2


@pytest.mark.parametrize(
    "ignore",
    [
        ["C009", "M004"],
        ("c009", "m004"),
        {"C009", "M004"},
        "C009,M004",
        frozenset({"C009", "M004"}),
    ],
)
def test_rule_ids_in_any_collection(ignore):
    options = spec_format.ValidateOptions(ignore=ignore)
    assert options.ignore == frozenset({"C009", "M004"})
    found = spec_format.validate(EXAMPLES[0], options).files[0].findings
    assert not {f.rule for f in found} & {"C009", "M004"}


def test_rule_ids_are_checked_when_the_options_are_made():
    from spec_format.base.errors import UsageError

    with pytest.raises(UsageError, match=r"ignore: unknown rule id 'C999'"):
        spec_format.ValidateOptions(ignore=["C999"])
    with pytest.raises(UsageError, match=r"select: 1 is not a rule id"):
        spec_format.ValidateOptions(select=[1])
    with pytest.raises(UsageError, match="profile 'strictest': expected one of legacy"):
        spec_format.ValidateOptions(profile="strictest")
    assert spec_format.ValidateOptions(profile="strict").profile is spec_format.Profile.STRICT
    assert spec_format.ValidateOptions(engines="vllm==0.32.0").engines == ("vllm==0.32.0",)


def test_migrate_and_fix_take_a_directory_a_file_or_a_dict():
    import json

    from spec_format.base.errors import InputError, MigrationRefused

    directory = ROOT / "examples" / "qwen3-8b-eagle3"
    data = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    docs = [spec_format.migrate(s).document for s in (directory, str(directory / "config.json"))]
    assert docs[0] == docs[1] == spec_format.migrate(data).document
    with pytest.raises(MigrationRefused, match="the config is a list, not a JSON object"):
        spec_format.migrate([])
    with pytest.raises(InputError, match="a directory with no config.json"):
        spec_format.migrate(ROOT / "docs")
    fixed = spec_format.fix(ROOT / "examples" / "qwen3-8b-dflash", spec_format.FixOptions())
    assert isinstance(fixed, spec_format.FixResult) and fixed.detection.line == "0.5"


def test_fix_is_public_and_lazy():
    import subprocess
    import sys

    from spec_format.rewrites.fixing import FixOptions, fix

    assert spec_format.fix is fix
    assert spec_format.FixOptions is FixOptions and "fix" in spec_format.__all__
    assert spec_format.fix(EXAMPLES[0]).to_dict() == fix(EXAMPLES[0]).to_dict()
    code = "import sys, spec_format; print('spec_format.rewrites.fixing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_readable_repr_and_html(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text('{"speculators_model_type": "<eagle3>"}', encoding="utf-8")
    report = spec_format.validate(bad)
    (file_report,) = report.files
    (finding,) = [f for f in file_report.sorted_findings() if f.rule == "S002"]  # located
    assert repr(report) == f"<Report {report.summary()}; exit code 1>"
    assert repr(file_report).startswith(f"<FileReport {bad}: fail, ")
    assert repr(finding).startswith(f"<Finding S002 error {bad}:1:28 /speculators_model_type: ")
    html = report._repr_html_()
    assert "&lt;eagle3&gt;" in html and "<eagle3>" not in html
    assert html.count("<tr>") == 1 + len(file_report.findings) and "<table>" in html
    assert "<td>error</td>" in finding._repr_html_()


@pytest.mark.parametrize(
    ("example", "function"),
    [("llama-3.1-8b-eagle3-0.2", "migrate"), ("qwen3-8b-dflash", "fix")],
)
def test_migrate_and_fix_never_change_the_dict_and_print_one_line(example, function):
    import copy
    import json

    data = json.loads((ROOT / "examples" / example / "config.json").read_text(encoding="utf-8"))
    before = copy.deepcopy(data)
    qwen3_8b = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096}
    options = {"migrate": spec_format.MigrateOptions, "fix": spec_format.FixOptions}[function]
    result = getattr(spec_format, function)(data, options(verifier=qwen3_8b))
    assert data == before  # the caller's dict, nested parts included
    assert result.changed and result.document is not data
    assert result.document["speculators_config"] is not data["speculators_config"]
    assert "\n" not in repr(result) and len(repr(result)) < 120, repr(result)
    name = {"migrate": "MigrationResult", "fix": "FixResult"}[function]
    assert repr(result).startswith(f"<{name} ")
    assert isinstance(result, getattr(spec_format, name)) and name in spec_format.__all__


def test_file_rewrites_are_the_commands_pipeline(tmp_path, cli):
    """migrate_files and fix_files are `specfmt migrate` / `specfmt fix`: the same JSON per
    input, the same exit code, the same writer (in place with a backup, written through a
    non-regular file, nothing written for an input that fails)."""
    import json
    import os
    import shutil
    from pathlib import Path

    from spec_format.rewrites import rewrite

    inputs = []
    for example in EXAMPLES[:2]:
        inputs.append(shutil.copytree(example, tmp_path / "api" / example.name))
        shutil.copytree(example, tmp_path / "cli" / example.name)
    missing = tmp_path / "missing"
    for command, run in (("migrate", spec_format.migrate_files), ("fix", spec_format.fix_files)):
        checked = run([*inputs, missing], check=True)
        shown = cli(
            command, *[tmp_path / "cli" / p.name for p in inputs], missing, "--check", "-f", "json"
        )
        assert rewrite.exit_code(checked) == shown.exit_code == 3
        expected = json.loads(shown.stdout)
        got = [r.to_dict() for r in checked]
        for mine, theirs in zip(got, expected, strict=True):
            assert Path(mine.pop("path")).name == Path(theirs.pop("path")).name
        assert got == expected
    before = [(p / "config.json").read_bytes() for p in inputs]
    done = spec_format.migrate_files([*inputs, missing], in_place=True, backup=True)
    assert [r.exit_code for r in done] == [0, 0, 3] and not done[2].ok
    for path, original, result in zip(inputs, before, done[:2], strict=True):
        assert result.outcome.written_to == path / "config.json"
        assert (path / "config.json.bak").read_bytes() == original
        assert json.loads((path / "config.json").read_text()) == result.result.document
    (through,) = spec_format.fix_files(inputs[0], output=os.devnull)  # written through
    assert through.ok and str(through.outcome.written_to) == os.devnull
    assert not missing.exists()


@pytest.mark.parametrize("layout", ["nested", "loose"])
def test_messages_name_the_python_options_to_a_python_caller(tmp_path, layout):
    """validate() on a folder answered I011 with "use --recursive", an option a Python caller
    does not have: the hint names ``recursive=True`` there (and the command line's flag on
    the command line, tests/test_hints.py), and following it finds the drafts."""
    text = (EXAMPLES[0] / "config.json").read_text(encoding="utf-8")
    folder = tmp_path / "checkpoints"
    names = {"nested": ["a/config.json", "b/config.json"], "loose": ["a.json", "b.json"]}
    for name in names[layout]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    report = spec_format.validate([str(folder)])
    (finding,) = [f for fr in report.files for f in fr.findings if f.rule == "I011"]
    assert "--" not in finding.message and "specfmt validate" not in finding.message
    if layout == "nested":
        assert "recursive=True" in finding.message, finding.message
        found = spec_format.validate(folder, spec_format.ValidateOptions(recursive=True))
    else:
        call = re.search(r"`(validate\(.*\))`", finding.message)
        assert call, finding.message
        found = eval(call.group(1), {"validate": spec_format.validate})  # the hint, as written
    assert len(found.files) == 2
    assert not [f for fr in found.files for f in fr.findings if f.rule.startswith("I")]


def test_a_missing_extra_is_named_as_a_python_caller_spells_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "numpy", None)  # as if the deep extra were missing
    from spec_format.base.errors import UsageError

    with pytest.raises(UsageError) as caught:
        spec_format.validate(EXAMPLES[0], spec_format.ValidateOptions(deep=True))
    assert "deep=True" in str(caught.value) and "--deep" not in str(caught.value)
