"""--engine on validate, fix and migrate: every claim about a reader comes from the reader
table (its rows are checked against the executed releases in tests/readers)."""

from __future__ import annotations

import json

import pytest

from spec_format.facts import catalog, disputes, readers, schemas
from spec_format.rewrites.fixing import FixOptions, fix
from spec_format.rewrites.migration import MigrateOptions, migrate
from spec_format.testing.builder import tiny_config
from tests.common import ROOT

VLLM = readers.newest("vllm").id  # what a bare --engine vllm and no --engine assume
COVERED = readers.coverage("vllm")
EXAMPLES = ROOT / "examples"


def _example(name: str) -> dict:
    return json.loads((EXAMPLES / name / "config.json").read_text())


@pytest.mark.parametrize("command", ["validate", "fix", "migrate"])
@pytest.mark.parametrize("engine", ["tgi==1.0", "vllm==0.10.0", "vllm==0.9.2"])
def test_an_engine_the_table_does_not_cover_is_a_usage_error(cli, command, engine):
    """Another engine, or a release before vLLM read speculators (a newer one: C021)."""
    result = cli(command, EXAMPLES / "qwen3-8b-eagle3", "--engine", engine)
    assert result.exit_code == 2
    # the covered range is listed
    assert f"vllm {COVERED.first} to {COVERED.newest}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("engine", "release"), [("vllm", VLLM), ("vllm==0.20.2", "vllm==0.20.2")])
def test_a_bare_engine_is_its_newest_release_and_any_member_is_covered(cli, engine, release):
    """A member release (0.20.2) reads with its group's file (0.20.0), which serves dflash."""
    result = cli("validate", EXAMPLES / "qwen3-8b-dflash", "--engine", engine)
    assert result.exit_code == 0, result.output
    assert disputes.parse_engine(engine).id == release
    assert "dflash" in disputes.parse_engine(engine).data["types"]["accepted"]


def test_a_named_engine_that_refuses_the_type_is_an_error(cli):
    result = cli("validate", EXAMPLES / "qwen3-next-80b-mtp", "--engine", VLLM)
    assert result.exit_code == 1
    assert "C012" in result.output and f"{VLLM} refuses this config" in result.output
    # in words: the types the release reads, not its dispatch dict's repr
    assert "'mtp' is not a type it serves: it reads eagle3, peagle" in result.output
    assert "Expected one of" not in result.output and "update_eagle3" not in result.output


def test_every_type_refusal_is_said_in_words():
    """No release's refusal of a type pastes a Python repr (a dict of functions, an object
    at an address): each names the type and the types the release reads."""
    import re

    from spec_format.facts import catalog, readers

    for rid in readers.releases():
        release = readers.release(*rid.split("=="))
        for model_type in [*catalog.known_types(), "not-a-type"]:
            config = {"speculators_model_type": model_type}
            for pointer, message in release.rejections(config):
                if pointer != "/speculators_model_type":
                    continue
                assert not re.search(r"<\w+ |\{'|0x[0-9a-f]", message), (rid, message)
                if not release.serves(model_type) and model_type not in release.data["types"].get(
                    "fails", {}
                ):
                    assert f"'{model_type}' is not a type it serves" in message, (rid, message)


def test_without_engine_the_assumed_readers_are_named_and_examples_pass(cli):
    result = cli("validate", *sorted(EXAMPLES.iterdir()))
    assert result.exit_code == 0, result.output
    assert f"no --engine given: reader checks assumed {VLLM}" in result.output


@pytest.mark.parametrize(
    "overrides, pointer",
    [
        ({"model_type": "llama"}, "/model_type"),
        ({"speculators_config.verifier.name_or_path": "/models/Qwen3-8B"}, None),
        ({"speculators_config.verifier.name_or_path": "s3://bucket/qwen3"}, None),
    ],
)
def test_what_vllm_refuses_is_an_error_with_the_engine(cli, write_config, overrides, pointer):
    config = tiny_config("eagle3", {"speculators_config.verifier.name_or_path": "Qwen/Qwen3-8B"})
    for path, value in overrides.items():
        node = config
        *parents, last = path.split(".")
        for part in parents:
            node = node[part]
        node[last] = value
    path = write_config(config)
    named = cli("validate", path, "--engine", VLLM, "-f", "json")
    doc = json.loads(named.output)
    errors = [f for f in doc["files"][0]["findings"] if f["rule"] == "C012"]
    assert named.exit_code == 1 and errors, named.output
    if pointer:
        assert errors[0]["pointer"] == pointer
    assumed = cli("validate", path, "-f", "json")
    found = json.loads(assumed.output)["files"][0]["findings"]
    errors = [f["rule"] for f in found if f["severity"] == "error" and f["rule"].startswith("C")]
    # without --engine: a warning when only the newest release refuses it (the verifier
    # forms), an error (C022) when every covered release does (a top-level model_type)
    assert errors == (["C022"] if pointer == "/model_type" else []), found


def _dflash(layer_types: list[str], snc) -> dict:
    config = tiny_config(
        "dflash",
        {
            "transformer_layer_config.layer_types": layer_types,
            "transformer_layer_config.num_hidden_layers": len(layer_types),
            "speculators_config.verifier.name_or_path": "Qwen/Qwen3-8B",
        },
    )
    if "sliding_attention" in layer_types:
        config["transformer_layer_config"].update(use_sliding_window=True, sliding_window=4)
    if snc is None:
        config.pop("sliding_window_non_causal", None)
    else:
        config["sliding_window_non_causal"] = snc
    return config


def test_fix_writes_the_value_under_which_vllm_runs_full_layers_bidirectionally():
    config = _dflash(["full_attention", "full_attention"], False)
    writer = disputes.writer_of("0.9")
    engine = readers.release(*VLLM.split("=="))
    assert [d.field for d in disputes.disputes(config, "dflash", writer, [engine])] == [
        "sliding_window_non_causal"
    ]
    result = fix(config, FixOptions(engines=(VLLM,)))
    assert result.document["sliding_window_non_causal"] is True
    assert not disputes.disputes(result.document, "dflash", writer, [engine])
    # speculators means the same before and after: full layers attend over the whole block
    before = disputes.view(writer, "dflash", "sliding_window_non_causal", config)
    after = disputes.view(writer, "dflash", "sliding_window_non_causal", result.document)
    assert before.meaning == after.meaning == ("bidirectional", "bidirectional")


def test_fix_names_a_disagreement_no_value_removes():
    config = _dflash(["sliding_attention", "full_attention"], False)
    result = fix(config, FixOptions(engines=(VLLM,)))
    assert result.document["sliding_window_non_causal"] is False  # left as the writer meant
    (problem,) = [p for p in result.problems if p.pointer == "/sliding_window_non_causal"]
    assert "no value of sliding_window_non_causal" in problem.message
    assert VLLM in problem.message


def test_migrate_refuses_to_create_a_disagreement_with_a_named_engine():
    config = _dflash(["sliding_attention", "full_attention"], None)
    config["speculators_version"] = "0.6.0"
    for key in ("sample_from_anchor",):
        config.pop(key, None)
    with pytest.raises(Exception) as refused:
        migrate(config, MigrateOptions(to="0.9", engines=(VLLM,)))
    assert "sliding_window_non_causal" in str(refused.value)
    done = migrate(config, MigrateOptions(to="0.9", engines=(VLLM,), allow_lossy=True))
    assert any(p.pointer == "/sliding_window_non_causal" for p in done.losses)


def test_migrate_without_sliding_layers_writes_what_vllm_reads_the_same():
    config = _dflash(["full_attention", "full_attention"], None)
    config["speculators_version"] = "0.6.0"
    config.pop("sample_from_anchor", None)
    done = migrate(config, MigrateOptions(to="0.9", engines=(VLLM,)))
    # absent, both read the layers as bidirectional; never a written false (vLLM: causal)
    assert done.document.get("sliding_window_non_causal") in (None, True)
    writer = disputes.writer_of("0.9")
    engine = readers.release(*VLLM.split("=="))
    assert not [
        d
        for d in disputes.disputes(done.document, "dflash", writer, [engine])
        if d.field == "sliding_window_non_causal"
    ]


def test_the_writers_absent_reading_is_the_schema_default():
    """The reader table and the schemas describe the same writer: a speculators release reads
    an absent field as the default the schema of its format version declares."""
    mismatches = []
    for line in catalog.versions():
        writer = disputes.writer_of(line)
        if writer is None:
            continue
        for model_type in catalog.version_entry(line).types:
            if not writer.serves(model_type):
                continue
            for name, row in writer.fields(model_type).items():
                node = schemas.resolve(line, model_type, (name,))
                if row.get("ignored") or "default" not in node or "absent" not in row:
                    continue
                reads = row["absent"].get("reads", "refuses")
                if reads != node["default"]:
                    mismatches.append(
                        f"{writer.id} {model_type}.{name}: reads {reads!r}, schema {line} "
                        f"default {node['default']!r}"
                    )
    assert not mismatches, "\n".join(mismatches)


def test_trained_flag_notes_name_only_the_readers_the_draft_will_meet():
    """A current config is not told about releases that never read its format: without
    --engine only the assumed engines count (C016, a warning); a named engine counts,
    however old (C015, an error naming it and no other release)."""
    from spec_format.runner.validation import ValidateOptions, validate, validate_config

    examples = sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())
    found = [
        (f.rule, f.message, r.path)
        for r in validate(examples).files
        for f in r.findings
        if f.rule in ("C015", "C016")
    ]
    assert found == []  # every example's flags are read by what it meets
    eagle = json.loads((ROOT / "examples" / "llama-3.1-8b-eagle3-0.9" / "config.json").read_text())
    assert eagle["norm_output"] is True
    old = ValidateOptions(engines=("speculators==0.5.0",))
    (hit,) = [
        f
        for f in validate_config(eagle, old).findings
        if f.rule == "C015" and "output" in f.message
    ]
    assert "speculators==0.5.0" in hit.message and "0.4.0.1" not in hit.message
    # the suggested fix for vLLM does not bring in a finding about another engine
    dflash = json.loads((ROOT / "examples" / "qwen3-32b-dflash2" / "config.json").read_text())
    fixed = fix(dflash, FixOptions(engines=(VLLM,))).document
    found = validate_config(fixed, ValidateOptions(engines=(VLLM,))).findings
    assert [
        f.message for f in found if f.rule in ("C015", "C016") and "speculators" in f.message
    ] == []
