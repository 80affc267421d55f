"""How machine-readable renderers name files: relative to the working directory when the
file is inside it (CI annotations and code scanning resolve paths against the checkout),
with forward slashes on every platform."""

from __future__ import annotations

import os
from pathlib import Path, PurePath


def display_path(file: str) -> str:
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            return path.as_posix()
    text = PurePath(os.path.normpath(path)).as_posix()
    return text
