"""Project configuration: ``[tool.specfmt]`` in ``pyproject.toml``, or a ``specfmt.toml``.

Found as ruff finds its own: for each input, the closest configuration walking up from the
input's directory (a directory input starts at itself; ``hf://`` and ``-`` start at the
current directory). In one directory ``specfmt.toml`` wins over ``pyproject.toml``, and a
``pyproject.toml`` without a ``[tool.specfmt]`` table is passed over. ``--config PATH``
uses that file for every input; ``--isolated`` reads none.

The keys (``specfmt.toml`` at its top level, ``pyproject.toml`` under ``[tool.specfmt]``)::

    select = ["S", "C001"]       # like --select
    ignore = ["C004"]            # like --ignore
    profile = "strict"           # like --profile
    engine = ["vllm==0.28.0"]    # like --engine
    [per-file-ignores]           # [tool.specfmt.per-file-ignores] in pyproject.toml
    "checkpoints/qwen-eagle3/*" = ["C001"]

A flag given on the command line replaces the key of the same name; ``per-file-ignores``
always apply. This module only reads and checks the file: the values go through the same
options as the flags (:class:`spec_format.runner.validation.ValidateOptions`).
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec_format.base.errors import UsageError

OWN_FILE = "specfmt.toml"
PYPROJECT = "pyproject.toml"

# The lines through which TOML can define the table tool.specfmt: its header (or a subtable's,
# or an array of tables), a dotted key at the top level, a top-level ``tool =`` (an inline
# table), or a ``[tool]`` table together with a ``specfmt`` key. A pyproject.toml with none of
# them cannot hold the table and is not parsed (one that names specfmt as a dependency or a
# script is the common case; parsing is most of a one-config run's settings cost).
_TOOL = rb"""(?:tool|"tool"|'tool')"""
_SPECFMT = rb"""(?:specfmt|"specfmt"|'specfmt')"""
_NAMES_TABLE = re.compile(
    rb"^[ \t]*(?:\[\[?[ \t]*" + _TOOL + rb"[ \t]*\.[ \t]*" + _SPECFMT + rb"[ \t]*[\].]"
    rb"|" + _TOOL + rb"[ \t]*(?:\.[ \t]*" + _SPECFMT + rb"[ \t]*[.=]|=))",
    re.MULTILINE,
)
_TOOL_TABLE = re.compile(rb"^[ \t]*\[[ \t]*" + _TOOL + rb"[ \t]*\]", re.MULTILINE)
_SPECFMT_KEY = re.compile(rb"^[ \t]*" + _SPECFMT + rb"[ \t]*[.=]", re.MULTILINE)
#: key -> what its value must be (for messages)
KEYS = {
    "select": "a list of rule ids",
    "ignore": "a list of rule ids",
    "profile": "one of legacy, current, strict",
    "engine": 'a list of "NAME==VERSION"',
    "per-file-ignores": "a table of glob pattern = list of rule ids",
}


@dataclass(frozen=True)
class Settings:
    """The values of one configuration file (None: the key is absent)."""

    path: Path | None = None  # None: no file (defaults only)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    profile: str | None = None
    engine: tuple[str, ...] | None = None
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = field(default=())

    @property
    def root(self) -> Path:
        """Where relative patterns start: the directory of the file."""
        return self.path.parent if self.path is not None else Path.cwd()

    def ignored_for(self, path: str) -> frozenset[str]:
        """The per-file-ignores whose pattern matches ``path`` (as given, or relative to
        the configuration's directory)."""
        if not self.per_file_ignores or path in ("-", "<stdin>") or path.startswith("hf://"):
            return frozenset()
        candidates = {Path(path).as_posix()}
        with contextlib.suppress(ValueError, OSError):  # outside the configuration's tree
            candidates.add(Path(path).resolve().relative_to(self.root.resolve()).as_posix())
        out: set[str] = set()
        for pattern, ids in self.per_file_ignores:
            pat = pattern.removeprefix("./").rstrip("/")
            if any(
                fnmatch.fnmatchcase(c, pat) or fnmatch.fnmatchcase(c, pat + "/*")
                for c in candidates
            ):
                out |= ids
        return frozenset(out)


NONE = Settings()


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


class _Unreadable(UsageError):
    """A configuration file that could not be read (discovery passes over it)."""


def _load(path: Path, *, named: bool, raw: bytes | None = None) -> dict[str, Any]:
    """The TOML document at ``path``, read by the bounded reader (a FIFO, a device or more
    than 16 MiB is refused) and parsed; anything wrong is a :class:`UsageError` naming the
    file. ``named``: the file was given with ``--config`` (a missing one says so)."""
    from spec_format.base.bounded import ReadRefused, read_file

    try:
        raw = read_file(path, what="a TOML configuration file") if raw is None else raw
    except ReadRefused as refused:
        if refused.kind == "not-found" and named:
            raise UsageError(f"--config {path}: no such file") from None
        raise _Unreadable(refused.message) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"{path}: cannot read the configuration ({exc})") from None
    try:
        return _toml().loads(text)
    except _toml().TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise UsageError(
            f"{path}: not valid TOML (nested too deeply to parse); a configuration file is a "
            "few flat tables"
        ) from None


def read(path: str | os.PathLike[str]) -> Settings:
    """Read one configuration file; anything wrong in it is a :class:`UsageError` that names
    the file and the key."""
    p = Path(path)
    data = _load(p, named=True)
    if p.name == PYPROJECT:
        tool = data.get("tool")
        table = tool.get("specfmt") if isinstance(tool, dict) else None
        prefix = "tool.specfmt."
        if tool is not None and not isinstance(tool, dict):
            raise UsageError(f"{p}: tool must be a table, not {type(tool).__name__}")
        if table is None:
            raise UsageError(f"{p}: no [tool.specfmt] table")
    else:
        table, prefix = data, ""
    if not isinstance(table, dict):
        raise UsageError(f"{p}: {prefix.rstrip('.') or 'the file'} must be a table")
    return _parse(table, p, prefix)


def _parse(table: dict[str, Any], path: Path, prefix: str) -> Settings:
    from spec_format.runner.validate_options import rule_ids

    for key in table:
        if key not in KEYS:
            close = difflib.get_close_matches(key, list(KEYS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(
                f"{path}: unknown key {prefix}{key}{hint}; known keys: {', '.join(KEYS)}"
            )

    def where(key: str) -> str:
        return f"{path}: {prefix}{key}"

    def strings(key: str) -> tuple[str, ...] | None:
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"{where(key)} must be {KEYS[key]}, not {value!r}")
        return tuple(value)

    select, ignore, engine = strings("select"), strings("ignore"), strings("engine")
    for key, ids in (("select", select), ("ignore", ignore)):
        if ids is not None:
            rule_ids(ids, where(key))  # unknown ids: a usage error naming the file
    if engine:
        from spec_format.facts.disputes import parse_engines

        try:
            parse_engines(engine)
        except UsageError as exc:
            raise UsageError(f"{where('engine')}: {exc}") from None
    profile = table.get("profile")
    if profile is not None:
        from spec_format.rules.base import Profile

        if not isinstance(profile, str) or profile.lower() not in {p.value for p in Profile}:
            raise UsageError(f"{where('profile')} must be {KEYS['profile']}, not {profile!r}")
        profile = profile.lower()
    per_file: list[tuple[str, frozenset[str]]] = []
    raw = table.get("per-file-ignores", {})
    if not isinstance(raw, dict):
        raise UsageError(f"{where('per-file-ignores')} must be {KEYS['per-file-ignores']}")
    for pattern, ids in raw.items():
        here = f'{where("per-file-ignores")}."{pattern}"'
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise UsageError(f"{here} must be a list of rule ids, not {ids!r}")
        per_file.append((pattern, rule_ids(ids, here)))
    return Settings(path, select, ignore, profile, engine, tuple(per_file))


def _may_name_table(raw: bytes) -> bool:
    """Whether TOML text has a line that could define tool.specfmt (see _NAMES_TABLE)."""
    if b"specfmt" not in raw:
        return False
    if _NAMES_TABLE.search(raw):
        return True
    return _TOOL_TABLE.search(raw) is not None and _SPECFMT_KEY.search(raw) is not None


def _has_table(pyproject: Path) -> bool:
    """Whether a discovered ``pyproject.toml`` holds ``[tool.specfmt]`` (one that cannot be
    read is passed over; one that is not TOML is an error, since it may hold one)."""
    from spec_format.base.bounded import ReadRefused, read_file

    try:  # a file that cannot name the table is not parsed (nor its hostile nesting)
        raw = read_file(pyproject, what="a TOML configuration file")
    except ReadRefused:
        return False
    escaped = b"\\u" in raw or b"\\U" in raw  # a key spelled with escapes: the parser reads it
    if not escaped and not raw.startswith(b"\xef\xbb\xbf") and not _may_name_table(raw):
        return False
    try:
        data = _load(pyproject, named=False, raw=raw)
    except _Unreadable:
        return False
    return isinstance(data.get("tool"), dict) and "specfmt" in data["tool"]


def _closest(directory: Path, memo: dict[Path, Path | None] | None = None) -> Path | None:
    """The configuration file of ``directory`` or of the nearest directory above it
    (``memo``: the answers of one command, so that many inputs below one tree walk it
    once)."""
    memo = {} if memo is None else memo
    walked: list[Path] = []
    found: Path | None = None
    for d in (directory, *directory.parents):
        if d in memo:
            found = memo[d]
            break
        walked.append(d)
        own, pyproject = d / OWN_FILE, d / PYPROJECT
        if _is_file(own):
            found = own
            break
        if _is_file(pyproject) and _has_table(pyproject):
            found = pyproject
            break
    for d in walked:
        memo[d] = found
    return found


def _is_file(path: Path) -> bool:
    """A directory we may not search holds no configuration we could read: look on up
    (the input's own read reports the permission problem)."""
    try:
        return path.is_file()
    except OSError:
        return False


def discover(
    input_path: str | os.PathLike[str], memo: dict[Path, Path | None] | None = None
) -> Path | None:
    """The configuration file that applies to one input, found by walking up."""
    text = os.fspath(input_path)
    if text == "-" or text.startswith("hf://"):
        start = Path.cwd()
    else:
        p = Path(text).absolute()
        try:
            start = p if p.is_dir() else p.parent
        except OSError:  # the input's own read reports it
            start = p.parent
    return _closest(start, memo)


def for_inputs(
    inputs: Sequence[str | os.PathLike[str]],
    config: str | os.PathLike[str] | None = None,
    isolated: bool = False,
) -> list[tuple[Settings, list[str]]]:
    """The inputs in their order, in runs that share one configuration (``--config``: the
    file named, for all; ``--isolated``: none)."""
    names = [os.fspath(i) for i in inputs]
    if isolated and config is not None:
        raise UsageError("--config and --isolated exclude each other; pick one")
    if isolated:
        return [(NONE, names)]
    if config is not None:
        return [(read(config), names)]
    runs: list[tuple[Settings, list[str]]] = []
    loaded: dict[Path | None, Settings] = {None: NONE}  # each file read once per command
    memo: dict[Path, Path | None] = {}
    # files named with one directory part share its answer (10,000 files of a folder: one
    # walk, no Path per input); a directory, or a name ending in a separator, is walked
    by_folder: dict[str, Path | None] = {}
    for name in names:
        folder = _folder_of_file(name)
        if folder is None:
            found = discover(name, memo)
        elif folder in by_folder:
            found = by_folder[folder]
        else:
            found = by_folder[folder] = discover(name, memo)
        if found not in loaded:
            loaded[found] = read(found)
        settings = loaded[found]
        if runs and runs[-1][0] is settings:
            runs[-1][1].append(name)
        else:
            runs.append((settings, [name]))
    return runs


def _folder_of_file(name: str) -> str | None:
    """The directory part of an input that names a file (not a directory, standard input,
    ``hf://`` or a name ending in a separator): what :func:`discover` starts from is that
    directory, the same for every file named in it."""
    if name == "-" or name.startswith("hf://") or name.endswith(_SEPARATORS):
        return None
    if os.path.isdir(name):
        return None
    return os.path.dirname(name)


_SEPARATORS = tuple(s for s in (os.sep, os.altsep) if s)


def merged(flag: Any, setting: Any) -> Any:
    """A value given on the command line wins over the configuration's."""
    return setting if flag is None else flag


def drop_per_file_ignores(report: Any, settings: Settings) -> None:
    """Remove from each file report the findings its per-file-ignores name (an id or the
    start of one, ``C`` for the whole layer), matched against the input path and the file
    of each finding."""
    for fr in report.files:
        drop_ignored(fr, settings)


def drop_ignored(fr: Any, settings: Settings) -> None:
    """:func:`drop_per_file_ignores` for one file report (a streamed run's)."""
    if not settings.per_file_ignores:
        return
    base = settings.ignored_for(fr.path)
    fr.findings = [
        f
        for f in fr.findings
        if not any(f.rule.startswith(i) for i in base | settings.ignored_for(f.file))
    ]
