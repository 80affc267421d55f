"""``-`` reads a config from standard input: validate names it ``<stdin>``; fix and migrate
write the result to stdout. Runs the installed entry point (``python -m spec_format``)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.common import ROOT

EAGLE3 = ROOT / "examples" / "qwen3-8b-eagle3" / "config.json"
DFLASH = ROOT / "examples" / "qwen3-8b-dflash" / "config.json"


def specfmt(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spec_format", *map(str, args)],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )


def test_validate_reads_standard_input():
    run = specfmt("validate", "-", "-f", "json", stdin=DFLASH.read_bytes())
    from_file = specfmt("validate", DFLASH, "-f", "json")
    assert run.returncode == from_file.returncode == 0, run.stderr
    (piped,), (read,) = json.loads(run.stdout)["files"], json.loads(from_file.stdout)["files"]
    assert piped["path"] == "<stdin>"
    assert {f["file"] for f in piped["findings"]} == {"<stdin>"}
    # the same findings; hints name no command for standard input (nothing to rewrite in
    # place), where the file's name the command with its path
    keys = ("rule", "severity", "pointer", "line", "column")
    strip = [{k: f.get(k) for k in keys} for f in read["findings"]]
    assert [{k: f.get(k) for k in keys} for f in piped["findings"]] == strip
    assert not any("command" in f for f in piped["findings"])


def test_validate_standard_input_errors():
    def first(run):
        (finding,) = json.loads(run.stdout)["files"][0]["findings"]
        return finding["rule"], finding["file"], finding.get("line"), finding.get("column")

    broken = specfmt("validate", "-", "-f", "json", stdin=b'{"speculators_model_type": "x",}')
    assert broken.returncode == 3
    assert first(broken) == ("I006", "<stdin>", 1, 31)  # at the trailing comma
    empty = specfmt("validate", "-", "-f", "json")
    assert empty.returncode == 3 and first(empty) == ("I003", "<stdin>", None, None)
    twice = specfmt("validate", "-", "-", stdin=b"{}")
    assert twice.returncode == 2 and b"given twice" in twice.stderr


def test_fix_and_migrate_write_the_result_to_stdout():
    migrated = specfmt("migrate", "-", "--to", "0.9", stdin=EAGLE3.read_bytes())
    assert migrated.returncode == 0, migrated.stderr
    assert json.loads(migrated.stdout)["speculators_version"] == "0.9.0"
    assert migrated.stdout == specfmt("migrate", EAGLE3, "--to", "0.9").stdout
    assert b"<stdin>: format 0.1" in migrated.stderr
    fixed = specfmt("fix", "-", "--check", stdin=DFLASH.read_bytes())
    assert fixed.returncode == specfmt("fix", DFLASH, "--check").returncode
    assert b"<stdin>" in fixed.stdout
    refused = specfmt("fix", "-", "--in-place", stdin=DFLASH.read_bytes())
    assert refused.returncode == 2 and b"cannot be rewritten in place" in refused.stderr


# -- in-process: the reader behind ``-`` (the mutation sample of issue 38 runs these) ------


def _stdin(monkeypatch, data: bytes | None) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", None if data is None else io.TextIOWrapper(io.BytesIO(data)))


def test_standard_input_is_parsed_as_strictly_as_a_file_named_stdin(monkeypatch):
    from pathlib import Path

    from spec_format.base.jsonload import Problem
    from spec_format.parsers import stdin

    assert stdin.is_stdin("-") and stdin.is_stdin(Path("-")) and not stdin.is_stdin("--")
    _stdin(monkeypatch, b'{"a": 1, "a": 2}')
    loaded = stdin.load_json()
    assert loaded.path == Path("<stdin>") and loaded.data == {"a": 2}
    assert [p.kind for p in loaded.problems] == ["duplicate-key"]
    _stdin(monkeypatch, None)
    closed = stdin.load_json()
    assert (closed.path, closed.data) == (Path("<stdin>"), None)
    assert closed.problems == [
        Problem("unreadable", "<stdin>: standard input is closed; pipe a file into it", True)
    ]


def test_reading_standard_input_is_bounded_and_a_closed_one_is_an_input_error(monkeypatch):
    import pytest

    from spec_format.base.errors import InputError
    from spec_format.parsers import stdin

    _stdin(monkeypatch, b"12345")
    assert stdin.read_bytes() == b"12345"
    _stdin(monkeypatch, b"12345")
    with pytest.raises(InputError) as refused:
        stdin.read_bytes(limit=3)
    assert str(refused.value) == "<stdin>: more than 3 bytes; this is not a config.json"
    _stdin(monkeypatch, None)
    with pytest.raises(InputError) as refused:
        stdin.read_bytes()
    assert str(refused.value) == "<stdin>: standard input is closed; pipe a file into it"
