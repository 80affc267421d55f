"""The documentation: generated pages are current, the site builds strictly, and the
generator refuses to document what does not exist."""

from __future__ import annotations

import subprocess
import sys

import docgen as gen_docs
import pytest

from spec_format.base.report import Severity
from spec_format.facts import catalog, schemas
from spec_format.rules import registry
from spec_format.rules.base import Layer, Rule
from tests.common import ROOT


@pytest.fixture(scope="module")
def generated():
    return gen_docs.generate(ROOT)


def test_generated_docs_are_up_to_date():
    proc = subprocess.run(
        [sys.executable, "scripts/generate.py", "--check", "--only", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_rule_version_and_type_has_a_page_in_the_nav(generated):
    nav = generated["generated/docs/nav.yml"]
    for rule in registry.RULES:
        assert f"docs/rules/{rule.id}.md" in generated
        assert f"rules/{rule.id}.md" in nav
    for version, entry in catalog.versions().items():
        for t in entry.types:
            page = generated[f"docs/reference/{version}/{t}.md"]
            assert f"reference/{version}/{t}.md" in nav
            for key in schemas.type_schema(version, t)["properties"]:
                assert f"| `{key}` |" in page, (version, t, key)
    for guide in (ROOT / "docs" / "guide").glob("*.md"):
        assert f"guide/{guide.name}" in nav


def test_rule_pages_carry_examples_and_reports(generated):
    page = generated["docs/rules/C001.md"]
    assert "## Example (fails)" in page and "## Use instead (passes)" in page
    assert "(https://github.com/vllm-project/vllm/issues/50170)" in page
    assert "tests/rules/cases/C001.json" in page


def test_consumer_defaults_table_comes_from_the_reader_table(generated):
    from spec_format.facts import disputes, readers

    page = generated["docs/reference/consumer-defaults.md"]
    eagle3 = page[page.index("## eagle3") : page.index("## ", page.index("## eagle3") + 3)]
    header = next(line for line in eagle3.splitlines() if line.startswith("| Field |"))
    columns = [c.strip().strip("`") for c in header.split("|")[2:-1]]
    assert columns == [r.id for r in disputes.covered()]
    row = next(line for line in eagle3.splitlines() if line.startswith("| `norm_before_residual`"))
    cells = dict(zip(columns, (c.strip() for c in row.split("|")[2:-1]), strict=True))
    assert cells["speculators==0.9.0"] == "`false`" and cells[readers.newest("vllm").id] == "`true`"
    for rid in readers.releases():
        assert f"`{rid}`" in page  # every covered release is named


def test_snippets_are_real_command_output(generated):
    text = generated["generated/docs/snippets/validate-broken.txt"]
    assert text.startswith("```console\n$ specfmt validate drafts/qwen3-8b-dflash\n")
    assert "error X006" in text


@pytest.mark.slow  # mkdocs build of the whole site: 9-24 s here
def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is in the dev extra: pip install -e '.[dev]'")
    pytest.importorskip("material", reason="mkdocs-material is in the dev extra")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "site" / "rules" / "C001" / "index.html").is_file()


# -- the generator's own checks ------------------------------------------------------------------


def _fake_rule(doc: str, **attrs) -> type[Rule]:
    namespace = {  # a rule made at run time carries its page text itself
        "__doc__": doc.split("\n\n", 1)[0],
        "doc": doc,
        "id": "X999",
        "name": "fake-rule",
        "layer": Layer.CROSS_FIELD,
        "severity": Severity.ERROR,
        "since": "0.1.0",
        "check": lambda self, ctx: iter(()),
        **attrs,
    }
    return type("FakeRule", (Rule,), namespace)


DOC = """A fake rule.

## What it checks
Something about `odd_key`.

## Why it matters
Because.

## Example
```json
{{"odd_key": 1, {bad_fail}"block_size": 8}}
```

## Use instead
```json
{{{bad_pass}"block_size": 8}}
```
Run `specfmt validate {option} x`.
"""


@pytest.mark.parametrize(
    "doc, attrs, problem",
    [
        (DOC.format(bad_fail="", bad_pass='"blok_size": 1, ', option="-q"), {}, "'blok_size'"),
        (DOC.format(bad_fail='"nope": 1, ', bad_pass="", option="-q"), {}, "'nope'"),
        (DOC.format(bad_fail="", bad_pass="", option="--strictest"), {}, "no option --strictest"),
        (
            DOC.format(bad_fail="", bad_pass="", option="-q"),
            {"applies_to": ("eagle4",)},
            "'eagle4'",
        ),
        (
            DOC.format(bad_fail="", bad_pass="", option="-q"),
            {"versions": ">=1.3"},
            "unknown version 1.3",
        ),
        (
            DOC.format(bad_fail="", bad_pass="", option="--format-version 0.95"),
            {},
            "unknown format version 0.95",
        ),
    ],
)
def test_generator_rejects_unknown_fields_versions_and_options(monkeypatch, doc, attrs, problem):
    rule = _fake_rule(doc, **attrs)
    monkeypatch.setattr(registry, "RULES", (*registry.RULES, rule))
    problems = gen_docs.check_rules(gen_docs.Catalogue.build()) + gen_docs.check_cli_mentions(ROOT)
    assert any(problem in p for p in problems), problems


def test_a_clean_fake_rule_passes(monkeypatch):
    rule = _fake_rule(DOC.format(bad_fail="", bad_pass="", option="-q"))
    monkeypatch.setattr(registry, "RULES", (*registry.RULES, rule))
    assert gen_docs.check_rules(gen_docs.Catalogue.build()) == []


def test_guide_pages_are_checked_for_cli_options(tmp_path):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "x.md").write_text(
        "```console\n$ specfmt validate --profile strict a/\n$ specfmt schema export --drafts 07\n```\n"
        "Also `specfmt explain --json C001` and `specfmt frobnicate`.\n"
        "```console\n$ specfmt migrate --whatever x\n```\n"
    )
    problems = [p for p in gen_docs.check_cli_mentions(tmp_path) if p.startswith("docs/")]
    expected = [
        "docs/guide/x.md: `specfmt schema export --drafts 07`: specfmt schema export has no option --drafts",
        "docs/guide/x.md: `specfmt migrate --whatever x`: specfmt migrate has no option --whatever",
        "docs/guide/x.md: `specfmt frobnicate`: specfmt has no command 'frobnicate'",
    ]
    if "migrate" not in gen_docs.checks._commands().commands:
        expected.pop(1)  # a pending command is checked once it exists
    assert problems == expected


# -- the CLI reference, the nav, the pictures and the extras ------------------------------------


def test_cli_reference_is_markdown_with_every_option(generated):
    page = generated["docs/reference/cli.md"]
    assert not set("╭╮╰╯│─") & set(page), "Rich box drawing in the CLI reference"
    root = gen_docs.checks._commands()

    def visit(command, path):
        title = " ".join(path)
        section = page.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
        assert f"```text\n{title}" in section  # the usage line
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                assert f"| `{param.opts[0]}`" in section, (title, param.opts)
        for name, sub in getattr(command, "commands", {}).items():
            visit(sub, [*path, name])

    visit(root, ["specfmt"])


def test_every_nav_entry_has_an_explicit_title(generated):
    import re

    entries = [line.strip() for line in generated["generated/docs/nav.yml"].splitlines()]
    pages = [e for e in entries if e.endswith(".md")]
    assert pages and all(re.fullmatch(r'- "[^"]+": \S+\.md', e) for e in pages), [
        e for e in pages if not re.fullmatch(r'- "[^"]+": \S+\.md', e)
    ]
    assert '- "Command line": reference/cli.md' in entries
    assert '- "DFlash (dflash)": reference/0.9/dflash.md' in entries


def test_dataflow_pictures_name_only_contract_tensors(generated):
    import re

    from spec_format.facts import contract

    for model_type in ("eagle3", "dflash"):
        svg = generated[f"docs/diagrams/{model_type}-dataflow.svg"]
        names = re.findall(r'class="tensor">([^<]+)</text>', svg)
        known = {t.name for t in contract.load_contract(model_type).tensors}
        assert {"fc.weight", "lm_head.weight", "norm.weight"} <= set(names)
        assert set(names) <= known, set(names) - known
        for name in names:  # each shown with its contract shape
            spec = contract.load_contract(model_type).spec(name)
            shape = "[" + ", ".join(str(d) for d in spec.shape) + "]"
            assert f">{name}</text>" in svg and f">{shape}</text>" in svg
        page = generated[f"docs/reference/0.9/{model_type}.md"]
        assert f"../../diagrams/{model_type}-dataflow.svg" in page


def test_a_picture_naming_an_unknown_tensor_is_refused(monkeypatch):
    from docgen import diagrams

    flow = diagrams.FLOWS["eagle3"]
    monkeypatch.setitem(diagrams.FLOWS, "eagle3", (*flow, diagrams.Node("x", ("fc.wieght",))))
    with pytest.raises(gen_docs.DocsError, match="'fc.wieght' is not in schema/tensors/eagle3"):
        diagrams.dataflow("eagle3")


def test_timeline_and_layers_pictures_come_from_catalog_and_registry(generated):
    from spec_format.facts import catalog

    timeline = generated["docs/diagrams/type-timeline.svg"]
    for t in catalog.known_types():
        assert f"({t})</text>" in timeline
    bars = timeline.count('rx="4"')
    assert bars == sum(len(e.types) for e in catalog.versions().values())
    layers = generated["docs/diagrams/validation-layers.svg"]
    for layer in Layer:
        if layer is not Layer.REWRITE:
            count = sum(1 for r in registry.RULES if r.layer is layer)
            assert f">{count} rules</text>" in layers
    assert ">--verifier</text>" in layers and ">--scan-weights</text>" in layers


def test_readme_install_page_and_help_name_every_extra(cli):
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    readme = (ROOT / "README.md").read_text()
    install = (ROOT / "docs" / "guide" / "install.md").read_text()
    result = cli("--help", env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0
    help_text = " ".join(result.output.split())
    for extra in extras:
        assert f"| `{extra}` |" in readme, extra
        assert f"| `{extra}` |" in install, extra
        assert f"{extra} (" in help_text or f"{extra} for" in help_text, extra
    assert "pip install specfmt " not in install + readme  # not on PyPI
