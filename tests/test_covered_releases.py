"""No file states the covered vLLM releases by hand: the newest release, the release count and
the group count are read from the reader table (``spec_format.facts.readers.coverage``) by
tests and written into pages by ``scripts/generate.py`` (``docgen.sections``), so that
``scripts/add-release.py`` adds a release without editing any other file."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from docgen.sections import MARKER

from spec_format.facts import readers
from tests.common import ROOT

#: where the newest release may be spelled: the table, what the generators write, rule cases
#: (each names the releases it reproduces, and keeps them) and measurements (each names the
#: releases it measured)
OWNED = (
    "schema/readers/",
    "generated/",
    "docs/reference/",
    "docs/rules/",
    "docs/diagrams/",
    "tests/rules/cases/",
    # migration goldens: written by SPECFMT_UPDATE_GOLDEN=1 pytest tests/migrate/test_golden.py
    "tests/migrate/golden/",
    "benches/",
)
#: files that pin a release for facts of that release (not as "the newest"); they keep
#: pinning it when a newer release is added
PINNED = {
    "tests/test_engine_model_code.py": "what the pinned release drops and builds (C015, DSpark flags)",
    "tests/test_consumer_caches.py": "a cache keyed by two named releases",
    "tests/test_engine_weights.py": "the pinned release's executed weight contract (C020/W025)",
    "tests/readers/test_loader.py": "the verifier refusal of the release that added it",
}


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to list the repository's files")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    return [raw.decode() for raw in listed if raw]


def _statements() -> dict[str, re.Pattern[str]]:
    cov = readers.coverage("vllm")
    return {
        "the newest covered vLLM release": re.compile(
            rf"(?<![\d.]){re.escape(cov.newest)}(?![\d])"
        ),
        "the count of covered vLLM releases": re.compile(rf"\b{cov.releases} releases\b"),
        "the count of vLLM release groups": re.compile(
            rf"\b{cov.groups} (vLLM |release )?(groups|files)\b"
        ),
    }


def test_no_file_outside_the_table_and_generated_files_spells_the_covered_releases():
    statements = _statements()
    found = []
    for rel in _tracked():
        if rel.startswith(OWNED) or rel in PINNED:
            continue
        path = ROOT / rel
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        text = MARKER.sub("", text)  # the values scripts/generate.py writes
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in statements.items():
                if pattern.search(line):
                    found.append(f"{rel}:{number}: spells {what}: {line.strip()[:100]}")
    assert not found, (
        "derive it from spec_format.facts.readers.coverage('vllm') (tests), a generated "
        "value <!-- gen:NAME -->...<!-- /gen --> (pages; scripts/docgen/sections.py), or pin "
        "an older release for a fact of its own:\n" + "\n".join(found)
    )


def test_the_check_sees_a_spelled_release(tmp_path):
    """The patterns match what a page would say (the test can fail)."""
    cov = readers.coverage("vllm")
    said = f"every vLLM release to {cov.newest} ({cov.releases} releases, {cov.groups} groups)"
    hits = [what for what, pattern in _statements().items() if pattern.search(said)]
    assert len(hits) == 3
    marked = f"to <!-- gen:vllm-newest -->{cov.newest}<!-- /gen -->"
    assert not any(p.search(MARKER.sub("", marked)) for p in _statements().values())
    assert not _statements()["the newest covered vLLM release"].search(f"{cov.newest}1")
