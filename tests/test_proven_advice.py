"""Advice that is proven (issue 35 part 6, issue 36 items 1 and 3): what fix and migrate
write is checked again before it is written (a new error refuses the write, a new warning
or note is named in the report), and every finding that carries an edit is applied and
checked again (the finding goes, no new error comes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.common import EXAMPLES, RELEASES, ROOT

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
    (report,) = (
        json.loads(result.output)
        if result.output.lstrip().startswith("[")
        else [json.loads(result.output)]
    )
    named = {(p["rule"], p.get("pointer")) for p in report["problems"]}
    assert ("C001", "/eagle_aux_hidden_state_layer_ids") in named

    def found(p):
        ran = cli("validate", "--format", "json", p)
        return {
            (f["rule"], f.get("pointer"))
            for r in json.loads(ran.output)["files"]
            for f in r["findings"]
        }

    assert found(out) - found(path) <= named


# -- every hint that carries an edit, on every rule case, example and release fixture ---------
def _inputs():
    """(id, what to place) for every validate case of the rule cases, every example and
    every release fixture (an EAGLE-3 one against the Llama-3.1-8B verifier, as in
    tests/test_hints.py)."""
    from tests.common import EXAMPLES, RELEASES
    from tests.rules.cases import all_cases

    for case in all_cases():
        if case.data.get("command", "validate") == "validate" and "inject_bug" not in case.data:
            yield case.id, case
    for path in [p / "config.json" for p in EXAMPLES] + RELEASES:
        yield str(path.relative_to(ROOT)), path


INPUTS = list(_inputs())


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    return tmp_path_factory.mktemp("proof-builds")


def _placed(item, folder, builds):
    """The input's config document, its checkpoint folder (None: config only) and the
    validate options (verifier as a VerifierInfo)."""
    from spec_format.parsers.verifier import load_verifier
    from tests.rules.cases import place_input, place_verifier

    if isinstance(item, Path):
        document = json.loads(item.read_text())
        options: dict = {}
        verifier = None
        if document.get("speculators_model_type") == "eagle3":
            verifier = load_verifier(LLAMA_8B)
        return document, None, options, verifier
    path = place_input(item, folder, builds)
    options = dict(item.options)
    verifier = None
    if "verifier" in item.data:
        verifier = load_verifier(place_verifier(item.data["verifier"], folder))
    config = path / "config.json" if path.is_dir() else path
    if not config.is_file():
        return None
    try:
        document = json.loads(config.read_text())
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(document, dict):
        return None
    return document, (path if path.is_dir() else None), options, verifier


@pytest.mark.parametrize("item", [i for _, i in INPUTS], ids=[n for n, _ in INPUTS])
def test_every_edit_a_finding_advises_removes_it_and_brings_no_new_error(item, tmp_path, builds):
    from spec_format.runner import recheck
    from spec_format.runner.validate_options import ValidateOptions

    placed = _placed(item, tmp_path, builds)
    if placed is None:
        pytest.skip("no config document to edit")
    document, checkpoint, options, verifier = placed
    run = ValidateOptions(**options)
    found = recheck.findings(document, verifier=verifier, checkpoint=checkpoint, options=run)
    for finding in (f for f in found if f.edit):
        proof = recheck.prove(
            document, finding, verifier=verifier, checkpoint=checkpoint, options=run, before=found
        )
        assert proof.holds, proof.describe()


def test_the_inputs_give_every_kind_of_edit(tmp_path, builds):
    """The proof above is not empty: the rules that word a "set X to Y" get an input that
    raises them with their edit."""
    from spec_format.runner import recheck
    from spec_format.runner.validate_options import ValidateOptions

    edited: set[str] = set()
    for i, (_, item) in enumerate(INPUTS):
        placed = _placed(item, tmp_path / str(i), builds)
        if placed is None:
            continue
        document, checkpoint, options, verifier = placed
        found = recheck.findings(
            document, verifier=verifier, checkpoint=checkpoint, options=ValidateOptions(**options)
        )
        edited |= {f.rule for f in found if f.edit}
    assert {"W013", "W024", "X001", "X003", "X016", "X019", "M006"} <= edited, sorted(edited)


@pytest.mark.parametrize(
    "case",
    [p / "config.json" for p in EXAMPLES] + RELEASES,
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_a_change_within_the_format_version_is_fix_s(cli, case):
    """One command fixes what is fixable in place: no hint sends the user to `migrate --to`
    the version the file is in already (C009 and M006 did, while fix said "no changes")."""
    ran = cli("validate", "--format", "json", case)
    for report in json.loads(ran.output)["files"]:
        for f in report["findings"]:
            command = f.get("command") or []
            if "migrate" in command:
                to = command[command.index("--to") + 1]
                assert to != report["format_version"], (f["rule"], command)
