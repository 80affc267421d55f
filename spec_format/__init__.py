"""specfmt: schemas, validation, migration and a reference forward for speculators drafts.

The import name is ``spec_format``; the command is ``specfmt``.
"""

from __future__ import annotations

from pathlib import Path as _Path

__version__ = "0.1.0"

# The repository keeps cli/, generated/models/ and schema/ at the top level; the wheel maps
# them to spec_format.cli, spec_format.models and spec_format.schema (pyproject
# package-dir). When this package is imported straight from a source checkout (the repo
# root on sys.path, e.g. `python -m` from there), extend the package path so the same
# names resolve to those folders.
_root = _Path(__file__).resolve().parent.parent
if (_root / "pyproject.toml").is_file() and (_root / "generated" / "models").is_dir():
    __path__.extend([str(_root), str(_root / "generated")])  # noqa: F821
del _root
