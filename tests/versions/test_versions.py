"""Version parsing, build order around the off-main releases, and key fingerprints."""

from __future__ import annotations

import pytest

from spec_format.facts import catalog, versions


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("0.1.0", "0.1"),
        ("0.2.0.dev11", "0.2"),
        ("0.4.0.1", "0.4"),
        ("0.4.0a3", "0.4"),
        ("0.5.0.dev84", "0.5"),  # the release branch's merge base: before 0.5.0
        ("0.5.0.dev85", "0.6"),  # built from main after the off-main 0.5.0 release
        ("0.5.0.dev172", "0.6"),
        ("0.7.0.dev150", "0.8"),
        ("0.8.0.dev196", "0.8"),
        ("0.9.0", "0.9"),
    ],
)
def test_parse_line(text, line):
    assert versions.parse(text).line == line


@pytest.mark.parametrize("text", ["1", "", "latest", "v", "0"])
def test_parse_rejects_non_versions(text):
    with pytest.raises(versions.VersionStringError):
        versions.parse(text)


def test_main_builds_after_off_main_release_sort_after_it():
    key = versions.order_key
    # PEP 440 says 0.5.0.dev150 < 0.5.0; it was built later
    assert key("0.5.0.dev150") > key("0.5.0") > key("0.5.0.dev84")
    assert key("0.5.0.dev150") < key("0.6.0")
    assert key("0.7.0.dev160") > key("0.7.0.2")
    assert key("0.7.0.dev160") < key("0.8.0.dev196") < key("0.8.0")
    assert key("0.4.0") < key("0.4.0.1") < key("0.5.0.dev1")
    assert key("0.4.0a1") < key("0.4.0")


def test_in_range_uses_build_order():
    v = versions.parse("0.5.0.dev60")
    assert versions.in_range(v, "0.5.0.dev46", "0.5.0.dev71")
    assert not versions.in_range(versions.parse("0.5.0.dev90"), "0.5.0.dev46", "0.5.0")


def test_dev_build_between_releases_may_write_the_older_format():
    # 0.2.0.dev11 is on the way to 0.2 but its config code equals 0.1's
    cfg = {
        "speculators_model_type": "eagle3",
        "speculators_version": "0.2.0.dev11",
        "norm_before_residual": False,
        "draft_vocab_size": 32000,
    }
    det = versions.detect(cfg)
    assert (det.line, det.source, det.agrees) == ("0.1", "declared", True)


def test_resaved_file_keeps_old_stamp_and_keys_win():
    cfg = {
        "speculators_model_type": "eagle3",
        "speculators_version": "0.4.0",
        "fc_norm": False,
        "norm_output": False,
        "norm_before_fc": False,
    }
    det = versions.detect(cfg)
    assert det.line == catalog.latest_version() and det.source == "inferred" and not det.agrees
    assert det.declared_line == "0.4"


def test_missing_keys_never_overrule_a_declared_version():
    # hand-written: stamped 0.9.0 but lacking fields every release writes
    cfg = {"speculators_model_type": "eagle3", "speculators_version": "0.9.0"}
    det = versions.detect(cfg)
    assert (det.line, det.source, det.agrees) == ("0.9", "declared", True)


def test_noise_keys_bound_the_writer_from_above():
    cfg = {
        "speculators_model_type": "eagle3",
        "speculators_version": "0.9.0",
        "has_no_defaults_at_init": False,
    }
    det = versions.detect(cfg)
    assert det.source == "inferred" and det.line in ("0.1", "0.2", "0.3", "0.4", "0.5")


@pytest.mark.parametrize(
    ("cfg", "line"),
    [
        ({"speculators_model_type": "dflash", "max_anchors": 256}, "0.5"),
        (
            {
                "speculators_model_type": "dflash",
                "max_anchors": 256,
                "sliding_window_non_causal": False,
            },
            "0.6",
        ),
        ({"speculators_model_type": "dspark"}, catalog.latest_version()),
        ({"speculators_model_type": "eagle"}, "0.4"),
        ({"speculators_model_type": "peagle", "num_depths": 8, "norm_before_fc": False}, "0.6"),
        ({"speculators_model_type": "xpress"}, catalog.latest_version()),
    ],
)
def test_inferred_without_version(cfg, line):
    det = versions.detect(cfg)
    assert (det.line, det.source) == (line, "inferred")


def test_requested_overrides_everything():
    det = versions.detect(
        {"speculators_model_type": "eagle3", "speculators_version": "0.2.0"}, "0.7"
    )
    assert (det.line, det.source) == ("0.7", "requested")


def test_unparseable_version_falls_back_to_keys():
    det = versions.detect(
        {
            "speculators_model_type": "dflash",
            "speculators_version": "1",
            "sample_from_anchor": False,
        }
    )
    assert det.source == "inferred" and det.problems


@pytest.mark.parametrize("typo", ["eagle", "eagle-3", "EAGLE3"])
def test_a_mistyped_type_in_a_current_file_keeps_its_version_and_gets_a_did_you_mean(typo):
    """The type is one value against every other key: the stamp and the keys win, and the
    message names the type the file means."""
    import json

    from conftest import ROOT

    from spec_format.runner.validation import validate_config

    path = ROOT / "examples" / "llama-3.1-8b-eagle3-0.9" / "config.json"
    config = {**json.loads(path.read_text()), "speculators_model_type": typo}
    assert versions.detect(config).line == "0.9"
    report = validate_config(config)
    assert report.format_version == "0.9" and report.version_source == "declared"
    (finding,) = [f for f in report.findings if f.pointer == "/speculators_model_type"]
    assert "did you mean 'eagle3'" in finding.message, finding.message


def test_detections_of_equal_looking_stamps_stay_apart():
    """detect() is cached on what it reads: 1, 1.0 and True are equal dict keys, but each
    is reported as its own type, and a long stamp is never confused with its prefix."""
    base = {"speculators_model_type": "eagle3"}
    for stamp, problem in [
        (1, "speculators_version is int, not a string"),
        (1.0, "speculators_version is float, not a string"),
        (True, "speculators_version is bool, not a string"),
        ("1", "'1' is not a speculators version (expected X.Y.Z[.devN])"),
    ]:
        assert versions.detect({**base, "speculators_version": stamp}).problems == [problem]
    long = "0.1.0" + "0" * 100
    det = versions.detect({**base, "speculators_version": long})
    assert det.declared == long and det.declared_line is None


def test_each_detection_is_a_copy():
    cfg = {"speculators_model_type": "eagle3", "speculators_version": "latest"}
    first = versions.detect(cfg)
    first.evidence.clear()
    first.problems.append("changed by a caller")
    second = versions.detect(cfg)
    assert second.evidence and second.problems == ["'latest' is not a PEP 440 version"], (
        second.problems
    )
    assert second.to_dict()["evidence"] == [e.describe() for e in versions.fingerprint(cfg)]


def test_the_eagle3_draft_architecture_bounds_the_line_from_below():
    import json

    from tests.common import ROOT

    doc = json.loads((ROOT / "examples/qwen3-8b-eagle3/config.json").read_text())
    doc["architectures"] = ["Eagle3DraftModel"]  # what 0.3.0 and later wrote
    found = versions.detect(doc)
    assert versions.Evidence("architectures Eagle3DraftModel", "0.3", None) in found.evidence
    assert "architectures Eagle3DraftModel (>= 0.3)" in found.to_dict()["evidence"]
    assert found.line == "0.3"  # declared 0.2.0.dev11: the architecture outweighs it


def test_a_top_level_dtype_never_overrules_a_declared_version():
    """transformers >= 4.56 writes `dtype` for `torch_dtype`, so a 0.1 file saved again by a
    newer transformers has one: weak evidence of 0.2 and later, which narrows what the keys
    allow but leaves the stamp alone."""
    import json

    from tests.common import ROOT

    path = ROOT / "tests/fixtures/releases/0.1/eagle/llama-3.1-8b-eagle1-converter-0.1.0.json"
    doc = json.loads(path.read_text())
    doc["dtype"] = doc.pop("torch_dtype")
    detected = versions.detect(doc)
    assert (detected.line, detected.source) == ("0.1", "declared")
    assert detected.inferred == ("0.2",) and "0.1" in detected.strong


def test_an_older_format_points_at_its_stamp_or_at_the_document():
    """M004 points at speculators_version where the file has one, at the whole document
    (the empty pointer) where the version is inferred."""
    import json

    from spec_format.runner.validation import validate_config
    from tests.common import ROOT

    path = ROOT / "tests/fixtures/releases/0.2/eagle3/llama-3.1-8b-converter-0.2.0.json"
    doc = json.loads(path.read_text())
    stamped = [f.pointer for f in validate_config(doc).findings if f.rule == "M004"]
    del doc["speculators_version"]
    inferred = [f.pointer for f in validate_config(doc).findings if f.rule == "M004"]
    assert (stamped, inferred) == (["/speculators_version"], [""])
