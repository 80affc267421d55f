"""What validate and fix decide (issue 12): misspelled keys, checkpoints without weights,
rule selectors, a missing numpy, version options, and findings reported once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from spec_format.base.notes import id_ranges
from spec_format.rules import registry
from spec_format.rules.base import Layer
from tests.common import ROOT

EAGLE3 = ROOT / "examples" / "qwen3-8b-eagle3"
RELEASES = ROOT / "tests" / "fixtures" / "releases"


def _tiny_checkpoint(directory):
    """The EAGLE-3 example at toy sizes, with weights (the builder writes them from the
    tensor contract)."""
    from spec_format.testing.builder import build_checkpoint

    config = json.loads((EAGLE3 / "config.json").read_text())
    config["draft_vocab_size"] = 64
    config["transformer_layer_config"].update(
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        vocab_size=128,
    )
    return build_checkpoint(directory, config).path


def _findings(result) -> list[dict]:
    return [f for fr in json.loads(result.output)["files"] for f in fr["findings"]]


@pytest.fixture
def typo(tmp_path):
    """The EAGLE-3 example with norm_before_residual (true) misspelled."""
    config = json.loads((EAGLE3 / "config.json").read_text())
    config["norm_befor_residual"] = config.pop("norm_before_residual")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


# -- 1. misspelled keys -------------------------------------------------------------------
def test_misspelled_key_is_named_with_the_key_meant(cli, typo):
    result = cli("validate", typo)
    assert result.exit_code == 0  # a warning
    assert (
        "warning C014 norm_befor_residual is not a key readers read (did you mean "
        "norm_before_residual?)" in " ".join(result.output.split())
    )
    # the symptom (the meant key read as absent) is not reported beside its cause
    assert "C001" not in result.output
    (finding,) = [f for f in _findings(cli("validate", typo, "-f", "json")) if f["rule"] == "C014"]
    assert finding["pointer"] == "/norm_befor_residual"
    assert finding["command"] == ["specfmt", "fix", "--in-place", str(typo)]


def test_fix_renames_the_misspelled_key_keeping_its_value(cli, typo):
    result = cli("fix", typo, "--in-place")
    assert result.exit_code == 0, result.output
    assert "renamed from norm_befor_residual, keeping its value" in result.output
    fixed = json.loads(typo.read_text())
    assert fixed["norm_before_residual"] is True  # what the author wrote, not the default
    assert "norm_befor_residual" not in fixed
    assert "C014" not in cli("validate", typo).output


def test_migrate_renames_before_writing_defaults(cli, typo, tmp_path):
    out = tmp_path / "out.json"
    result = cli("migrate", typo, "--to", "0.9", "-o", out)
    assert result.exit_code == 0, result.output
    migrated = json.loads(out.read_text())
    assert migrated["norm_before_residual"] is True and "norm_befor_residual" not in migrated


def test_fix_never_writes_a_default_beside_an_ambiguous_misspelling(cli, tmp_path):
    config = json.loads((EAGLE3 / "config.json").read_text())
    config["norm_before_residual"] = True
    config["norm_befor_residual"] = False  # both spellings: fix cannot know which is right
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    result = cli("fix", path, "-f", "json")
    assert result.exit_code == 0, result.output
    (doc,) = json.loads(result.output)  # a list, one object per input
    (problem,) = [p for p in doc["problems"] if p["rule"] == "C014"]
    assert "norm_before_residual, which is there too: remove it" in problem["message"]
    assert not [c for c in doc["changes"] if "norm_befor" in c["pointer"]]


def test_misspellings_in_nested_objects_and_layer_config(cli, tmp_path):
    config = json.loads((EAGLE3 / "config.json").read_text())
    method = config["speculators_config"]["proposal_methods"][0]
    method["speculative_token"] = method.pop("speculative_tokens")
    config["speculators_config"]["verifier"]["name_or_pth"] = "Qwen/Qwen3-8B"
    tlc = config["transformer_layer_config"]
    tlc["rope_thetaa"] = tlc.pop("rope_theta")
    # transformers keys readers do not read are legal and never reported
    tlc.update(bos_token_id=1, eos_token_id=2, use_cache=True, max_window_layers=28)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, indent=2))
    found = {f["pointer"]: f for f in _findings(cli("validate", path, "-f", "json"))}
    c014 = {p for p, f in found.items() if f["rule"] == "C014"}
    assert c014 == {
        "/speculators_config/proposal_methods/0/speculative_token",
        "/speculators_config/verifier/name_or_pth",
        "/transformer_layer_config/rope_thetaa",
    }
    assert "did you mean rope_theta?" in found["/transformer_layer_config/rope_thetaa"]["message"]
    # C003 ("speculators drops it") is not reported again for a key C014 names
    assert found["/speculators_config/proposal_methods/0/speculative_token"]["rule"] == "C014"


def test_no_misspelling_in_any_bundled_config(cli):
    paths = [p for p in (ROOT / "examples").iterdir() if p.is_dir()]
    paths += sorted(RELEASES.glob("*/*/*.json"))
    result = cli("validate", *paths, "--select", "C014", "-f", "json")
    assert _findings(result) == []


# -- 2. checkpoints without weights -----------------------------------------------------------
def test_checkpoint_without_weights_is_named_in_a_note(cli):
    result = cli("validate", EAGLE3)
    assert result.exit_code == 0
    assert f"note N003 {EAGLE3} has no weights: only its config checked" in " ".join(
        result.output.split()
    )


@pytest.mark.parametrize("flags", [["--deep"], ["--scan-weights"], ["--deep", "--scan-weights"]])
def test_deep_or_scan_without_weights_exits_3(cli, flags):
    result = cli("validate", EAGLE3, *flags)
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())
    assert "error I013 no model.safetensors or model.safetensors.index.json" in text
    assert "could not run (exit 3)" in text
    assert "has no weights" not in text  # the error says it; no note repeats it


def test_deep_on_a_config_file_says_to_pass_the_directory(cli):
    result = cli("validate", EAGLE3 / "config.json", "--deep")
    assert result.exit_code == 3
    assert f"`specfmt validate {EAGLE3}/ --deep`" in result.output


def test_deep_with_weights_exits_0(cli, tmp_path):
    result = cli("validate", _tiny_checkpoint(tmp_path / "ckpt"), "--deep", "--scan-weights")
    assert result.exit_code == 0, result.output
    assert "I013" not in result.output and "has no weights" not in result.output


# -- 3. rule selectors ----------------------------------------------------------------------
#: the verifier rules' ids as the messages span them (the registry holds them)
V_RULES = id_ranges(sorted(r.id for r in registry.by_layer(Layer.VERIFIER)))


def test_unknown_rule_selector_exits_2_with_the_closest_ids(cli):
    result = cli("validate", EAGLE3, "--select", "X999")
    assert result.exit_code == 2
    assert "--select: unknown rule id 'X999' (did you mean X019, X009?)" in result.output
    result = cli("validate", EAGLE3, "--select", "C0O1")  # a letter O for a zero
    assert result.exit_code == 2 and "(did you mean C001," in result.output
    result = cli("validate", EAGLE3, "--select", "V9")
    assert result.exit_code == 2 and "(did you mean V0" in result.output
    assert "V009" in result.output.split("did you mean")[1]
    result = cli("validate", EAGLE3, "--select", "VZZZZ")
    assert result.exit_code == 2 and f"the V rules are {V_RULES}" in result.output
    result = cli("validate", EAGLE3, "--ignore", "Q1")
    assert result.exit_code == 2
    assert "--ignore: unknown rule id 'Q1': a rule id is a layer letter (I, S," in result.output
    result = cli("validate", EAGLE3, "--ignore", "obsolete-key")
    assert result.exit_code == 2 and "(did you mean C009, the id of that name?)" in result.output


def test_prefixes_select_a_layer_or_group(cli):
    plain = {f["rule"] for f in _findings(cli("validate", EAGLE3, "-f", "json"))}
    assert "C009" in plain and "M004" in plain
    no_c = {f["rule"] for f in _findings(cli("validate", EAGLE3, "-f", "json", "--ignore", "C"))}
    assert no_c == {r for r in plain if not r.startswith("C")}
    no_c00 = {
        f["rule"] for f in _findings(cli("validate", EAGLE3, "-f", "json", "--ignore", "c00"))
    }
    assert no_c00 == {r for r in plain if not r.startswith("C00")}
    only = {f["rule"] for f in _findings(cli("validate", EAGLE3, "-f", "json", "--select", "M"))}
    assert only == {r for r in plain if r.startswith("M")}


def test_verifier_note_only_when_verifier_rules_were_skipped(cli):
    result = cli("validate", EAGLE3, "--select", "C001,M004")
    assert result.exit_code == 0
    assert "no --verifier given" not in result.output
    result = cli("validate", EAGLE3, "--select", "C001,V")
    assert f"skipped the checks against the target model ({V_RULES}" in result.output


# -- 4. a missing numpy ---------------------------------------------------------------------
@pytest.mark.parametrize("flag", ["--deep", "--scan-weights"])
def test_deep_without_numpy_names_the_extra(tmp_path, flag):
    """numpy made unimportable for real (sitecustomize), not a mocked message."""
    ckpt = _tiny_checkpoint(tmp_path / "ckpt")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['numpy'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    code = "import numpy"
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode != 0
    run = subprocess.run(
        [sys.executable, "-m", "spec_format", "validate", str(ckpt), flag],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2, run.stderr
    assert f"{flag} needs numpy (the deep extra), which is not installed: `" in run.stderr
    assert "-m pip install 'numpy>=1.24'` adds it to this installation" in run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr


# -- 5. version options -------------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["0.5", "0.5.0", "v0.5", "latest"])
def test_every_version_option_takes_lines_and_releases(cli, spelling, tmp_path):
    from spec_format.facts import catalog

    result = cli("validate", EAGLE3, "--format-version", spelling, "-f", "json")
    assert result.exit_code == 0, result.output
    (fr,) = json.loads(result.output)["files"]
    line = "0.5" if spelling != "latest" else catalog.latest_version()
    assert (fr["format_version"], fr["version_source"]) == (line, "requested")
    assert cli("fix", EAGLE3, "--format-version", spelling, "--check").exit_code in (0, 1)
    assert cli("migrate", EAGLE3, "--to", spelling, "-o", tmp_path / "m.json").exit_code == 0
    assert cli("schema", "show", "eagle3", "--format-version", spelling).exit_code == 0
    assert cli("schema", "show", "eagle3", "--version", spelling).exit_code == 0  # old name
    assert cli("migrate", EAGLE3, "--format-version", spelling, "--check").exit_code in (0, 1)


def test_bad_versions_are_usage_errors_listing_the_lines(cli):
    for option, command in (("--format-version", "validate"), ("--to", "migrate")):
        result = cli(command, EAGLE3, option, "0.5.0.dev3")
        assert result.exit_code == 2
        assert f"{option} '0.5.0.dev3' is not a format version; use a line (0.1," in result.output
        result = cli(command, EAGLE3, option, "0.12")
        assert result.exit_code == 2 and "unknown format version 0.12" in result.output


@pytest.mark.parametrize(
    ("command", "meant"),
    [("validate", "--format-version"), ("fix", "--format-version"), ("migrate", "--to")],
)
def test_format_given_a_version_says_which_option_was_meant(cli, command, meant):
    result = cli(command, EAGLE3, "--format", "0.5")
    assert result.exit_code == 2
    assert f"did you mean {meant} 0.5?" in " ".join(result.output.replace("│", " ").split())
    assert cli(command, EAGLE3, "--format", "JSON").exit_code == 0  # still case-insensitive


# -- 7. findings reported once, disagreement only between different values -------------------------
def test_equal_values_applied_differently_are_not_called_a_disagreement(cli):
    path = RELEASES / "0.6" / "dflash" / "qwen3-8b-trained-0.6.0.json"
    (finding,) = [
        f
        for f in _findings(cli("validate", path, "-f", "json", "--select", "C001"))
        if f["pointer"] == "/sliding_window_non_causal"
    ]
    message = finding["message"]
    assert "every reader reads false but they apply it to different layers" in message
    assert "act differently" not in message
    assert "writes sliding_window_non_causal: true" in message


def test_off_by_one_is_reported_once_by_its_cause(cli, tmp_path):
    path = tmp_path / "config.json"
    shutil.copyfile(
        RELEASES / "0.5" / "dflash" / "qwen3-8b-trained-0.5.0.dev60-off-by-one.json", path
    )
    pointer = "/speculators_config/proposal_methods/0/speculative_tokens"
    at = [f for f in _findings(cli("validate", path, "-f", "json")) if f.get("pointer") == pointer]
    assert [f["rule"] for f in at] == ["M006"]
    assert "block_size 16 without anchor sampling drafts 15 tokens per step" in at[0]["message"]
    # with the cause ignored, the symptom is reported again
    at = [
        f
        for f in _findings(cli("validate", path, "-f", "json", "--ignore", "M006"))
        if f.get("pointer") == pointer
    ]
    assert [f["rule"] for f in at] == ["X003"]
