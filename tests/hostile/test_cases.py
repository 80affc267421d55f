"""The hostile cases of issue 11, one test each, run through the real CLI in a child process
under memory and CPU limits: a clear finding or error with a documented exit code, never a
traceback, a hang or an internal error; other inputs of the same run still reported."""

from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import tempfile
from pathlib import Path

import pytest

from spec_format.testing.builder import build_checkpoint, tiny_config
from tests.hostile.limits import Run, run_limited

IS_ROOT = os.geteuid() == 0


def in_process(*args) -> Run:
    """The real CLI in this process (fast); for cases that need no resource limit."""
    from typer.testing import CliRunner

    from spec_format.cli.app import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def clean(run) -> None:
    assert "Traceback" not in run.output and "internal error" not in run.output, run.output


@pytest.fixture
def ckpt(tmp_path):
    return build_checkpoint(tmp_path / "ckpt", tiny_config("eagle3"), data="zeros").path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


def config_with(ckpt: Path, old: str, new: str) -> str:
    text = (ckpt / "config.json").read_text()
    assert old in text
    return text.replace(old, new, 1)


# -- numbers ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "literal", ["1e999", "1e400", "-1e999", "9" * 5000, "18446744073709551616"]
)
@pytest.mark.parametrize("command", ["fix", "migrate"])
def test_out_of_range_numbers_are_refused_not_written_as_infinity(ckpt, command, literal):
    cfg = ckpt / "config.json"
    write(cfg, config_with(ckpt, '"rope_theta": 10000.0', f'"rope_theta": {literal}'))
    before = cfg.read_bytes()
    run = in_process(command, cfg, "--in-place")
    clean(run)
    assert run.returncode == 3 and "does not fit a 64-bit reader" in run.output
    assert cfg.read_bytes() == before
    run = in_process("validate", cfg)
    assert run.returncode == 1 and "I010" in run.output


@pytest.mark.parametrize("command", ["fix", "migrate"])
def test_nan_literals_are_never_copied_into_the_output(ckpt, command):
    cfg = ckpt / "config.json"
    write(cfg, config_with(ckpt, '"rms_norm_eps": 1e-06', '"rms_norm_eps": NaN'))
    run = in_process(command, cfg)
    clean(run)
    assert run.returncode == 3 and "NaN is not valid JSON" in run.output
    assert "NaN" not in run.stdout


@pytest.mark.parametrize(
    "where", ["config", "verifier", "speculators_version"], ids=lambda w: f"4301-digits-in-{w}"
)
def test_integers_past_pythons_digit_limit(ckpt, tmp_path, where):
    cfg, verifier = ckpt / "config.json", tmp_path / "verifier.json"
    write(verifier, json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 64}))
    huge = "7" * 4301
    if where == "config":
        write(cfg, config_with(ckpt, '"draft_vocab_size": 64', f'"draft_vocab_size": {huge}'))
    elif where == "verifier":
        write(verifier, f'{{"architectures": ["LlamaForCausalLM"], "hidden_size": {huge}}}')
    else:
        write(
            cfg,
            config_with(ckpt, '"speculators_version": "0.9.0"', f'"speculators_version": {huge}'),
        )
    run = in_process("validate", cfg, "--verifier", verifier)
    clean(run)
    if where == "verifier":  # no check can use that hidden_size: refused, naming it
        assert run.returncode == 2 and "hidden_size is past what a double holds" in run.output
    else:
        assert run.returncode in (0, 1)
    for command in ("migrate", "fix"):
        clean(in_process(command, cfg, "--verifier", verifier))


def test_a_lone_surrogate_is_reported_and_never_crashes_a_rewrite(ckpt):
    cfg = ckpt / "config.json"
    write(cfg, config_with(ckpt, '"model_type": "llama"', '"model_type": "llama\\ud800"'))
    run = in_process("validate", cfg)
    clean(run)
    assert run.returncode == 1 and "I004" in run.output and "surrogate" in run.output
    for command in ("migrate", "fix"):
        run = in_process(command, cfg, "--in-place")
        clean(run)
        assert run.returncode == 3 and "surrogate" in run.output


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"architectures": [\n    "Eagle3Speculator"\n  ]', '"architectures": 1'),
        ('"architectures": [\n    "Eagle3Speculator"\n  ]', '"architectures": true'),
        ('"num_hidden_layers": 1', '"num_hidden_layers": 1e30'),
        ('"num_hidden_layers": 1', '"num_hidden_layers": 10000000000000000000'),
        ('"num_hidden_layers": 1', '"num_hidden_layers": 5000'),
        ('"head_dim": 32', '"head_dim": 1e400'),
    ],
    ids=[
        "architectures-1",
        "architectures-true",
        "layers-1e30",
        "layers-1e19",
        "layers-5000",
        "head-dim-1e400",
    ],
)
def test_numbers_and_types_never_reach_range_or_float(ckpt, tmp_path, old, new):
    cfg = ckpt / "config.json"
    write(cfg, config_with(ckpt, old, new))
    verifier = write(
        tmp_path / "v" / "config.json",
        '{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 8,'
        ' "vocab_size": 256, "num_attention_heads": 1e400, "head_dim": 1e400,'
        ' "rope_theta": 1e400}',
    )
    run = in_process("validate", ckpt, "--verifier", verifier, "--deep", "--scan-weights")
    clean(run)
    assert run.returncode in (0, 1)
    for command in ("migrate", "fix"):
        clean(in_process(command, cfg, "--verifier", verifier))


def test_scan_weights_with_offsets_near_2_64(ckpt):
    path = ckpt / "model.safetensors"
    blob = path.read_bytes()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8 : 8 + n])
    name = next(k for k in header if k != "__metadata__")
    header[name]["data_offsets"] = [2**64 - 16, 2**64 - 8]
    body = json.dumps(header).encode()
    body += b" " * (-len(body) % 8)
    path.write_bytes(struct.pack("<Q", len(body)) + body + blob[8 + n :])
    run = in_process("validate", ckpt, "--scan-weights", "--deep")
    clean(run)
    assert run.returncode == 1 and "H011" in run.output


# -- bounded memory, time and output -----------------------------------------------------------
def _big(ckpt: Path, tmp_path: Path, kind: str) -> Path:
    doc = json.loads((ckpt / "config.json").read_text())
    if kind == "200k-bad-items":
        doc["eagle_aux_hidden_state_layer_ids"] = ["x"] * 200_000
        text = json.dumps(doc)
    elif kind == "15mb-of-bad-items":
        doc["eagle_aux_hidden_state_layer_ids"] = ["x"] * 3_000_000
        text = json.dumps(doc, separators=(",", ":"))
    elif kind == "1.5m-duplicate-keys":
        text = json.dumps(doc)[:-1] + ',"a":1' * 1_500_000 + "}"
    else:  # a 10 MB string where a type name belongs
        doc["speculators_model_type"] = "x" * 10_000_000
        text = json.dumps(doc)
    return write(tmp_path / kind / "config.json", text)


@pytest.mark.parametrize(
    "kind", ["200k-bad-items", "15mb-of-bad-items", "1.5m-duplicate-keys", "10mb-string"]
)
def test_findings_are_capped_with_a_count_and_memory_stays_bounded(ckpt, tmp_path, kind):
    cfg = _big(ckpt, tmp_path, kind)
    assert cfg.stat().st_size < 16 * 1024 * 1024
    run = run_limited("validate", cfg, memory_mb=700, cpu_s=30)
    clean(run)
    assert run.returncode in (0, 1), run.output[-2000:]
    assert len(run.output) < 100_000
    if kind != "10mb-string":
        assert "more" in run.output and "not listed" in run.output
    if kind == "200k-bad-items":  # the JSON report is bounded the same way
        run = run_limited("validate", cfg, "--format", "json", memory_mb=700, cpu_s=30)
        assert len(run.stdout) < 300_000 and json.loads(run.stdout)["files"]


def test_ten_thousand_unexpected_tensors_take_seconds_not_minutes(tmp_path):
    extra = {f"junk.{i}.weight": ("F32", (1,)) for i in range(10_000)}
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), data="zeros", extra=extra)
    run = run_limited("validate", built.path, cpu_s=6)  # was 33-57 s of CPU (quadratic)
    clean(run)
    assert run.returncode == 1 and "9,975 more unexpected tensors" in run.output.replace(
        "9975", "9,975"
    )


# -- one input never hides the others -----------------------------------------------------------
def test_an_internal_error_in_one_input_is_its_finding_and_the_rest_is_reported(
    ckpt, tmp_path, monkeypatch
):
    from spec_format.rules import crossfield
    from spec_format.runner.validation import validate

    other = shutil.copytree(ckpt, tmp_path / "other")
    target = next(
        r
        for r in vars(crossfield).values()
        if isinstance(r, type) and getattr(r, "id", "") == "X001"
    )
    original = target.check

    # the bug is set off by what the first config says (a run shares the checks of
    # identical documents, whatever their paths)
    config = json.loads((ckpt / "config.json").read_text())
    config["crash_here"] = True
    (ckpt / "config.json").write_text(json.dumps(config))

    def check(self, ctx):
        if ctx.config.get("crash_here"):
            raise RuntimeError("a bug in one rule")
        return original(self, ctx)

    monkeypatch.setattr(target, "check", check)
    report = validate([ckpt, other])
    assert report.exit_code == 70
    first, second = report.files
    assert [f.rule for f in first.findings] == ["I012"] and "a bug in one rule" in first.findings[
        0
    ].message
    assert second.status.value == "ok" and not second.internal_error
    assert "1 hit a bug in specfmt" in report.summary()


def test_migrate_in_place_goes_on_after_an_input_that_crashes(tmp_path, monkeypatch, cli):
    from spec_format.rewrites import migration

    paths = []
    for name in ("a", "b", "c"):
        doc = tiny_config("eagle3")
        doc["speculators_version"] = "0.5.0"
        paths.append(write(tmp_path / name / "config.json", json.dumps(doc)))
    real = migration.migrate

    def migrate(doc, options, **kw):
        if doc.get("crash"):
            raise RuntimeError("boom")
        return real(doc, options, **kw)

    doc = json.loads(paths[1].read_text())
    doc["crash"] = True
    paths[1].write_text(json.dumps(doc))
    monkeypatch.setattr(migration, "migrate", migrate)
    result = cli("migrate", *paths, "--to", "0.9", "--in-place")
    assert result.exit_code == 70
    assert "internal error: RuntimeError: boom" in result.output
    for p in (paths[0], paths[2]):
        assert json.loads(p.read_text())["speculators_version"] == "0.9.0"
    assert json.loads(paths[1].read_text())["speculators_version"] == "0.5.0"


# -- paths described as what they are ------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("dir", "is a directory"),
        ("fifo", "is a FIFO"),
        ("dangling", "dangling symbolic link"),
        ("loop", "symbolic link loop"),
    ],
)
def test_whatever_sits_where_config_json_belongs_is_named(tmp_path, kind, said):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    target = folder / "config.json"
    if kind == "dir":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dangling":
        target.symlink_to(tmp_path / "nowhere.json")
    else:
        target.symlink_to(target)
    run = in_process("validate", folder)
    clean(run)
    assert run.returncode == 3 and said in run.output and "with no config.json" not in run.output


@pytest.mark.parametrize("name", ["model.safetensors", "model.safetensors.index.json"])
def test_weights_entry_point_that_is_a_directory_is_an_error(ckpt, name):
    (ckpt / "model.safetensors").unlink()
    (ckpt / name).mkdir()
    run = in_process("validate", ckpt)
    clean(run)
    assert run.returncode == 1 and "is a directory" in run.output


def test_duplicate_keys_in_the_shard_index_are_reported(tmp_path):
    built = build_checkpoint(tmp_path / "c", tiny_config("eagle3"), data="zeros", shards=2)
    index = built.path / "model.safetensors.index.json"
    doc = json.loads(index.read_text())
    tensor, shard = next(iter(doc["weight_map"].items()))
    other = next(s for s in doc["weight_map"].values() if s != shard)
    text = index.read_text()
    index.write_text(text.replace('"weight_map": {', f'"weight_map": {{"{tensor}": "{other}", ', 1))
    run = in_process("validate", built.path)
    clean(run)
    assert run.returncode == 1 and "appears more than once" in run.output and tensor in run.output


def test_recursive_reports_drafts_it_cannot_read(tmp_path, ckpt):
    tree = tmp_path / "tree"
    shutil.copytree(ckpt, tree / "good")
    write(tree / "empty" / "config.json", "")
    write(tree / "corrupt" / "config.json", '{"speculators_model_type": ')
    write(tree / "verifier" / "config.json", '{"model_type": "llama"}')  # skipped: not a draft
    run = in_process("validate", "--recursive", tree)
    clean(run)
    assert run.returncode == 3
    assert "tree/empty" in run.output and "tree/corrupt" in run.output
    assert "tree/verifier" not in run.output
    assert "3 inputs checked" in run.output


@pytest.mark.parametrize("command", ["validate", "migrate", "fix"])
def test_an_unreadable_verifier_is_a_usage_error_everywhere(ckpt, tmp_path, command):
    bad = write(tmp_path / "verifier.json", "{not json")
    run = in_process(command, ckpt / "config.json", "--verifier", bad)
    clean(run)
    assert run.returncode == 2 and "--verifier" in run.output


# -- permissions (the kernel ignores them for root: run those as nobody) ---------------------------
@pytest.fixture
def shared_tmp():
    """A world-readable temporary directory (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="specfmt-perm-"))
    path.chmod(0o755)
    yield path
    for p in path.rglob("*"):
        with __import__("contextlib").suppress(OSError):
            p.chmod(0o755) if p.is_dir() else None
    shutil.rmtree(path, ignore_errors=True)


def _nobody_can_run_python() -> bool:
    import subprocess
    import sys

    try:
        subprocess.run(
            [sys.executable, "-c", "pass"],
            preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)),
            check=True,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def as_nobody(monkeypatch, locked: Path, mode: str, *args):
    """Run as an unprivileged user: the real thing when possible; as root whose interpreter
    nobody may run, in-process with the kernel's EACCES injected for ``locked``: its entries
    (``mode="r--"``: listable, not searchable) or also its listing (``mode="---"``)."""
    if not IS_ROOT:
        return run_limited(*args)
    if _nobody_can_run_python():
        return run_limited(*args, user=65534)
    import errno

    inside = str(locked) + os.sep

    def denied(real):
        def call(path, *a, **k):
            p = "" if isinstance(path, int) else os.fspath(path)
            listing = real is os.scandir and p == str(locked) and mode == "---"
            if listing or p.startswith(inside):
                raise PermissionError(errno.EACCES, "Permission denied", p)
            return real(path, *a, **k)

        return call

    for name in ("scandir", "stat", "open", "lstat"):
        monkeypatch.setattr(os, name, denied(getattr(os, name)))
    return in_process(*args)


def test_a_checkpoint_without_search_permission_is_a_finding(shared_tmp, ckpt, monkeypatch):
    folder = shared_tmp / "ckpt"
    shutil.copytree(ckpt, folder)
    folder.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)  # r--r--r--: listable, not searchable
    run = as_nobody(monkeypatch, folder, "r--", "validate", folder)
    clean(run)
    assert run.returncode == 3 and "config.json" in run.output
    for args in (("migrate", folder, "--check"), ("migrate", folder), ("fix", folder)):
        run = as_nobody(monkeypatch, folder, "r--", *args)
        clean(run)
        assert run.returncode == 3, (args, run.output)
        assert run.output.count(f"{folder}/config.json") <= 2, run.output  # said once


def test_recursive_reports_directories_it_cannot_list(shared_tmp, ckpt, monkeypatch):
    shutil.copytree(ckpt, shared_tmp / "tree" / "good")
    locked = shared_tmp / "tree" / "locked"
    shutil.copytree(ckpt, locked / "draft")
    locked.chmod(0)
    run = as_nobody(monkeypatch, locked, "---", "validate", "--recursive", shared_tmp / "tree")
    clean(run)
    assert (
        run.returncode == 3 and "cannot list the directory" in run.output and "locked" in run.output
    )
