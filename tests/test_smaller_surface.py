"""The smaller things a new user trips on: -v names the configuration it applied, the plot's
legend names what was plotted, --help fits an 80-column terminal, and option names in the
docs never break at their hyphens."""

from __future__ import annotations

import re
import shutil
from types import SimpleNamespace

import pytest

from tests.common import ROOT

EAGLE3 = ROOT / "examples" / "qwen3-8b-eagle3" / "config.json"


def test_verbose_names_the_configuration_file_it_applied(cli, tmp_path):
    (tmp_path / "draft").mkdir()
    shutil.copy(EAGLE3, tmp_path / "draft" / "config.json")
    (tmp_path / "pyproject.toml").write_text('[tool.specfmt]\nignore = ["C006"]\n')
    out = cli("validate", "-v", tmp_path / "draft").output
    assert out.splitlines()[0] == f"configuration: {tmp_path / 'pyproject.toml'}"
    assert "configuration:" not in cli("validate", tmp_path / "draft").output  # -v only
    isolated = cli("validate", "-v", "--isolated", tmp_path / "draft").output
    assert isolated.splitlines()[0] == "configuration: none (--isolated)"


def _economics(acceptances, ceiling=None):
    points = [SimpleNamespace(acceptance=a, ceiling=False, speedup=1.5) for a in acceptances]
    if ceiling is not None:
        points.append(SimpleNamespace(acceptance=ceiling, ceiling=True, speedup=1.2))
    return SimpleNamespace(points=points)


def test_plot_legend_names_the_acceptances_that_were_plotted():
    from spec_format.inspect.economics import DEFAULT_ACCEPTANCE
    from spec_format.inspect.plot import points_label

    default = points_label(_economics(DEFAULT_ACCEPTANCE, ceiling=0.93))
    assert default == "default acceptances (0.5, 0.6, 0.7, 0.8, 0.9)"
    assert "--acceptance" not in default  # none was passed
    assert points_label(_economics((0.55, 0.75))) == "--acceptance values"


#: the help screens of every command, in lines, at 80 columns on a terminal
HELP_LINES_AT_80 = 70


@pytest.mark.parametrize(
    "command", ["", "validate", "migrate", "fix", "convert", "inspect", "forward", "serving"]
)
def test_help_at_80_columns_is_plain_and_short(command):
    from tests.test_terminal import in_terminal, visible

    code, raw = in_terminal(*command.split(), "--help", columns=80)
    lines = visible(raw)
    assert code == 0
    assert len(lines) <= HELP_LINES_AT_80, (command, len(lines))  # fix: 100 in panels
    assert not set("╭│╰") & set("".join(lines))  # panels only from 100 columns
    assert max(len(line) for line in lines) <= 80
    code, raw = in_terminal(*command.split(), "--help", columns=120)
    assert "╭" in raw  # a wide terminal keeps the panels


def test_docs_keep_each_word_of_inline_code_whole():
    """The browser test (tests/test_docs_browser.py, needs Chromium) measures it at 800 px;
    here: the site loads the script and the style that do it."""
    mkdocs = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"extra_javascript:\n  - javascripts/nobreak.js", mkdocs)
    script = (ROOT / "docs" / "javascripts" / "nobreak.js").read_text()
    assert 'span.className = "nobreak"' in script
    css = (ROOT / "docs" / "stylesheets" / "extra.css").read_text()
    assert re.search(r"\.md-typeset code \.nobreak \{\s*white-space: nowrap;", css)
