"""The vLLM grouping of the reader table against the wheels (scripts/vllm-digests.py).

Every release's wheel, group members included, is in the cache once scripts/reader-envs.sh
has run without arguments, so every recorded digest is recomputed here from its wheel (the
same check as ``scripts/vllm-digests.py --check``, run before every table change): each
identical-code claim of the table is executed in CI, never assumed.
"""

from __future__ import annotations

import os

import pytest

from spec_format.facts import readers
from tests.common import load_script
from tests.readers import oracle

pytestmark = pytest.mark.readers

digests = load_script(oracle.ROOT / "scripts" / "vllm-digests.py")
WHEELS = oracle.VLLM_CACHE / "wheels"
VLLM = [r for r in readers.releases() if r.startswith("vllm==")]


@pytest.mark.parametrize("rid", VLLM)
def test_recorded_digests_match_the_wheel(rid):
    rel = readers.release(*rid.split("=="))
    wheel = digests.wheel_of(WHEELS, rel.version)
    if wheel is None:
        reason = (
            f"no wheel for {rid} in {WHEELS} (scripts/reader-envs.sh downloads it, or "
            f"pip download --no-deps vllm=={rel.version} -d {WHEELS})"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    got = digests.digests(wheel)
    recorded = rel.data["members"][rel.version]
    file = f"schema/readers/vllm-{rel.representative}.json"
    assert (got["reader"], got["model"]) == (recorded["reader"], recorded["model"]), (
        f"{file}: members.{rel.version} records {recorded}, its wheel digests to "
        f"reader {got['reader']}, model {got['model']}: rerun scripts/vllm-digests.py"
    )


def test_groups_are_the_distinct_digest_pairs():
    """No two files share a (reader, model) digest pair, and a file's members all share one:
    a release whose config reading or weight loading differs is a group of its own."""
    seen: dict[tuple[str, str], str] = {}
    for rid in readers.representatives():
        rel = readers.release(*rid.split("=="))
        if rel.name != "vllm":
            continue
        found = {(m["reader"], m["model"]) for m in rel.data["members"].values()}
        assert len(found) == 1, f"schema/readers/vllm-{rel.version}.json: members differ {found}"
        pair = found.pop()
        assert pair not in seen, f"{rid} and {seen.get(pair)} share digests {pair}"
        seen[pair] = rid
