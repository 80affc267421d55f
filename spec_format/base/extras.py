"""How to add an optional extra (``deep``, ``forward``, ``remote``, ``plot``) to the
installation that is running, as a command that works as written there.

``pip install 'specfmt[deep]'`` only works where specfmt is on the package index pip asks
and pip belongs to the environment that runs specfmt. The command is worked out from
where this interpreter is (called on the error paths that need it, never at start-up):

* a source checkout (``pyproject.toml`` beside the package): ``pip install -e 'ROOT[EXTRA]'``
  with this interpreter;
* a pipx venv: ``pipx inject specfmt REQUIREMENTS``;
* a uv tool venv (no pip inside): ``uv pip install --python PYTHON REQUIREMENTS``;
* anything else (a wheel in a virtual environment): this interpreter's
  ``-m pip install REQUIREMENTS``.

REQUIREMENTS are the extra's own, as the installed metadata (or the checkout's
``pyproject.toml``) lists them, so no index needs to know specfmt.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

#: the extras' requirements when no metadata can be read (pyproject.toml holds the truth;
#: tests/test_extras.py keeps the two equal)
FALLBACK = {
    "deep": ("numpy>=1.24",),
    "forward": ("torch>=2.2", "numpy>=1.24"),
    "remote": ("huggingface_hub>=0.24",),
    "plot": ("matplotlib>=3.7",),
}


def requirements(extra: str) -> tuple[str, ...]:
    """The requirements the extra adds (``("numpy>=1.24",)`` for ``deep``)."""
    try:
        from importlib import metadata

        listed = metadata.requires("specfmt") or []
    except Exception:  # not installed (a bare PYTHONPATH checkout), or unreadable metadata
        listed = []
    marker = re.compile(r"""extra\s*==\s*["']""" + re.escape(extra) + r"""["']""")
    found = tuple(r.split(";", 1)[0].strip() for r in listed if marker.search(r))
    return found or FALLBACK.get(extra, ())


def checkout_root() -> Path | None:
    """The source checkout this package is imported from (None for an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    try:
        return root if 'name = "specfmt"' in pyproject.read_text(encoding="utf-8") else None
    except OSError:
        return None


def install_command(extra: str) -> str:
    """The command that adds ``extra`` to the installation running now."""
    python = shlex.quote(sys.executable or "python")
    needs = " ".join(shlex.quote(r) for r in requirements(extra))
    root = checkout_root()
    if root is not None:
        return f"{python} -m pip install -e {shlex.quote(f'{root}[{extra}]')}"
    prefix = Path(sys.prefix).as_posix()
    if "/pipx/venvs/" in prefix:
        return f"pipx inject specfmt {needs}"
    if "/uv/tools/" in prefix:
        return f"uv pip install --python {python} {needs}"
    return f"{python} -m pip install {needs}"


def needs(what: str, extra: str) -> str:
    """``"--deep needs numpy: add it with `CMD`"``-style wording: ``what`` needs the extra."""
    names = ", ".join(re.split(r"[<>=!~ ]", r, maxsplit=1)[0] for r in requirements(extra))
    return f"{what} needs {names} (the {extra} extra): add it with `{install_command(extra)}`"


__all__ = ["install_command", "needs", "requirements"]
