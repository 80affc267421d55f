"""Every hint that names a command is a command that makes the change: run it, validate
again, and the finding is gone (no advice that goes in circles)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.common import EXAMPLES, INVALID, RELEASES, ROOT, load_case

#: a Llama-3.1-8B-like verifier: what the EAGLE-3 fixtures were trained against
VERIFIER = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "rope_theta": 500000.0,
}

CASES = [p / "config.json" for p in EXAMPLES] + RELEASES + INVALID


def _validate(cli, path, *args):
    result = cli("validate", path, "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return [f for fr in json.loads(result.output)["files"] for f in fr["findings"]]


def _follow(cli, path, *args) -> list[tuple[str, str]]:
    """Run the command of each finding that has one (one at a time, on the file as it is
    then), and return (rule, pointer) of those still reported afterwards."""
    stuck = []
    done: set[tuple[str, str | None]] = set()
    for _ in range(20):  # every command fixes one finding at least, so this ends
        pending = [
            f
            for f in _validate(cli, path, *args)
            if f.get("command") and (f["rule"], f.get("pointer")) not in done
        ]
        if not pending:
            return stuck
        finding = pending[0]
        key = (finding["rule"], finding.get("pointer"))
        done.add(key)
        argv = finding["command"]
        assert argv[0] == "specfmt" and argv[-1] == str(path), argv
        ran = cli(*argv[1:])
        if ran.exit_code == 1 and "Nothing was written" in ran.output:
            # a config with schema errors is not migrated (the errors are listed first):
            # the hint waits for them, and says so when run
            assert any(f["severity"] == "error" for f in _validate(cli, path, *args))
            continue
        assert ran.exit_code == 0, (argv, ran.output)
        # followed: the finding is gone, or (M004 of a retired type, migrated as far as it
        # goes) it no longer names a command
        after = {
            (f["rule"], f.get("pointer")) for f in _validate(cli, path, *args) if "command" in f
        }
        if key in after:
            stuck.append((key, finding["message"]))
    raise AssertionError(f"{path}: the hints never run out")


def _case(case, folder) -> tuple[Path, list[str]] | None:
    """The case's config written to folder/config.json, and the validate arguments it needs
    (eagle3: a verifier); None for a case that is not a JSON object."""
    config = load_case(case)
    if case in INVALID:  # a fixture: the config and what it is expected to raise
        config = config["config"]
    if not isinstance(config, dict):
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    if config.get("speculators_model_type") != "eagle3":
        return path, []
    (folder / "verifier").mkdir()
    (folder / "verifier" / "config.json").write_text(json.dumps(VERIFIER))
    return path, ["--verifier", str(folder / "verifier")]


@pytest.mark.parametrize("case", CASES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_hint_removes_its_finding(cli, tmp_path, case):
    written = _case(case, tmp_path)
    if written is None:
        pytest.skip("not a JSON object")
    path, args = written
    assert _follow(cli, path, *args) == []


def test_aux_ids_hint_names_the_layers_and_fix_writes_them(cli, tmp_path):
    """The circle of issue 12: validate -> migrate -> validate -> fix (no change) ends at
    the first step now: the hint is the command that writes [2, 16, 29], which the user
    runs once the training run confirms them (issue 20: fix --verifier alone writes no
    guess)."""
    case = ROOT / "tests/fixtures/releases/0.2/eagle3/llama-3.1-8b-converter-0.2.0.json"
    path = tmp_path / "config.json"
    shutil.copyfile(case, path)
    alone = next(f for f in _validate(cli, path) if f["rule"] == "C001")
    assert "command" not in alone  # no verifier: the layers are unknown, no command claims them
    assert "--verifier DIR" in alone["message"]
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "config.json").write_text(json.dumps(VERIFIER))
    (finding,) = [
        f
        for f in _validate(cli, path, "--verifier", tmp_path / "v")
        if f["rule"] == "C001" and f["pointer"] == "/eagle_aux_hidden_state_layer_ids"
    ]
    assert "they use [2, 16, 29]" in finding["message"]
    assert "only the training run knows" in finding["message"]
    assert finding["command"] == ["specfmt", "fix", "--aux-layer-ids", "2,16,29", "--in-place"] + [
        str(path)
    ]
    guessed = cli("fix", "--verifier", tmp_path / "v", "--in-place", path)
    assert guessed.exit_code == 0 and "R006" in guessed.output and "not written" in guessed.output
    assert json.loads(path.read_text()).get("eagle_aux_hidden_state_layer_ids") is None
    assert cli(*finding["command"][1:]).exit_code == 0
    assert json.loads(path.read_text())["eagle_aux_hidden_state_layer_ids"] == [2, 16, 29]
    assert all(f["rule"] != "C001" for f in _validate(cli, path, "--verifier", tmp_path / "v"))


def test_the_cases_give_the_hint_of_every_rule_that_has_one(cli, tmp_path):
    """The loop above follows every command hint its cases get: each rule that words one is
    among them (checked on its own, whichever tests ran before it, in whichever process)."""
    hinted: set[str] = set()
    for i, case in enumerate(CASES):
        written = _case(case, tmp_path / str(i))
        if written is not None:
            path, args = written
            hinted |= {f["rule"] for f in _validate(cli, path, *args) if "command" in f}
    assert {"C001", "C006", "C009", "M002", "M004", "M005", "M006"} <= hinted, hinted


@pytest.mark.parametrize("layout", ["loose", "one", "nested"])
@pytest.mark.parametrize("recursive", [False, True])
def test_a_directory_without_config_json_gets_a_hint_that_finds_its_configs(
    cli, tmp_path, layout, recursive
):
    """I011's hint is computed from what the directory holds: --recursive only when a draft
    config.json is below it, the files by name when it holds loose .json files."""
    import glob
    import re
    import shlex

    text = (EXAMPLES[0] / "config.json").read_text(encoding="utf-8")
    folder = tmp_path / "drafts"
    names = {"loose": ["a.json", "b.json"], "one": ["draft.json"], "nested": ["x/config.json"]}
    for name in names[layout]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    flags = ["--recursive"] if recursive else []
    first = json.loads(cli("validate", folder, *flags, "--format", "json").output)
    i011 = [f for fr in first["files"] for f in fr["findings"] if f["rule"] == "I011"]
    if layout == "nested" and recursive:
        assert not i011  # found below it
        return
    (message,) = [f["message"] for f in i011]
    command = re.search(r"`(specfmt validate [^`]+)`", message)
    if command:
        argv = [m for a in shlex.split(command.group(1)) for m in sorted(glob.glob(a)) or [a]]
    else:
        assert "use --recursive" in message, message
        argv = ["specfmt", "validate", str(folder), "--recursive"]
    after = json.loads(cli(*argv[1:], "--format", "json").output)
    assert len(after["files"]) == len(names[layout])
    assert not [f for fr in after["files"] for f in fr["findings"] if f["rule"].startswith("I")]
