"""``--verifier hf://ORG/NAME[@REV]``: only the verifier's config.json travels, from a local
server that behaves like the Hub (no internet)."""

from __future__ import annotations

import json

import pytest

from tests.common import ROOT

pytest.importorskip("huggingface_hub")

from spec_format.testing.builder import build_checkpoint, qwen3_8b_config, tiny_config  # noqa: E402
from tests.weights.fake_hub import FakeHub, running  # noqa: E402

EAGLE3 = ROOT / "examples" / "qwen3-8b-eagle3"
DFLASH = ROOT / "examples" / "qwen3-8b-dflash"  # verifier.architectures is empty


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    with running(FakeHub()) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        yield server


@pytest.fixture
def verifier(tmp_path):
    """A Qwen3-8B verifier directory: its config.json and 8 MB of weights never to fetch."""
    directory = tmp_path / "qwen3-8b"
    directory.mkdir()
    config = {**qwen3_8b_config(), "max_position_embeddings": 40960, "rope_theta": 1000000}
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (directory / "model.safetensors").write_bytes(b"\0" * (8 << 20))
    return directory


def _only_config_fetched(hub) -> None:
    assert hub.sent("cdn") == 0 and not [r for r in hub.log if "safetensors" in r.path]
    assert [r.path.rsplit("/", 1)[-1] for r in hub.log if "/resolve/" in r.path] == ["config.json"]


def test_validate_with_a_remote_verifier_reads_only_its_config(cli, hub, verifier):
    hub.add("org/target", verifier, revision="v1")
    local = cli("validate", EAGLE3, DFLASH, "--verifier", verifier, "-f", "json")
    remote = cli("validate", EAGLE3, DFLASH, "--verifier", "hf://org/target@v1", "-f", "json")
    assert remote.exit_code == local.exit_code == 0, remote.output
    remote_files, local_files = (
        json.loads(remote.stdout)["files"],
        json.loads(local.stdout)["files"],
    )
    # the one difference: what was checked names the verifier as it was given
    for file in remote_files + local_files:
        checked = file.get("checked") or {}
        if "verifier" in checked:
            given = checked.pop("verifier")
            assert given in (
                str(verifier),
                str(verifier / "config.json"),
                "hf://org/target@v1/config.json",
            ), given
        for finding in file["findings"]:  # hints repeat the --verifier as it was given
            if "--verifier" in finding.get("command", ()):
                given = finding["command"][finding["command"].index("--verifier") + 1]
                assert given in (str(verifier), "hf://org/target@v1"), given
                finding["message"] = finding["message"].replace(given, "VERIFIER")
                finding["command"] = [a.replace(given, "VERIFIER") for a in finding["command"]]
    assert remote_files == local_files
    assert "no --verifier given" not in remote.stdout
    _only_config_fetched(hub)


def test_a_remote_verifier_that_does_not_fit_is_named_by_its_url(cli, hub, verifier):
    config = json.loads((verifier / "config.json").read_text())
    (verifier / "config.json").write_text(json.dumps({**config, "hidden_size": 5120}))
    hub.add("org/bigger", verifier)
    result = cli("validate", EAGLE3, "--verifier", "hf://org/bigger", "-f", "json")
    assert result.exit_code == 1
    (v001,) = [
        f
        for fr in json.loads(result.stdout)["files"]
        for f in fr["findings"]
        if f["rule"] == "V001"
    ]
    assert "hf://org/bigger/config.json" in v001["message"]


@pytest.mark.parametrize("command", ["fix", "migrate"])
def test_fix_and_migrate_fill_from_a_remote_verifier(cli, hub, verifier, command):
    hub.add("org/target", verifier)
    local = cli(command, DFLASH, "--verifier", verifier)
    remote = cli(command, DFLASH, "--verifier", "hf://org/target")
    assert remote.exit_code == local.exit_code == 0, remote.output
    assert remote.stdout == local.stdout
    written = json.loads(remote.stdout)
    assert written["speculators_config"]["verifier"]["architectures"] == ["Qwen3ForCausalLM"]
    _only_config_fetched(hub)


def test_remote_verifier_errors(cli, hub, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("no config here")
    hub.add("org/empty", empty)
    missing = cli("validate", EAGLE3, "--verifier", "hf://org/nothing")
    assert missing.exit_code == 3
    assert "--verifier hf://org/nothing: cannot list the repository" in missing.output
    assert "repository not found" in missing.output
    no_config = cli("fix", DFLASH, "--verifier", "hf://org/empty")
    assert no_config.exit_code == 2
    assert "--verifier hf://org/empty: the repository has no config.json" in no_config.output
    bad = cli("migrate", DFLASH, "--verifier", "hf://not a repo")
    assert bad.exit_code == 2 and "is not hf://ORG/NAME" in bad.output


def test_forward_says_it_needs_a_local_verifier(cli):
    result = cli("forward", EAGLE3, "--verifier", "hf://Qwen/Qwen3-8B@main")
    assert result.exit_code == 2
    assert "huggingface-cli download Qwen/Qwen3-8B --revision main --local-dir DIR" in (
        result.output
    )


def test_every_command_words_a_remote_verifier_problem_alike(cli, hub, tmp_path):
    """validate, fix, migrate, convert and inspect read an hf:// verifier through one reader:
    the same message and exit code for a repository that cannot be listed or has no config."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("no config here")
    hub.add("org/empty", empty)
    draft = build_checkpoint(
        tmp_path / "draft", tiny_config("eagle3")
    ).path  # inspect reads weights
    commands = {
        "validate": [EAGLE3],
        "fix": [DFLASH],
        "migrate": [DFLASH],
        "convert": [EAGLE3, "-o", tmp_path / "out", "--dry-run"],
        "inspect": [draft],
    }
    for url, code in (("hf://org/nothing", 3), ("hf://org/empty", 2)):
        said = {}
        for command, args in commands.items():
            result = cli(command, *args, "--verifier", url)
            assert result.exit_code == code, (command, result.output)
            (said[command],) = [
                ln for ln in result.output.splitlines() if f"--verifier {url}" in ln
            ]
        assert len(set(said.values())) == 1, said
