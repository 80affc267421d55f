"""Reading the files ``migrate`` and ``fix`` work on: a draft config and a verifier config.

Both accept a ``config.json`` path or the directory holding it. Every failure becomes an
:class:`~spec_format.errors.InputError` that names the file, the place and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_format.errors import InputError
from spec_format.jsonload import load_json

CONFIG_NAME = "config.json"


@dataclass(frozen=True)
class ConfigFile:
    path: Path  # the config.json itself
    text: str
    data: dict[str, Any]
    raw: bytes = b""  # the bytes as read, for the writer's "unchanged since read" check


def config_path(path: str | Path) -> Path:
    p = Path(path)
    if p.is_dir():
        if not (p / CONFIG_NAME).is_file():
            raise InputError(f"{p}: a directory with no {CONFIG_NAME}; pass the file or its folder")
        return p / CONFIG_NAME
    return p


def read_config(path: str | Path) -> ConfigFile:
    p = config_path(path)
    loaded = load_json(p)
    fatal = [pr for pr in loaded.problems if pr.fatal]
    if not loaded.ok or fatal:
        first = fatal[0] if fatal else None
        if first is not None and first.kind == "not-found":
            raise InputError(f"{p}: no such file or directory")
        where = f":{first.line}:{first.column}" if first and first.line else ""
        message = (first.message if first else "could not be read").removeprefix(f"{p}: ")
        raise InputError(f"{p}{where}: {message}; fix the file, then run `specfmt validate {p}`")
    dupes = [pr for pr in loaded.problems if pr.kind == "duplicate-key"]
    if dupes:
        d = dupes[0]
        raise InputError(
            f"{p}:{d.line}:{d.column}: {d.message}; remove the duplicate before migrating "
            "(JSON readers disagree on which copy wins)"
        )
    return ConfigFile(path=p, text=loaded.text, data=loaded.data, raw=loaded.raw)


def read_verifier(path: str | Path) -> dict[str, Any]:
    """The verifier's config as migrate/fix need it: its ``architectures`` and, from the
    text config when there is one, ``num_hidden_layers``."""
    cfg = read_config(path).data
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    out = {**cfg, **{k: v for k, v in text.items() if k not in ("architectures",)}}
    if "architectures" not in out and isinstance(text.get("architectures"), list):
        out["architectures"] = text["architectures"]
    return out
