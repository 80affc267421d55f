"""What to validate: the paths a user gives (config files, checkpoint directories,
``.safetensors`` files, ``hf://`` names, ``-``) turned into :class:`Target` s, with
``--recursive``'s walk for draft configs; a path that names nothing to check becomes its
file report (I-rule finding) here, so one bad path never stops the others."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from spec_format.base.bounded import ReadRefused
from spec_format.base.errors import UsageError
from spec_format.base.jsonload import read_json_bytes
from spec_format.base.pathkind import DIRECTORY, MISSING, REGULAR, kind_of
from spec_format.base.report import FileReport
from spec_format.rules import input as input_rules
from spec_format.runner.validate_options import ValidateOptions

CONFIG_NAME = "config.json"


@dataclass
class Target:
    """One thing to validate: a config file, and the checkpoint directory when one was given."""

    shown: str  # the path as the user wrote it (or as found by --recursive)
    config_path: Path | None
    checkpoint_dir: Path | None
    remote: str | None = None  # hf://ORG/NAME[@REV]: config and headers fetched remotely
    weights_file: Path | None = None  # a bare .safetensors file: header audit only
    stdin: bool = False  # "-": the config is read from standard input
    #: the bytes of ``config_path``, read when the target was made (a path that turned out
    #: to be a regular file within the size limit); None: the check reads the file itself
    raw: bytes | None = None


class ReadConfig:
    """A path named on its own that was a regular file when its target was made, and its
    bytes: a run may answer it from an earlier file of the same bytes without making its
    :class:`Target` (:meth:`target`)."""

    __slots__ = ("shown", "raw")

    def __init__(self, shown: str, raw: bytes) -> None:
        self.shown, self.raw = shown, raw

    def target(self) -> Target:
        return Target(self.shown, Path(self.shown), None, raw=self.raw)


def written_as_a_path(name: str) -> bool:
    """True when ``name`` is spelled as ``str(Path(name))`` spells it (no empty or ``.``
    component, no trailing slash): a report that names the file either way says the same."""
    return (
        name != ""
        and "//" not in name[1:]
        and (not name.endswith("/") or name in ("/", "//"))
        and not name.startswith("./")
        and not name.endswith("/.")
        and "/./" not in name
    )


def expand(
    paths: Iterable[str | os.PathLike], options: ValidateOptions
) -> Iterator[Target | ReadConfig | FileReport]:
    """The targets of ``paths``, made one at a time as they are checked (10,000 inputs
    are not 10,000 targets held at once); a usage error (``-`` twice) is raised here, before
    any target."""
    from spec_format.parsers import stdin

    names = [os.fspath(p) for p in paths]
    if sum(1 for n in names if stdin.is_stdin(n)) > 1:
        raise UsageError("- (standard input) was given twice; it can be read once")
    return _targets(names, options)


def _targets(
    names: list[str], options: ValidateOptions
) -> Iterator[Target | ReadConfig | FileReport]:
    from spec_format.parsers import stdin

    for shown in names:
        if stdin.is_stdin(shown):
            yield Target(stdin.NAME, Path(stdin.NAME), None, stdin=True)
            continue
        if shown.startswith("hf://"):
            yield Target(shown, None, None, remote=shown)
            continue
        if not shown.endswith(".safetensors"):
            # the read tells a regular file (its fstat) without a stat of its own; anything
            # else (missing, a directory, too large ...) is looked at below, as it always was
            try:
                raw = read_json_bytes(shown)
            except ReadRefused:
                pass
            else:
                yield ReadConfig(shown, raw)
                continue
        path = Path(shown)
        kind = kind_of(path)
        if kind == MISSING:
            report = FileReport(path=shown, unreadable=True)
            report.findings.append(
                input_rules.PathNotFound.emit(
                    shown, profile=options.profile, variant="path", path=shown
                )
            )
            yield report
        elif kind == DIRECTORY:
            if options.recursive:
                found, unreadable = _walk_configs(path)
                if not found and not unreadable:
                    yield _no_config(shown, options, recursive=True)
                yield from (_unreadable(d, why, options) for d, why in unreadable)
                for config_path in found:
                    yield Target(str(config_path.parent), config_path, config_path.parent)
            elif kind_of(path / CONFIG_NAME) != MISSING:  # load_json says what it is
                yield Target(shown, path / CONFIG_NAME, path)
            else:
                yield _no_config(shown, options, recursive=False)
        elif path.suffix == ".safetensors":
            yield Target(shown, None, None, weights_file=path)
        else:
            yield Target(shown, path, None)


def _walk_configs(root: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every config.json below ``root`` that looks like a draft (not a plain model config),
    sorted, and the directories that could not be listed (with the reason)."""
    found: list[Path] = []
    unreadable: list[tuple[str, str]] = []

    def onerror(exc: OSError) -> None:
        unreadable.append((str(exc.filename or root), exc.strerror or str(exc)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if CONFIG_NAME in filenames or CONFIG_NAME in dirnames:
            candidate = Path(dirpath) / CONFIG_NAME
            if _looks_like_draft(candidate):
                found.append(candidate)
    return sorted(found), unreadable


def _looks_like_draft(path: Path) -> bool:
    """Cheap pre-filter for --recursive: a plain model config (a verifier) is skipped; a
    config.json that cannot be told apart (unreadable, empty, not JSON, not a regular
    file) is kept, so that the real read reports it instead of hiding it."""
    if kind_of(path) != REGULAR:
        return True  # a FIFO, directory, dangling link: the real read describes it
    try:
        with path.open("rb") as f:
            head = f.read(1 << 20)
            complete = not f.read(1)
    except OSError:
        return True
    if any(s in head for s in (b"speculators", b"Eagle3", b"dflash_config", b"eagle_config")):
        return True
    if not complete:
        return False  # over 1 MiB without a draft marker: not a draft config
    try:
        return not isinstance(json.loads(head), dict)
    except (ValueError, RecursionError):
        return True  # empty or corrupt: report it


def _unreadable(directory: str, why: str, options: ValidateOptions) -> FileReport:
    report = FileReport(path=directory, unreadable=True)
    report.findings.append(
        input_rules.FileUnreadable.emit(
            directory,
            profile=options.profile,
            variant="directory-unlistable",
            path=directory,
            reason=why,
        )
    )
    return report


def _no_config(shown: str, options: ValidateOptions, *, recursive: bool) -> FileReport:
    report = FileReport(path=shown, unreadable=True)
    report.findings.append(
        input_rules.NoConfigInDirectory.emit(
            shown,
            profile=options.profile,
            variant="recursive" if recursive else "directory",
            path=shown,
            hint=_no_config_hint(Path(shown), recursive, options),
        )
    )
    return report


def _no_config_hint(path: Path, recursive: bool, options: ValidateOptions) -> str:
    """What to do instead, from what the directory holds: recursion only when a draft
    config.json is below it, the files by name when it holds loose .json files; each named
    as the caller's interface spells it (the command line or the Python API)."""
    loose = sorted(p.name for p in path.glob("*.json") if p.is_file())
    if loose:
        if options.interface == "cli":
            files = (
                f"`specfmt validate {path / '*.json'}`"
                if len(loose) > 1
                else (f"`specfmt validate {path / loose[0]}`")
            )
        else:
            files = f"`validate({[str(path / name) for name in loose[:3]]!r})`"
            if len(loose) > 3:
                files = f"`validate(sorted(Path({str(path)!r}).glob('*.json')))`"
        return f"{'; ' if recursive else ''}pass its .json files by name: {files}"
    if recursive:
        return ""
    if _walk_configs(path)[0]:
        where = "" if options.interface == "cli" else " (ValidateOptions)"
        return f"use {options.spell('recursive')}{where} to check the draft checkpoints below it"
    return "pass the checkpoint directory itself"
