"""``specfmt validate hf://ORG/NAME[@REV]`` against a local server that behaves like the Hub."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("huggingface_hub")

from spec_format.base.errors import UsageError  # noqa: E402
from spec_format.parsers.checkpoint import load_checkpoint, parse_hf_url  # noqa: E402
from spec_format.testing.builder import build_checkpoint, tiny_config  # noqa: E402
from tests.weights.conftest import check, rule_ids  # noqa: E402
from tests.weights.fake_hub import FakeHub, running  # noqa: E402


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", "hf_fake_token_for_the_test_server")
    with running(FakeHub()) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        yield server


def test_remote_checkpoint_is_validated_from_headers_only(tmp_path, hub):
    config = tiny_config("eagle3", {"transformer_layer_config.vocab_size": 200_000})
    built = build_checkpoint(tmp_path / "c", config, drop=["norm.weight"])
    hub.add("org/draft", built.path)
    report = check("hf://org/draft")
    (fr,) = report.files
    assert fr.model_type == "eagle3" and report.exit_code == 1
    (missing,) = [f for f in fr.findings if f.rule == "W001"]
    assert missing.file == "hf://org/draft/model.safetensors" and missing.tensor == "norm.weight"
    weights = [r for r in hub.log if r.path.endswith(".safetensors")]
    assert all(r.range for r in weights if r.server == "cdn")  # range requests only
    assert hub.sent("cdn") <= 64 * 1024  # one 64 KiB range: the header, not the 25 MB of weights
    size = (built.path / "model.safetensors").stat().st_size
    assert size > 20 * 1024 * 1024
    assert not [
        r for r in hub.log if r.server == "cdn" and r.authorization
    ]  # token not leaked to the CDN
    assert [r for r in hub.log if r.server == "hub" and r.authorization]


def test_same_findings_remote_and_local(tmp_path, hub):
    built = build_checkpoint(
        tmp_path / "c",
        tiny_config("dflash"),
        shards=2,
        reshape={"fc.weight": (64, 256)},
        mutate={"d2t": lambda a: a - 1},
        extra={"mask_hidden": ("BF16", (1, 1, 192))},
    )
    (built.path / "stale.safetensors").write_bytes((built.path / built.files[0].name).read_bytes())
    hub.add("org/broken", built.path, revision="v1")
    local = check(built.path, deep=True)
    remote = check("hf://org/broken@v1", deep=True)
    assert rule_ids(local) == rule_ids(remote) == {"W004", "W022", "H022", "D002", "D004"}
    assert any(f.file == "hf://org/broken@v1/stale.safetensors" for f in remote.files[0].findings)
    assert hub.sent("cdn") < 300 * 1024  # headers plus t2d/d2t for --deep


def test_missing_shard_on_the_hub(tmp_path, hub):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), shards=2)
    built.files[1].unlink()
    hub.add("org/partial", built.path)
    assert "H018" in rule_ids(check("hf://org/partial"))


def test_a_server_that_ignores_range_is_read_only_as_far_as_needed(tmp_path, hub):
    built = build_checkpoint(
        tmp_path / "c", tiny_config("eagle3", {"transformer_layer_config.vocab_size": 100_000})
    )
    hub.add("org/norange", built.path)
    hub.ignore_range = True
    with load_checkpoint("hf://org/norange") as ckpt:
        assert not ckpt.issues and "fc.weight" in ckpt.tensors
        assert ckpt.bytes_read < 256 * 1024  # stopped reading the 200 response early


@pytest.mark.parametrize(
    ("url", "expected"),
    [("hf://org/nothing", "repository not found"), ("hf://org/draft@nope", "revision not found")],
)
def test_unknown_repository_or_revision_is_an_unreadable_input(tmp_path, hub, url, expected):
    hub.add("org/draft", build_checkpoint(tmp_path / "c", tiny_config("eagle3")).path)
    report = check(url)
    assert report.exit_code == 3
    assert expected in report.files[0].findings[0].message


def test_repository_without_config(tmp_path, hub):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"))
    (built.path / "config.json").unlink()
    hub.add("org/noconfig", built.path)
    report = check("hf://org/noconfig")
    assert report.exit_code == 3 and report.files[0].findings[0].rule == "I011"


def test_remote_config_findings_name_the_remote_file(tmp_path, hub):
    built = build_checkpoint(
        tmp_path / "c", tiny_config("eagle3", {"norm_before_fc": True, "fc_norm": True})
    )
    hub.add("org/cfg", built.path)
    report = check("hf://org/cfg")
    x = [f for f in report.files[0].located_findings() if f.rule.startswith("X")]
    assert x and all(f.file == "hf://org/cfg/config.json" for f in x)
    assert all(f.line for f in x)  # line numbers from the fetched text


@pytest.mark.parametrize("url", ["hf://org", "hf://org/name/extra", "hf:///name", "hf://org/na me"])
def test_malformed_urls_are_usage_errors(url):
    with pytest.raises(UsageError):
        parse_hf_url(url)


def test_offline_mode_is_respected(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(UsageError, match="HF_HUB_OFFLINE"):
        load_checkpoint("hf://org/draft")


def test_cli_accepts_hf_urls(tmp_path, hub, cli):
    hub.add("org/draft", build_checkpoint(tmp_path / "c", tiny_config("mtp")).path)
    result = cli("validate", "hf://org/draft", "-f", "json")
    doc = json.loads(result.output)
    assert result.exit_code == 0, doc
    assert doc["files"][0]["path"] == "hf://org/draft"
