"""A run checks each distinct document once (spec_format.runner.config_memo): every file of a
batch must get exactly the findings it gets when checked alone, under its own path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spec_format.runner import config_memo
from spec_format.runner.input_paths import written_as_a_path
from spec_format.runner.validation import ValidateOptions, Validation, _isolated
from tests.common import EXAMPLES, INVALID, VALID, load_case

#: names a batch gives each document: plain, one a shell must quote, one in a folder
NAMES = ("a.json", "b c.json", "deep/x-1.json")


def _documents() -> list[tuple[str, str]]:
    docs = [(p.name, (p / "config.json").read_text()) for p in EXAMPLES]
    docs += [(p.stem, p.read_text()) for p in VALID]
    docs += [(f"{p.parent.name}-{p.stem}", json.dumps(load_case(p)["config"])) for p in INVALID]
    return docs


def _batch(tmp_path) -> list[str]:
    paths = []
    for i, (_, text) in enumerate(_documents()):
        for name in NAMES:
            path = tmp_path / f"d{i:03d}" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            paths.append(str(path))
    return paths


def _alone(path: str, options: ValidateOptions) -> dict:
    """The report of ``path`` checked on its own (whole: status, type, version, what was
    skipped and checked, the findings located)."""
    run = Validation([path], options)  # one input: nothing to share, the memo unused
    (target,) = run.targets
    return _isolated(target, options, run.verifier, None).to_dict()


@pytest.mark.parametrize(
    "options",
    [
        ValidateOptions(),
        ValidateOptions(engines=("vllm==0.32.0",)),
        ValidateOptions(profile="strict", fast_path=False),
    ],
    ids=["default", "engine", "strict-explaining"],
)
def test_a_batch_finds_what_each_file_finds_alone(tmp_path, options):
    paths = _batch(tmp_path)
    run = Validation(paths, options)
    reports = list(run)
    # every document but the first copy of each was shared, except the ones a shell quotes
    assert run.memo.shared >= len(_documents()) * (len(NAMES) - 2)
    for path, report in zip(paths, reports, strict=True):
        assert report.to_dict() == _alone(path, options), path


def test_json_values_python_equates_are_different_documents(tmp_path):
    """1, 1.0 and true are equal in Python; a memo keyed on them would mix up verdicts."""
    eagle3 = next(p for p in EXAMPLES if p.name == "llama-3.1-8b-eagle3-0.9")
    base = json.loads((eagle3 / "config.json").read_text())
    paths = []
    for i, value in enumerate((True, 1, 1.0)):
        config = {**base, "norm_before_residual": value}
        path = tmp_path / f"c{i}.json"
        path.write_text(json.dumps(config))
        paths.append(str(path))
    reports = list(Validation(paths, ValidateOptions()))
    for path, report in zip(paths, reports, strict=True):
        assert report.to_dict() == _alone(path, ValidateOptions())
    schema_errors = [any(f.rule.startswith("S") for f in r.findings) for r in reports]
    assert schema_errors == [False, True, True]


def test_a_document_with_a_parse_problem_is_never_shared_by_document(tmp_path):
    """What the parser kept of a duplicate key is not all the file says: two checkpoints
    whose configs hold one are each checked on their own; two files of the same bytes
    share one report, which is a function of the bytes (I009 included)."""
    text = (EXAMPLES[0] / "config.json").read_text()
    duplicated = text.replace("{", '{"speculators_model_type": "eagle", ', 1)
    folders, files = [], []
    for name in ("a", "b"):
        shutil.copytree(EXAMPLES[0], tmp_path / name)
        (tmp_path / name / "config.json").write_text(duplicated)
        folders.append(str(tmp_path / name))
        (tmp_path / f"{name}.json").write_text(duplicated)
        files.append(str(tmp_path / f"{name}.json"))
    for paths, shared in ((folders, 0), (files, 1)):
        run = Validation(paths, ValidateOptions())
        reports = list(run)
        assert run.memo.shared == shared
        for path, report in zip(paths, reports, strict=True):
            assert any(f.name == "duplicate-key" for f in report.findings)
            assert report.to_dict() == _alone(path, ValidateOptions())


def test_the_memo_stops_growing_at_its_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(config_memo, "LIMIT", 3)
    base = json.loads((EXAMPLES[0] / "config.json").read_text())
    paths = []
    for i in range(6):
        config = json.loads(json.dumps(base))
        config["transformer_layer_config"]["num_hidden_layers"] = i + 1
        for copy in range(2):
            path = tmp_path / f"c{i}-{copy}.json"
            path.write_text(json.dumps(config))
            paths.append(str(path))
    run = Validation(paths, ValidateOptions())
    reports = list(run)
    assert len(run.memo._files) == 3
    assert run.memo.shared == 3  # the second copies of the first three documents
    for path, report in zip(paths, reports, strict=True):
        assert report.to_dict() == _alone(path, ValidateOptions())


def test_a_checkpoint_directory_shares_its_config_checks(tmp_path):
    """Two checkpoint folders of one run (same config.json): the same findings, each under
    its own config path."""
    for step in ("checkpoint-100", "checkpoint-200"):
        shutil.copytree(EXAMPLES[0], tmp_path / step)
    paths = [str(tmp_path / "checkpoint-100"), str(tmp_path / "checkpoint-200")]
    run = Validation(paths, ValidateOptions())
    reports = list(run)
    assert run.memo.shared == 1
    for path, report in zip(paths, reports, strict=True):
        assert report.to_dict() == _alone(path, ValidateOptions())


def test_a_run_of_distinct_documents_stops_looking(tmp_path, monkeypatch):
    monkeypatch.setattr(config_memo, "GIVE_UP_AFTER", 4)
    base = json.loads((EXAMPLES[0] / "config.json").read_text())
    paths = []
    for i in (1, 2, 3, 4, 5, 1, 2):  # four distinct before any repeat: given up
        config = json.loads(json.dumps(base))
        config["transformer_layer_config"]["num_hidden_layers"] = i
        path = tmp_path / f"c{len(paths)}.json"
        path.write_text(json.dumps(config))
        paths.append(str(path))
    run = Validation(paths, ValidateOptions())
    reports = list(run)
    assert not run.memo.active and run.memo.shared == 0
    for path, report in zip(paths, reports, strict=True):
        assert report.to_dict() == _alone(path, ValidateOptions())


def test_a_bug_in_a_check_is_each_identical_files_own_finding(tmp_path, monkeypatch):
    """Nothing is stored from a check that raised: every copy reports the bug (I012)."""
    from spec_format.rules import crossfield

    rule = next(r for r in vars(crossfield).values() if getattr(r, "id", "") == "X001")

    def check(self, ctx):
        raise RuntimeError("a bug in one rule")

    monkeypatch.setattr(rule, "check", check)
    text = (EXAMPLES[0] / "config.json").read_text()
    paths = []
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    run = Validation(paths, ValidateOptions())
    reports = list(run)
    assert run.memo.shared == 0
    assert [[f.rule for f in r.findings] for r in reports] == [["I012"], ["I012"]]
    assert all(r.internal_error and r.path == p for r, p in zip(reports, paths, strict=True))


def test_names_a_report_spells_otherwise_find_what_they_find_alone(tmp_path, monkeypatch):
    """`./a.json` is reported as `a.json` (its Path): the run never hands it the report of
    an earlier file of the same bytes, which would name it as it was typed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    text = (EXAMPLES[0] / "config.json").read_text()
    names = ["a.json", "./a.json", "sub/b.json", "sub//b.json", "sub/./b.json", "./sub/b.json"]
    for name in ("a.json", "sub/b.json"):
        (tmp_path / name).write_text(text)
    options = ValidateOptions()
    reports = list(Validation(names, options))
    for name, report in zip(names, reports, strict=True):
        assert report.to_dict() == _alone(name, options), name


@settings(max_examples=2000)
@given(st.text(alphabet="a./", max_size=12))
def test_a_name_is_written_as_a_path_exactly_when_pathlib_writes_it_so(name):
    assert written_as_a_path(name) == (str(Path(name)) == name)
