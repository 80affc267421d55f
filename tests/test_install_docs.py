"""Every install line of the README and the docs works from where its reader stands.

specfmt is not on PyPI, so a line that installs ``specfmt`` from the registry fails for every
reader. Each ``pip install`` and ``python -m build`` line (in code blocks and in inline code)
is run offline in a copy of the repository: ``pip install --dry-run --no-index`` proves that
the path or wheel exists, builds, and provides the extras named; a ``specfmt[extra]`` line
adds an extra to the installed specfmt. Lines that need the network (a ``git+`` URL, another
index) are checked for their form only.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import metadata
from pathlib import Path

import pytest
from conftest import ROOT
from packaging.requirements import InvalidRequirement, Requirement

pytestmark = pytest.mark.slow

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"`([^`\n]+)`")
_COMMAND = re.compile(r"(?:^|\s)((?:\S*/)?pip3? install .*|python3? -m (?:pip install|build)\b.*)")
_PROSE = re.compile(r"pip install ('[^']*'|\"[^\"]*\"|[^\s,;()`]*[^\s,;()`.])")
#: the project's repository as the docs name it (the reader fills in OWNER)
REPOSITORY = "git+https://github.com/OWNER/specfmt@"
NETWORK_INDEXES = ("https://download.pytorch.org/whl/",)


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def install_lines() -> list[tuple[str, str]]:
    """(page, command) for every install or build command the docs show."""
    found = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        blocks = _FENCE.findall(text)
        prose = _FENCE.sub("", text)
        candidates = [line for block in blocks for line in block.splitlines()]
        candidates += _INLINE.findall(prose)
        # the generated CLI reference quotes --help text as prose: its install hints count too
        plain = re.sub(r"\\(.)", r"\1", _INLINE.sub("", prose))  # Markdown escapes as shown
        candidates += [f"pip install {m}" for m in _PROSE.findall(plain)]
        for line in candidates:
            line = re.sub(r"^\s*(?:\$ |- run: |run: )", "", line.strip()).strip()
            line = re.split(r"\s+#\s", line)[0]
            for part in re.split(r"\s*(?:&&|;|\|\|)\s*", line):
                m = _COMMAND.search(part.strip())
                if m:
                    found.append((str(page.relative_to(ROOT)), m.group(1).strip()))
    return found


LINES = install_lines()


def test_the_docs_show_install_lines():
    pages = {page for page, _ in LINES}
    assert {"README.md", "docs/index.md", "docs/guide/install.md", "docs/guide/ci.md"} <= pages


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """The tracked files of the repository, as a reader's clone has them, with the wheel built
    by the documented command."""
    root = tmp_path_factory.mktemp("clone") / "specfmt"
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src, dest = ROOT / name.decode(), root / name.decode()
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():  # spec_format/models and spec_format/schema are links
            dest.symlink_to(src.readlink())
        elif src.is_file():
            shutil.copy2(src, dest)
    return root


def _extras() -> set[str]:
    return set(metadata("specfmt").get_all("Provides-Extra") or ())


def _extra_packages() -> set[str]:
    """The names of the packages the extras (not dev) add, from the installed metadata."""
    names = set()
    for req in metadata("specfmt").get_all("Requires-Dist") or ():
        parsed = Requirement(req)
        if (
            parsed.marker
            and "extra" in str(parsed.marker)
            and 'extra == "dev"' not in str(parsed.marker)
        ):
            names.add(parsed.name)
    return names


def _requirements(args: list[str]) -> tuple[list[str], list[str]]:
    """(requirements, options) of a ``pip install`` argument list."""
    reqs, opts, it = [], [], iter(args)
    for arg in it:
        if arg in ("--index-url", "-i", "--extra-index-url", "-r", "-c", "--python"):
            opts += [arg, next(it, "")]
        elif arg.startswith("-"):
            opts.append(arg)
        else:
            reqs.append(arg)
    return reqs, opts


@pytest.mark.parametrize(("page", "line"), LINES, ids=[f"{p}:{c}" for p, c in LINES])
def test_install_line_works(page, line, clone):
    argv = shlex.split(line)
    if "build" in argv[:3] and argv[0].startswith("python"):  # python -m build --wheel
        proc = subprocess.run(
            [sys.executable, "-m", "build", *argv[3:], "--no-isolation"],
            cwd=clone,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return
    args = argv[argv.index("install") + 1 :]
    reqs, opts = _requirements(args)
    assert reqs, f"{page}: `{line}` installs nothing"
    if any(o in opts for o in ("--index-url", "-i", "--extra-index-url")):
        index = opts[opts.index(next(o for o in opts if "index" in o or o == "-i")) + 1]
        assert index.startswith(NETWORK_INDEXES), f"{page}: `{line}`: unknown index {index}"
        return  # needs the network
    local = []
    for req in reqs:
        if "git+" in req:
            assert f"specfmt @ {REPOSITORY}" in req, (
                f"{page}: `{line}`: install specfmt from its repository as `specfmt @ "
                f"{REPOSITORY}TAG`"
            )
            continue  # needs the network
        path_like = req.startswith((".", "/", "dist/")) or ".whl" in req
        if path_like:
            named = re.search(r"\[([^\]]*)\]$", req)
            extras = {e.strip() for e in named.group(1).split(",")} if named else set()
            assert extras <= _extras(), f"{page}: `{line}`: no extra {extras - _extras()}"
        else:
            try:
                parsed = Requirement(req)
            except InvalidRequirement as exc:
                pytest.fail(f"{page}: `{line}`: {req!r} is no requirement pip reads: {exc}")
            if parsed.name != "specfmt" and parsed.name in _extra_packages():
                continue  # an extra's own package added by hand (install.md): needs the network
            if parsed.name == "specfmt":
                assert parsed.extras, (
                    f"{page}: `{line}` installs specfmt from PyPI, where it is not published; "
                    "install from the clone (`pip install .`), a wheel, or `specfmt @ git+URL`"
                )
                assert parsed.extras <= _extras(), f"{page}: `{line}`: no such extra"
        local.append(req)
    if not local:
        return
    if any(".whl" in r for r in local) and not list((clone / "dist").glob("*.whl")):
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--no-isolation"],
            cwd=clone,
            capture_output=True,
            check=True,
        )
    editable = ["-e"] if "-e" in opts or "--editable" in opts else []
    proc = _pip_dry_run([*editable, *local], cwd=clone)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{page}: `{line}` fails:\n{out[-2000:]}"
    assert "does not provide the extra" not in out, f"{page}: `{line}`:\n{out[-2000:]}"


def _pip_dry_run(args: list[str], cwd=None) -> subprocess.CompletedProcess:
    """``pip install --dry-run ARGS`` offline (no index, no dependencies, no build isolation):
    whether pip resolves and builds what a documented install line names."""
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index"]
    command += ["--no-build-isolation", "--no-deps", "--disable-pip-version-check", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True)


#: what the docs put after ``@`` of the repository URL and in pre-commit's ``rev:``: the
#: commit a reader pins (the repository has no release tags yet; a tag is allowed once it exists)
PINNED = "SHA"


def _tags() -> set[str]:
    proc = subprocess.run(["git", "tag"], cwd=ROOT, capture_output=True, text=True)
    return set(proc.stdout.split())


def test_the_docs_pin_only_what_the_repository_has():
    """`rev: v0.1.0` and `...specfmt@v0.1.0` named a tag the repository does not have: every
    ref the docs pin is the commit placeholder or an existing tag."""
    refs = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        refs += [(page.name, r) for r in re.findall(re.escape(REPOSITORY) + r"([^\s\"'`]+)", text)]
        refs += [(page.name, r) for r in re.findall(r"^\s*rev:\s*(\S+)", text, re.M)]
    assert refs, "the docs pin no specfmt version anywhere: the test looks at nothing"
    bad = [(page, ref) for page, ref in refs if ref != PINNED and ref not in _tags()]
    assert not bad, f"refs that are neither {PINNED} nor a tag of this repository: {bad}"


def test_the_git_install_lines_install(tmp_path):
    """Each ``specfmt @ git+URL@SHA`` line, with URL a scratch clone of this repository and
    SHA its commit, is one pip resolves and builds (offline: --no-index, --no-deps)."""
    from tests.scratch import committed_copy

    lines = [(p, line) for p, line in LINES if REPOSITORY in line]
    assert lines, "no git+ install line left to check"
    upstream, sha = committed_copy(tmp_path / "specfmt")
    for page, line in lines:
        args = shlex.split(line)
        reqs = [
            a.replace(REPOSITORY.removesuffix("@"), f"git+file://{upstream}").replace(
                f"@{PINNED}", f"@{sha}"
            )
            for a in args[args.index("install") + 1 :]
            if not a.startswith("-")
        ]
        proc = _pip_dry_run(reqs)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{page}: `{line}` fails:\n{out[-2000:]}"
        assert "Would install specfmt" in out, out[-2000:]
