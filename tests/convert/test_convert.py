"""``specfmt convert`` end to end on SafeAILab EAGLE-3 sources: what it writes, what it
reports, what it refuses, and that nothing is left behind when it fails."""

from __future__ import annotations

import json
import os

import pytest

from spec_format.base.errors import UsageError
from spec_format.parsers.checkpoint import load_checkpoint
from spec_format.parsers.verifier import load_verifier
from tests.convert.conftest import tree

AUX = "1,4,5"


def tensors(path):
    with load_checkpoint(path) as ckpt:
        return {
            n: (r.dtype, r.shape, ckpt.read_tensor(n, 1 << 30)) for n, r in ckpt.tensors.items()
        }


def renamed(name: str) -> str:
    return "layers.0." + name.removeprefix("midlayer.") if name.startswith("midlayer.") else name


def test_converts_validates_and_runs(cli, made):
    src = made.source()
    out = made.root / "out"
    r = cli("convert", src, "-o", out, "--verifier", made.verifier, "--aux-layer-ids", AUX,
            "--verifier-name", "meta-llama/Llama-3.1-8B-Instruct")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "safeailab-eagle3 -> eagle3" in r.output
    assert "midlayer.self_attn.q_proj.weight -> layers.0.self_attn.q_proj.weight" in r.output
    assert "/eagle_aux_hidden_state_layer_ids = [1, 4, 5]: flag (--aux-layer-ids)" in r.output
    assert "validation: ok" in r.output
    assert sorted(os.listdir(out)) == ["config.json", "model.safetensors"]  # no remote code
    before, after = tensors(src), tensors(out)
    assert {renamed(n): v for n, v in before.items()} == after  # bytes, dtypes, shapes
    text = (out / "config.json").read_text()
    config = json.loads(text)
    assert text == json.dumps(config, indent=2, sort_keys=True) + "\n"  # like save_pretrained
    assert config["eagle_aux_hidden_state_layer_ids"] == [1, 4, 5]
    assert config["speculators_config"]["verifier"] == {
        "name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
        "architectures": ["LlamaForCausalLM"],
    }
    assert "auto_map" not in config
    assert [p.name for p in made.root.iterdir() if p.name.startswith(".")] == []

    r = cli("validate", out, "--deep", "--verifier", made.verifier)
    assert r.exit_code == 0, r.output
    assert "0 errors, 0 warnings" in r.output
    r = cli("forward", out, "--verifier", made.verifier, "--tokens", "6", "--steps", "2")
    assert r.exit_code == 0, r.output


def test_aux_ids_from_the_source_nested_under_eagle_config(cli, made):
    src = made.source(overrides={"eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 3, 5]}})
    out = made.root / "out"
    r = cli("convert", src, "-o", out, "--verifier", made.verifier, "-f", "json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["config"]["eagle_aux_hidden_state_layer_ids"] == [1, 3, 5]
    origin = {p["pointer"]: p for p in report["provenance"]}["/eagle_aux_hidden_state_layer_ids"]
    assert (origin["origin"], origin["detail"]) == (
        "source",
        "eagle_config.eagle_aux_hidden_state_layer_ids",
    )
    assert report["written"] and report["validation"]["status"] == "ok"


def test_verifier_name_from_its_config_or_the_hub_cache_never_a_path(cli, made):
    """vLLM loads the verifier by the name the draft records and refuses a path (C007): a
    local --verifier gives its config's _name_or_path, or ORG/NAME of the Hugging Face cache
    folder; without either, convert refuses (exit 2, one line), as it does a
    --verifier-name that is no repository id, absolute or relative; nothing is written."""
    config_path = made.verifier / "config.json"
    src = made.source()
    args = ("convert", src, "--dry-run", "--aux-layer-ids", AUX, "-f", "json")

    def name(*extra):
        report = json.loads(cli(*args, "--verifier", made.verifier, *extra).output)
        return report["config"]["speculators_config"]["verifier"]["name_or_path"]

    assert name() == "test-org/tiny-llama"  # the builder's config records it
    config = json.loads(config_path.read_text())
    config_path.write_text(json.dumps({**config, "_name_or_path": "org/llama-tiny"}))
    assert name() == "org/llama-tiny"
    assert name("--verifier-name", "meta-llama/Llama-3.1-8B-Instruct") == (
        "meta-llama/Llama-3.1-8B-Instruct"
    )
    del config["_name_or_path"]
    config_path.write_text(json.dumps(config))
    out = made.root / "out"
    for extra in ([], ["--verifier-name", str(made.verifier)], ["--verifier-name", "./v"]):
        r = cli("convert", src, "-o", out, "--aux-layer-ids", AUX, "--verifier", made.verifier,
                *extra)  # fmt: skip
        assert r.exit_code == 2, r.output
        (line,) = r.output.strip().splitlines()
        assert "ORG/NAME" in line and "nothing was written" in line, line
        assert not out.exists()
    cache = made.root / "hub" / "models--test-org--tiny-llama" / "snapshots" / "abc123"
    cache.mkdir(parents=True)
    (cache / "config.json").write_text(json.dumps(config))
    report = json.loads(cli(*args, "--verifier", cache).output)
    assert report["config"]["speculators_config"]["verifier"]["name_or_path"] == (
        "test-org/tiny-llama"
    )


def test_every_config_value_has_an_origin(cli, made):
    src = made.source()
    r = cli("convert", src, "--dry-run", "--verifier", made.verifier, "--aux-layer-ids", AUX,
            "-f", "json")  # fmt: skip
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    pointers = [p["pointer"] for p in report["provenance"]]

    def leaves(node, at=""):
        if isinstance(node, dict) and node:
            for k, v in node.items():
                yield from leaves(v, f"{at}/{k}")
        else:
            yield at

    for leaf in leaves(report["config"]):
        assert any(leaf == p or leaf.startswith(p + "/") for p in pointers), leaf
    assert {t["target"] for t in report["tensors"]} >= {"layers.0.self_attn.q_proj.weight"}


def test_dry_run_writes_nothing(cli, made):
    src = made.source()
    out = made.root / "out"
    r = cli("convert", src, "-o", out, "--dry-run", "--verifier", made.verifier,
            "--aux-layer-ids", AUX)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "config.json (dry run, nothing written)" in r.output
    assert '"speculators_model_type": "eagle3"' in r.output
    assert not out.exists()


def test_format_is_case_insensitive_and_a_version_there_names_format_version(cli, made):
    args = ("convert", made.source(), "--dry-run", "--verifier", made.verifier,
            "--aux-layer-ids", AUX)  # fmt: skip
    r = cli(*args, "--format", "JSON")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["config"]["speculators_model_type"] == "eagle3"
    r = cli(*args, "--format", "0.9")
    assert r.exit_code == 2
    assert "did you mean --format-version 0.9?" in " ".join(r.output.replace("│", " ").split())


@pytest.mark.parametrize(
    ("kw", "args", "needle"),
    [
        ({}, [], "no eagle_aux_hidden_state_layer_ids"),
        ({"extra": {"midlayer.rotary_emb.inv_freq": ("float", (8,))}}, ["--aux-layer-ids", AUX],
         "tensor midlayer.rotary_emb.inv_freq would be layers.0.rotary_emb.inv_freq"),
        ({"extra": {"midlayer.mlp.up_proj.weight": ("float", (100, 64))}},
         ["--aux-layer-ids", AUX], "tensor midlayer.mlp.up_proj.weight has shape [100, 64], but "
         "the converted config expects layers.0.mlp.up_proj.weight to be [I=128, H=64]"),
        ({"drop": ["norm.weight"]}, ["--aux-layer-ids", AUX], "needs norm.weight"),
        ({"extra": {"input_norm.weight": ("float", (192,))}}, ["--aux-layer-ids", AUX],
         "carries only when norm_before_fc"),
        ({}, ["--aux-layer-ids", "1,4"], "2 aux layer ids (--aux-layer-ids) of hidden size 64"),
    ],
    ids=["aux-ids", "unknown-tensor", "shape", "missing-tensor", "flag-off", "aux-count"],
)  # fmt: skip
def test_refusals_name_the_tensor_or_field_and_write_nothing(cli, made, kw, args, needle):
    src = made.source(**kw)
    out = made.root / "out"
    before = tree(made.root)
    r = cli("convert", src, "-o", out, "--verifier", made.verifier, *args)
    assert r.exit_code == 2, r.output
    assert needle in r.output
    assert "Traceback" not in r.output
    assert tree(made.root) == before


def test_aux_ids_that_disagree_in_the_source_are_refused(cli, made):
    src = made.source(
        overrides={
            "eagle_aux_hidden_state_layer_ids": [1, 4, 5],
            "eagle_config": {"eagle_aux_hidden_state_layer_ids": [2, 4, 5]},
        }
    )
    r = cli("convert", src, "-o", made.root / "out", "--verifier", made.verifier)
    assert r.exit_code == 2
    assert "[1, 4, 5] at the top level but [2, 4, 5] under eagle_config" in r.output


def test_allow_lossy_drops_and_reports_the_unknown_tensor(cli, made):
    src = made.source(extra={"midlayer.rotary_emb.inv_freq": ("float", (8,))})
    out = made.root / "out"
    r = cli("convert", src, "-o", out, "--verifier", made.verifier, "--aux-layer-ids", AUX,
            "--allow-lossy")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "midlayer.rotary_emb.inv_freq: dropped (--allow-lossy:" in r.output
    assert "lossy (--allow-lossy):" in r.output
    assert "layers.0.rotary_emb.inv_freq" not in tensors(out)


def test_verifier_is_required(cli, made):
    r = cli("convert", made.source(), "-o", made.root / "out", "--aux-layer-ids", AUX)
    assert r.exit_code == 2
    assert "--verifier is required" in r.output


def test_destination_with_files_is_refused(cli, made):
    out = made.root / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = cli("convert", made.source(), "-o", out, "--verifier", made.verifier,
            "--aux-layer-ids", AUX)  # fmt: skip
    assert r.exit_code == 2
    assert "exists and is not empty" in r.output
    assert os.listdir(out) == ["keep.txt"]


def test_an_empty_destination_directory_is_used(cli, made):
    out = made.root / "out"
    out.mkdir()
    r = cli("convert", made.source(), "-o", out, "--verifier", made.verifier,
            "--aux-layer-ids", AUX)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(out)) == ["config.json", "model.safetensors"]


def _convert(cli, made, source):
    """``specfmt convert SOURCE -o ROOT/out`` with the made verifier and aux layer ids."""
    return cli("convert", source, "-o", made.root / "out", "--verifier", made.verifier,
               "--aux-layer-ids", AUX)  # fmt: skip


def _request(made):
    from spec_format.convert import plan

    return plan.Request(
        verifier=load_verifier(str(made.verifier)),
        verifier_ref=str(made.verifier),
        aux_layer_ids=(1, 4, 5),
        format_version="0.9",
    )


def test_a_source_cut_short_while_converting_leaves_nothing(cli, made):
    from spec_format.convert import run
    from spec_format.convert.write import WriteError

    src = made.source()
    source = run.load_source(src)  # headers read; then the file loses its last bytes
    last = max(source.tensors.values(), key=lambda r: r.end)
    os.truncate(src / "model.safetensors", last.end - 4)
    before = tree(made.root)
    with pytest.raises(WriteError, match=f"tensor {last.name} ends at byte {last.end:,}"):
        run.convert(source, made.root / "out", _request(made))
    assert tree(made.root) == before  # no DEST, no temporary directory
    # read again, the truncated header is an unreadable input (exit 3)
    r = _convert(cli, made, src)
    assert r.exit_code == 3, r.output
    assert "the file is truncated" in r.output
    assert tree(made.root) == before


def test_output_failing_validation_is_not_written(cli, made):
    src = made.source()
    with load_checkpoint(src) as ckpt:
        t2d = ckpt.tensors["t2d"]
    with open(src / "model.safetensors", "r+b") as f:  # no token kept: only --deep sees it
        f.seek(t2d.begin)
        f.write(bytes(t2d.nbytes))
    before = tree(made.root)
    r = _convert(cli, made, src)
    assert r.exit_code == 1, r.output
    assert "fails validation" in r.output and "nothing was written" in r.output
    assert "t2d" in r.output
    assert tree(made.root) == before


def test_sharded_output_with_an_index(cli, made):
    src = made.source()
    out = made.root / "out"
    r = cli("convert", src, "-o", out, "--verifier", made.verifier, "--aux-layer-ids", AUX,
            "--max-shard-size", "40KB")  # fmt: skip
    assert r.exit_code == 0, r.output
    names = sorted(os.listdir(out))
    shards = [n for n in names if n.startswith("model-")]
    assert len(shards) > 1 and all(n.endswith(f"-of-{len(shards):05d}.safetensors") for n in shards)
    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert set(index["weight_map"].values()) == set(shards)
    assert index["metadata"]["total_size"] == sum(len(v[2]) for v in tensors(out).values())
    assert {renamed(n): v for n, v in tensors(src).items()} == tensors(out)
    assert cli("validate", out, "--deep", "--verifier", made.verifier).exit_code == 0


def test_dtype_recasts_floats_only(cli, made):
    import numpy as np

    src = made.source()
    out = made.root / "out"
    r = cli("convert", src, "-o", out, "--verifier", made.verifier, "--aux-layer-ids", AUX,
            "--dtype", "float32")  # fmt: skip
    assert r.exit_code == 0, r.output
    config = json.loads((out / "config.json").read_text())
    assert config["transformer_layer_config"]["dtype"] == "float32"
    before, after = tensors(src), tensors(out)
    for name, (dtype, shape, data) in before.items():
        new_dtype, new_shape, new_data = after[renamed(name)]
        assert new_shape == shape
        if dtype == "BF16":
            assert new_dtype == "F32"
            widened = (np.frombuffer(data, "<u2").astype(np.uint32) << 16).view(np.float32)
            assert np.array_equal(np.frombuffer(new_data, "<f4"), widened)
        else:
            assert (new_dtype, new_data) == (dtype, data)


def test_bad_dtype_is_a_usage_error():
    from spec_format.convert.write import parse_dtype

    assert parse_dtype("bfloat16") == "BF16" and parse_dtype("F16") == "F16"
    with pytest.raises(UsageError, match="--dtype 'int8'"):
        parse_dtype("int8")


def test_a_speculators_checkpoint_is_sent_to_migrate(cli, made, tmp_path):
    from spec_format.testing import builder

    ckpt = builder.build_checkpoint(tmp_path / "spec", builder.tiny_config("eagle3")).path
    r = cli("convert", ckpt, "-o", tmp_path / "out")
    assert r.exit_code == 2
    assert "already a speculators-format checkpoint" in r.output


def test_hostile_sizes_are_refused_quickly_without_allocating(cli, made):
    import resource
    import time

    # a config claiming a 2**40-wide draft over tiny tensors: refused by shape, nothing read
    src = made.source(overrides={"hidden_size": 2**40, "intermediate_size": 2**41})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    r = _convert(cli, made, src)
    assert r.exit_code == 2, r.output
    assert "has shape" in r.output and "H=1099511627776" in r.output
    assert time.perf_counter() - t < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB
    assert not (made.root / "out").exists()


@pytest.mark.parametrize("missing", ["t2d", "d2t"])
def test_a_missing_vocabulary_map_is_rebuilt_from_the_other(cli, made, missing):
    full = tensors(made.source("full"))
    src = made.source(drop=[missing])
    out = made.root / "out"
    r = cli("convert", src, "-o", out, "--verifier", made.verifier, "--aux-layer-ids", AUX)
    assert r.exit_code == 0, r.output
    other = "d2t" if missing == "t2d" else "t2d"
    assert f"{other} -> {missing}: derive (rebuilt from {other}" in r.output
    assert tensors(out)[missing] == full[missing]  # what the source would have held
    assert cli("validate", out, "--deep", "--verifier", made.verifier).exit_code == 0


def test_a_map_that_cannot_be_rebuilt_leaves_nothing(cli, made):
    src = made.source(drop=["t2d"])
    with load_checkpoint(src) as ckpt:
        d2t = ckpt.tensors["d2t"]
    with open(src / "model.safetensors", "r+b") as f:  # draft id 0 -> target id 5000 (V=1000)
        f.seek(d2t.begin)
        f.write((5000).to_bytes(8, "little", signed=True))
    before = tree(made.root)
    r = _convert(cli, made, src)
    assert r.exit_code == 2, r.output
    assert "d2t[0] = 5000 maps draft id 0 to target id 5000, which is outside [0, 1000)" in r.output
    assert tree(made.root) == before


def test_the_temporary_directory_of_a_killed_run_is_removed(cli, made):
    dead = made.root / ".out.specfmt-999999999-0123abcd.tmp"  # no such pid
    dead.mkdir()
    (dead / "model.safetensors").write_bytes(b"half")
    r = _convert(cli, made, made.source())
    assert r.exit_code == 0, r.output
    assert not dead.exists()


def test_the_aux_ids_hint_is_computed_from_the_verifier_and_works(cli, made):
    """Refused for want of aux layer ids, convert names values from this verifier (8 layers
    here, not a 36-layer model's 2,18,33); following the hint converts and validates."""
    import re
    import shlex

    src = made.source()
    out = made.root / "out"
    refused = cli("convert", src, "-o", out, "--verifier", made.verifier)
    assert refused.exit_code == 2, refused.output
    message = " ".join(refused.output.split())
    (hint,) = re.findall(r"--aux-layer-ids (\S+?) for this 8-layer verifier", message)
    assert hint == "2,4,5"
    followed = cli("convert", src, "-o", out, "--verifier", made.verifier,
                   *shlex.split(f"--aux-layer-ids {hint}"))  # fmt: skip
    assert followed.exit_code == 0, followed.output
    assert "validation: ok" in followed.output
