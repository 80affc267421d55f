"""Every Markdown page's code fences pair up: a doubled closing fence opens a block that
swallows the prose after it (python-api.md had one, and showed a page of text as code).

CommonMark's rule, as the checker applies it: a fence of three or more backticks (or tildes)
opens a block, which only a fence of the same character, at least as long and with no info
string, closes; a fence with an info string (```` ```pycon ````) inside a block therefore means
the previous block was closed by a stray fence, and a block still open at the end of the
page runs to its end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.common import ROOT

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})(.*)$")


def pages() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "spec_format" / "rules" / "docs").glob("*.md")),
    ]


def fence_problems(text: str) -> list[str]:
    """What is wrong with the fences of one page (empty: they pair up)."""
    problems, open_at, opener = [], 0, ""
    for number, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if not m:
            continue
        fence, info = m.groups()
        if not opener:
            opener, open_at = fence, number
        elif fence[0] == opener[0] and len(fence) >= len(opener) and not info.strip():
            opener = ""
        elif fence[0] == opener[0] and len(fence) >= len(opener):
            problems.append(
                f"line {number}: {line.strip()!r} opens a block inside the one opened on line "
                f"{open_at}: a fence before it is doubled or missing"
            )
    if opener:
        problems.append(f"line {open_at}: {opener} is never closed")
    return problems


def test_the_checker_finds_a_doubled_fence():
    doubled = "```pycon\n>>> 1\n1\n```\n```\n\nprose\n\n```pycon\n>>> 2\n2\n```\n"
    assert fence_problems(doubled)
    assert fence_problems("```\nx\n")  # never closed
    assert not fence_problems("````markdown\n```json\n{}\n```\n````\n")  # a longer fence nests


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_code_fences_pair_up(page):
    assert not fence_problems(page.read_text(encoding="utf-8")), fence_problems(
        page.read_text(encoding="utf-8")
    )
