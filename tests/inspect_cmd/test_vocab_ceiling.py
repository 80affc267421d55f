"""The vocabulary ceiling: 1 - the workload's mass outside t2d, exactly, and attained by the
ideal pruned draft under the rejection rule (the seed document's section 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from spec_format.testing.builder import build_checkpoint, tiny_config

V, D = 2000, 1200


@pytest.fixture(scope="module")
def workload():
    """A target distribution p over V tokens and a draft keeping its D most likely ones."""
    rng = np.random.default_rng(7)
    counts = rng.integers(1, 10_000, size=V).astype(np.int64)
    p = counts / counts.sum()
    keep = np.zeros(V, bool)
    keep[np.argsort(-p, kind="stable")[:D]] = True
    return counts, p, keep


@pytest.fixture(scope="module")
def draft(tmp_path_factory, workload):
    _, _, keep = workload
    ids = np.flatnonzero(keep).astype(np.int64)
    config = tiny_config(
        "eagle3", {"transformer_layer_config.vocab_size": V, "draft_vocab_size": D}
    )
    path = tmp_path_factory.mktemp("pruned")
    return build_checkpoint(
        path, config, values={"t2d": keep, "d2t": ids - np.arange(D, dtype=np.int64)}
    ).path


def _files(tmp_path, counts):
    """The same counts in every accepted file format."""
    out = {}
    out["list.json"] = tmp_path / "list.json"
    out["list.json"].write_text(json.dumps(counts.tolist()))
    out["map.json"] = tmp_path / "map.json"
    out["map.json"].write_text(json.dumps({str(i): int(c) for i, c in enumerate(counts) if c}))
    out["counts.npy"] = tmp_path / "counts.npy"
    np.save(out["counts.npy"], counts)
    torch = pytest.importorskip("torch")
    out["token_freq.pt"] = tmp_path / "token_freq.pt"  # what speculators' prepare_data writes
    torch.save({int(i): int(c) for i, c in enumerate(counts)}, out["token_freq.pt"])
    return out


def test_ceiling_is_one_minus_the_out_of_draft_mass(inspect_json, draft, workload, tmp_path):
    counts, p, keep = workload
    mass = counts[~keep].sum() / counts.sum()  # exact integers, one division
    for name, path in _files(tmp_path, counts).items():
        doc = inspect_json(draft, "--token-freq", path, "--cost-ratio", "0.05")
        vocab = doc["vocabulary"]
        assert vocab["pruned"] and vocab["draft_vocab_size"] == D, name
        assert abs(vocab["out_of_draft_mass"] - mass) < 1e-12, name
        assert abs(vocab["acceptance_ceiling"] - (1.0 - mass)) < 1e-12, name
        (ceiling_point,) = [
            pt for pt in doc["economics"][0]["points"] if pt["is_vocabulary_ceiling"]
        ]
        assert ceiling_point["acceptance"] == vocab["acceptance_ceiling"]
        above = [
            pt["acceptance"]
            for pt in doc["economics"][0]["points"]
            if pt["above_vocabulary_ceiling"]
        ]
        assert above and all(a > vocab["acceptance_ceiling"] for a in above), name


def test_the_ideal_pruned_draft_attains_the_ceiling(inspect_json, draft, workload, tmp_path):
    counts, p, keep = workload
    np.save(tmp_path / "c.npy", counts)
    ceiling = inspect_json(draft, "--token-freq", tmp_path / "c.npy")["vocabulary"][
        "acceptance_ceiling"
    ]
    # rejection sampling with the best draft the pruned vocabulary allows: p restricted to t2d
    q = np.where(keep, p, 0.0)
    q /= q.sum()
    rng = np.random.default_rng(11)
    n = 400_000
    x = rng.choice(V, size=n, p=q)
    accepted = rng.random(n) < np.minimum(1.0, p[x] / q[x])
    assert abs(accepted.mean() - ceiling) < 0.01
    # and the rule stays lossless: rejected positions resample from the residual
    residual = np.maximum(0.0, p - q)
    residual /= residual.sum()
    out = x.copy()
    out[~accepted] = rng.choice(V, size=int((~accepted).sum()), p=residual)
    assert np.max(np.abs(np.bincount(out, minlength=V) / n - p)) < 0.01


def test_without_token_freq_the_coverage_is_reported(cli, draft):
    result = cli("inspect", draft)
    assert result.exit_code == 0, result.output
    assert f"draft vocabulary (t2d): {D:,} of {V:,} verifier tokens (60.0%)" in result.output
    assert "pass --token-freq FILE" in result.output


def test_full_vocabulary_draft_has_no_ceiling(inspect_json, tmp_path):
    config = tiny_config("eagle3", {"draft_vocab_size": 256})
    path = build_checkpoint(tmp_path / "full", config).path
    (tmp_path / "c.json").write_text(json.dumps([1] * 256))
    doc = inspect_json(path, "--token-freq", tmp_path / "c.json")
    assert doc["vocabulary"]["pruned"] is False
    assert doc["vocabulary"]["acceptance_ceiling"] == 1.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, -2]", "entry 1 is -2; counts are finite and >= 0"),
        ('{"x": 3}', "key 'x' is not a token id"),
        ('{"5000": 3}', "token id 5000 is outside the verifier vocabulary of 2,000 tokens"),
        (json.dumps([1] * 2001), "2,001 counts for a verifier vocabulary of 2,000 tokens"),
        ("[0, 0]", "every count is zero"),
        ('[1, "a"]', "entry 1 is 'a', not a number"),
        ("{not json", "not valid JSON"),
        ('"text"', "holds str; expected a {token_id: count} map"),
    ],
)
def test_bad_token_counts_are_clear_errors(cli, draft, tmp_path, content, message):
    path = tmp_path / "counts.json"
    path.write_text(content)
    result = cli("inspect", draft, "--token-freq", path)
    assert result.exit_code == 3, result.output
    assert message in result.output and "Traceback" not in result.output


def test_unknown_token_file_type_is_a_usage_error(cli, draft, tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("1,2")
    result = cli("inspect", draft, "--token-freq", path)
    assert result.exit_code == 2 and "unknown file type '.csv'" in result.output


def test_a_pt_file_without_torch_is_a_clear_usage_error(cli, draft, tmp_path, monkeypatch):
    import sys

    path = tmp_path / "token_freq.pt"
    path.write_bytes(b"not read")
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    result = cli("inspect", draft, "--token-freq", path)
    assert result.exit_code == 2
    assert "reading a .pt file needs torch" in result.output and "Traceback" not in result.output


def test_a_pt_file_that_is_not_token_counts(cli, draft, tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "token_freq.pt"
    torch.save(torch.zeros(3, 3), path)
    result = cli("inspect", draft, "--token-freq", path)
    assert result.exit_code == 3 and "holds an array of shape (3, 3)" in result.output
    path.write_bytes(b"garbage")
    result = cli("inspect", draft, "--token-freq", path)
    assert result.exit_code == 3 and "torch.load(weights_only=True) refused it" in result.output


def test_an_absurd_vocabulary_is_not_weighed(cli, tmp_path):
    config = tiny_config("eagle3", {"draft_vocab_size": 256})
    path = build_checkpoint(tmp_path / "full", config).path
    config["transformer_layer_config"]["vocab_size"] = 10**12
    (path / "config.json").write_text(json.dumps(config))
    (tmp_path / "c.json").write_text("[1, 2]")
    result = cli("inspect", path, "--token-freq", tmp_path / "c.json")
    assert result.exit_code == 3 and "is not plausible" in result.output
