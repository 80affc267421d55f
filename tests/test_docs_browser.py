"""Every page of the docs site in a real browser (headless Chromium from the distribution's
packages): a screenshot of each page at each width, nothing past the right edge of the main
column (tables may scroll inside their own container, code blocks wrap), every picture
loads, and no page asks the network for anything.

Screenshots land in .cache/docs-browser/ (or $SPECFMT_DOCS_SHOTS). Without Chromium these
tests skip, unless $SPECFMT_REQUIRE_BROWSER is set (scripts/test.sh sets it once Chromium is
installed), when they fail instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import chromium
from tests.common import ROOT

pytestmark = pytest.mark.slow  # over a minute: deselected by default; scripts/test.sh runs it

WIDTHS = (1280, 800)
SHOTS = Path(os.environ.get("SPECFMT_DOCS_SHOTS", ROOT / ".cache" / "docs-browser"))

#: runs in the page once it has loaded; returns what a reader would see go wrong
MEASURE = r"""
(async () => {
  await document.fonts.ready;
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const article = document.querySelector("article.md-content__inner");
  const content = document.querySelector(".md-content");
  const doc = document.documentElement;
  const text = el => el.textContent.trim().replace(/\s+/g, " ").slice(0, 70);
  const problems = [];
  if (doc.scrollWidth > doc.clientWidth + 1)
    problems.push(`the page scrolls sideways: ${doc.scrollWidth} px in a ${doc.clientWidth} px window`);
  if (content.scrollWidth > content.clientWidth + 1)
    problems.push(`the main column overflows: ${content.scrollWidth} px in ${content.clientWidth} px`);
  const edge = article.getBoundingClientRect().right + 4;  // an inline code padding may touch it
  for (const el of article.querySelectorAll("*")) {
    if (el.closest(".md-typeset__scrollwrap, pre")) continue;  // checked below
    const box = el.getBoundingClientRect();
    if (box.width && box.right > edge)
      problems.push(`<${el.localName}> "${text(el)}" ends ${Math.round(box.right - edge)} px past the column`);
  }
  for (const code of article.querySelectorAll("pre > code"))
    if (code.scrollWidth > code.clientWidth + 1)
      problems.push(`code block cut off on the right: "${text(code)}"`);
  const scrolling = [...article.querySelectorAll(".md-typeset__scrollwrap")]
    .filter(wrap => wrap.scrollWidth > wrap.clientWidth + 1)
    .map(wrap => text(wrap.querySelector("tr")));
  const images = [...article.querySelectorAll("img")].map(img => ({
    src: img.getAttribute("src"), loaded: img.complete && img.naturalWidth > 0,
    width: img.getBoundingClientRect().width}));
  const matrixFields = [...article.querySelectorAll(".field-matrix td:first-child code")]
    .filter(code => code.getClientRects().length > 1 || code.getBoundingClientRect().height > 30)
    .map(text);
  // an identifier (a code span without spaces) split over lines, in any table
  // (a line break after a hyphen is a break between words, as in prose)
  const midWord = code => {
    const node = code.firstChild;
    if (!node || node.nodeType !== Node.TEXT_NODE) return code.getClientRects().length > 1;
    const range = document.createRange();
    let top = null;
    for (let i = 0; i < node.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const y = range.getBoundingClientRect().top;
      if (top !== null && y > top + 2 && node.data[i - 1] !== "-") return true;
      top = y;
    }
    return false;
  };
  // and anywhere: a word of inline code (an option name, `--aux-layer-ids`) split over
  // lines, at a hyphen too (docs/javascripts/nobreak.js keeps each word whole)
  const brokenWords = [...article.querySelectorAll(":not(pre) > code .nobreak")]
    .filter(word => word.getClientRects().length > 1)
    .map(text);
  const brokenIds = [...article.querySelectorAll("table code")]
    .filter(code => !/\s/.test(code.textContent.trim()) && code.getClientRects().length > 1)
    .filter(midWord)
    .map(text);
  // a header row with no text in any cell (a table that should have none)
  const emptyHeads = [...article.querySelectorAll("table thead tr")]
    .filter(tr => tr.textContent.trim() === "")
    .map(tr => text(tr.closest("table")));
  return {problems, scrolling, images, matrixFields, brokenIds, brokenWords, emptyHeads,
          title: document.title};
})()
"""


def _require_browser() -> str:
    binary = chromium.find()
    if binary:
        return binary
    message = (
        "headless Chromium not found: `apt-get install chromium` (scripts/test.sh installs it "
        "when run as root), or point $SPECFMT_CHROMIUM at a Chromium binary"
    )
    if os.environ.get("SPECFMT_REQUIRE_BROWSER"):
        pytest.fail(message + " ($SPECFMT_REQUIRE_BROWSER is set)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="mkdocs is in the dev extra: pip install -e '.[dev]'")
    pytest.importorskip("material", reason="mkdocs-material is in the dev extra")
    _require_browser()
    out = tmp_path_factory.mktemp("docs") / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def survey(site) -> dict[int, dict[str, dict]]:
    """Every page at every width: what MEASURE found, the requests it made; screenshots."""
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 100, f"only {len(pages)} pages were built"
    SHOTS.mkdir(parents=True, exist_ok=True)
    results: dict[int, dict[str, dict]] = {}
    with chromium.Chromium(_require_browser()) as browser:
        for width in WIDTHS:
            results[width] = {}
            for page in pages:
                name = page.parent.relative_to(site).as_posix() or "index"
                browser.open(page.as_uri(), width=width)
                found = browser.evaluate(MEASURE)
                found["requests"] = list(browser.requests)
                browser.screenshot(SHOTS / f"{re.sub(r'[^A-Za-z0-9.]+', '-', name)}-{width}.png")
                results[width][name] = found
    return results


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_is_cut_off_on_the_right(survey, width):
    problems = [f"{page}: {p}" for page, found in survey[width].items() for p in found["problems"]]
    assert not problems, f"at {width} px:\n" + "\n".join(problems[:40])


def test_every_page_has_a_screenshot(survey):
    for width in WIDTHS:
        for page in survey[width]:
            shot = SHOTS / f"{re.sub(r'[^A-Za-z0-9.]+', '-', page)}-{width}.png"
            assert shot.stat().st_size > 5000, shot  # a rendered page, not a blank image


def test_only_wide_reference_tables_scroll_at_1280(survey):
    """A table may scroll inside its container on a narrow screen; at 1280 px only the
    tables with a column per reader release may (the field x version matrix fits)."""
    allowed = {"reference/consumer-defaults"}
    scrolling = {
        page: found["scrolling"]
        for page, found in survey[1280].items()
        if found["scrolling"] and page not in allowed
    }
    assert not scrolling, scrolling


#: tables with a column per reader release: they may scroll sideways at 800 px
WIDE_TABLES = {"reference/consumer-defaults"}


def test_no_table_column_is_cut_at_800(survey):
    """At 800 px a table scrolls only when it has a column per reader release: any other
    table that scrolls hides its last column (the Description of a field, a version)."""
    scrolling = {
        page: found["scrolling"]
        for page, found in survey[800].items()
        if found["scrolling"] and page not in WIDE_TABLES
    }
    assert not scrolling, scrolling


@pytest.mark.parametrize("width", WIDTHS)
def test_identifiers_in_tables_are_never_broken(survey, width):
    """A field or option name (`speculators_model_type`) is never split over lines."""
    broken = {
        page: found["brokenIds"] for page, found in survey[width].items() if found["brokenIds"]
    }
    assert not broken, {page: ids[:5] for page, ids in list(broken.items())[:20]}


@pytest.mark.parametrize("width", WIDTHS)
def test_option_names_never_break_at_their_hyphens(survey, width):
    """A word of inline code anywhere (`--aux-layer-ids`, `speculators_model_type`) stays on
    one line; a code span with spaces still wraps at them."""
    broken = {
        page: found["brokenWords"]
        for page, found in survey[width].items()
        if found.get("brokenWords")
    }
    assert not broken, {page: words[:5] for page, words in list(broken.items())[:20]}


def test_no_table_starts_with_an_empty_header_row(survey):
    empty = {
        page: found["emptyHeads"] for page, found in survey[1280].items() if found["emptyHeads"]
    }
    assert not empty, dict(list(empty.items())[:20])


def test_field_matrix_fits_and_field_names_never_wrap(survey):
    for width in WIDTHS:
        found = survey[width]["reference/fields"]
        assert not found["matrixFields"], (width, found["matrixFields"][:10])
    assert not survey[1280]["reference/fields"]["scrolling"]


def test_every_picture_loads_and_fits(survey):
    pictures = 0
    for width in WIDTHS:
        for page, found in survey[width].items():
            for image in found["images"]:
                assert image["loaded"], (width, page, image["src"])
                pictures += image["src"].endswith(".svg")
    assert pictures >= 2 * 4  # the layers, the timeline, two data-flow pictures at least


def test_pages_render_offline(survey):
    """Fonts, scripts and pictures all come with the site: no page asks the network."""
    remote = {
        page: [u for u in found["requests"] if not u.startswith(("file:", "data:"))]
        for width in WIDTHS
        for page, found in survey[width].items()
    }
    remote = {page: urls for page, urls in remote.items() if urls}
    assert not remote, remote


def test_pages_carry_their_titles(survey):
    """Titles come from the nav, never from title-cased file names ("Cli", "Dflash")."""
    titles = {page: found["title"] for page, found in survey[1280].items()}
    assert titles["reference/cli"].startswith("Command line")
    assert titles["reference/0.9/dflash"].startswith("DFlash (dflash)")
    bad = {p: t for p, t in titles.items() if re.match(r"(Cli|Dflash|Eagle3|Fields)\b", t)}
    assert not bad, bad
