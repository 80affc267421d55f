"""Every current type has its parameter roles and its cost model, from the contract and the
catalog; inspect counts every tensor of a built checkpoint into a named group."""

from __future__ import annotations

import math

import pytest

from spec_format.facts import catalog
from spec_format.facts.contract import ContractError, expected_tensors, load_contract, roles
from spec_format.facts.contract import loader as contract_loader
from spec_format.inspect.run import InspectOptions, run_inspect
from spec_format.testing.builder import build_checkpoint, tiny_config

TYPES = list(catalog.current_types())


@pytest.mark.parametrize("model_type", TYPES)
def test_every_contract_entry_has_a_known_role(model_type):
    table = roles()
    for spec in load_contract(model_type).tensors:
        assert spec.role in table, (model_type, spec.name)


@pytest.mark.parametrize("model_type", TYPES)
def test_every_type_has_a_cost_model(model_type):
    assert catalog.record(model_type).draft_forwards in ("per_token", "per_step")


@pytest.mark.parametrize("model_type", TYPES)
def test_inspect_puts_every_tensor_in_a_group(model_type, tmp_path):
    config = tiny_config(model_type)
    built = build_checkpoint(tmp_path / model_type, config, include_optional=True)
    report = run_inspect(InspectOptions(str(built.path), cost_ratio=0.1))
    draft = report.draft
    assert not draft.unknown
    assert sum(g.tensors for g in draft.groups.values()) == len(built.tensors)
    numel = {n: math.prod(s) for n, (_, s) in built.tensors.items()}
    assert draft.total == sum(numel.values())
    excluded = {
        n for n, t in expected_tensors(config).tensors.items() if t.role in ("embed", "t2d", "d2t")
    }
    shared = draft.shared_head[1] if draft.shared_head else 0
    assert draft.compute == sum(v for n, v in numel.items() if n not in excluded) + shared
    assert report.draft_forwards == catalog.record(model_type).draft_forwards


def test_mtp_counts_the_verifier_head_it_reads(tmp_path):
    config = tiny_config("mtp")
    built = build_checkpoint(tmp_path / "mtp", config)  # speculators leaves embed/lm_head out
    report = run_inspect(InspectOptions(str(built.path)))
    V, H = 256, 64
    assert report.draft.shared_head == ("lm_head.weight", V * H)


def test_a_role_missing_from_the_table_is_a_contract_error(monkeypatch):
    original = contract_loader._read

    def patched(name):
        doc = original(name)
        if name == "eagle3.json":
            doc = {
                **doc,
                "tensors": [{**doc["tensors"][0], "role": "mystery"}, *doc["tensors"][1:]],
            }
        return doc

    monkeypatch.setattr(contract_loader, "_read", patched)
    contract_loader.load_contract.cache_clear()
    try:
        with pytest.raises(ContractError, match="role 'mystery' is not one of"):
            load_contract("eagle3")
    finally:
        contract_loader.load_contract.cache_clear()
