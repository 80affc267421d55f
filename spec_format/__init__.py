"""specfmt: schemas, validation, migration and a reference forward for speculators drafts.

The import name is ``spec_format``; the command is ``specfmt``.
"""

from __future__ import annotations

import os as _os

__version__ = "0.1.0"

if not _os.path.isdir(_os.path.join(__path__[0], "cli")):  # a source checkout, not a wheel
    from spec_format._checkout import install as _install_checkout

    _install_checkout(__path__[0])


# -- the public API ----------------------------------------------------------------------------
# Resolved on first use (PEP 562), so `import spec_format` and the CLI's start-up stay cheap;
# spec_format.api documents each name with examples.
_API = {
    "validate": "spec_format.api",
    "validate_config": "spec_format.runner.validation",
    "ValidateOptions": "spec_format.runner.validation",
    "migrate": "spec_format.rewrites.migration",
    "MigrateOptions": "spec_format.rewrites.migration",
    "MigrationResult": "spec_format.rewrites.migration",
    "fix": "spec_format.rewrites.fixing",
    "FixOptions": "spec_format.rewrites.fixing",
    "FixResult": "spec_format.rewrites.fixing",
    "migrate_files": "spec_format.api",
    "fix_files": "spec_format.api",
    "FileResult": "spec_format.api",
    "load_config": "spec_format.api",
    "model_class": "spec_format.api",
    "ConfigInvalid": "spec_format.api",
    "Report": "spec_format.base.report",
    "FileReport": "spec_format.base.report",
    "Finding": "spec_format.base.report",
    "Severity": "spec_format.base.report",
    "Profile": "spec_format.rules.base",
}

__all__ = ["__version__", *_API]

from spec_format.base.lazy import lazy_getattr as _lazy_getattr  # noqa: E402

__getattr__ = _lazy_getattr(globals(), _API)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
