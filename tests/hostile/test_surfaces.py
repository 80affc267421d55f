"""Hostile cases of issue 23 on every command, run through the real CLI in child processes:
full and closed streams, oversized and special files as inputs and configuration files,
numbers past what a field holds, signals during convert, full file systems, and the
integrity of what is written (Hugging Face cache blobs, DEST's mode and group)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spec_format.testing import builder, safeailab, sources
from spec_format.testing.builder import build_checkpoint, tiny_config

from .limits import ROOT, run_limited
from .streams import run_streams


def clean(run) -> None:
    assert "Traceback" not in run.output and "internal error" not in run.output, run.output[-3000:]
    assert "Exception ignored" not in run.output, run.output[-3000:]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A draft, a SafeAILab source with its verifier, and token counts (built once)."""
    root = tmp_path_factory.mktemp("surfaces")
    draft = build_checkpoint(root / "draft", tiny_config("eagle3"), data="zeros").path
    verifier = root / "verifier"
    builder.build_verifier(verifier, safeailab.verifier_config())
    config = safeailab.safeailab_config(overrides={"eagle_aux_hidden_state_layer_ids": [1, 4, 5]})
    source = safeailab.build_safeailab(root / "src", config, dict(safeailab.safeailab_shapes()))
    counts = root / "counts.json"
    counts.write_text(json.dumps([1] * 64))
    return {"root": root, "draft": draft, "verifier": verifier, "source": source, "counts": counts}


def commands(work) -> dict[str, list]:
    """One invocation per command that prints something on stdout."""
    d, cfg = work["draft"], work["draft"] / "config.json"
    return {
        "validate": ["validate", d],
        "validate-json": ["validate", d, "-f", "json"],
        "migrate": ["migrate", cfg],
        "fix": ["fix", cfg],
        "inspect": ["inspect", d, "--cost-ratio", "0.2"],
        "convert-dry-run": ["convert", work["source"], "--dry-run", "--verifier", work["verifier"]],
        "history": ["history"],
        "rules": ["rules"],
        "explain": ["explain", "C001"],
        "schema-show": ["schema", "show", "eagle3"],
        "help": ["--help"],
        "version": ["--version"],
    }


# -- standard streams --------------------------------------------------------------------------
@pytest.mark.parametrize("stream", ["full", "closed"])
def test_a_full_or_closed_stdout_is_exit_3_in_every_command(work, stream):
    for name, args in commands(work).items():
        run = run_streams(*args, stdout=stream)
        clean(run)
        assert run.returncode == 3, (name, run.output[-2000:])
        assert "standard output" in run.stderr, (name, run.stderr)


def test_a_closed_stderr_keeps_every_exit_code(work):
    """Started with ``2>&-``: messages have nowhere to go, the exit code still says what
    happened (3: an input that cannot be read, 2: a usage error, 0: a clean run)."""
    missing = work["root"] / "missing"
    cases = {
        ("validate", missing): 3,
        ("migrate", missing, "--to", "0.9"): 3,
        ("fix", missing): 3,
        ("inspect", missing): 3,
        ("validate", "--no-such-option"): 2,
        ("history",): 0,
    }
    for args, code in cases.items():
        run = run_streams(*args, stderr="closed")
        assert run.returncode == code, (args, run.returncode, run.output[-2000:])
        assert "Traceback" not in run.output, args


@pytest.mark.parametrize("command", ["validate", "migrate", "fix"])
def test_a_closed_stdin_is_an_unreadable_input(command):
    run = run_streams(command, "-", stdin="closed")
    clean(run)
    assert run.returncode == 3 and "standard input is closed" in run.output, run.output


@pytest.mark.parametrize("command", ["validate", "migrate", "fix"])
def test_more_than_16_mib_on_stdin_is_exit_3_like_a_file(work, command):
    big = work["root"] / "big-stdin"
    if not big.exists():
        with big.open("wb") as f:
            f.truncate(17_000_000)  # zeros, as `head -c 17000000 /dev/zero`
    run = run_streams(command, "-", stdin=big, memory_mb=700, cpu_s=30)
    clean(run)
    assert run.returncode == 3 and "16,777,216 bytes" in run.output, run.output[-2000:]


# -- configuration files -----------------------------------------------------------------------
@pytest.fixture
def special(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    (tmp_path / "dir.toml").mkdir()
    return {
        "device": ("/dev/zero", "a character device"),
        "fifo": (fifo, "a FIFO"),
        "directory": (tmp_path / "dir.toml", "a directory"),
    }


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
@pytest.mark.parametrize("command", ["validate", "migrate", "fix"])
def test_config_naming_a_special_file_is_refused_at_once(work, special, kind, command):
    path, said = special[kind]
    run = run_limited(command, work["draft"] / "config.json", "--config", path, timeout_s=60)
    clean(run)
    assert run.returncode == 2 and said in run.output, run.output


def nested_toml(levels: int = 500) -> str:
    return "x = " + "[" * levels + "]" * levels + "\n"


@pytest.mark.parametrize("command", ["validate", "migrate", "fix"])
def test_deeply_nested_toml_up_the_tree(work, tmp_path, command):
    project = tmp_path / "project"
    shutil.copytree(work["draft"], project / "draft")
    pyproject = project / "pyproject.toml"
    pyproject.write_text(nested_toml())  # no [tool.specfmt]: passed over, never parsed
    run = run_limited(command, project / "draft" / "config.json")
    clean(run)
    assert run.returncode in (0, 1), run.output[-2000:]
    pyproject.write_text("[tool.specfmt]\nselect = ['S']\n" + nested_toml())
    run = run_limited(command, project / "draft" / "config.json")
    clean(run)
    assert run.returncode == 2 and "nested too deeply" in run.output, run.output[-2000:]


@pytest.mark.parametrize("command", ["validate", "migrate", "fix"])
def test_named_pyproject_whose_tool_is_not_a_table(work, tmp_path, command):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("tool = 1\n")
    run = run_limited(command, work["draft"] / "config.json", "--config", pyproject)
    clean(run)
    assert run.returncode == 2 and "tool must be a table" in run.output, run.output


def test_an_oversized_config_file_is_refused_before_parsing(work, tmp_path):
    big = tmp_path / "specfmt.toml"
    with big.open("wb") as f:
        f.truncate(17 << 20)
    run = run_limited("validate", work["draft"], "--config", big, memory_mb=500)
    clean(run)
    assert run.returncode == 2 and "16,777,216-byte limit" in run.output, run.output


# -- numbers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("literal", ["1e20", "1e+308", "64.5"])
def test_a_float_in_an_integer_field_is_a_schema_error(work, tmp_path, literal):
    draft = shutil.copytree(work["draft"], tmp_path / "draft")
    cfg = draft / "config.json"
    doc = cfg.read_text()
    cfg.write_text(doc.replace('"hidden_size": 64', f'"hidden_size": {literal}', 1))
    run = run_limited("validate", draft, "--deep", "--verifier", work["verifier"])
    clean(run)
    assert run.returncode == 1 and "S102" in run.output and "integer" in run.output, run.output
    run = run_limited("migrate", cfg, "--to", "0.9", "--in-place")  # the input fails its schema
    clean(run)
    assert run.returncode == 1 and "hidden_size" in run.output, run.output
    run = run_limited("fix", cfg, "--in-place")  # fix repairs defaults; the value stays as read
    clean(run)
    assert run.returncode in (0, 1), run.output
    assert json.loads(cfg.read_text())["transformer_layer_config"]["hidden_size"] == float(literal)


def test_convert_never_writes_a_float_hidden_size(work, tmp_path):
    source = shutil.copytree(work["source"], tmp_path / "src")
    cfg = source / "config.json"
    doc = json.loads(cfg.read_text())
    text = json.dumps(doc).replace(f'"hidden_size": {doc["hidden_size"]}', '"hidden_size": 1e+308')
    cfg.write_text(text)
    out = tmp_path / "out"
    run = run_limited("convert", source, "-o", out, "--verifier", work["verifier"])
    clean(run)
    assert run.returncode in (1, 2) and not out.exists(), run.output[-2000:]
    assert [p.name for p in tmp_path.iterdir()] == ["src"]  # no temporary directory left


@pytest.mark.parametrize(
    ("key", "literal"),
    [
        ("max_position_embeddings", "1e+308"),  # copied as is: only the output check saw it
        ("intermediate_size", "1e20"),
        ("head_dim", "16.5"),  # the contract fell back to H / nH and blamed the tensors
        ("num_key_value_heads", "1e+308"),
    ],
)
def test_convert_refuses_a_float_in_an_integer_field_before_planning_tensors(
    tmp_path, key, literal
):
    """The number guard runs on the planned config, before the tensors are matched against
    it and before anything is written (exit 2, the field named), for every source kind
    that copies source keys into the output (here z-lab DFlash)."""
    source = sources.build_zlab_dflash(tmp_path / "src", sources.zlab_dflash_config()).path
    cfg = source / "config.json"
    doc = json.loads(cfg.read_text())
    cfg.write_text(json.dumps({**doc, key: "@"}).replace('"@"', literal))
    run = run_limited("convert", source, "-o", tmp_path / "out")
    clean(run)
    assert run.returncode == 2, run.output[-2000:]
    assert f"{key} = {float(literal)!r}" in run.output and "needs an integer" in run.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize("size", ["infGB", "1e400KB", "nanMB", "-5GB", "0"])
def test_max_shard_size_out_of_range_is_a_usage_error(work, tmp_path, size):
    run = run_limited(
        "convert", work["source"], "-o", tmp_path / "o", "--max-shard-size", size,
        "--verifier", work["verifier"],
    )  # fmt: skip
    clean(run)
    assert run.returncode == 2 and "--max-shard-size" in run.output, run.output
    assert not (tmp_path / "o").exists()


def strict_json(text: str):
    def refuse(name):
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("ratio", ["1e308", "inf", "nan", "-1"])
def test_cost_ratio_out_of_range_is_a_usage_error(work, ratio):
    run = run_limited("inspect", work["draft"], "--cost-ratio", ratio, "-f", "json")
    clean(run)
    assert run.returncode == 2 and "--cost-ratio" in run.output, run.output


def test_inspect_json_is_json(work):
    run = run_limited("inspect", work["draft"], "--cost-ratio", "1e6", "-f", "json")
    clean(run)
    assert run.returncode == 0, run.output
    strict_json(run.stdout)


def test_token_counts_whose_total_overflows_are_refused(work, tmp_path):
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps([1e308] * 64))
    run = run_limited("inspect", work["draft"], "--token-freq", counts, "-f", "json")
    clean(run)
    assert run.returncode == 3 and "more than a float holds" in run.output, run.output
    assert "RuntimeWarning" not in run.output


def npy_claiming(path: Path, shape: tuple[int, ...], payload: bytes = b"\0" * 64) -> Path:
    header = repr({"descr": "<f8", "fortran_order": False, "shape": shape}).encode()
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + payload)
    return path


@pytest.mark.parametrize("shape", [(10**12,), (32,), (10**6, 10**6)])
def test_npy_header_claiming_a_huge_shape_is_refused_before_allocating(work, tmp_path, shape):
    counts = npy_claiming(tmp_path / "counts.npy", shape)
    run = run_limited("inspect", work["draft"], "--token-freq", counts, memory_mb=600)
    clean(run)
    assert run.returncode == 3 and "--token-freq" in run.output, run.output


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_token_counts_that_are_not_a_regular_file_are_named(work, tmp_path, kind):
    path = tmp_path / "counts.npy"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    run = run_limited("inspect", work["draft"], "--token-freq", path, timeout_s=60)
    clean(run)
    said = {"fifo": "a FIFO", "directory": "a directory", "device": "a character device"}[kind]
    assert run.returncode == 3 and said in run.output, run.output


def test_oversized_token_counts_are_refused_without_reading_them(work, tmp_path):
    counts = tmp_path / "counts.npy"
    with counts.open("wb") as f:
        f.truncate(160 << 20)
    run = run_limited("inspect", work["draft"], "--token-freq", counts, memory_mb=600)
    clean(run)
    assert run.returncode == 3 and "limit" in run.output, run.output


@pytest.mark.parametrize("experts", ["1" + "0" * 30, "8.5", '"8"'])
def test_an_expert_count_no_integer_holds_is_not_counted_as_dense(work, tmp_path, experts):
    verifier = tmp_path / "verifier.json"
    doc = {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": 64,
        "intermediate_size": 128,
        "moe_intermediate_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 32,
        "vocab_size": 256,
        "num_experts_per_tok": 2,
        "num_experts": "EXPERTS",
    }
    verifier.write_text(json.dumps(doc).replace('"EXPERTS"', experts))
    run = run_limited("inspect", work["draft"], "--verifier", verifier, "-f", "json")
    clean(run)
    assert run.returncode == 2 and "num_experts" in run.output, run.output


@pytest.mark.parametrize(
    ("literal", "gamma"), [("1e20", None), ("3.5", None), ('"3"', None), ("0", None), ("3.0", 3)]
)
def test_inspect_reads_speculative_tokens_as_the_schema_does(work, tmp_path, literal, gamma):
    """A float with no fraction is the integer it spells (as for the schema); anything else
    is no count of tokens: said as such, not as a missing key, and the economics wait for
    --gamma."""
    draft = shutil.copytree(work["draft"], tmp_path / "draft")
    doc = json.loads((draft / "config.json").read_text())
    doc["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = "VALUE"
    (draft / "config.json").write_text(json.dumps(doc).replace('"VALUE"', literal))
    run = run_limited("inspect", draft, "--cost-ratio", "0.2", "-f", "json")
    clean(run)
    assert run.returncode == 0, run.output
    report = json.loads(run.stdout)
    got = [e["gamma"] for e in report["economics"] if e["source"] == "speculative_tokens"]
    assert got == ([gamma] if gamma else []), report["economics"]
    if gamma is None:
        assert any("not a whole number of tokens" in n for n in report["notes"]), report["notes"]


@pytest.mark.parametrize("literal", ["1e20", "64.5", "1e+308", "1" + "0" * 30])
@pytest.mark.parametrize("command", ["validate", "inspect"])
def test_a_verifier_size_no_integer_holds_is_refused_when_read(work, tmp_path, literal, command):
    """The verifier's sizes feed V001-V003 and inspect's counts: an unusable one is a usage
    error naming the key, not a check silently skipped (validate said ok)."""
    doc = json.loads((work["verifier"] / "config.json").read_text())
    doc["hidden_size"] = "VALUE"
    verifier = tmp_path / "verifier.json"
    verifier.write_text(json.dumps(doc).replace('"VALUE"', literal))
    run = run_limited(command, work["draft"], "--verifier", verifier)
    clean(run)
    assert run.returncode == 2 and "hidden_size is" in run.output, run.output


@pytest.mark.parametrize("command", ["validate", "inspect"])
def test_a_verifier_size_with_a_zero_fraction_is_the_integer(work, tmp_path, command):
    doc = json.loads((work["verifier"] / "config.json").read_text())
    doc["hidden_size"] = float(doc["hidden_size"] * 2)  # 128.0: the draft's is 64
    verifier = tmp_path / "verifier.json"
    verifier.write_text(json.dumps(doc))
    run = run_limited(command, work["draft"], "--verifier", verifier)
    clean(run)
    if command == "validate":
        assert run.returncode == 1 and "V001" in run.output, run.output
    else:
        assert run.returncode == 0, run.output


# -- signals -----------------------------------------------------------------------------------
def _signalled_convert(work, out: Path, marker: Path, sig, disposition, pause_s: float = 60):
    """``specfmt convert`` paused in the middle of writing (signal_convert.py), sent ``sig``
    once its temporary output exists; the child starts with ``sig`` set to ``disposition``
    (whatever the test runner's parent does with it: a job a shell starts in the background
    ignores SIGINT). Returns the finished child and its standard error."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SIGNAL_CONVERT_PAUSE": str(pause_s)}
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("signal_convert.py")), str(marker),
         "convert", str(work["source"]), "-o", str(out), "--verifier", str(work["verifier"])],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(sig, disposition),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), child.communicate(timeout=5)
        assert any(p.name.startswith(".out.specfmt-") for p in out.parent.iterdir())
        child.send_signal(sig)
        _, err = child.communicate(timeout=60 + pause_s)
    finally:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
    return child, err.decode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=str)
def test_a_signal_during_convert_removes_the_temporary_output(work, tmp_path, sig):
    marker, out = tmp_path / "writing", tmp_path / "dest" / "out"
    out.parent.mkdir()
    child, err = _signalled_convert(work, out, marker, sig, signal.SIG_DFL)
    assert child.returncode == 128 + sig, err
    assert "Traceback" not in err, err
    assert list(out.parent.iterdir()) == []  # neither DEST nor a temporary directory


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM], ids=str)
def test_a_signal_the_caller_ignores_stays_ignored(work, tmp_path, sig):
    """As under ``nohup``: convert goes on past the signal and publishes its output."""
    marker, out = tmp_path / "writing", tmp_path / "dest" / "out"
    out.parent.mkdir()
    child, err = _signalled_convert(work, out, marker, sig, signal.SIG_IGN, pause_s=1)
    assert child.returncode == 0, err
    assert (out / "config.json").is_file() and any(out.glob("*.safetensors")), err
    assert [p.name for p in out.parent.iterdir()] == ["out"]  # no temporary directory left


# -- full and read-only file systems -------------------------------------------------------------
def test_convert_onto_a_full_disk_is_exit_3_and_leaves_nothing(work, tmp_path):
    """A file-size limit fails the write part-way, as a full disk does (EFBIG for ENOSPC)."""
    out = tmp_path / "dest" / "out"
    run = run_streams(
        "convert", work["source"], "-o", out, "--verifier", work["verifier"], fsize=4096
    )
    clean(run)
    assert run.returncode == 3, run.output[-2000:]
    assert list(out.parent.iterdir()) == []


@pytest.fixture
def small_tmpfs(tmp_path):
    """A real 256 KiB file system (root only): writes past it fail with ENOSPC."""
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_every_writer_on_a_full_file_system(work, small_tmpfs):
    filler = small_tmpfs / "filler"
    with filler.open("wb") as f, contextlib.suppress(OSError):
        f.write(b"\0" * (256 << 10))  # the file system is full
    run = run_limited("convert", work["source"], "-o", small_tmpfs / "out", "--verifier",
                      work["verifier"])  # fmt: skip
    clean(run)
    assert run.returncode == 3 and "No space left" in run.output, run.output[-2000:]
    for args in (
        ("migrate", work["draft"] / "config.json", "-o", small_tmpfs / "m.json"),
        ("fix", work["draft"] / "config.json", "-o", small_tmpfs / "f.json"),
    ):
        run = run_limited(*args)
        clean(run)
        assert run.returncode == 3, (args, run.output)
    assert sorted(p.name for p in small_tmpfs.iterdir()) == ["filler"]


# -- integrity of what is written ------------------------------------------------------------------
def hf_cache_snapshot(root: Path, config: bytes) -> tuple[Path, Path, Path]:
    """A Hugging Face cache repository with two snapshots sharing one config blob."""
    import hashlib

    repo = root / "models--org--draft"
    blob = repo / "blobs" / hashlib.sha256(config).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(config)
    links = []
    for rev in ("a" * 40, "b" * 40):
        snap = repo / "snapshots" / rev
        snap.mkdir(parents=True)
        (snap / "config.json").symlink_to(os.path.relpath(blob, snap))
        links.append(snap / "config.json")
    return blob, links[0], links[1]


@pytest.mark.parametrize("command", ["migrate", "fix"])
def test_in_place_in_a_hf_cache_snapshot_never_rewrites_the_blob(work, tmp_path, command):
    doc = json.loads((work["draft"] / "config.json").read_text())
    doc["speculators_version"] = "0.5.0"
    del doc["norm_before_residual"]  # a disputed default fix writes out (a change of content)
    original = json.dumps(doc).encode()
    blob, mine, other = hf_cache_snapshot(tmp_path, original)
    run = run_limited(command, mine, "--in-place")
    clean(run)
    assert run.returncode == 0, run.output
    assert blob.read_bytes() == original  # still the content its name hashes
    assert other.read_bytes() == original and other.is_symlink()  # the other snapshot
    assert not mine.is_symlink() and mine.read_bytes() != original  # a regular file now
    # a user's own symlink (not into a content-addressed store) is still written through
    target = tmp_path / "mine.json"
    target.write_bytes(original)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    run = run_limited(command, link, "--in-place")
    assert run.returncode == 0 and link.is_symlink() and target.read_bytes() != original


@pytest.mark.parametrize("mode", [0o700, 0o2770])
def test_an_empty_dest_keeps_its_mode_and_group(work, tmp_path, mode):
    dest = tmp_path / "dest"
    dest.mkdir()
    group = next((g for g in os.getgroups() if g != os.getegid()), os.getegid())
    os.chown(dest, -1, group)
    dest.chmod(mode)
    run = run_limited("convert", work["source"], "-o", dest, "--verifier", work["verifier"])
    clean(run)
    assert run.returncode == 0, run.output[-2000:]
    st = dest.stat()
    assert stat.S_IMODE(st.st_mode) == mode and st.st_gid == group
    assert (dest / "config.json").stat().st_gid == group


# -- smaller -------------------------------------------------------------------------------------
@pytest.mark.parametrize("ref", ["hf://ORG/..", "hf://ORG/.", "hf://ORG/a..b", "hf://ORG/-x"])
def test_hf_ids_the_hub_refuses_are_usage_errors(work, ref):
    run = run_limited("validate", ref, env={"HF_HUB_OFFLINE": "1"})
    clean(run)
    assert run.returncode == 2 and "is not hf://ORG/NAME" in run.output, run.output


def test_convert_creates_missing_parents_and_follows_a_dest_symlink(work, tmp_path):
    run = run_limited("convert", work["source"], "-o", tmp_path / "a" / "b" / "c",
                      "--verifier", work["verifier"])  # fmt: skip
    clean(run)
    assert run.returncode == 0 and (tmp_path / "a" / "b" / "c" / "config.json").is_file()
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    run = run_limited("convert", work["source"], "-o", tmp_path / "link",
                      "--verifier", work["verifier"])  # fmt: skip
    clean(run)
    assert run.returncode == 0, run.output[-2000:]
    assert (tmp_path / "link").is_symlink() and (real / "config.json").is_file()


def test_convert_error_lines_are_capped(work, tmp_path):
    source = shutil.copytree(work["source"], tmp_path / "src")
    cfg = source / "config.json"
    doc = json.loads(cfg.read_text())
    doc["hidden_size"] = "x" * 300_000
    cfg.write_text(json.dumps(doc))
    run = run_limited("convert", source, "-o", tmp_path / "o", "--verifier", work["verifier"])
    clean(run)
    assert run.returncode != 0 and max(map(len, run.output.splitlines())) <= 2_100, len(run.output)


def test_migrate_dash_o_dash_writes_stdout(work, tmp_path):
    run = run_streams("migrate", "-", "-o", "-", stdin=work["draft"] / "config.json")
    clean(run)
    assert run.returncode == 0 and json.loads(run.stdout)["speculators_model_type"] == "eagle3"
    assert not (ROOT / "-").exists()


# -- migrate, fix and the misspelled-key check cost what validate costs --------------------------
def _hostile_big(path: Path, kind: str) -> Path:
    doc = tiny_config("eagle3")
    if kind == "300k-unknown-keys":  # the misspelled-key check looks at every one
        doc.update({f"unknown_key_{i}": i for i in range(300_000)})
    elif kind == "1.5m-bad-items":
        doc["eagle_aux_hidden_state_layer_ids"] = ["x"] * 1_500_000
    elif kind == "1.4m-aux-ids":
        doc["eagle_aux_hidden_state_layer_ids"] = list(range(1_400_000))
    else:  # 100k proposal methods
        methods = doc["speculators_config"]["proposal_methods"]
        doc["speculators_config"]["proposal_methods"] = [dict(methods[0]) for _ in range(100_000)]
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(doc, separators=(",", ":")))
    return path / "config.json"


def _best_of(pairs: int, *commands: tuple) -> list[tuple[float, int]]:
    """Each command ``pairs`` times, interleaved (a burst of load hits each alike): the
    least CPU seconds of each (what it costs when nothing competes) and its peak resident
    memory (the kernel's count, the same under load). RLIMIT_CPU and RLIMIT_AS stay as a
    safety net: a run that goes past them fails."""
    from .streams import run_measured

    best = [(float("inf"), 0)] * len(commands)
    for _ in range(pairs):
        for i, args in enumerate(commands):
            run, cpu, rss = run_measured(*args, cpu_s=120, memory_mb=900)
            clean(run)
            assert run.returncode in (0, 1), (args[0], run.returncode, run.output[-2000:])
            best[i] = (min(best[i][0], cpu), max(best[i][1], rss))
    return best


@pytest.mark.slow  # three interleaved triples of runs on 2-15 MB configs: 20-45 s each
@pytest.mark.parametrize(
    "kind", ["300k-unknown-keys", "1.5m-bad-items", "1.4m-aux-ids", "100k-proposal-methods"]
)
def test_migrate_and_fix_stay_within_twice_validates_cpu_and_memory(tmp_path, kind):
    """validate, migrate and fix on the same input, three interleaved triples: the least
    CPU of migrate and of fix within twice validate's (+ 0.5 s of start-up rounding), their
    peak memory within twice (each rewrite copies only the paths it writes)."""
    cfg = _hostile_big(tmp_path / kind, kind)
    commands = (("validate", cfg), ("migrate", cfg), ("fix", cfg))
    (cpu, rss), *rewrites = _best_of(3, *commands)
    for (command, _), (their_cpu, their_rss) in zip(commands[1:], rewrites, strict=True):
        assert their_rss <= 2 * rss, (command, their_rss, rss)
        assert their_cpu <= 2 * cpu + 0.5, (command, their_cpu, cpu)


@pytest.mark.slow  # two interleaved pairs of 300k-key configs: ~30 s
def test_the_misspelled_key_check_costs_at_most_what_reading_the_keys_costs(tmp_path):
    """300k unknown keys at the top level (each looked at by the misspelled-key check)
    against the same keys one level down in an object no check looks into: at most twice
    the CPU and memory (the check was ~0.2 ms per key, 100x the reading)."""
    keys = {f"unknown_key_{i}": i for i in range(300_000)}
    flat, nested = tiny_config("eagle3"), tiny_config("eagle3")
    flat.update(keys)
    nested["x_unchecked"] = keys
    for name, doc in (("nested", nested), ("flat", flat)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps(doc))
    commands = (("validate", tmp_path / "nested"), ("validate", tmp_path / "flat"))
    (cpu, rss), (flat_cpu, flat_rss) = _best_of(2, *commands)
    assert flat_cpu <= 2 * cpu + 0.5 and flat_rss <= 2 * rss, (flat_cpu, cpu, flat_rss, rss)
