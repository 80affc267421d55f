"""scripts/add-release.py on releases the table already has, as if they were new, in a scratch
copy of the repository: the rows it writes are the committed ones, the pages it regenerates
are the committed ones, and a run that fails half way leaves schema/readers/ as it was.

The join path needs the member's wheel (scripts/reader-envs.sh caches every member's); the
new-group path (slow) builds nothing new but runs the group's probes through draft_rows.
"""

from __future__ import annotations

import json
import os

import pytest

from spec_format.facts import readers
from tests.common import ROOT
from tests.readers import oracle
from tests.scratch import changed, copy_repo, run, snapshot

SCRIPT = "scripts/add-release.py"
WHEELS = oracle.VLLM_CACHE / "wheels"


def _member() -> tuple[str, str]:
    """(table file, release) of the newest release that joins a group it does not represent."""
    found = [
        (f"vllm-{rel.representative}.json", rel.version)
        for rid in readers.releases()
        if (rel := readers.release(*rid.split("=="))).name == "vllm"
        and rel.version != rel.representative
    ]
    return found[-1]


def _need_wheel(version: str) -> None:
    if list(WHEELS.glob(f"vllm-{version}-*.whl")):
        return
    reason = f"no wheel for vllm=={version} in {WHEELS} (scripts/reader-envs.sh caches it)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def _without(repo, file: str, version: str) -> None:
    path = repo / "schema" / "readers" / file
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["members"][version]
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECFMT_READER_CACHE", str(oracle.VLLM_CACHE))
    monkeypatch.setenv("SPECFMT_INTEROP_CACHE", str(oracle.INTEROP_CACHE))
    return copy_repo(tmp_path / "repo")


def test_a_usage_error_is_one_line_and_exit_2():
    """A malformed release, a covered one without --as-new (also spelled short), an unknown
    reader (nothing is written: run in the checkout itself)."""
    newest = readers.newest("vllm").version
    short = newest.removesuffix(".0")  # PEP 440: the same release
    for args in (("vllm", "abc"), ("vllm", newest), ("vllm", short), ("tgi", "1.0")):
        done = run(ROOT, SCRIPT, *args)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.readers
def test_a_member_joins_its_group_and_the_pages_come_back(scratch):
    """The member is taken out of the copy (and the pages regenerated without it); adding it
    writes the committed group file and the committed pages again, and nothing else."""
    file, version = _member()
    _need_wheel(version)
    _without(scratch, file, version)
    done = run(scratch, "scripts/generate.py", "--only", "docs")
    assert done.returncode == 0, done.stdout + done.stderr
    before = snapshot(scratch)
    done = run(scratch, SCRIPT, "vllm", version)
    assert done.returncode == 0, done.stderr
    touched = changed(before, scratch)
    assert f"schema/readers/{file}" in touched
    for rel in touched:
        assert (scratch / rel).read_bytes() == (ROOT / rel).read_bytes(), rel
    assert "README.md" in touched  # the covered count is regenerated


@pytest.mark.readers
def test_a_run_that_fails_half_way_leaves_the_table_as_it_was(scratch):
    """Regeneration fails after the table was written (a page with an unknown generated
    value): the table's files are put back."""
    file, version = _member()
    _need_wheel(version)
    _without(scratch, file, version)
    readme = scratch / "README.md"
    readme.write_text(readme.read_text() + "\n<!-- gen:no-such-value -->x<!-- /gen -->\n")
    table = scratch / "schema" / "readers"
    before = {p: p.read_bytes() for p in table.rglob("*") if p.is_file()}
    done = run(scratch, SCRIPT, "vllm", version)
    assert done.returncode == 1, done.stderr
    assert "put back" in done.stderr and "Traceback" not in done.stderr
    assert {p: p.read_bytes() for p in table.rglob("*") if p.is_file()} == before


#: what draft_rows writes from the executed release and the wheel (the weight blocks are the
#: template's, executed by the readers group; notes are the maintainer's; ``source`` lists the
#: units digested when a file was drafted, which scripts/vllm-digests.py has extended since,
#: and three files state it in prose, so no file's list is today's)
DRAFTED = ("types", "requires", "top_level", "verifier", "members")


@pytest.mark.readers
@pytest.mark.slow
def test_a_new_group_is_drafted_from_the_executed_release(scratch):
    """The newest group's file taken out: the release, added as new, gets the committed rows
    from its own execution (the previous group's rows as the template)."""
    rel = readers.newest("vllm")
    version = rel.representative
    _need_wheel(version)
    if not oracle.env_ready(rel):
        pytest.skip(f"no environment for vllm=={version} (scripts/reader-envs.sh {version})")
    done = run(scratch, SCRIPT, "vllm", version, "--as-new", "--no-generate", timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    path = f"schema/readers/vllm-{version}.json"
    got = json.loads((scratch / path).read_text(encoding="utf-8"))
    want = json.loads((ROOT / path).read_text(encoding="utf-8"))
    differ: list[str] = []
    for key in DRAFTED:
        _compare(key, got.get(key), want.get(key), differ)
    _compare("models", sorted(got["models"]), sorted(want["models"]), differ)
    for model_type, model in want["models"].items():
        drafted = got["models"].get(model_type, {})
        for name, row in model.get("fields", {}).items():
            mine = drafted.get("fields", {}).get(name)
            _compare(f"models.{model_type}.fields.{name}", mine, row, differ)
        where = f"models.{model_type}.layer_model_type"
        _compare(where, drafted.get("layer_model_type"), model.get("layer_model_type"), differ)
    assert not differ, "\n".join(differ)


def _compare(where: str, got, want, differ: list[str]) -> None:
    """``got`` (drafted) against ``want`` (committed): a committed ``message`` may keep only
    the stable start of what the release printed, and a ``note`` is the maintainer's."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in (want.keys() | got.keys()) - {"note"}:
            _compare(f"{where}.{key}", got.get(key), want.get(key), differ)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(f"{where}[{i}]", g, w, differ)
    elif where.endswith("message") and isinstance(got, str) and isinstance(want, str):
        if not got.startswith(want):
            differ.append(f"{where}: drafted {got!r}, committed {want!r}")
    elif got != want:
        differ.append(f"{where}: drafted {got!r}, committed {want!r}")


@pytest.mark.readers
def test_a_speculators_release_starts_from_the_nearest_older_rows(scratch):
    """The newest speculators release taken out and added again: its file is the previous
    release's rows with its own version (the readers group then checks them), its environment
    is the cached one, and the pages it regenerates are the committed ones."""
    newest = readers.newest("speculators")
    env = oracle.INTEROP_CACHE / "envs" / newest.version / ".ok"
    if not env.is_file():
        pytest.skip(f"no environment for {newest.id} (scripts/interop-envs.sh {newest.version})")
    done = run(scratch, SCRIPT, "speculators", newest.version, "--as-new")
    assert done.returncode == 0, done.stderr[-3000:]
    older = [r for r in readers.releases() if r.startswith("speculators==")][-2]
    got = json.loads(
        (scratch / "schema" / "readers" / f"speculators-{newest.version}.json").read_text()
    )
    # the older group's members are its own releases: never copied (a release joins a
    # group by its digests, which add-release computes for vLLM only)
    want = {k: v for k, v in readers.release(*older.split("==")).data.items() if k != "members"}
    assert got == {**want, "version": newest.version}
    for page in ("README.md", "schema/readers/README.md"):
        assert (scratch / page).read_bytes() == (ROOT / page).read_bytes(), page
