"""The recorded reads (``schema/readers/reads/``) against the executed release.

Each group's release loads the weight-contract drafts twice in its probe process, without and
with recording (tests/readers/reads_probe.py): the answers must be the same but for the
``reads`` the recording adds (recording never changes what the release executes), and what
the recording gathers per draft class must be the group's file (regenerate it with
``python -m tests.readers.reads vllm==<group>``).
"""

from __future__ import annotations

import os

import pytest

from spec_format.facts import readers, reads
from tests.readers import oracle, probes
from tests.readers import reads as recorder
from tests.readers import test_weight_contract as contract

pytestmark = pytest.mark.readers

GROUPS = sorted(
    {rid for model_type in contract.TYPE_CASES for rid in contract._executed(model_type)},
    key=lambda r: tuple(map(int, r.split("==")[1].split("."))),
)


def _requests(rid: str, root) -> dict:
    plain = contract._requests(rid, root)
    recorded = recorder.requests(rid, root)
    return {
        **{("plain", *k): r for k, r in plain.items()},
        **{("record", *k): r for k, r in recorded.items()},
    }


probes.ask(__name__, _requests)


def _answers(rid: str) -> dict:
    env = oracle.env_path(readers.release(*rid.split("==")))
    if not ((env / ".model-ok").is_file() and oracle.BASE_PYTHON.exists()):
        reason = f"no model layer for {rid} in {env} (scripts/reader-envs.sh builds it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return probes.answers(__name__, rid)


@pytest.mark.parametrize("rid", GROUPS)
def test_recording_changes_no_answer(rid):
    got = _answers(rid)
    keys = [k[1:] for k in got if k[0] == "plain"]
    assert keys
    for key in keys:
        plain, recorded = got[("plain", *key)], dict(got[("record", *key)])
        assert "reads" in recorded or recorded.get("stage") == "config", (rid, key, recorded)
        recorded.pop("reads", None)
        assert recorded == plain, f"{rid} {key}: recording changed the answer"


@pytest.mark.parametrize("rid", GROUPS)
def test_the_groups_reads_file_is_what_the_release_reads(rid):
    got = _answers(rid)
    recorded = recorder.collect({k[1:]: a for k, a in got.items() if k[0] == "record"})
    version = readers.release(*rid.split("==")).representative
    stored = reads.groups().get(version)
    assert stored is not None, f"no schema/readers/reads/vllm-{version}.json"
    assert recorded == stored["classes"], (
        f"schema/readers/reads/vllm-{version}.json is not what {rid} reads: "
        f"run python -m tests.readers.reads {rid}"
    )
