"""A way in: the README starts with its two set-up commands, then says what specfmt is; no
paragraph of it is a page of internals; the docs home names every main command and the
bundled inputs to try them on."""

from __future__ import annotations

import re

from tests.common import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
HOME = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
FIRST_COMMANDS = [
    "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/specfmt validate examples/*",
    "scripts/test.sh",
]


def _prose_paragraphs(text: str) -> list[str]:
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [p for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith("|")]


def test_the_readme_starts_with_its_commands_then_what_specfmt_is():
    block = re.search(r"^```bash\n(.*?)^```\n", README, re.S | re.M)
    assert block and block.group(1).splitlines() == FIRST_COMMANDS
    after = README[block.end() :].lstrip()
    assert after.startswith("specfmt is "), after[:200]
    assert README.index("| command | what it does |") < README.index("## Install and test")


def test_no_readme_paragraph_is_a_page_of_internals():
    """The Readers section had one paragraph of 59 lines (now docs/guide/readers.md)."""
    long = [p[:80] for p in _prose_paragraphs(README) if len(p.splitlines()) > 20]
    assert not long, long
    assert "docs/guide/readers.md" in README and (ROOT / "docs/guide/readers.md").is_file()


def test_the_docs_home_names_every_main_command_and_the_bundled_inputs():
    for command in ("Validate", "Migrate", "Convert", "Inspect", "specfmt serving"):
        assert command in HOME, command
    for page in (README, HOME):
        named = re.findall(r"tests/data/verifiers/v4/([\w.-]+\.json)", page)
        assert named, "the bundled verifier configs are not mentioned"
        assert all((ROOT / "tests/data/verifiers/v4" / n).is_file() for n in named), named
