"""What a feature whose extra is missing tells the user: one sentence, made here for every
such message (``--deep``, ``--scan-weights``, ``--token-freq``, ``--dtype``, ``--plot``,
``hf://`` inputs, ``specfmt forward``).

``pip install 'specfmt[deep]'`` works only where pip can find specfmt, which is on no index:
inside the clone's environment it fails the same way as anywhere else. What always works is
to add the extra's packages to the environment that runs specfmt, with the tool that made
it: ``pipx inject`` for a pipx installation, ``uv pip install --python`` for a ``uv tool``
one (its environment has no pip), and that environment's own ``python -m pip`` otherwise (a
clone's ``.venv``, a wheel installed into any environment). The command is worked out from
the running interpreter, so it can be pasted as printed; docs/guide/install.md ("Add an
extra") says the same for each kind of installation, and every message points there.

The packages of each extra are the installed distribution's metadata (pyproject.toml's
``[project.optional-dependencies]``), read when a message is made.
"""

from __future__ import annotations

import os
import shlex
import sys

#: where every message sends the user for the other ways (one place)
GUIDE = "docs/guide/install.md, 'Add an extra'"
#: the packages of each extra when no metadata can be read (a checkout on PYTHONPATH);
#: tests/test_extras.py holds this equal to pyproject.toml
FALLBACK = {
    "deep": ("numpy>=1.24",),
    "forward": ("torch>=2.2", "numpy>=1.24"),
    "remote": ("huggingface_hub>=0.24",),
    "plot": ("matplotlib>=3.7",),
}


def requirements(extra: str) -> tuple[str, ...]:
    """The requirements the extra adds, as pyproject.toml writes them."""
    try:
        from importlib.metadata import PackageNotFoundError, requires

        listed = requires("specfmt") or []
    except PackageNotFoundError:
        listed = []
    marker = f'extra == "{extra}"'
    found = tuple(r.split(";")[0].strip() for r in listed if marker in r)
    return found or FALLBACK.get(extra, ())


def installation(prefix: str | None = None) -> str:
    """``pipx``, ``uv-tool`` or ``venv``: what made the environment that runs specfmt."""
    parts = os.path.normpath(prefix or sys.prefix).split(os.sep)
    if "pipx" in parts and "venvs" in parts:
        return "pipx"
    if "uv" in parts and "tools" in parts:
        return "uv-tool"
    return "venv"


def add_command(extra: str, prefix: str | None = None, executable: str | None = None) -> str:
    """The command that adds ``extra``'s packages to the environment running specfmt."""
    reqs = " ".join(shlex.quote(r) for r in requirements(extra))
    python = shlex.quote(executable or sys.executable)
    kind = installation(prefix)
    if kind == "pipx":
        return f"pipx inject specfmt {reqs}"
    if kind == "uv-tool":
        return f"uv pip install --python {python} {reqs}"
    return f"{python} -m pip install {reqs}"


def missing(feature: str, extra: str, *, alternative: str = "") -> str:
    """``"--deep needs numpy>=1.24 (the deep extra), which is not installed: `CMD` adds it
    to this installation (the other ways: GUIDE)"``; ``alternative`` (", or drop --dtype
    ...") is said after the command."""
    packages = ", ".join(r.split(">")[0].split("=")[0].split("<")[0] for r in requirements(extra))
    return (
        f"{feature} needs {packages} (the {extra} extra), which is not installed: "
        f"`{add_command(extra)}` adds it to this installation{alternative} (the other ways: "
        f"{GUIDE})"
    )
