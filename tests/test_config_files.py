"""Project configuration (specfmt.toml, [tool.specfmt] in pyproject.toml) and --statistics,
through the real command line."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.common import ROOT

DFLASH = ROOT / "examples" / "qwen3-8b-dflash"  # one C006 warning, C009 and M004 notes
DFLASH2 = ROOT / "examples" / "qwen3-32b-dflash2"  # vllm==0.28.0 refuses it (C012)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project directory with two copies of a checkpoint config, the current directory."""
    for name in ("qwen-dflash", "other-dflash"):
        (tmp_path / "checkpoints" / name).mkdir(parents=True)
        shutil.copy(DFLASH / "config.json", tmp_path / "checkpoints" / name / "config.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def rules(result) -> list[str]:
    doc = json.loads(result.stdout)
    return sorted(f["rule"] for fr in doc["files"] for f in fr["findings"])


def test_pyproject_table_sets_the_profile_and_flags_override_it(cli, project):
    (project / "pyproject.toml").write_text('[tool.specfmt]\nprofile = "strict"\n')
    ckpt = "checkpoints/qwen-dflash"
    strict = cli("validate", ckpt)
    assert strict.exit_code == 1, strict.output
    assert "error C006" in strict.output
    assert cli("validate", ckpt, "--profile", "current").exit_code == 0
    assert cli("validate", ckpt, "--isolated").exit_code == 0
    assert cli("validate", ckpt, "--no-config").exit_code == 0


def test_specfmt_toml_wins_in_its_directory_and_the_closest_file_applies(cli, project, tmp_path):
    (project / "pyproject.toml").write_text('[tool.specfmt]\nprofile = "strict"\n')
    (project / "specfmt.toml").write_text('ignore = ["C009"]\n')
    result = cli("validate", "checkpoints/qwen-dflash", "-f", "json")
    assert result.exit_code == 0, result.output  # specfmt.toml: no strict profile
    assert rules(result) == ["C006", "M004"]
    # a file nearer to an input applies to it, found from the input, not from the cwd
    (project / "checkpoints" / "other-dflash" / "specfmt.toml").write_text('select = ["M004"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cli_args = ("validate", project / "checkpoints" / "qwen-dflash", "-f", "json")
    import os

    os.chdir(elsewhere)
    result = cli(*cli_args, project / "checkpoints" / "other-dflash")
    files = json.loads(result.stdout)["files"]
    assert [sorted(f["rule"] for f in fr["findings"]) for fr in files] == [
        ["C006", "M004"],
        ["M004"],
    ]
    explicit = cli(*cli_args, "--config", project / "pyproject.toml")
    assert explicit.exit_code == 1 and "C009" in rules(explicit)


def test_a_pyproject_without_the_table_is_passed_over(cli, project):
    (project / "specfmt.toml").write_text('select = ["C006"]\n')
    (project / "checkpoints" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 99\n")
    assert rules(cli("validate", "checkpoints/qwen-dflash", "-f", "json")) == ["C006"]


def test_per_file_ignores_match_the_path_given(cli, project):
    (project / "pyproject.toml").write_text(
        '[tool.specfmt]\nignore = ["M004"]\n'
        '[tool.specfmt.per-file-ignores]\n"./checkpoints/qwen-dflash/*" = ["C006", "C00"]\n'
    )
    result = cli("validate", "checkpoints/qwen-dflash", "checkpoints/other-dflash", "-f", "json")
    files = {
        fr["path"]: sorted(f["rule"] for f in fr["findings"])
        for fr in json.loads(result.stdout)["files"]
    }
    assert files == {"checkpoints/qwen-dflash": [], "checkpoints/other-dflash": ["C006", "C009"]}
    # an absolute path is matched relative to the configuration's directory
    absolute = cli("validate", project / "checkpoints" / "qwen-dflash", "-f", "json")
    assert rules(absolute) == []
    assert rules(cli("validate", "checkpoints/qwen-dflash", "--isolated", "-f", "json")) == [
        "C006",
        "C009",
        "M004",
    ]


def test_engine_and_select_from_the_configuration(cli, project):
    (project / "specfmt.toml").write_text('engine = ["vllm==0.28.0"]\nselect = ["C012"]\n')
    shutil.copytree(DFLASH2, project / "dflash2")
    result = cli("validate", "dflash2")
    assert result.exit_code == 1 and "C012 vllm==0.28.0 refuses this config" in result.output
    assert "no --engine given" not in result.output
    assert cli("validate", "dflash2", "--engine", "vllm==0.32.0").exit_code == 0
    # fix and migrate read `engine` too: the same document as with the flag
    for command in ("fix", "migrate"):
        from_config = cli(command, "dflash2", "-f", "json")
        from_flag = cli(command, "dflash2", "--isolated", "--engine", "vllm==0.28.0", "-f", "json")
        assert from_config.exit_code == from_flag.exit_code == 0, from_config.output
        assert json.loads(from_config.stdout) == json.loads(from_flag.stdout)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('ignores = ["C001"]\n', "unknown key ignores (did you mean 'ignore'?)"),
        ('ignore = ["C999"]\n', "ignore: unknown rule id 'C999'"),
        ('ignore = "C001"\nprofile = "strictest"\n', "profile must be one of legacy"),
        ('engine = ["vllm==0.0.1"]\n', "engine: --engine 'vllm==0.0.1': vllm 0.0.1 is older"),
        ('engine = ["vllm>="]\n', "engine: --engine 'vllm>=': not an engine release; write NAME"),
        ('[per-file-ignores]\n"a/*" = [1]\n', 'per-file-ignores."a/*" must be a list of rule ids'),
        ("select = [\n", "not valid TOML"),
    ],
)
def test_a_bad_configuration_is_a_usage_error_naming_file_and_key(cli, project, text, expected):
    (project / "specfmt.toml").write_text(text)
    for command in ("validate", "fix", "migrate"):
        args = [command, "checkpoints/qwen-dflash"] + (["--check"] if command != "validate" else [])
        result = cli(*args)
        assert result.exit_code == 2, (command, result.output)
        assert str(project / "specfmt.toml") in result.output and expected in result.output
        assert "Traceback" not in result.output


def test_pyproject_keys_are_named_with_their_table(cli, project):
    (project / "pyproject.toml").write_text('[tool.specfmt]\nselct = ["C006"]\n')
    result = cli("validate", "checkpoints/qwen-dflash")
    assert result.exit_code == 2
    assert "unknown key tool.specfmt.selct (did you mean 'select'?)" in result.output


def test_missing_config_named_with_config_option(cli, project):
    result = cli("validate", "checkpoints/qwen-dflash", "--config", "nope.toml")
    assert result.exit_code == 2 and "--config nope.toml: no such file" in result.output
    both = cli("fix", "checkpoints/qwen-dflash", "--config", "nope.toml", "--isolated")
    assert both.exit_code == 2 and "--config and --isolated exclude each other" in both.output


def test_statistics_count_findings_per_rule(cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    examples = sorted(str(p.parent) for p in (ROOT / "examples").glob("*/config.json"))
    full = json.loads(cli("validate", *examples, "-f", "json").stdout)
    counts: dict[str, int] = {}
    for fr in full["files"]:
        for f in fr["findings"]:
            counts[f["rule"]] = counts.get(f["rule"], 0) + 1
    result = cli("validate", *examples, "--statistics", "-f", "json")
    rows = json.loads(result.stdout)
    assert {r["code"]: r["count"] for r in rows} == counts
    assert [r["count"] for r in rows] == sorted(counts.values(), reverse=True)
    text = cli("validate", *examples, "--statistics")
    first = text.stdout.splitlines()[0].split()
    assert first[:2] == [str(rows[0]["count"]), rows[0]["code"]] and first[3] == rows[0]["name"]
    assert text.stdout.rstrip().endswith(full["summary"])
    bad = cli("validate", examples[0], "--statistics", "-f", "sarif")
    assert bad.exit_code == 2 and "--statistics prints text or json" in bad.output


_SPELLINGS = [
    '[tool.specfmt]\nprofile = "strict"\n',
    '[ tool . "specfmt" ]\nprofile = "strict"\n',
    '  [\'tool\'.specfmt.per-file-ignores]\n"a/*" = ["C001"]\n',
    "[[tool.specfmt]]\nx = 1\n",
    '[tool]\nspecfmt.profile = "strict"\n',
    '["tool"]\n"specfmt" = { profile = "strict" }\n',
    'tool.specfmt.profile = "strict"\n',
    "tool = { specfmt = { select = [] } }\n",
    '[tool]\n"spec\\u0066mt" = {}\n',
    '[project]\nname = "specfmt"\ndependencies = ["specfmt"]\n[project.scripts]\nspecfmt = "m:main"\n',
    "[tool.ruff]\nline-length = 99  # specfmt\n[tool.specfmtx]\nx = 1\n",
    '[tool]\nother = "specfmt"\n',
    'x = """\n[tool.specfmt]\n"""\n',
]


@pytest.mark.parametrize("text", _SPELLINGS)
def test_pyproject_table_found_exactly_when_toml_holds_it(tmp_path, text):
    import tomllib

    from spec_format.runner import settings

    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    tool = tomllib.loads(text).get("tool")
    assert settings._has_table(path) == (isinstance(tool, dict) and "specfmt" in tool)


def test_pyproject_naming_specfmt_only_as_a_package_is_not_parsed(tmp_path):
    from spec_format.base.errors import UsageError
    from spec_format.runner import settings

    path = tmp_path / "pyproject.toml"
    nested = "x = " + "[" * 500 + "]" * 500 + "\n"  # parsing it would be an error
    path.write_text('[project]\ndependencies = ["specfmt"]\n' + nested)
    assert settings._has_table(path) is False
    path.write_text('[tool.specfmt]\nselect = ["S"]\n' + nested)
    with pytest.raises(UsageError, match="nested too deeply"):
        settings._has_table(path)
