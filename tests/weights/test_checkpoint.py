"""What a checkpoint directory holds, how header problems surface, and exit codes."""

from __future__ import annotations

import json
import struct

import pytest

from spec_format.parsers.checkpoint import load_checkpoint
from spec_format.runner.validation import ValidateOptions, validate
from spec_format.testing.builder import TensorData, build_checkpoint, tiny_config, write_safetensors
from tests.weights.conftest import check, rule_ids


def raw(header: bytes | dict, data: bytes = b"") -> bytes:
    body = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(body)) + body + data


E = {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}

#: a broken model.safetensors per header rule (each kind alone: tests/safetensors)
BROKEN_FILES = {
    "H001": b"\x01\x00",
    "H002": struct.pack("<Q", 10**9) + b"{}",
    "H003": struct.pack("<Q", 64) + b"{}",
    "H004": raw(b'{"\xc3\x28": 1}'),
    "H005": raw(b'{"a": NaN}'),
    "H006": raw(b"[]"),
    "H007": raw(
        b'{"a": ' + json.dumps(E).encode() + b', "a": ' + json.dumps(E).encode() + b"}", b"\0"
    ),
    "H008": raw({"a": {"dtype": "U8", "shape": [1]}}, b"\0"),
    "H009": raw({"a": {**E, "dtype": "u8"}}, b"\0"),
    "H010": raw({"a": {**E, "shape": [-1]}}, b"\0"),
    "H011": raw({"a": {**E, "data_offsets": [1, 2]}}, b"\0\0"),
    "H012": raw({"a": {**E, "dtype": "F32"}}, b"\0"),
    "H013": raw({"__metadata__": {"n": 1}}),
    "H014": raw({"a": E}, b"\0\0\0"),
}


@pytest.mark.parametrize(("rule", "blob"), sorted(BROKEN_FILES.items()))
def test_header_errors_surface_as_findings(tmp_path, rule, blob):
    built = build_checkpoint(tmp_path / "ckpt", tiny_config("eagle3"))
    (built.path / "model.safetensors").write_bytes(blob)
    report = check(built.path)
    assert rule in rule_ids(report)
    (file_report,) = report.files
    assert file_report.model_type == "eagle3"  # the config was still checked ...
    assert report.exit_code == 1  # ... so a broken header is an error, not "unreadable"
    assert all(
        f.file.endswith("model.safetensors") for f in file_report.findings if f.rule[0] == "H"
    )


def test_a_broken_header_hides_no_config_finding(tmp_path):
    built = build_checkpoint(
        tmp_path / "ckpt", tiny_config("eagle3", {"norm_before_fc": True, "fc_norm": True})
    )
    (built.path / "model.safetensors").write_bytes(BROKEN_FILES["H003"])
    ids = {f.rule for f in check(built.path).files[0].findings}
    assert "H003" in ids and "X002" in ids  # both layers reported


@pytest.mark.parametrize(
    ("blob", "exit_code"),
    [(BROKEN_FILES["H003"], 3), (BROKEN_FILES["H012"], 1), (raw({"a": E}, b"\0"), 0)],
    ids=["unparseable", "bad-entry", "fine"],
)
def test_a_bare_safetensors_file_is_audited_alone(tmp_path, blob, exit_code):
    path = tmp_path / "draft.safetensors"
    path.write_bytes(blob)
    report = validate([str(path)])
    assert report.exit_code == exit_code  # unreadable only when nothing could be checked


def test_checkpoint_records_where_every_tensor_lives(tmp_path):
    import safetensors.torch

    built = build_checkpoint(tmp_path / "c", tiny_config("dspark"), shards=3)
    with load_checkpoint(built.path) as ckpt:
        assert ckpt.layout == "sharded" and len(ckpt.files) == 3 and not ckpt.issues
        assert ckpt.metadata == {"format": "pt"}
        assert set(ckpt.tensors) == set(built.tensors)
        header_bytes = ckpt.bytes_read
        for name in ("d2t", "t2d", "markov_head.markov_w1.weight"):
            record = ckpt.tensors[name]
            data = ckpt.read_tensor(name, 1 << 20)
            tensor = safetensors.torch.load_file(str(built.path / record.file))[name]
            assert (
                data
                == tensor.contiguous().view(-1).view(__import__("torch").uint8).numpy().tobytes()
            )
        assert ckpt.bytes_read > header_bytes
    index = json.loads((built.path / "model.safetensors.index.json").read_bytes())
    assert header_bytes < 16 * 1024 + len(json.dumps(index)) + 3 * 4096


def test_iter_chunks_yields_whole_elements_through_a_small_buffer(tmp_path):
    write_safetensors(
        tmp_path / "model.safetensors",
        {"w": TensorData("F32", (1001,), bytes(range(256)) * 15 + bytes(164))},
    )
    (tmp_path / "config.json").write_text("{}")
    with load_checkpoint(tmp_path) as ckpt:
        chunks = [bytes(c) for c in ckpt.iter_chunks("w", bytearray(30))]
        assert all(len(c) % 4 == 0 for c in chunks) and max(map(len, chunks)) == 28
        assert b"".join(chunks) == ckpt.read_tensor("w", 1 << 20)


def test_index_and_single_file_side_by_side_are_reported(tmp_path):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), shards=2)
    build_checkpoint(
        tmp_path / "c", tiny_config("eagle3"), write_config=False
    )  # adds model.safetensors
    report = check(built.path)
    (finding,) = [f for f in report.files[0].findings if f.rule == "H022"]
    assert "vLLM loads the shards" in finding.message


def test_only_a_stray_file_means_no_weights(tmp_path):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"))
    (built.path / "model.safetensors").rename(built.path / "weights.safetensors")
    report = check(built.path)
    assert rule_ids(report) == {"H022"}
    assert any("no model.safetensors" in s for s in report.files[0].skipped)
    assert "Rename it to model.safetensors" in report.files[0].findings[-1].message or any(
        "Rename it" in f.message for f in report.files[0].findings
    )


def test_a_directory_without_weights_is_checked_as_config_only(tmp_path):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"))
    (built.path / "model.safetensors").unlink()
    report = check(built.path)
    assert not rule_ids(report) and report.exit_code == 0
    assert any(note.startswith(f"N003 {built.path} has no weights") for note in report.notes)
    # asked to read tensor values that are not there: I013, exit 3 (see tests/test_cli_checks.py)
    report = check(built.path, deep=True)
    assert rule_ids(report, "I") == {"I013"} and report.exit_code == 3


def test_an_unreadable_index_is_one_finding(tmp_path):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), shards=2)
    (built.path / "model.safetensors.index.json").write_text("{not json")
    report = check(built.path)
    assert rule_ids(report) == {"H017"}


def test_validate_options_reach_the_engine_through_the_cli(tmp_path, cli):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), nan=["lm_head.weight"])
    (tmp_path / "v.json").write_text(
        json.dumps({"hidden_size": 32, "vocab_size": 256, "num_hidden_layers": 8})
    )
    result = cli(
        "validate",
        built.path,
        "--deep",
        "--scan-weights",
        "--verifier",
        tmp_path / "v.json",
        "-f",
        "json",
    )
    doc = json.loads(result.output)
    rules = {f["rule"] for f in doc["files"][0]["findings"]}
    assert {"D010", "V001"} <= rules and result.exit_code == 1
    assert not [n for n in doc["notes"] if "--verifier" in n]
    plain = cli("validate", built.path, "-f", "json")
    assert any("no --verifier given" in n for n in json.loads(plain.output)["notes"])
    missing = cli("validate", built.path, "--verifier", tmp_path / "nowhere")
    assert missing.exit_code == 2 and "--verifier" in missing.output


def test_select_and_ignore_apply_to_weights_rules(tmp_path):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), drop=["d2t", "norm.weight"])
    assert rule_ids(validate([str(built.path)], ValidateOptions(select=frozenset({"W008"})))) == {
        "W008"
    }
    assert rule_ids(validate([str(built.path)], ValidateOptions(ignore=frozenset({"W008"})))) == {
        "W001"
    }


def test_the_header_audit_needs_neither_numpy_nor_torch(tmp_path):
    import subprocess
    import sys

    built = build_checkpoint(tmp_path / "c", tiny_config("dspark"), drop=["norm.weight"])
    code = (
        "import sys; sys.modules['numpy'] = None; sys.modules['torch'] = None\n"
        "from spec_format.runner.validation import validate\n"
        f"r = validate([{str(built.path)!r}])\n"
        "print(sorted({f.rule for fr in r.files for f in fr.findings}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "W001" in out.stdout


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b'{"metadata": {}}',
            'model.safetensors.index.json: index has no "weight_map" object mapping tensor '
            "names to shard files; write it again with save_pretrained.",
        ),
        (
            b'{"weight_map": {"a": "../x.safetensors"}}',
            "model.safetensors.index.json: weight_map entry for 'a' is \"../x.safetensors\"; "
            "shard names must be plain file names ending in .safetensors in the checkpoint "
            "directory (no paths).",
        ),
    ],
)
def test_an_unusable_shard_index_says_what_is_wrong(data, message):
    from spec_format.parsers.shard_index import ShardIndexError, parse_index

    try:
        index = parse_index(data)
    except ShardIndexError as refused:
        assert str(refused) == message
    else:
        assert [str(p) for p in index.problems] == [message]


def test_a_file_that_shrank_after_its_header_was_read_names_the_tensor_cut_short(tmp_path):
    from spec_format.parsers.safetensors import HeaderError, HeaderErrorKind

    weights = tmp_path / "model.safetensors"
    write_safetensors(weights, {"t": TensorData("F32", (64,), bytes(256))})
    ckpt = load_checkpoint(tmp_path)
    with open(weights, "r+b") as f:
        f.truncate(weights.stat().st_size - 100)
    with pytest.raises(HeaderError) as cut:
        for _ in ckpt.iter_chunks("t", bytearray(64)):
            pass
    assert cut.value.kind is HeaderErrorKind.BUFFER_SIZE_MISMATCH
    assert str(cut.value) == "t: file ended inside the tensor"


def test_an_unusable_shard_index_is_an_issue_of_the_index_file(tmp_path):
    write_safetensors(tmp_path / "a.safetensors", {"t": TensorData("F32", (1,), bytes(4))})
    (tmp_path / "model.safetensors.index.json").write_text('{"metadata": {}}')
    ckpt = load_checkpoint(tmp_path)
    assert [(i.rule, i.file, i.tensor) for i in ckpt.issues] == [
        ("invalid-shard-index", str(tmp_path / "model.safetensors.index.json"), None)
    ]
    assert ckpt.issues[0].message.startswith(
        'model.safetensors.index.json: index has no "weight_map" object'
    )


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("model-00001-of-00002.safetensors", True),
        ("model.safetensors", True),
        (".hidden.safetensors", False),  # a dot file is not a shard a writer makes
        ("sub/model.safetensors", False),
        ("sub\\model.safetensors", False),
        ("model.bin", False),
        ("..", False),
        ("model\x00.safetensors", False),
    ],
)
def test_a_shard_name_is_a_plain_visible_safetensors_file(name, safe):
    from spec_format.parsers.shard_index import ShardIndexError, parse_index, safe_shard_name

    assert safe_shard_name(name) is safe
    data = json.dumps({"weight_map": {"fc.weight": name}}).encode()
    try:
        index = parse_index(data)
    except ShardIndexError:
        assert not safe
        return
    problems = [str(p) for p in index.problems]
    if safe:
        assert problems == []
    else:
        assert len(problems) == 1 and "weight_map entry for 'fc.weight'" in problems[0]
        assert "shard names must be plain file names" in problems[0]
