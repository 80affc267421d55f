"""The Python API and the command line run one job: ``spec_format.validate`` and ``specfmt
validate`` give the same findings and notes for every fixture and example, under every
configuration-file case (none, ``[tool.specfmt]`` in pyproject.toml, a specfmt.toml,
per-file-ignores, ``--config``, ``--isolated``).

The command line is driven through its parser; the API is called with the options those
flags stand for. A difference means orchestration has crept back into ``cli/``."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

import spec_format
from spec_format.render import render

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.json"))
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/config.json"))

#: name -> (files to write in the project, CLI flags, API keywords)
CASES = {
    "none": ({}, [], {}),
    "pyproject-ignore": (
        {"pyproject.toml": '[tool.specfmt]\nignore = ["C009"]\n'},
        [],
        {},
    ),
    "pyproject-strict-select": (
        {"pyproject.toml": '[tool.specfmt]\nprofile = "strict"\nselect = ["S", "C", "M"]\n'},
        [],
        {},
    ),
    "flags-override-the-file": (
        {"pyproject.toml": '[tool.specfmt]\nprofile = "strict"\nignore = ["C009"]\n'},
        ["--profile", "current", "--ignore", "M004"],
        {"options": spec_format.ValidateOptions(ignore=["M004"]), "given": ["profile", "ignore"]},
    ),
    "specfmt-toml-wins": (
        {
            "pyproject.toml": '[tool.specfmt]\nignore = ["C009"]\n',
            "specfmt.toml": 'ignore = ["M"]\n[per-file-ignores]\n"examples/*" = ["C"]\n',
        },
        [],
        {},
    ),
    "config-named": (
        {"other/named.toml": 'select = ["C009", "M004"]\n'},
        ["--config", "{project}/other/named.toml"],
        {"config": "{project}/other/named.toml"},
    ),
    "isolated": (
        {"pyproject.toml": '[tool.specfmt]\nignore = ["C", "M"]\n'},
        ["--isolated"],
        {"settings": False},
    ),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, list[str]]:
    """Every fixture and example, copied into a project folder of their own."""
    project = tmp_path_factory.mktemp("project")
    names = []
    for source in FIXTURES:
        dest = project / source.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, dest)
        names.append(str(dest))
    for source in EXAMPLES:
        dest = project / source.relative_to(ROOT)
        shutil.copytree(source, dest)
        names.append(str(dest))
    return project, names


def _comparable(doc: dict) -> tuple:
    return [(f["path"], f["status"], f["findings"]) for f in doc["files"]], doc.get("notes")


@pytest.mark.parametrize("case", CASES)
def test_api_and_cli_give_the_same_findings(cli, inputs, case, monkeypatch):
    project, names = inputs
    files, flags, keywords = CASES[case]
    written = []
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    monkeypatch.chdir(project)
    try:
        flags = [f.format(project=project) for f in flags]
        keywords = {
            k: v.format(project=project) if isinstance(v, str) else v for k, v in keywords.items()
        }
        result = cli("validate", "--format", "json", *flags, *names)
        assert result.exit_code in (0, 1), result.output
        report = spec_format.validate(names, **keywords)
    finally:
        for path in written:
            path.unlink()
    buffer = io.StringIO()
    render(report, "json", buffer)
    api, command = (
        _comparable(json.loads(buffer.getvalue())),
        _comparable(json.loads(result.output)),
    )
    assert api == command
    assert report.exit_code == result.exit_code
    findings = [f["rule"] for _, _, found in api[0] for f in found]
    if case == "pyproject-ignore":  # the case: the file's ignore reaches the API
        assert "C009" not in findings and "M004" in findings
    if case == "none":
        assert "C009" in findings
    if case == "isolated":
        assert "C009" in findings and "M004" in findings


@pytest.mark.parametrize("command", ["fix", "migrate"])
@pytest.mark.parametrize("isolated", [False, True], ids=["configured", "isolated"])
def test_rewrite_api_and_cli_give_the_same_results(cli, tmp_path, monkeypatch, command, isolated):
    """The configuration's ``engine`` reaches fix_files/migrate_files as it reaches the
    commands (both run rewrite_job)."""
    from spec_format import api

    dflash2 = ROOT / "examples" / "qwen3-32b-dflash2"
    shutil.copytree(dflash2, tmp_path / "dflash2")
    (tmp_path / "specfmt.toml").write_text('engine = ["vllm==0.28.0"]\n')
    monkeypatch.chdir(tmp_path)
    flags = ["--isolated"] if isolated else []
    result = cli(command, "dflash2", "--check", "-f", "json", *flags)
    files = api.fix_files if command == "fix" else api.migrate_files
    (got,) = files("dflash2", check=True, settings=not isolated)
    assert json.loads(result.stdout) == [json.loads(json.dumps(got.to_dict()))]  # always a list
    assert got.exit_code == result.exit_code


@pytest.mark.parametrize("command", ["fix", "migrate"])
def test_rewrite_api_reads_the_configuration_as_the_command_does(
    cli, tmp_path, monkeypatch, command
):
    from spec_format import api
    from spec_format.base.errors import UsageError

    shutil.copytree(ROOT / "examples" / "qwen3-32b-dflash2", tmp_path / "dflash2")
    (tmp_path / "specfmt.toml").write_text('engine = ["vllm==0.0.1"]\n')
    monkeypatch.chdir(tmp_path)
    files = api.fix_files if command == "fix" else api.migrate_files
    refused = cli(command, "dflash2", "--check")
    assert refused.exit_code == 2 and "vllm==0.0.1" in refused.output
    with pytest.raises(UsageError, match="vllm==0.0.1"):
        files("dflash2", check=True)
    isolated = cli(command, "dflash2", "--check", "--isolated")
    assert isolated.exit_code in (0, 1), isolated.output  # 1: --check found a change
    assert files("dflash2", check=True, settings=False)[0].exit_code == isolated.exit_code
