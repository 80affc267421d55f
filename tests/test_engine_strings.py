"""Engine release strings as pip takes them (--engine, `engine = [...]`), the newer-release
warning (C021), ranges judged release group by release group, and the honest default (C022)."""

from __future__ import annotations

import json

import pytest

from spec_format.base.errors import UsageError
from spec_format.facts import disputes, engine_strings, readers
from tests.common import ROOT

EXAMPLES = ROOT / "examples"
NEWEST = readers.newest("vllm")
FIRST = readers.releases()[[r.startswith("vllm==") for r in readers.releases()].index(True)]


def _ids(text: str) -> list[str]:
    return [r.id for r in engine_strings.parse(text).releases]


@pytest.mark.parametrize(
    ("text", "releases"),
    [
        ("vllm", [NEWEST.id]),
        ("vllm==0.33", ["vllm==0.33.0"]),  # PEP 440: 0.33 == 0.33.0
        ("vllm==0.33.0", ["vllm==0.33.0"]),
        ("VLLM == 0.20.2", ["vllm==0.20.2"]),  # a member of the 0.20.0 group, name normalised
        ("vllm==0.10.1.1", ["vllm==0.10.1.1"]),
        ("vllm==0.30.0+cpu", ["vllm==0.30.0"]),  # a local build of a release
        ("speculators==0.8.0", ["speculators==0.8.0"]),
        ("speculators==0.7.0", ["speculators==0.7.0"]),
        ("speculators==0.6.0", ["speculators==0.6.0"]),
        ("speculators==0.6.0.1", ["speculators==0.6.0.1"]),
        ("speculators==0.4.0", ["speculators==0.4.0"]),
        ("vllm~=0.30.0", ["vllm==0.30.0"]),
        ("vllm==0.20.*", ["vllm==0.20.0"]),  # three members, one group
        (
            "vllm>=0.28,<0.33",
            ["vllm==0.28.0", "vllm==0.29.0", "vllm==0.30.0", "vllm==0.31.0", "vllm==0.32.0"],
        ),
        ("vllm>=0.25.1,<0.27", ["vllm==0.25.1", "vllm==0.26.0"]),  # the first member in range
        ("vllm>=0.32,<=0.33", ["vllm==0.32.0", "vllm==0.33.0"]),
    ],
)
def test_accepted_strings(text, releases):
    assert _ids(text) == releases
    assert engine_strings.parse(text).newer is None


def test_a_member_reads_with_its_groups_file():
    assert (
        disputes.parse_engine("speculators==0.8.0").data
        is readers.release("speculators", "0.8.1").data
    )
    assert disputes.parse_engine("vllm==0.20.2").representative == "0.20.0"
    # a group is judged once however many of its members a range or a list names
    assert [r.id for r in disputes.parse_engines(["vllm>=0.20,<0.21", "vllm==0.20.2"])] == [
        "vllm==0.20.0"
    ]


def test_a_comma_starts_a_new_string_only_before_a_name():
    found = disputes.parse_engines(["vllm>=0.31, <0.33,speculators==0.8.0"])
    assert [r.id for r in found] == ["vllm==0.31.0", "vllm==0.32.0", "speculators==0.8.0"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("vllm==", "not an engine release; write NAME, NAME==VERSION or NAME with version"),
        ("vllm==abc", "not an engine release"),
        ("vllm>=", "not an engine release"),
        ("vllm 0.33", "not an engine release"),
        ("vllm[cuda]==0.33.0", "not an engine release"),
        ("", "not an engine release"),
        ("tgi==3.0.0", "tgi is not an engine the reader table covers"),
        ("sglang==0.5.0", "sglang 0.5.0 is not a sglang release; the covered sglang releases"),
        ("sglang==0.4.3", "older than 0.4.4.post2, the first SGLang release whose verifier"),
        ("vllm>99", "no covered release satisfies it; the covered vllm releases are 0.10.1"),
        ("vllm<0.10", "no covered release satisfies it"),
        ("vllm==0.27.2", "vllm 0.27.2 is not a vllm release"),
        ("vllm==0.9.2", "vllm 0.9.2 is older than 0.10.1, the first vllm release that reads"),
        ("speculators==0.0.1", "speculators 0.0.1 is older than 0.1.0"),
    ],
)
def test_refused_strings_are_one_line_usage_errors(text, said):
    with pytest.raises(UsageError) as caught:
        engine_strings.parse(text)
    message = str(caught.value)
    assert said in message and "\n" not in message
    if "not an engine release" in said or "covers" in said:
        assert message.endswith(engine_strings.accepted())
        for name in ("sglang", "speculators", "vllm"):
            assert f" {name} {engine_strings._versions(name)[0][1]} to " in message


def test_a_newer_release_is_judged_as_the_newest_and_named():
    spec = engine_strings.parse("vllm==99.1")
    assert spec.newer == "99.1" and [r.id for r in spec.releases] == [NEWEST.id]
    message = spec.newer_message()
    assert "vllm==99.1 is newer than the reader table" in message
    assert f"judged as {NEWEST.id}" in message
    assert "scripts/add-release.py vllm 99.1" in message


def test_cli_newer_release_warns_instead_of_exit_2(cli):
    result = cli("validate", EXAMPLES / "qwen3-8b-dflash", "--engine", "vllm==99.0.0")
    assert result.exit_code == 0, result.output
    assert "warning C021 vllm==99.0.0 is newer than the reader table" in result.output
    assert "scripts/add-release.py vllm 99.0.0" in result.output
    # judged with the newest release: what it refuses is an error, as when it is named
    mtp = cli("validate", EXAMPLES / "qwen3-next-80b-mtp", "--engine", "vllm==99.0.0")
    assert mtp.exit_code == 1 and f"C012 {NEWEST.id} refuses this config" in mtp.output


@pytest.mark.parametrize("command", ["validate", "fix", "migrate"])
@pytest.mark.parametrize("engine", ["vllm==", "vllm==abc", "vllm>=", "tgi==1.0", "vllm>0.99"])
def test_cli_malformed_strings_exit_2(cli, command, engine):
    result = cli(command, EXAMPLES / "qwen3-8b-eagle3", "--engine", engine)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_a_range_fails_when_any_release_in_it_fails(cli):
    """P-EAGLE is read from 0.22 to 0.33: `vllm>=0.20,<0.34` holds 0.20 and 0.21, which
    refuse it."""
    peagle = EXAMPLES / "qwen3-8b-peagle"
    wide = cli("validate", peagle, "--engine", "vllm>=0.20,<0.34", "-f", "json")
    assert wide.exit_code == 1
    refused = {
        f["message"].split(" ")[0]
        for f in json.loads(wide.stdout)["files"][0]["findings"]
        if f["rule"] == "C012"
    }
    assert refused == {"vllm==0.20.0", "vllm==0.21.0"}
    assert cli("validate", peagle, "--engine", "vllm>=0.22,<0.34").exit_code == 0


def test_the_configuration_takes_ranges_and_newer_releases(cli, tmp_path, monkeypatch):
    import shutil

    shutil.copytree(EXAMPLES / "qwen3-8b-peagle", tmp_path / "peagle")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.specfmt]\nengine = ["vllm>=0.20"]\n')
    assert cli("validate", "peagle").exit_code == 1
    # a release newer than the table is judged as the newest one (which serves EAGLE-3)
    shutil.copytree(EXAMPLES / "qwen3-8b-eagle3", tmp_path / "eagle3")
    (tmp_path / "pyproject.toml").write_text('[tool.specfmt]\nengine = ["vllm==99.0.0"]\n')
    newer = cli("validate", "eagle3")
    assert newer.exit_code == 0 and "C021" in newer.output, newer.output


def _two_aux(tmp_path):
    config = json.loads((EXAMPLES / "qwen3-8b-eagle3" / "config.json").read_text())
    config["eagle_aux_hidden_state_layer_ids"] = [2, 18]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_default_a_draft_no_release_can_load_is_an_error(cli, tmp_path):
    """Two aux layers: every covered vLLM release sizes fc for three (an ok before)."""
    result = cli("validate", _two_aux(tmp_path), "-f", "json")
    assert result.exit_code == 1, result.output
    errors = [
        f for f in json.loads(result.stdout)["files"][0]["findings"] if f["severity"] == "error"
    ]
    assert [f["rule"] for f in errors] == ["C022"]
    assert errors[0]["pointer"] == "/eagle_aux_hidden_state_layer_ids"
    assert f"{FIRST} to {NEWEST.id}" in errors[0]["message"]
    assert "fc.weight: sized for 3 aux hidden states, the draft has 2" in errors[0]["message"]
    # named, the release judges it (C020), and C022 stays for the default run
    named = cli("validate", _two_aux(tmp_path), "--engine", NEWEST.id, "-f", "json")
    rules = {f["rule"] for f in json.loads(named.stdout)["files"][0]["findings"]}
    assert named.exit_code == 1 and "C020" in rules and "C022" not in rules


def test_default_the_newest_releases_refusal_is_a_warning(cli):
    """mtp: no vLLM release serves the type: C011, a warning, not a note."""
    result = cli("validate", EXAMPLES / "qwen3-next-80b-mtp", "-f", "json")
    findings = json.loads(result.stdout)["files"][0]["findings"]
    assert result.exit_code == 0
    assert [f["severity"] for f in findings if f["rule"] == "C011"] == ["warning"]


def test_default_every_example_still_passes(cli):
    result = cli("validate", *sorted(EXAMPLES.iterdir()))
    assert result.exit_code == 0, result.output


def test_speculators_members_are_releases_of_their_line_with_one_digest_pair():
    """A speculators file covers the releases of its line whose config code is identical
    (schema/readers/README.md); the writer of a line is still the file's own release."""
    shared = 0
    for rid in readers.representatives():
        rel = readers.release(*rid.split("=="))
        if rel.name != "speculators" or "members" not in rel.data:
            continue
        shared += 1
        line = ".".join(rel.version.split(".")[:2])
        assert rel.version in rel.members
        assert all(".".join(m.split(".")[:2]) == line for m in rel.members)
        assert len({(d["reader"], d["model"]) for d in rel.data["members"].values()}) == 1
        assert disputes.writer_of(line).version == rel.version
    assert shared == 4  # 0.4, 0.6, 0.7, 0.8


@pytest.mark.parametrize("command", ["fix", "migrate"])
def test_fix_and_migrate_warn_of_a_newer_release_as_with_the_newest(cli, command):
    """The exit code is the newest covered release's (migrate --check: 1, the file would
    change), never a usage error."""
    result = cli(command, EXAMPLES / "qwen3-8b-dflash", "--engine", "vllm==99.0.0", "--check")
    plain = cli(command, EXAMPLES / "qwen3-8b-dflash", "--engine", NEWEST.id, "--check")
    assert result.exit_code == plain.exit_code != 2, result.output
    assert "vllm==99.0.0 is newer than the reader table" in result.output
    assert "C021" in result.output and "C021" not in plain.output


# -- SGLang: serving facts, no reader table --------------------------------------------------
SGLANG = engine_strings._versions("sglang")


@pytest.mark.parametrize(
    ("text", "releases"),
    [
        ("sglang", [f"sglang=={SGLANG[-1][1]}"]),
        ("sglang==0.5.7", ["sglang==0.5.7"]),
        ("SGLang == 0.5.6.post2", ["sglang==0.5.6.post2"]),  # a post release, name normalised
        ("sglang>=0.5.7,<0.5.9", ["sglang==0.5.7", "sglang==0.5.8", "sglang==0.5.8.post1"]),
        ("sglang==0.4.4.post2", ["sglang==0.4.4.post2"]),  # the first covered release
    ],
)
def test_sglang_strings(text, releases):
    assert _ids(text) == releases
    assert disputes.parse_engines([text]) == ()  # no reader table: not a reader release
    assert [r.id for r in disputes.parse_sglang([text])] == releases


def test_sglang_newer_pin_names_the_command_that_adds_it():
    spec = engine_strings.parse("sglang==9.0.0")
    assert spec.newer == "9.0.0" and spec.judged_as == f"sglang=={SGLANG[-1][1]}"
    assert "scripts/add-release.py sglang 9.0.0" in spec.newer_message()


@pytest.mark.parametrize("command", ["fix", "migrate"])
def test_sglang_is_a_usage_error_where_reader_defaults_are_written(cli, command):
    result = cli(command, EXAMPLES / "qwen3-8b-eagle3", "--engine", "sglang==0.5.7")
    assert result.exit_code == 2, result.output
    assert "SGLang reads no speculators config" in result.output
    assert "Traceback" not in result.output


def test_validate_with_sglang_only_says_what_it_assumed(cli):
    result = cli("validate", EXAMPLES / "qwen3-8b-eagle3", "--engine", "sglang==0.5.7")
    assert result.exit_code == 1, result.output
    assert "error C023 sglang==0.5.7 reads no speculators config" in result.output
    assert "N002 only SGLang named" in result.output
    both = cli("validate", EXAMPLES / "qwen3-8b-eagle3", "--engine", "sglang==0.5.7,vllm==0.33.0")
    assert "C023" in both.output and "N002" not in both.output


def test_serving_refuses_sglang_with_what_to_run_instead(cli):
    result = cli("serving", EXAMPLES / "qwen3-8b-eagle3", "--engine", "sglang==0.5.7")
    assert result.exit_code == 2, result.output
    assert "SGLang reads no speculators config" in result.output
    assert "specfmt validate --engine sglang==X" in result.output
