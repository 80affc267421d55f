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

# -- the public API ----------------------------------------------------------------------------
# `spec_format.validate` is both the engine module and the function users call, and
# `spec_format.migrate` both the package and its function. Renaming the
# modules would break every `from spec_format.validate import ...`; instead the two modules
# are made callable, so `spec_format.validate(paths)` runs `spec_format.validate.validate`
# and every import of the module keeps working.
import types as _types  # noqa: E402
from importlib import import_module as _import_module  # noqa: E402


class _CallableModule(_types.ModuleType):
    """A module whose call runs its function of the same name (see above)."""

    def __call__(self, *args, **kwargs):
        return getattr(self, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


def _callable_module(name: str) -> _types.ModuleType:
    module = _import_module(f"{__name__}.{name}")
    module.__class__ = _CallableModule
    return module


validate = _callable_module("validate")
migrate = _callable_module("migrate")

from spec_format.api import (  # noqa: E402
    ConfigInvalid,
    FileReport,
    Finding,
    Profile,
    Report,
    Severity,
    ValidateOptions,
    load_config,
    model_class,
    validate_config,
)

__all__ = [
    "ConfigInvalid",
    "FileReport",
    "Finding",
    "Profile",
    "Report",
    "Severity",
    "ValidateOptions",
    "__version__",
    "load_config",
    "migrate",
    "model_class",
    "validate",
    "validate_config",
]
