"""The registry as a contract: every rule registered with its own `since`, a page whose
examples do what they say, `explain` for every id (live, rewrite and removed), migration
problems named by rules, and a fast path that is an option, not a call counter."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from docgen.checks import example_verdicts
from typer.testing import CliRunner

from spec_format.cli.app import app
from spec_format.facts import catalog, versions
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.rules import registry
from spec_format.rules.base import Layer, Rule, Stability
from spec_format.runner.validation import ValidateOptions, validate, validate_config
from tests.common import EXAMPLES, ROOT


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def test_every_rule_class_is_registered():
    concrete = {c for c in _all_subclasses(Rule) if not c.__dict__.get("abstract", False)}
    concrete = {c for c in concrete if c.__module__.startswith("spec_format.rules.")}
    assert concrete - set(registry.RULES) == set()


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.id)
def test_since_is_the_rules_own_and_not_older_than_its_types(rule):
    assert "since" in rule.__dict__, f"{rule.id} inherits since from a layer class"
    line = ".".join(rule.since.split(".")[:2])
    assert line in catalog.versions(), rule.since
    first = next(
        (
            v
            for v in catalog.versions()
            if any(rule.applies(t, v) for t in catalog.version_entry(v).types)
        ),
        None,
    )
    if rule.applies_to or rule.versions:
        assert first is not None
        assert versions.line_index(line) >= versions.line_index(first), (
            f"{rule.id} says since {rule.since} but its types/versions start at {first}"
        )


def test_engine_emitted_rules_word_their_findings():
    import string

    for rule in registry.RULES:
        if not rule.engine_emitted:
            continue
        templates = rule.template if isinstance(rule.template, dict) else {None: rule.template}
        assert templates and all(templates.values()), rule.id
        for variant, template in templates.items():
            fields = {
                f.split(".")[0].split("[")[0]
                for _, f, _, _ in string.Formatter().parse(template)
                if f
            }
            params = {f: _Anything() for f in fields}
            assert rule.render(variant, **params), (rule.id, variant)
    with pytest.raises(KeyError, match="no message variant"):
        registry.BY_ID["I002"].render("no-such-variant", path="x")


class _Anything:
    """Stands in for any message parameter (formats as text, numbers, attributes)."""

    def __format__(self, spec):
        return format(1, spec) if spec else "x"

    def __repr__(self):
        return "'x'"

    def __getattr__(self, name):
        return "x"


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.id)
def test_rule_page_examples_fail_and_pass_as_documented(rule):
    for section, should_fire, fires in example_verdicts(ROOT, rule):
        assert fires == should_fire, f"{rule.id} {section}: fires={fires}"


def test_the_example_judge_covers_the_config_and_rewrite_layers():
    judged = {r.id for r in registry.RULES if example_verdicts(ROOT, r)}
    for layer in ("S", "X", "C", "M", "R"):
        with_json = {
            r.id for r in registry.RULES if r.id[0] == layer and "```json" in r.section("Example")
        }
        assert with_json and with_json <= judged, layer


def test_the_example_judge_catches_an_example_that_does_not_fail():
    class Misdocumented(registry.BY_ID["X002"]):
        """Both norm flags true.

        ## What it checks
        x
        ## Why it matters
        x
        ## Example
        ```json
        {"speculators_model_type": "eagle3", "norm_before_fc": false, "fc_norm": false}
        ```
        ## Use instead
        ```json
        {"speculators_model_type": "eagle3", "norm_before_fc": true, "fc_norm": true}
        ```
        """

        since = "0.7.0"

    verdicts = example_verdicts(ROOT, Misdocumented)
    assert verdicts == [("Example", True, False), ("Use instead", False, True)]


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.id)
def test_every_rule_has_a_page(rule):
    page = ROOT / "docs" / "rules" / f"{rule.id}.md"
    assert page.is_file() and f"# {rule.id} {rule.name}" in page.read_text()


def test_explain_works_for_every_id():
    runner = CliRunner()
    for rule in registry.RULES:
        result = runner.invoke(app, ["explain", rule.id])
        assert result.exit_code == 0 and rule.name in result.output, rule.id
        record = json.loads(runner.invoke(app, ["explain", rule.id, "--json"]).output)
        assert record["status"] == rule.status.value and record["since"] == rule.since


def test_explain_shows_the_redirect_of_a_removed_id(monkeypatch):
    gone = registry.Removed("X950", "old-check", "0.1.0", "0.2.0", "X001", "merged into X001")
    monkeypatch.setattr(registry, "REMOVED", (gone,))
    monkeypatch.setitem(registry.REDIRECTS, "X950", "X001")
    runner = CliRunner()
    result = runner.invoke(app, ["explain", "X950"])
    assert result.exit_code == 0
    assert "X950 old-check was removed in specfmt 0.2.0" in result.output
    text = " ".join(result.output.split())
    assert "replaced by X001" in text and registry.BY_ID["X001"].name in text
    record = json.loads(runner.invoke(app, ["explain", "x950", "--json"]).output)
    assert record["status"] == "removed" and record["redirect"] == "X001"
    assert record["now"]["id"] == "X001"
    assert registry.entry("X950").status is Stability.REMOVED


def _example(model_type: str) -> dict:
    for p in EXAMPLES:
        cfg = json.loads((p / "config.json").read_text())
        if cfg["speculators_model_type"] == model_type:
            return cfg
    raise AssertionError(model_type)


def test_rewrite_rules_fire_from_migrate_and_fix_and_explain_them():
    dflash = _example("dflash")
    dflash["transformer_layer_config"]["layer_types"] = ["sliding_attention"] * dflash[
        "transformer_layer_config"
    ]["num_hidden_layers"]
    dflash["transformer_layer_config"]["sliding_window"] = 2048
    result = migrate(
        copy.deepcopy(dflash), MigrateOptions(to="0.5", source_version="0.6", allow_lossy=True)
    )
    r003 = [p for p in result.problems if p.rule == "R003"]
    assert r003 and r003[0].code == "sliding-window-ignored"
    assert r003[0].message == registry.BY_ID["R003"].render("dflash-0.5")
    assert r003[0].to_dict()["rule"] == "R003"
    # every problem migrate reports names a registered rule that explain shows
    for p in result.problems:
        assert p.rule in registry.BY_ID


def test_rewrite_problems_are_worded_by_their_rule():
    from spec_format.rewrites.migration.records import Problem

    p = Problem.of("R005", pointer="/k", key="eagle_aux_hidden_state_layer_ids", state="null")
    assert p.code == "aux-layer-ids-implicit" and p.severity == "info"
    assert p.message.startswith("eagle_aux_hidden_state_layer_ids is null, so readers derive")


def test_fast_path_is_an_option_and_history_never_changes_findings():
    good = _example("eagle3")
    bad = copy.deepcopy(good)
    bad["transformer_layer_config"]["hidden_size"] = "4096"
    reference = [f.to_dict() for f in validate_config(bad).findings]
    for _ in range(40):  # long history of valid configs: the old counter switched after 16
        validate_config(good)
    for fast in (False, True, None):
        got = [f.to_dict() for f in validate_config(bad, ValidateOptions(fast_path=fast)).findings]
        assert got == reference, fast


def test_many_inputs_give_the_same_findings_with_and_without_the_fast_path(tmp_path):
    paths = []
    for i, p in enumerate(EXAMPLES * 2):
        cfg = json.loads((p / "config.json").read_text())
        if i % 3 == 0:
            cfg["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = 0
        out = tmp_path / f"c{i}.json"
        out.write_text(json.dumps(cfg))
        paths.append(str(out))
    assert len(paths) > 16  # the default turns the fast path on for this run
    runs = [validate(paths, ValidateOptions(fast_path=f)) for f in (False, True, None)]
    dumps = [[f.to_dict() for r in run.files for f in r.findings] for run in runs]
    assert dumps[0] == dumps[1] == dumps[2]
    assert any(d["rule"] == "S103" for d in dumps[0])


def test_migration_problem_ids_cover_the_codes_migrate_prints():
    rewrite = [r for r in registry.RULES if r.layer is Layer.REWRITE]
    assert {r.id for r in rewrite} == {"R001", "R002", "R003", "R004", "R005", "R006"}
    assert all(r.engine_emitted and r.template for r in rewrite)
    assert Path(registry.BY_ID["R001"].source_file).name == "rewrite.py"


def test_a_rules_summary_is_the_first_paragraph_of_its_doc_on_one_line():
    assert registry.get("I001").summary() == "The path given on the command line does not exist."
    for rule in registry.RULES:
        assert "##" not in rule.summary() and "\n" not in rule.summary(), rule.id


def _refusal(text: str, option: str = "--select") -> str:
    from spec_format.base.errors import UsageError

    with pytest.raises(UsageError) as refused:
        registry.expand([text], option)
    return str(refused.value)


def test_an_unknown_selector_is_refused_with_the_ids_meant():
    tail = "; `specfmt rules` lists them"
    assert (
        _refusal("C0O1")
        == "--select: unknown rule id 'C0O1' (did you mean C001, C021, C016?)" + tail
    )
    assert (
        _refusal("C9", "--ignore") == "--ignore: unknown rule id 'C9' (did you mean C009?)" + tail
    )
    assert _refusal("version-string-invalid") == (
        "--select: unknown rule id 'version-string-invalid' (did you mean M001, the id of that "
        "name?)" + tail
    )
    letters = ", ".join(
        p for p in registry.LAYER_PREFIX.values() if p in {i[0] for i in registry.BY_ID}
    )
    assert _refusal("Z001") == (
        f"--select: unknown rule id 'Z001': a rule id is a layer letter ({letters}, N (run "
        "notes)) and three digits, such as C001, or a prefix of one (C, C00)" + tail
    )
    last = max(i for i in registry.BY_ID if i[0] == "C")
    assert (
        _refusal("C999x")
        == f"--select: unknown rule id 'C999x'; the C rules are C001-{last}" + tail
    )
