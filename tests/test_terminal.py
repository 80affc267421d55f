"""The real ``specfmt`` program in a terminal and in pipes: wrapping at the terminal's width,
colour, text that rich must not eat, diffs, closed pipes and progress bars."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import stat
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from spec_format.facts import catalog
from tests.common import EXAMPLES, ROOT

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
PROGRAM = [sys.executable, "-m", "spec_format"]


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM", "GITHUB_ACTIONS")
    }
    return {**env, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), **extra}


def in_terminal(*args: str | os.PathLike, columns: int = 80, env: dict | None = None):
    """Run specfmt with stdout and stderr on a pseudo-terminal ``columns`` wide; returns
    (exit code, raw output)."""
    env = _env(**(env or {}))
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        os.chdir(ROOT)
        os.execvpe(sys.executable, [*PROGRAM, *map(str, args)], env)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


def piped(*args: str | os.PathLike, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PROGRAM, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(**(env or {})),
    )


def visible(raw: str) -> list[str]:
    return ANSI.sub("", raw).replace("\r\n", "\n").split("\n")


# -- wrapping to the terminal ------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, 160])
def test_validate_examples_fits_the_terminal(columns):
    code, raw = in_terminal("validate", *(p.relative_to(ROOT) for p in EXAMPLES), columns=columns)
    assert code == 0
    lines = visible(raw)
    doc = json.loads(
        piped("validate", "-f", "json", *(p.relative_to(ROOT) for p in EXAMPLES)).stdout
    )
    commands = {  # notes repeated on many inputs are grouped, without their commands
        " ".join(f["command"])
        for r in doc["files"]
        for f in r["findings"]
        if f.get("command") and f["severity"] != "info"
    }
    assert commands and all(any(c in line for line in lines) for c in commands)  # never broken
    # a code span of a message (a command with a placeholder, DIR) is never broken either
    spans = {
        span
        for r in doc["files"]
        for f in r["findings"]
        for span in f["message"].split("`")[1::2]
        if len(span) > columns - 10
    }
    for line in lines:  # longer only for one word or command that cannot be broken
        if len(line) > columns:
            words = line.split()
            assert len(words) == 1 or any(c in line for c in commands | spans), line
    assert "\x1b[" in raw  # a terminal gets colour
    assert "`" not in "".join(lines)  # code spans are styled, not shown as backticks
    # ruff/rustc shape: headline at column 0, then indented why:/help: lines
    head = next(i for i, line in enumerate(lines) if " C006 " in line)
    assert re.match(r"examples/\S+/config\.json:\d+:\d+: warning C006 ", lines[head])
    after = lines[head + 1 : head + 8]
    assert any(line.startswith("  why: ") for line in after)
    assert any(line.startswith("  help: specfmt fix --verifier DIR -i ") for line in after)
    # 6 warnings: the off-by-one DFlash example is reported once, by its cause (M006); the
    # mtp and xpress examples are served by no covered vLLM release and P-EAGLE not by the
    # newest (C011)
    assert lines[-2].startswith("11 inputs checked: 11 ok, 0 errors, 6 warnings, ")
    assert lines[-2].endswith(" notes")
    assert not any(" info " in line for line in lines)  # the severity word is "note"


def test_wider_terminal_wraps_less_and_never_inside_a_word():
    narrow = [line for line in visible(in_terminal("validate", EXAMPLES[0], columns=80)[1]) if line]
    wide = [line for line in visible(in_terminal("validate", EXAMPLES[0], columns=160)[1]) if line]
    assert len(wide) < len(narrow)
    words = lambda lines: " ".join(" ".join(lines).split())  # noqa: E731
    assert words(narrow) == words(wide)  # the same words: breaks fall only between them


@pytest.mark.parametrize("columns", [80, 160])
def test_error_lines_of_every_command_wrap_between_words(tmp_path, columns):
    """``specfmt:`` error lines wrap at the terminal's width, at spaces only."""
    missing = tmp_path / ("a-directory-with-a-rather-long-name-" * 3) / "config.json"
    runs = [
        ("migrate", "--engine", "vllm==0.1.0", missing),
        ("fix", missing),
        ("inspect", missing),
        ("forward", missing),
        ("convert", missing, "-o", tmp_path / "out"),
        ("validate", "--select", "C0O1", missing),
        ("explain", "C0O1"),
    ]
    for args in runs:
        code, raw = in_terminal(*args, columns=columns)
        lines = [line for line in visible(raw) if line.strip()]
        error = [i for i, line in enumerate(lines) if line.startswith("specfmt:")]
        assert code != 0 and error, (args, lines)
        for line in lines[error[0] :]:
            assert len(line) <= columns or len(line.split()) <= 2, (args, line)
        piped_err = piped(*args).stderr
        assert piped_err.count("\n") == 1 or "\n  " in piped_err, piped_err  # one line piped


PROSE_COMMANDS = [
    ("rules",),
    ("explain", "C001"),
    ("explain", "N001"),
    ("history",),
    ("validate", "examples/qwen3-8b-dflash"),
    ("migrate", "--check", "examples/qwen3-8b-dflash"),
    ("fix", "--check", "examples/qwen3-8b-dflash"),
    ("fix", "--dry-run", "examples/qwen3-8b-eagle3"),
    ("migrate", "--dry-run", "--to", "0.9", "examples/qwen3-8b-eagle3"),
]


@pytest.mark.parametrize("args", PROSE_COMMANDS, ids=lambda a: " ".join(a))
def test_piped_output_is_never_padded_and_terminal_output_fits(args):
    out = piped(*args, env={"COLUMNS": ""}).stdout
    assert out and not [line for line in out.splitlines() if line != line.rstrip()], out[:400]
    for columns in (80, 160):
        _, raw = in_terminal(*args, columns=columns)
        for line in visible(raw):
            # a command is never broken (render.text.wrap): one wider than the line stays
            # after its help: label, or stands alone on the next line
            command = re.match(r"(help: )?`?specfmt ", line.lstrip()) is not None
            assert len(line) <= columns or len(line.split()) == 1 or command, (columns, line)


HELP_COMMANDS = [
    ("validate",),
    ("migrate",),
    ("fix",),
    ("convert",),
    ("forward",),
    ("inspect",),
    ("history",),
    ("rules",),
    ("explain",),
    ("schema", "export"),
    ("schema", "show"),
    ("schema", "vscode"),
]


@pytest.mark.parametrize("args", HELP_COMMANDS, ids=lambda a: " ".join(a))
def test_help_is_reflowed_and_keeps_tokens_whole(args):
    out = piped(*args, "--help", env={"COLUMNS": "80"}).stdout
    lines = out.splitlines()
    usage = next(line for line in lines if "Usage:" in line)
    assert "{" not in usage and "}" not in usage, usage
    for prev, nxt in zip(lines, lines[1:], strict=False):  # no hard break where it would fit
        new_row = re.match(r"\s{0,4}-", nxt) or not nxt.startswith(" ")
        term_alone = re.fullmatch(r"\s+-\S.*", prev) and "  " not in prev.strip()
        if prev.startswith(" ") and nxt.strip() and not new_row and not term_alone:
            assert len(prev) + 1 + len(nxt.split()[0]) > 80, (prev, nxt)
    for line in lines:  # a choice list is never split: every <...| has its >
        cell = line.replace("│", " ")
        assert cell.count("<") == cell.count(">"), line
    assert "\\[" not in out


@pytest.mark.parametrize(
    "args", [("migrate", "--check"), ("fix", "--check"), ("migrate",), ("fix", "--dry-run")]
)
def test_a_json_syntax_error_names_its_place_once(tmp_path, args):
    path = tmp_path / "config.json"
    path.write_text('{\n  "a": 1\n  "b": 2\n}\n')
    err = piped(*args, path).stderr
    assert f"{path}:3:3: not valid JSON" in err and err.count(f"{path}:3:3") == 1, err


@pytest.mark.parametrize("command", ["inspect", "forward"])
def test_checkpoint_reports_fit_the_terminal_and_are_unpadded_when_piped(tmp_path, command):
    from spec_format.testing.builder import build_checkpoint, tiny_config

    if command == "forward":
        pytest.importorskip("torch", reason="forward needs the forward extra")
    built = build_checkpoint(
        tmp_path / ("a-rather-long-checkpoint-name-" * 3), tiny_config("eagle3")
    )
    out = piped(command, built.path)
    assert out.returncode == 0, out.stderr
    assert not [line for line in out.stdout.splitlines() if line != line.rstrip()]
    for columns in (80, 160):
        code, raw = in_terminal(command, built.path, columns=columns)
        assert code == 0
        for line in (part for full in visible(raw) for part in full.split("\r")):  # progress
            assert len(line.rstrip()) <= columns or len(line.split()) == 1, (columns, line)


def test_pointer_is_not_repeated_when_the_line_is_known():
    out = piped("validate", EXAMPLES[0]).stdout
    assert "(/speculators_config/verifier/architectures)" not in out


def test_piped_text_is_not_wrapped_and_keeps_backticks():
    out = piped("validate", "examples/gemma-4-31b-dflash").stdout
    (head,) = [line for line in out.splitlines() if " C006 " in line]
    assert head.endswith("warning C006 verifier.architectures is empty")
    fills = "(`specfmt fix --in-place examples/gemma-4-31b-dflash/config.json` does, in the same"
    assert fills in out
    out = piped("validate", "examples/qwen3-8b-dflash").stdout
    assert (
        "  help: `specfmt fix --verifier DIR -i examples/qwen3-8b-dflash/config.json` fills it "
        "from the verifier's config.json" in out
    )
    assert "\x1b[" not in out


def test_success_says_what_was_checked_from_the_report(tmp_path):
    from spec_format.testing.builder import build_checkpoint, tiny_config

    built = build_checkpoint(tmp_path / "ckpt", tiny_config("eagle3"), dtype="BF16")
    result = piped("validate", "--scan-weights", built.path, "-f", "json")
    (fr,) = json.loads(result.stdout)["files"]
    checked = fr["checked"]
    assert checked["tensors"] > 0 and checked["nan_scan"] and checked["contract"] == "eagle3"
    text = piped("validate", "--scan-weights", built.path).stdout
    first = text.splitlines()[0]
    assert first.startswith(f"ok {built.path}: eagle3, format ")
    dtypes = "/".join(checked["dtypes"])
    assert "BF16" in dtypes
    assert f"checked config, {checked['tensors']} tensors (" in first
    assert f" kB, {dtypes}) against the eagle3 tensor contract" in first
    assert first.endswith(", NaN/Inf scan")


# -- text rich must not eat --------------------------------------------------------------------


def test_quiet_prints_findings_and_one_summary_line_and_every_note_has_an_id():
    from spec_format.base.notes import NOTES

    loud = piped("validate", *EXAMPLES, "--format", "json")
    notes = json.loads(loud.stdout)["notes"]
    assert len(notes) == 3 and {n.split()[0] for n in notes} == set(NOTES)
    quiet = piped("validate", "-q", *EXAMPLES)
    assert quiet.returncode == 0 and quiet.stdout.count("\n") == 1, quiet.stdout
    assert quiet.stdout.startswith(f"{len(EXAMPLES)} inputs checked: ")
    for note_id in NOTES:  # each one can be silenced alone, by id, like a rule
        out = piped("validate", "--ignore", note_id, *EXAMPLES).stdout
        shown = {line.split()[1] for line in out.splitlines() if line.startswith("note N")}
        assert shown == set(NOTES) - {note_id}
        assert note_id in piped("explain", note_id).stdout
    out = piped("validate", "--select", "N002", *EXAMPLES).stdout.splitlines()
    assert [line.split()[1] for line in out if line.startswith("note ")] == ["N002"]


def test_a_passing_run_groups_repeated_notes_and_puts_what_matters_first():
    """Notes repeated on many inputs are said once with the inputs they are on, inputs
    without other findings share one line, and warnings come before notes; -v lists each."""
    from spec_format.render.text import GROUP_NOTES_FROM

    rel = [p.relative_to(ROOT) for p in EXAMPLES]
    doc = json.loads(piped("validate", "-f", "json", *rel).stdout)
    by_rule: dict[str, set] = {}
    for fr in doc["files"]:
        for f in fr["findings"]:
            by_rule.setdefault((f["rule"], f["severity"]), set()).add(fr["path"])
    repeated = {r for (r, sev), paths in by_rule.items() if sev == "info"
                and len(paths) >= GROUP_NOTES_FROM}  # fmt: skip
    assert repeated, "the examples repeat no note: nothing to group"
    out = piped("validate", *rel, env={"COLUMNS": "80"}).stdout.splitlines()
    each = piped("validate", "-v", *rel, env={"COLUMNS": "80"}).stdout.splitlines()
    # grouped, about half the lines of -v (68 of 134 today; 116 at 80 columns before grouping)
    assert len(out) <= len(each) * 0.55, (len(out), len(each))
    for rule in repeated:
        assert sum(f" {rule} " in line for line in out) == 1, rule
    notes_only = [
        fr["path"] for fr in doc["files"]
        if fr["findings"] and all(f["severity"] == "info" for f in fr["findings"])
    ]  # fmt: skip
    last_warning = max(i for i, line in enumerate(out) if " warning " in line)
    assert notes_only and all(
        i > last_warning for i, line in enumerate(out) for p in notes_only if line.startswith(p)
    )
    verbose = piped("validate", "-v", *rel).stdout
    for rule in repeated:
        assert verbose.count(f" note {rule} ") == len(by_rule[(rule, "info")])


def test_square_brackets_survive_rules_and_help():
    rules = piped("rules", env={"COLUMNS": "250"}).stdout
    assert "`[vocab_size]`" in rules and "`[draft_vocab_size]`" in rules
    assert "hf://ORG/NAME[@REV]" in " ".join(
        piped("validate", "--help", env={"COLUMNS": "200"}).stdout.split()
    )
    forward_help = " ".join(piped("forward", "--help", env={"COLUMNS": "200"}).stdout.split())
    assert "the forward extra" in forward_help and "\\[" not in forward_help
    validate_help = " ".join(piped("validate", "--help", env={"COLUMNS": "200"}).stdout.split())
    assert "numpy, the deep extra" in validate_help and "\\[" not in validate_help


def test_unknown_type_lists_each_type_once(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"speculators_model_type": "eagle4", "speculators_config": {}}))
    out = piped("validate", path).stdout
    (listing,) = [line for line in out.splitlines() if "known types" in line]
    names = re.findall(r"[a-z0-9]+", listing.split("known types:", 1)[1])
    names.remove("retired")
    assert len(names) == len(set(names)) and "mlp" in names


def test_trailing_comma_is_named_once_at_the_comma(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{\n  "a": 1,\n}\n')
    out = piped("validate", path).stdout
    assert f"{path}:2:9: error I006 not valid JSON: trailing comma before '}}'\n" in out
    assert out.count(str(path)) == 2  # the status line and the headline, not the message


# -- migrate and fix output --------------------------------------------------------------------


def _old(tmp_path: Path, *, newline: bool = True) -> Path:
    text = (ROOT / "examples" / "llama-3.1-8b-eagle3-0.2" / "config.json").read_text()
    path = tmp_path / "old" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if newline else text.rstrip("\n"))
    return path


def test_dry_run_diff_marks_a_missing_final_newline_and_is_coloured_on_a_terminal(tmp_path):
    path = _old(tmp_path, newline=False)
    out = piped("migrate", path, "--dry-run").stdout
    assert "-}+" not in out and "-}\n\\ No newline at end of file\n+}\n" in out
    assert "\x1b[" not in out
    code, raw = in_terminal("migrate", path, "--dry-run")
    assert code == 0
    assert "\x1b[31m-}\x1b[0m" in raw and "\x1b[32m+}\x1b[0m" in raw


@pytest.mark.parametrize("command", ["migrate", "fix"])
def test_check_counts_what_would_change(tmp_path, command):
    changing = _old(tmp_path)
    if command == "fix":  # a current config that leaves out keys readers disagree on
        lean = json.loads(
            (ROOT / "examples" / "llama-3.1-8b-eagle3-0.9" / "config.json").read_text()
        )
        del lean["norm_before_residual"]
        changing.write_text(json.dumps(lean, indent=2) + "\n")
    current = tmp_path / "current" / "config.json"
    current.parent.mkdir()
    piped("migrate", changing, "-o", current)
    piped("fix", current, "-i")
    result = piped(command, changing, current, "--check")
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "1 of 2 inputs would change"
    result = piped(command, current, "--check")
    assert result.returncode == 0 and result.stdout.splitlines()[-1] == "1 input up to date"


@pytest.mark.parametrize(
    "args",
    [
        ("migrate", "--check"),
        ("fix", "--check"),
        ("fix", "--in-place", "--backup"),
        ("migrate", "--in-place"),
        ("migrate", "--dry-run"),
    ],
)
def test_formatting_alone_is_no_change_and_is_said_once(tmp_path, args):
    """Key order, indentation and the final newline are not changes: --check passes (so
    the pre-commit hook passes a file it calls unchanged), --in-place writes nothing, and
    the report says what differs instead of contradicting itself."""
    data = json.loads((ROOT / "examples" / "llama-3.1-8b-eagle3-0.9" / "config.json").read_text())
    data["speculators_version"] = catalog.version_entry(catalog.latest_version()).release
    path = tmp_path / "config.json"
    text = json.dumps(dict(reversed(list(data.items()))), indent=4)  # no final newline
    path.write_text(text)
    proc = piped(*args, path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "formatting differs only (key order, indentation, final newline)" in out
    assert "no changes" in out and "would change" not in out and "wrote" not in out
    assert "@@" not in out  # no diff
    assert path.read_text() == text and [p.name for p in tmp_path.iterdir()] == ["config.json"]
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    assert "formatting differs" not in piped(*args, path).stdout  # specfmt's own formatting


def test_lossy_refusal_spells_values_as_json(tmp_path):
    result = piped("migrate", EXAMPLES[3] / "config.json", "--to", "0.4")
    assert result.returncode == 2
    assert "the value true is lost" in result.stderr and "True" not in result.stderr


def test_backup_keeps_mode_0644_under_a_strict_umask(tmp_path):
    path = _old(tmp_path)
    path.chmod(0o644)
    result = subprocess.run(
        [
            "sh",
            "-c",
            'umask 077 && exec "$@"',
            "sh",
            *PROGRAM,
            "migrate",
            str(path),
            "-i",
            "--backup",
        ],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert result.returncode == 0, result.stderr
    for p in (path, path.with_name("config.json.bak")):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p


def test_output_into_a_missing_directory_creates_it(tmp_path):
    target = tmp_path / "new" / "dir" / "config.json"
    result = piped("migrate", _old(tmp_path), "-o", target)
    assert result.returncode == 0, result.stderr
    assert json.loads(target.read_text())["speculators_version"]
    (tmp_path / "file").write_text("")
    result = piped("migrate", _old(tmp_path), "-o", tmp_path / "file" / "x" / "config.json")
    assert result.returncode == 2
    assert f"{tmp_path / 'file'} is not a directory" in result.stderr


# -- closed pipes ------------------------------------------------------------------------------


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
@pytest.mark.parametrize(
    "args, expect",
    [
        (["explain", "C001"], 0),
        (["validate", *map(str, EXAMPLES * 20)], 0),
        (["validate", "-f", "json", *map(str, EXAMPLES * 20)], 0),
    ],
    ids=["explain", "validate-text", "validate-json"],
)
def test_a_reader_that_leaves_early_changes_nothing(args, expect):
    command = " ".join([*PROGRAM, *args])
    for _ in range(4):  # the reader's timing varies between runs; the outcome must not
        proc = subprocess.run(
            ["bash", "-c", f"{command} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=_env(),
        )
        assert proc.stdout.strip() == str(expect), proc.stderr
        assert proc.stderr == ""


# -- progress ----------------------------------------------------------------------------------


def test_scan_shows_a_progress_bar_on_a_terminal_only(tmp_path):
    from spec_format.testing.builder import build_checkpoint, tiny_config

    built = build_checkpoint(tmp_path / "ckpt", tiny_config("eagle3"))
    code, raw = in_terminal("validate", "--scan-weights", built.path)
    assert code == 0 and "NaN/Inf scan of ckpt" in ANSI.sub("", raw)
    code, raw = in_terminal("validate", "--scan-weights", "-f", "json", built.path)
    assert code == 0 and "NaN/Inf scan" not in raw
    result = piped("validate", "--scan-weights", built.path)
    assert result.returncode == 0
    assert "NaN/Inf scan of" not in result.stderr and "NaN/Inf scan of" not in result.stdout


@pytest.mark.slow  # over 10 s: deselected by default; scripts/test.sh runs it
def test_forward_shows_loading_progress_on_a_terminal_only(tmp_path):
    pytest.importorskip("torch", reason="forward needs the forward extra")
    from spec_format.testing.builder import build_checkpoint, tiny_config

    built = build_checkpoint(tmp_path / "draft", tiny_config("eagle3"))
    start = time.monotonic()
    code, raw = in_terminal("forward", built.path, "--tokens", "4")
    assert code == 0, ANSI.sub("", raw)[-2000:]
    assert "loading draft" in ANSI.sub("", raw)
    result = piped("forward", built.path, "--tokens", "4")
    assert result.returncode == 0 and "loading draft" not in result.stderr
    assert time.monotonic() - start < 120


def test_migrate_report_fits_the_terminal(tmp_path):
    code, raw = in_terminal("migrate", _old(tmp_path), "--check", columns=80)
    assert code == 1
    lines = visible(raw)
    assert all(len(line) <= 80 for line in lines if len(line.split()) > 1), lines
    rows = [line for line in lines if line.startswith("  0.1->0.2  added /dtype = ")]
    assert rows and lines[lines.index(rows[0]) + 1].startswith(" " * 12)


# -- every command, at 80 and 160 columns and through a pipe ------------------------------------

BOX = set("│╭╮╰╯─┃━┏┓┗┛")


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """Inputs for every command: a tiny EAGLE-3 checkpoint, its verifier, a SafeAILab source
    and a 0.2 config, under a directory name long enough to need wrapping at 80 columns."""
    from spec_format.testing import builder, safeailab

    root = tmp_path_factory.mktemp("scene") / "a-rather-long-directory-name-for-wrapping"
    builder.build_checkpoint(root / "ckpt", builder.tiny_config("eagle3"))
    builder.build_verifier(root / "verifier", safeailab.verifier_config())
    safeailab.build_safeailab(
        root / "src", safeailab.safeailab_config(), safeailab.safeailab_shapes()
    )
    _old(root)
    return root


#: (id, arguments, the output is data that is never wrapped); {s} is the scene
EVERY_COMMAND = [
    (
        "validate",
        ("validate", "examples/qwen3-8b-dflash", "examples/llama-3.1-8b-eagle3-0.2"),
        False,
    ),
    ("validate-help-hint", ("validate", "examples/gpt-oss-20b-eagle3"), False),
    ("validate-verifier", ("validate", "--verifier", "{s}/verifier", "{s}/ckpt"), False),
    ("validate-statistics", ("validate", "--statistics", "examples/"), False),
    ("migrate", ("migrate", "--dry-run", "--to", "0.9", "{s}/old/config.json"), False),
    ("fix", ("fix", "--dry-run", "{s}/ckpt", "--verifier", "{s}/verifier"), False),
    (
        "convert",
        (
            "convert",
            "{s}/src",
            "-o",
            "{s}/out",
            "--verifier",
            "{s}/verifier",
            "--aux-layer-ids",
            "2,4,5",
            "--dry-run",
        ),
        False,
    ),  # fmt: skip
    (
        "convert-refused",
        ("convert", "{s}/src", "-o", "{s}/out", "--verifier", "{s}/verifier"),
        False,
    ),
    ("forward", ("forward", "{s}/ckpt", "--tokens", "4"), False),
    ("inspect", ("inspect", "{s}/ckpt", "--verifier", "{s}/verifier"), False),
    ("history", ("history", "--verbose"), False),
    ("rules", ("rules",), False),
    ("explain", ("explain", "C014"), False),
    ("explain-note", ("explain", "N001"), False),
    ("schema-export", ("schema", "export", "--format-version", "0.9", "-o", "{s}/schemas"), False),
    ("schema-show", ("schema", "show", "eagle3"), True),
    ("schema-vscode", ("schema", "vscode", "--strict", "--schema-dir", "{s}/vscode"), True),
    ("usage-option", ("validate", "--verbos", "examples/"), False),
    ("usage-command", ("valdate", "examples/"), False),
    ("usage-subcommand", ("schema", "shw"), False),
    ("usage-value", ("inspect", "{s}/ckpt", "--gamma", "three"), False),
    ("usage-missing", ("migrate", "{s}/old/config.json", "--to"), False),
    ("usage-argument", ("explain",), False),
    *[(f"help-{' '.join(c) or 'specfmt'}", (*c, "--help"), False) for c in [(), *HELP_COMMANDS]],
]


def _words(text: str) -> set[str]:
    """The words of ``text``, without the punctuation around them that help layouts and
    code styling move (``--a, --b``, ``Options:``, backticks); numbers (timings) left out."""
    text = ANSI.sub("", text)
    words = re.split(r"[\s,`]+", text) + re.split(r"[\s,]+", text.replace("`", ""))
    words = [w.strip("():;.[]") for w in words if not set(w) <= BOX | {"*"}]
    return {w for w in words if w and not re.fullmatch(r"[-\d.:/%]+", w)}


def lone_token(line: str, spans: set[str]) -> bool:
    """Whether ``line`` holds one word, or one command or path to copy (a code span of the
    unwrapped output, in backticks or styled), and nothing else but its punctuation; a diff's
    file header (``--- PATH``) is a path too."""
    token = re.sub(r"^(---|\+\+\+) ", "", line.strip()).strip("();:,.")
    return " " not in token or token.strip("`") in spans


#: words a terminal layout adds: table headings, rich help's type column
LAYOUT_WORDS = {"id", "name", "layer", "severity", "summary", "<str>", "<int>", "<float>"}


#: the quick ones run in the default selection, the rest (each 5-15 s here) with -m slow
QUICK = ("usage-", "rules", "explain", "history", "schema-")


@pytest.mark.parametrize(
    "args, data",
    [
        pytest.param(a, d, marks=() if i.startswith(QUICK) else pytest.mark.slow)
        for i, a, d in EVERY_COMMAND
    ],
    ids=[i for i, _, _ in EVERY_COMMAND],
)
def test_every_command_fits_80_and_160_columns_and_is_unpadded_when_piped(scene, args, data):
    """Piped: no trailing space, no box drawing. On a terminal of 80 and 160 columns: no line
    wider than the terminal unless it is one word, no word cut (every word is one the
    unwrapped output has), every command and path on one line, the same exit code."""
    if args[0] == "forward":
        pytest.importorskip("torch", reason="forward needs the forward extra")
    args = tuple(a.format(s=scene) for a in args)
    out = piped(*args)
    for stream in (out.stdout, out.stderr):
        assert not [line for line in stream.splitlines() if line != line.rstrip()], stream[:600]
        assert not BOX & set(stream), stream[:600]
    assert out.stdout or out.stderr
    whole = piped(*args, env={"COLUMNS": "1000"})
    reference = whole.stdout + whole.stderr
    spans = set(re.findall(r"`([^`\n]+)`", reference))
    for columns in (80, 160):
        code, raw = in_terminal(*args, columns=columns)
        assert code == out.returncode, (columns, ANSI.sub("", raw)[-800:])
        lines = [  # a progress bar is redrawn in place and goes away
            part for full in visible(raw) for part in full.split("\r") if "━" not in part
        ]
        if data:  # JSON is written as it is, never wrapped
            assert "".join(lines).replace(" ", "") in (out.stdout + out.stderr).replace(
                "\n", ""
            ).replace(" ", "") or out.stdout.replace("\n", "").replace(" ", "") in "".join(
                lines
            ).replace(" ", "")
            continue
        for line in lines:  # longer only for a word or a command alone on its line
            assert len(line.rstrip()) <= columns or lone_token(line, spans), (columns, line)
        cut = _words("\n".join(lines)) - _words(reference) - LAYOUT_WORDS
        assert not cut, (columns, sorted(cut)[:10])
        for span in spans:  # a command or path to copy is never broken
            if len(span) <= columns - 8:
                assert any(span in line for line in lines), (columns, span)


USAGE_ERRORS = [
    (("validate", "--verbos", "x"), "validate: no such option --verbos (did you mean --verbose?)"),
    (("valdate", "x"), "no such command 'valdate' (did you mean validate?)"),
    (("schema", "shw"), "schema: no such command 'shw' (did you mean show?)"),
    (("migrate", "x", "--to"), "migrate: --to needs a value; `specfmt migrate --help`"),
    (("inspect", "x", "--gamma", "three"), "inspect --gamma/-g: 'three' is not a valid int"),
    (("explain",), "explain: missing argument RULE_ID; usage: specfmt explain [OPTIONS] RULE_ID"),
    (("validate", "-f", "xml", "x"), "validate --format/-f: 'xml' is not one of text, json"),
]


@pytest.mark.parametrize(("args", "expected"), USAGE_ERRORS, ids=lambda v: " ".join(v)[:30])
def test_usage_errors_are_one_specfmt_line_with_exit_2(args, expected):
    """A usage error reads like every other error line: ``specfmt:``, the command and option,
    what is wrong with a did-you-mean, and where to look; exit 2; never a panel."""
    result = piped(*args)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("specfmt: "), result.stderr
    assert expected in result.stderr, result.stderr


def test_shell_completion_commands_exit_cleanly(tmp_path):
    """--show-completion and --install-completion end with sys.exit inside typer; the
    program's own handling of usage errors must let that through."""
    shown = piped("--show-completion", "bash", env={"SHELL": "/bin/bash"})
    assert shown.returncode == 0 and "complete" in shown.stdout, shown.stderr
    installed = piped("--install-completion", env={"SHELL": "/bin/bash", "HOME": str(tmp_path)})
    assert installed.returncode == 0, installed.stderr
    assert "Traceback" not in shown.stderr + installed.stderr
    assert (tmp_path / ".bashrc").is_file()


def test_an_input_error_names_its_path_once(tmp_path):
    """The headline shows where (``PATH: error ID``); the message never repeats it."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "tree").mkdir()
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "list.json").write_text("[]\n")
    (tmp_path / "bad.json").write_text("{\n  nope\n}\n")
    runs = [
        ("validate", tmp_path / "folder"),
        ("validate", "-r", tmp_path / "tree"),
        ("validate", tmp_path / "missing.json"),
        ("validate", tmp_path / "empty.json"),
        ("validate", tmp_path / "list.json"),
        ("validate", tmp_path / "bad.json"),
    ]
    for args in runs:
        out = piped(*args).stdout
        heads = [line for line in out.splitlines() if re.search(r": error I0\d\d ", line)]
        assert heads, out
        for head in heads:
            where, message = head.split(" error ", 1)
            assert str(args[-1]) not in message, head


@pytest.mark.parametrize("command", ["migrate", "fix"])
def test_dry_run_reports_fit_a_terminal_without_colour(command, tmp_path):
    """NO_COLOR turns colour off, not wrapping: the report still fits 80 columns (it was
    written unwrapped, lines of 200+ columns)."""
    config = tmp_path / "config.json"
    config.write_text((EXAMPLES[2] / "config.json").read_text())
    code, raw = in_terminal(command, "--dry-run", config, columns=80, env={"NO_COLOR": "1"})
    assert code == 0 and "\x1b[" not in raw
    lines = visible(raw)
    diff = next((i for i, line in enumerate(lines) if line.startswith("--- ")), len(lines))
    report = lines[:diff]  # the diff after it is the file's lines, never wrapped
    report = [line for line in report if line != f"{config}:"]  # the path is the user's
    assert report and all(len(line) <= 80 for line in report), report
