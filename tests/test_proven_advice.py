"""Advice that is proven (issue 35 part 6, issue 36 items 1 and 3): what fix and migrate
write is checked again before it is written (a new error refuses the write, a new warning
or note is named in the report), and every finding that carries an edit is applied and
checked again (the finding goes, no new error comes)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.common import ROOT

LLAMA_8B = ROOT / "tests/data/verifiers/v4/Llama-3.1-8B-Instruct.json"  # 32 layers
CONVERTED = ROOT / "tests/fixtures/releases/0.2/eagle3/llama-3.1-8b-converter-0.2.0.json"


@pytest.fixture
def draft(tmp_path):
    """An EAGLE-3 (Llama layers) config without aux layer ids, and a 32-layer verifier."""
    shutil.copyfile(CONVERTED, tmp_path / "config.json")
    (tmp_path / "v").mkdir()
    shutil.copyfile(LLAMA_8B, tmp_path / "v" / "config.json")
    return tmp_path / "config.json", tmp_path / "v"


@pytest.mark.parametrize(
    ("ids", "named"),
    [
        ("2,16,40", ["V003", "[2, 16, 40]", "32 layers"]),  # past the verifier's last layer
        ("2,16", ["C020", "[2, 16]", "sizes fc for 3"]),  # the Llama-layer class takes three
    ],
)
@pytest.mark.parametrize("mode", [["--in-place"], ["--dry-run"], ["-o", "out.json"], []])
def test_fix_refuses_aux_ids_the_verifier_or_the_class_cannot_take(cli, draft, ids, named, mode):
    path, verifier = draft
    before = path.read_bytes()
    mode = [str(path.parent / m) if m.endswith(".json") else m for m in mode]
    result = cli("fix", "--aux-layer-ids", ids, "--verifier", verifier, *mode, path)
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert "refused to write /eagle_aux_hidden_state_layer_ids" in line
    assert all(n in line for n in named), line
    assert "nothing was written" in line and "Traceback" not in result.output
    assert path.read_bytes() == before
    assert not (path.parent / "out.json").exists()


def test_fix_writes_the_aux_ids_the_verifier_and_the_class_take(cli, draft):
    path, verifier = draft
    result = cli("fix", "--aux-layer-ids", "2,16,29", "--verifier", verifier, "--in-place", path)
    assert result.exit_code == 0, result.output
    assert json.loads(path.read_text())["eagle_aux_hidden_state_layer_ids"] == [2, 16, 29]


def test_a_refused_value_is_refused_through_the_api_too(draft):
    from spec_format.api import fix_files
    from spec_format.rewrites.fixing import FixOptions

    path, verifier = draft
    options = FixOptions(verifier=str(verifier), aux_layer_ids=(2, 16, 40))
    (result,) = fix_files([path], options, in_place=True)
    assert result.exit_code == 2 and "V003" in result.error
    assert json.loads(path.read_text()).get("eagle_aux_hidden_state_layer_ids") is None


def test_a_migration_names_every_finding_it_introduces(cli, tmp_path):
    """The 0.2.0.dev11 example migrated to 0.5.0 gets eagle_aux_hidden_state_layer_ids: null
    (0.2 declares the field), on which validate warns C001: the migration's report says so,
    and every finding validate reports afterwards was there before or is in that report."""
    path = tmp_path / "config.json"
    shutil.copyfile(ROOT / "examples/qwen3-8b-eagle3/config.json", path)
    out = tmp_path / "out.json"
    result = cli("migrate", "--to", "0.5.0", "-o", out, "--format", "json", path)
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output) if result.output.lstrip().startswith("[") else [
        json.loads(result.output)
    ]
    named = {(p["rule"], p.get("pointer")) for p in report["problems"]}
    assert ("C001", "/eagle_aux_hidden_state_layer_ids") in named

    def found(p):
        ran = cli("validate", "--format", "json", p)
        return {(f["rule"], f.get("pointer")) for r in json.loads(ran.output)["files"] for f in r["findings"]}

    assert found(out) - found(path) <= named
