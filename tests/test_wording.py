"""One word per idea: severities, plurals, sizes, version options, output format options,
rule selections and metavars are spelled one way across every command."""

from __future__ import annotations

import json
import re

import pytest

from spec_format.base.report import Severity
from spec_format.base.wording import SEVERITY_WORDS, human_bytes, plural, severity_word
from tests.common import ROOT

EAGLE3 = ROOT / "examples" / "qwen3-8b-eagle3" / "config.json"


def test_people_read_note_and_the_formats_map_it_in_one_table():
    from spec_format.render import github, sarif, text

    assert [severity_word(s) for s in Severity] == ["error", "warning", "note"]
    assert {s: SEVERITY_WORDS["text"][s.value] for s in Severity} == text.WORD
    assert github._COMMAND[Severity.INFO] == "notice"  # workflow commands mandate it
    assert sarif._LEVEL[Severity.INFO] == "note"  # SARIF result.level


def test_rules_and_explain_say_note_not_info(cli):
    rows = cli("rules").output.splitlines()
    assert not [r for r in rows if re.search(r"\s info\s", r)]
    assert any(re.search(r"\s note\s", r) for r in rows)
    assert "(consumer, note;" in cli("explain", "C009").output
    stats = cli("validate", "--statistics", *sorted(ROOT.glob("examples/*/"))).output.splitlines()
    assert any(re.search(r"  note ", r) for r in stats) and not any("  info " in r for r in stats)


def test_counts_agree_with_their_noun():
    from spec_format.base.report import Tally

    assert plural(1, "warning") == "1 warning" and plural(2, "note") == "2 notes"
    assert plural(0, "error") == "0 errors" and plural(1234, "tensor") == "1,234 tensors"
    tally = Tally()
    tally.inputs = 1
    tally.severities.update(["warning", "info"])
    assert tally.summary().endswith("0 errors, 1 warning, 1 note")


def test_sizes_have_one_unit_system_and_one_helper():
    from spec_format.inspect import render as inspect_render
    from spec_format.render import text

    assert inspect_render.human_bytes is human_bytes is text.human_bytes
    assert [human_bytes(n) for n in (999, 1000, 1_234_567, 16_100_000_000)] == [
        "999 B",
        "1.0 kB",
        "1.2 MB",
        "16.1 GB",
    ]


def test_latest_is_accepted_where_it_is_the_default(cli, tmp_path):
    latest = cli("migrate", EAGLE3, "--to", "latest", "-o", tmp_path / "a.json")
    default = cli("migrate", EAGLE3, "-o", tmp_path / "b.json")
    assert latest.exit_code == default.exit_code == 0, latest.output
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    assert cli("validate", EAGLE3, "--format-version", "latest").exit_code in (0, 1)
    bad = cli("migrate", EAGLE3, "--to", "newest")
    assert bad.exit_code == 2 and "or latest" in bad.output


def test_the_format_version_option_has_one_name(cli):
    for command in ("export", "show", "vscode"):
        help_text = cli("schema", command, "--help").output
        assert "--format-version" in help_text and "--version " not in help_text
    new = cli("schema", "show", "eagle3", "--format-version", "0.5").output
    assert new == cli("schema", "show", "eagle3", "--version", "0.5").output  # hidden alias
    assert json.loads(new)
    migrate = cli("migrate", "--help").output
    assert "--to" in migrate and "--format-version" not in migrate  # documented: --from/--to


def test_rules_take_format_json_and_a_layer_prefix(cli):
    every = json.loads(cli("rules", "-f", "json").output)
    assert json.loads(cli("rules", "--json").output) == every  # the old spelling, hidden
    assert "--json" not in cli("rules", "--help").output
    consumer = json.loads(cli("rules", "C", "-f", "json").output)
    assert consumer and {r["id"][0] for r in consumer} == {"C"}
    assert consumer == [r for r in every if r["layer"] == "consumer"]
    assert json.loads(cli("rules", "consumer", "-f", "json").output) == consumer
    some = {r["id"] for r in json.loads(cli("rules", "C001", "X", "-f", "json").output)}
    assert "C001" in some and "C002" not in some and "X001" in some
    assert cli("rules", "C").output.splitlines()[0].startswith("C001 ")
    bad = cli("rules", "Q")
    assert bad.exit_code == 2 and "unknown rule id 'Q'" in bad.output
    assert json.loads(cli("explain", "C001", "-f", "json").output)["id"] == "C001"


HELP = ["validate", "migrate", "fix", "convert", "inspect", "serving", "rules", "explain"]
HELP += ["history", "forward", "schema export", "schema show", "schema vscode"]


@pytest.mark.parametrize("command", HELP)
def test_every_metavar_is_written_in_capitals(command):
    from tests.test_terminal import in_terminal, visible

    code, raw = in_terminal(*command.split(), "--help", columns=120)
    assert code == 0
    text = "\n".join(visible(raw))
    assert not re.findall(r"<(str|path|int|float|text|integer)>", text), text[:2000]
    assert "Usage:" in text
