"""Every command line the README and the hand-written docs show is run, or says why not.

A command line is a line of a ``bash``/``sh``/``shell`` block, a ``$ `` line of a
``console`` block, or a ``run:`` line of a ``yaml`` block (GitHub Actions snippets), in
``README.md`` and ``docs/`` (the generated ``docs/reference`` and ``docs/rules`` left out),
split at ``&&``. Each one is

* an install or build line (``pip install``, ``python -m build``): run by
  ``tests/test_install_docs.py``, which finds the same lines;
* marked in the page's source, by an HTML comment right before its block, as a command that
  cannot run here, with the reason and the text that picks the lines out::

      <!-- commands needing network: hf://; git clone -->
      <!-- commands needing a GPU: --device cuda -->
      <!-- commands run by tests/test_docs.py::test_site_builds_strictly: mkdocs build -->

  (a mark that picks no line of its block is stale and fails; a line that names a remote
  address or fetches packages must be marked as needing network);
* or run here (``-m slow``), by bash, in a scratch directory where every path the docs use
  exists: tiny checkpoints and sources built by ``spec_format.testing`` under the names the
  docs give them (``ckpt/``, ``Qwen3-8B/``, ``eagle3-draft/`` ...) and a copy of
  ``examples/``. It must be accepted and do its work: exit 0, or 1 where the command reports
  findings or differences; never a usage error, an unreadable input or a crash.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.common import ROOT

_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)
_MARK = re.compile(r"<!--\s*commands (needing network|needing a GPU|run by (\S+)):\s*(.*?)\s*-->")
_SHELL = ("bash", "sh", "shell")
#: what a line that needs the network looks like (it must carry a mark)
_REMOTE = re.compile(r"hf://|git clone|\bcurl\b|\bwget\b|npm ci|git\+")
_INSTALL = re.compile(r"(?:^|/)pip3? install |python3? -m (?:pip install|build)\b")


@dataclass(frozen=True)
class Command:
    page: str
    line: str
    mark: str | None  # "needing network", "needing a GPU", "run by X"; None: run here

    @property
    def id(self) -> str:
        return f"{self.page}: {self.line}"

    @property
    def parts(self) -> list[str]:
        """The line split at ``&&``."""
        return [p.strip() for p in re.split(r"\s+&&\s+", self.line) if p.strip()]

    @property
    def runnable(self) -> str:
        """What runs here: the parts that install nothing (test_install_docs runs those),
        with the venv's ``specfmt`` being the one under test."""
        parts = [p for p in self.parts if not _INSTALL.search(p)]
        return " && ".join(p.replace(".venv/bin/specfmt", "specfmt") for p in parts)


def pages() -> list[Path]:
    docs = [
        p
        for p in sorted((ROOT / "docs").rglob("*.md"))
        if p.relative_to(ROOT / "docs").parts[0] not in ("reference", "rules")
    ]
    return [ROOT / "README.md", *docs]


def _lines(lang: str, body: str) -> list[str]:
    out = []
    for raw in body.splitlines():
        if lang in _SHELL:
            line = raw
        elif lang == "console":
            if not raw.startswith("$ "):
                continue  # the output shown after a command
            line = raw[2:]
        elif lang == "yaml":
            m = re.match(r"\s*-?\s*run:\s*(.*)", raw)
            if not m:
                continue
            line = m.group(1)
        else:
            return []
        line = re.split(r"\s+#\s", line)[0].strip()  # a trailing comment
        if line:
            out.append(line)
    return out


def commands() -> list[Command]:
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        for block in _FENCE.finditer(text):
            lang = block.group(1).strip().split()[0] if block.group(1).strip() else ""
            before = text[: block.start()].rstrip()
            marks = []
            while before.endswith("-->"):
                m = list(_MARK.finditer(before))
                if not m or m[-1].end() != len(before):
                    break
                marks.append(m[-1])
                before = before[: m[-1].start()].rstrip()
            lines = _lines(lang, block.group(2))
            for mark in marks:
                picks = [p.strip() for p in mark.group(3).split(";") if p.strip()]
                for pick in picks:
                    assert any(pick in line for line in lines), (
                        f"{name}: the mark '{mark.group(0)}' picks no line with {pick!r} "
                        "in the block after it"
                    )
            for line in lines:
                mark = next(
                    (
                        m.group(1)
                        for m in marks
                        for pick in m.group(3).split(";")
                        if pick.strip() and pick.strip() in line
                    ),
                    None,
                )
                found.append(Command(name, line, mark))
    return found


COMMANDS = commands()
RUN_HERE = [c for c in COMMANDS if c.mark is None and c.runnable]


def test_the_docs_show_commands_of_every_kind():
    marks = {c.mark.split()[0] + " " + c.mark.split()[1] for c in COMMANDS if c.mark}
    assert {"needing network", "run by"} <= marks, marks
    assert len(RUN_HERE) > 50, len(RUN_HERE)
    pages_run = {c.page for c in RUN_HERE}
    assert {"README.md", "docs/guide/validate.md", "docs/guide/convert.md"} <= pages_run


def test_every_command_is_run_or_marked_with_a_reason():
    """Install lines are test_install_docs' lines; a line that needs the network carries
    a mark; a ``run by`` mark names a test (or script) that exists and runs that tool."""
    from tests.test_install_docs import install_lines

    installs = {line for _, line in install_lines()}
    problems = []
    for c in COMMANDS:
        for part in c.parts if c.mark is None else ():
            if _INSTALL.search(part) and not any(part.endswith(line) for line in installs):
                problems.append(f"{c.id}: {part!r} is an install line test_install_docs misses")
        if c.mark is None and c.runnable and _REMOTE.search(c.runnable):
            problems.append(
                f"{c.id}: needs the network; mark its block <!-- commands needing network: TEXT -->"
            )
        elif c.mark and c.mark.startswith("run by "):
            where = c.mark.removeprefix("run by ")
            path, _, test = where.partition("::")
            assert (ROOT / path).is_file(), f"{c.id}: {path} does not exist"
            if test:
                module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
                function = getattr(module, test, None)
                assert function is not None, f"{c.id}: no test {where}"
                source = inspect.getsource(module)
                tool = next(w for w in c.line.split() if not w.startswith(("python", "-")))
                assert Path(tool).name in source, f"{c.id}: {where} never runs {tool}"
    assert not problems, "\n".join(problems)


# -- the scratch directory the commands run in ---------------------------------------------------


@pytest.fixture(scope="module")
def scene(tmp_path_factory) -> Path:
    """Every path the docs name, built small: a reader's working directory."""
    from spec_format.testing import builder, safeailab, sources

    root = tmp_path_factory.mktemp("docs-scene")
    shutil.copytree(ROOT / "examples", root / "examples")
    # the real verifier configs the README and the docs home pair the examples with
    shutil.copytree(ROOT / "tests" / "data" / "verifiers" / "v4", root / "tests/data/verifiers/v4")
    tiny = builder.tiny_config("eagle3")
    dflash_verifier = sources.tiny_dflash_verifier_config()
    for name in ("ckpt", "ckpt-a", "ckpt-b", "models/a", "drafts/a", "path/to/draft"):
        builder.build_checkpoint(root / name, tiny)
    builder.build_checkpoint(root / "drafts/qwen3-8b-eagle3", tiny)
    builder.build_checkpoint(root / "path/to/draft-checkpoint", tiny)
    shutil.copy(root / "ckpt" / "config.json", root / "path/to/config.json")
    shutil.copy(root / "ckpt" / "config.json", root / "config.json")
    shutil.copy(root / "ckpt" / "model.safetensors", root / "model.safetensors")
    verifier = {  # the verifier the tiny drafts were built for
        **dflash_verifier,
        "vocab_size": tiny["transformer_layer_config"]["vocab_size"],
        "hidden_size": tiny["transformer_layer_config"]["hidden_size"],
    }
    for name in ("Qwen3-8B", "path/to/Qwen3-8B", ".home/models/Qwen3-8B"):
        builder.build_verifier(root / name, verifier)
    (root / "old").mkdir()
    shutil.copy(
        ROOT / "examples" / "llama-3.1-8b-eagle3-0.2" / "config.json", root / "old/config.json"
    )
    (root / "new").mkdir()
    safeailab.build_safeailab(  # a SafeAILab config that records the layers it taps
        root / "eagle3-draft",
        safeailab.safeailab_config(overrides={"eagle_aux_hidden_state_layer_ids": [2, 16, 29]}),
        safeailab.safeailab_shapes(),
    )
    builder.build_verifier(root / "Llama-3.1-8B", safeailab.verifier_config(layers=32))
    sources.build_zlab_dflash(root / "z-lab-Qwen3-8B-DFlash-b16", sources.zlab_dflash_config())
    builder.build_verifier(root / "Qwen3-8B-dflash-verifier", dflash_verifier)
    sources.build_mtp_source(
        root / "Qwen3-Next-80B-A3B-Instruct", sources.tiny_mtp_verifier_config("qwen3_next")
    )
    (root / "checkpoints" / "my-draft").mkdir(parents=True)
    shutil.copy(root / "ckpt" / "config.json", root / "checkpoints/my-draft/config.json")
    (root / "data").mkdir()
    (root / "data" / "token_freq.json").write_text(json.dumps([1] * 256))
    return root


def _prepare(scene: Path, line: str) -> None:
    """Inputs that need a library the default selection may lack, made when a line uses
    them."""
    if "token_freq.pt" in line or "captured.safetensors" in line:
        torch = pytest.importorskip("torch", reason="the forward extra")
        counts = torch.ones(256, dtype=torch.int64)
        torch.save(counts, scene / "token_freq.pt")
        torch.save(counts, scene / "data" / "token_freq.pt")
        from safetensors.torch import save_file

        tiny = json.loads((scene / "ckpt" / "config.json").read_text())
        aux = len(tiny.get("eagle_aux_hidden_state_layer_ids") or [0, 0, 0])
        hidden = tiny["transformer_layer_config"]["hidden_size"]
        save_file(
            {
                "input_ids": torch.arange(8, dtype=torch.int64),
                "hidden_states": torch.zeros(8, aux * hidden),
            },
            str(scene / "captured.safetensors"),
        )


#: lines whose command reports differences or findings by exit 1
FINDINGS_OK = re.compile(r"specfmt (validate|migrate .*--check|fix .*--check)|--check")


@pytest.mark.slow  # every command of the docs: about a minute
@pytest.mark.parametrize("command", RUN_HERE, ids=[c.id for c in RUN_HERE])
def test_documented_command_runs(scene, command):
    line = command.runnable
    if "forward" in line.split()[:2]:
        pytest.importorskip("torch", reason="specfmt forward needs the forward extra")
    if "--plot" in line:
        pytest.importorskip("matplotlib", reason="inspect --plot needs the plot extra")
    _prepare(scene, line)
    work = scene.parent / f"run-{abs(hash(command.id))}"
    if not work.exists():  # each command in its own copy: writes never meet
        shutil.copytree(scene, work, symlinks=True)
    if "convert z-lab" in line:  # the z-lab draft's own verifier under the docs' name
        shutil.rmtree(work / "Qwen3-8B")
        shutil.copytree(work / "Qwen3-8B-dflash-verifier", work / "Qwen3-8B")
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "VIRTUAL_ENV")},
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
        "HOME": str(work / ".home"),
        "SHELL": "/bin/bash",
        "NO_COLOR": "1",
    }
    (work / ".home").mkdir(exist_ok=True)
    proc = subprocess.run(
        ["bash", "-c", line], cwd=work, capture_output=True, text=True, env=env, timeout=300
    )
    allowed = {0, 1} if FINDINGS_OK.search(line) else {0}
    assert proc.returncode in allowed, (
        f"{command.id}: exit {proc.returncode}\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}"
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
