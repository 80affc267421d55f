"""hf:// against a slow and lying Hub on 127.0.0.1: every case ends within one deadline
and one memory limit, with an error that says what happened (exit 3), never a hang.

The servers are the fake Hub of tests/weights (loopback only; every wait ends when the
test stops them). The CLI runs in a child process under resource limits."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("huggingface_hub")

from spec_format.testing.builder import build_checkpoint, tiny_config  # noqa: E402
from tests.hostile.limits import run_limited  # noqa: E402
from tests.weights.fake_hub import FakeHub, running  # noqa: E402

DEADLINE_S = "2"


@pytest.fixture
def draft(tmp_path):
    return build_checkpoint(tmp_path / "draft", tiny_config("eagle3"), data="zeros").path


def validate_remote(hub: FakeHub, **env: str):
    return run_limited(
        "validate",
        "hf://org/draft",
        memory_mb=1024,
        cpu_s=30,
        env={
            "HF_ENDPOINT": hub.endpoint,
            "HF_HUB_OFFLINE": "0",
            "HF_TOKEN": "hf_fake_token_for_the_test_server",
            "SPECFMT_HF_DEADLINE": DEADLINE_S,
            # huggingface_hub fetches an "agent harnesses" registry from the endpoint once a
            # day while building the User-Agent; that request is its own, not specfmt's
            "HF_HUB_DISABLE_TELEMETRY": "1",
            **env,
        },
    )


@pytest.mark.parametrize(
    ("hostile", "expected"),
    [
        ("stall", "deadline for one hf:// checkpoint is spent"),
        ("drip", "deadline for one hf:// checkpoint is spent"),
        ("retry-after", "asked to retry after 3600 s"),
        ("endless-pages", "more than 50 pages"),
        ("huge-listing", "listing is larger than 16,777,216 bytes"),
    ],
)
def test_a_lying_hub_ends_in_a_clear_error(draft, hostile, expected):
    hub = FakeHub(hostile=hostile, drip_s=0.5)
    hub.add("org/draft", draft)
    # the caps and the Retry-After refusal must trigger by themselves, even on a loaded
    # machine where starting Python alone can take the 2 s: only the cases that test the
    # deadline run under it
    generous = {} if hostile in ("stall", "drip") else {"SPECFMT_HF_DEADLINE": "60"}
    with running(hub):
        run = validate_remote(hub, **generous)
    assert run.returncode == 3, run.output
    assert expected in run.output
    assert "Traceback" not in run.output and "internal error" not in run.output


def test_a_dripping_weights_file_is_cut_off_by_the_deadline(draft):
    """The listing and config answer promptly; only the safetensors body drips."""
    hub = FakeHub(hostile="drip-cdn", drip_s=0.5)
    hub.add("org/draft", draft)
    with running(hub):
        run = validate_remote(hub)
    assert run.returncode in (1, 3), run.output
    assert "deadline for one hf:// checkpoint is spent" in run.output
    assert "Traceback" not in run.output


def test_byte_budget_stops_a_large_fetch(draft):
    hub = FakeHub()
    hub.add("org/draft", draft)
    with running(hub):
        run = validate_remote(hub, SPECFMT_HF_MAX_BYTES="2000", SPECFMT_HF_DEADLINE="60")
    assert run.returncode in (1, 3), run.output
    assert "bytes fetched for one hf:// checkpoint" in run.output


def test_thousands_of_shards_are_bounded(tmp_path, monkeypatch):
    """An index naming many shards: at most MAX_SAFETENSORS_FILES are fetched, the rest
    are reported, and the report stays short (issues capped per kind)."""
    from spec_format.parsers import remote
    from spec_format.runner.validation import validate

    monkeypatch.setattr(remote, "MAX_SAFETENSORS_FILES", 40)
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), data="zeros", shards=2)
    files = {p.name: p.read_bytes() for p in built.path.iterdir()}
    index = json.loads(files["model.safetensors.index.json"])
    shard = next(n for n in files if n.endswith(".safetensors"))
    for i in range(400):
        name = f"extra-{i:05d}.safetensors"
        files[name] = files[shard]
        index["weight_map"][f"junk.{i}.weight"] = name
    files["model.safetensors.index.json"] = json.dumps(index).encode()
    hub = FakeHub(repos={"org/draft": {"main": files}})
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    with running(hub):
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        report = validate(["hf://org/draft"])
    messages = [f.message for f in report.files[0].findings]
    assert any("at most 40 safetensors files are read" in m for m in messages)
    assert len(messages) < 200
    fetched = {r.path for r in hub.log if r.path.endswith(".safetensors")}
    assert len(fetched) <= 2 * 40  # resolve + CDN per file
