"""Reading a draft config: :func:`load` is the one reader every command reads a draft's
``config.json`` through (``validate``, ``forward`` and the Python API's ``load_config`` with
their findings, ``inspect`` from a checkpoint's bytes, and :func:`read_config` here for
``migrate``, ``fix`` and ``convert``). The verifier is read by
:func:`spec_format.parsers.verifier.load_verifier`, for every command.

:func:`read_config` accepts a ``config.json`` path, the directory holding it or ``-``. Every
failure becomes an :class:`~spec_format.base.errors.InputError` that names the file, the place and
what to do.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_format.base import input_messages
from spec_format.base.errors import InputError
from spec_format.base.jsonload import Loaded, load_json, parse_json_bytes
from spec_format.base.pathkind import DIRECTORY, MISSING, kind_of
from spec_format.parsers import stdin

CONFIG_NAME = "config.json"
_UNWRITABLE = ("non-finite-number", "number-out-of-range", "lone-surrogate")


@dataclass(frozen=True)
class ConfigFile:
    path: Path  # the config.json itself
    text: str
    data: dict[str, Any]
    raw: bytes = b""  # the bytes as read, for the writer's "unchanged since read" check


def config_path(path: str | Path) -> Path:
    p = Path(path)
    if kind_of(p) == DIRECTORY:
        if kind_of(p / CONFIG_NAME) == MISSING:  # anything else there: the read says what
            raise InputError(input_messages.message("no-config-in-directory", "rewrite", path=p))
        return p / CONFIG_NAME
    return p


def load(source: str | os.PathLike[str], *, raw: bytes | None = None) -> Loaded:
    """The config at ``source`` read strictly and within the size limit (never raises for
    bad input: the problems are in the result): ``-`` reads standard input, a path the file
    itself. With ``raw``, the bytes of a config.json already fetched from a checkpoint
    (remote or local), which ``source`` names in messages."""
    if raw is not None:
        return parse_json_bytes(raw, source)  # type: ignore[arg-type]
    if stdin.is_stdin(source):
        return stdin.load_json()
    return load_json(source if isinstance(source, Path) else Path(source))


def read_config(path: str | Path, *, rewritable: bool = True) -> ConfigFile:
    """The config at ``path`` (a file, its directory, or ``-`` for standard input).
    ``rewritable=False``, for a config that is read but never written back (``convert``'s
    source), accepts what only a rewrite must refuse: duplicate keys and values that cannot
    be written back as they were read (``validate`` reports both)."""
    p = Path(stdin.NAME) if stdin.is_stdin(path) else config_path(path)
    loaded = load(path if stdin.is_stdin(path) else p)
    fatal = [pr for pr in loaded.problems if pr.fatal]
    if not loaded.ok or fatal:
        first = fatal[0] if fatal else None
        if first is not None and first.kind == "not-found":
            raise InputError(input_messages.message("path-not-found", "path", path=p))
        where = f":{first.line}:{first.column}" if first and first.line else ""
        message = first.message if first else "could not be read"
        # the location is said once, here: drop the message's own path[:line[:col]]: prefix
        message = re.sub(rf"^{re.escape(str(p))}(:\d+){{0,2}}: ", "", message)
        head = "" if message.startswith(f"{p} ") else f"{p}{where}: "  # "PATH is a FIFO ..."
        raise InputError(f"{head}{message}; fix the file, then run `specfmt validate {p}`")
    if not rewritable:
        return ConfigFile(path=p, text=loaded.text, data=loaded.data, raw=loaded.raw)
    dupes = [pr for pr in loaded.problems if pr.kind == "duplicate-key"]
    if dupes:
        d = dupes[0]
        raise InputError(
            f"{p}:{d.line}:{d.column}: {d.message}; remove the duplicate before migrating "
            "(JSON readers disagree on which copy wins)"
        )
    # values that cannot be written back as they were read: refuse rather than turn 1e999
    # into Infinity or fail half-way on a lone surrogate
    unwritable = [pr for pr in loaded.problems if pr.kind in _UNWRITABLE]
    if unwritable:
        u = unwritable[0]
        where = f":{u.line}:{u.column}" if u.line else ""
        at = f" (at {u.pointer})" if u.pointer else ""
        raise InputError(
            f"{p}{where}: {u.message}{at}; nothing was written (specfmt would not write this "
            f"value back as it was read), see `specfmt validate {p}`"
        )
    return ConfigFile(path=p, text=loaded.text, data=loaded.data, raw=loaded.raw)


def as_document(source: Any) -> Any:
    """What the Python API's ``migrate`` and ``fix`` take: a ``config.json`` path or the
    directory holding it is read as ``read_config`` reads it; anything else is returned
    for the caller to check (a parsed config)."""
    return read_config(source).data if isinstance(source, (str, os.PathLike)) else source
