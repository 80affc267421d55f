"""Writing migrated documents: save_pretrained's formatting, diffs and atomic replacement."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def dumps(document: dict[str, Any]) -> str:
    """JSON text the way ``save_pretrained`` writes it: sorted keys, indent 2, newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def unified_diff(before: str, after: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


def write_atomic(path: Path, text: str, *, backup: Path | None = None) -> None:
    """Replace ``path`` with ``text`` so that readers see either the old or the new file.

    The text goes to a temporary file in the same directory (same file system, so the final
    ``os.replace`` is atomic), is flushed and fsynced, and only then renamed over the
    original. Any failure before the rename (disk full, a signal) leaves the original
    untouched and removes the temporary file. ``backup`` gets a copy of the original first.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    data = text.encode("utf-8")
    if backup is not None:
        _copy_atomic(path, Path(backup), directory)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".specfmt-tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _copy_atomic(src: Path, dst: Path, directory: Path) -> None:
    data = src.read_bytes()
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".specfmt-tmp", dir=dst.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
