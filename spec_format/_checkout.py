"""Import the package from a source checkout.

The wheel has ``spec_format/cli``, ``spec_format/schema``, ``spec_format/models`` and
``spec_format/checks`` inside the package; the repository keeps them at the top level (``cli/``,
``schema/``, ``generated/models/``, ``generated/checks/``)
and ``pyproject.toml`` maps them in with ``[tool.setuptools.package-dir]``. When ``spec_format``
is imported from a checkout (an editable install, ``PYTHONPATH=<checkout>``, scripts/, a scratch
copy in a test), this finder applies the same map to that checkout, ahead of any other finder,
so a copy of the repository imports its own folders.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder

#: subpackage of spec_format -> its folder in the checkout; tests/test_layout.py holds this
#: equal to pyproject.toml's [tool.setuptools.package-dir]
SOURCE_DIRS = {
    "cli": "cli",
    "schema": "schema",
    "models": "generated/models",
    "checks": "generated/checks",
}


class CheckoutFinder:
    """Finds ``spec_format.<name>`` for the names in SOURCE_DIRS under one checkout."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        folder = SOURCE_DIRS.get(name) if package == "spec_format" else None
        if folder is None:
            return None
        # the folder's name is the subpackage's name: search its parent for it
        return PathFinder.find_spec(fullname, [os.path.dirname(os.path.join(self.root, folder))])


def install(package_dir: str) -> None:
    """Map the outside folders of the checkout holding ``package_dir`` (once per process)."""
    root = os.path.dirname(os.path.abspath(package_dir))
    if not any(isinstance(f, CheckoutFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, CheckoutFinder(root))
