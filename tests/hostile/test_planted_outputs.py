"""Every command that writes, against a symbolic link and a FIFO planted at each of its
temporary and output names: nothing outside the output changes, a FIFO in a folder output is
refused (exit 2, one line naming it), and a planted temporary name is passed over.

The temporary names are random; each test makes the first two the writer draws the names of
the planted link and FIFO (``secrets.token_hex`` of the writing module), so the writer meets
them and must pick a third."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from pathlib import Path

import pytest

from spec_format.facts import catalog
from spec_format.testing import builder
from tests.hostile.limits import ROOT

EXAMPLE = ROOT / "examples" / "qwen3-8b-eagle3" / "config.json"
OUTSIDE = b"outside the output: never written\n"


@pytest.fixture
def outside(tmp_path) -> Path:
    path = tmp_path / "elsewhere" / "precious.json"
    path.parent.mkdir()
    path.write_bytes(OUTSIDE)
    return path


def _is_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


@contextlib.contextmanager
def planted_temps(monkeypatch, module, names, outside: Path):
    """The first two random names ``module`` draws are taken: a link to ``outside`` and a
    FIFO; ``names(hex)`` is the temporary path a draw of ``hex`` gives."""
    draws = iter(["aaaaaaaa", "bbbbbbbb"])
    fresh = secrets.token_hex
    monkeypatch.setattr(module.secrets, "token_hex", lambda n: next(draws, None) or fresh(n))
    link, fifo = names("aaaaaaaa"), names("bbbbbbbb")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    os.mkfifo(fifo)
    yield
    assert next(draws, None) is None, "the writer never met the planted names"
    assert outside.read_bytes() == OUTSIDE
    assert os.path.islink(link) and _is_fifo(fifo)  # passed over, neither touched


def _old_config(directory: Path) -> Path:
    doc = json.loads(EXAMPLE.read_text())
    doc["speculators_version"] = "0.5.0"  # something for migrate to rewrite
    doc.pop("norm_before_residual", None)  # something for fix to write out
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(doc))
    return directory / "config.json"


@pytest.mark.parametrize(
    "command", [["migrate", "--to", catalog.latest_version()], ["fix"]], ids=["migrate", "fix"]
)
def test_in_place_passes_over_planted_temporaries(cli, tmp_path, outside, monkeypatch, command):
    from spec_format.parsers import outfile

    config = _old_config(tmp_path / "ckpt")
    before = config.read_bytes()
    temp = lambda h: config.parent / f".specfmt-{os.getpid()}-{h}.tmp"  # noqa: E731
    with planted_temps(monkeypatch, outfile, temp, outside):
        result = cli(*command, config.parent, "--in-place", "--backup")
        assert result.exit_code == 0, result.output
    assert config.read_bytes() != before and not config.is_symlink()
    assert config.with_name("config.json.bak").read_bytes() == before


def test_output_file_passes_over_planted_temporaries(cli, tmp_path, outside, monkeypatch):
    from spec_format.parsers import outfile

    config = _old_config(tmp_path / "ckpt")
    out = tmp_path / "out" / "config.json"
    temp = lambda h: out.parent / f".specfmt-{os.getpid()}-{h}.tmp"  # noqa: E731
    with planted_temps(monkeypatch, outfile, temp, outside):
        result = cli("migrate", config, "--to", catalog.latest_version(), "-o", out)
        assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["speculators_version"] != "0.5.0"


def _schema_folder(cli, kind: str, folder: Path):
    if kind == "export":
        return cli("schema", "export", "--version", catalog.latest_version(), "-o", folder)
    return cli("schema", "vscode", "--schema-dir", folder)


def _schema_names(kind: str) -> list[str]:
    """The files (relative to the folder) the command writes."""
    from spec_format.facts import export

    version = catalog.latest_version()
    if kind == "vscode":
        return [export.export_path(version, export.root_name(version), export.Draft.D07)]
    return [f.path for f in export.export_all([version], drafts=(export.Draft.D2020_12,))]


@pytest.mark.parametrize("kind", ["export", "vscode"])
def test_schema_folder_outputs_against_links_and_fifos(cli, tmp_path, outside, monkeypatch, kind):
    from spec_format.parsers import outfile

    folder = tmp_path / "schemas"
    names = _schema_names(kind)
    first = folder / names[0]
    first.parent.mkdir(parents=True)
    # the old writer's fixed temporary name and the output name itself are links out
    first.with_name(first.name + ".tmp").symlink_to(outside)
    (folder / names[-1]).symlink_to(outside)
    temp = lambda h: first.parent / f".specfmt-{os.getpid()}-{h}.tmp"  # noqa: E731
    with planted_temps(monkeypatch, outfile, temp, outside):
        result = _schema_folder(cli, kind, folder)
        assert result.exit_code == 0, result.output
    for name in names:  # each a regular file now; the link at an output name was replaced
        assert stat.S_ISREG(os.lstat(folder / name).st_mode), name
        assert json.loads((folder / name).read_text())
    assert outside.read_bytes() == OUTSIDE

    # a FIFO at an output name: refused by name, nothing written through it, no traceback
    target = folder / names[0]
    target.unlink()
    os.mkfifo(target)
    result = _schema_folder(cli, kind, folder)
    assert result.exit_code == 2, result.output
    assert f"{target} is a FIFO (named pipe), not a regular file" in result.output
    assert "Traceback" not in result.output and _is_fifo(target)


@pytest.mark.parametrize("kind", ["export", "vscode"])
def test_a_linked_directory_inside_a_schema_folder_is_refused(cli, tmp_path, outside, kind):
    folder = tmp_path / "schemas"
    linked = folder / Path(_schema_names(kind)[0]).parts[0]
    folder.mkdir()
    linked.symlink_to(outside.parent, target_is_directory=True)
    before = sorted(os.listdir(outside.parent))
    result = _schema_folder(cli, kind, folder)
    assert result.exit_code == 2, result.output
    assert f"{linked} is a symbolic link, not a directory" in result.output
    assert sorted(os.listdir(outside.parent)) == before and outside.read_bytes() == OUTSIDE


def test_convert_passes_over_planted_temporaries_and_refuses_a_fifo(
    cli, tmp_path, outside, monkeypatch
):
    from spec_format.parsers import outfile
    from spec_format.testing import safeailab

    source = safeailab.build_safeailab(
        tmp_path / "src", safeailab.safeailab_config(), safeailab.safeailab_shapes()
    )
    verifier = tmp_path / "verifier"
    builder.build_verifier(verifier, safeailab.verifier_config())
    out = tmp_path / "out"
    args = ("convert", source, "-o", out, "--verifier", verifier, "--aux-layer-ids", "1,4,5")
    os.mkfifo(out)
    refused = cli(*args)
    assert refused.exit_code == 2, refused.output
    assert f"-o {out}: exists and is not a directory" in refused.output and _is_fifo(out)
    out.unlink()
    temp = lambda h: tmp_path / f".out.specfmt-{os.getpid()}-{h}.tmp"  # noqa: E731
    with planted_temps(monkeypatch, outfile, temp, outside):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    assert (out / "config.json").is_file() and not out.is_symlink()


def test_forward_dump_passes_over_planted_temporaries(tmp_path, outside, monkeypatch):
    pytest.importorskip("torch")
    from typer.testing import CliRunner

    from spec_format.cli.app import app
    from spec_format.parsers import outfile

    draft = builder.build_checkpoint(
        tmp_path / "eagle", builder.tiny_config("eagle3"), dtype="F32"
    ).path
    dump = tmp_path / "dumps" / "out.safetensors"
    temp = lambda h: dump.parent / f".specfmt-{os.getpid()}-{h}.tmp"  # noqa: E731
    with planted_temps(monkeypatch, outfile, temp, outside):
        result = CliRunner().invoke(app, ["forward", str(draft), "--dump", str(dump)])
        assert result.exit_code == 0, result.output
    assert dump.read_bytes()[:8] and stat.S_ISREG(os.lstat(dump).st_mode)
