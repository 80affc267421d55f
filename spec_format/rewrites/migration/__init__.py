"""``specfmt migrate``: convert a config between format versions, step by step.

>>> from spec_format.rewrites.migration import migrate, MigrateOptions
>>> result = migrate(config_dict, MigrateOptions(to="0.9"))  # doctest: +SKIP
>>> result.document, result.changes, result.problems  # doctest: +SKIP

The names below resolve on first use (PEP 562): validation imports the era checks of
this package without paying for the step chain.
"""

from __future__ import annotations

from spec_format.base.lazy import lazy_getattr

_NAMES = {
    "ABSENT": "spec_format.rewrites.migration.records",
    "Change": "spec_format.rewrites.migration.records",
    "Problem": "spec_format.rewrites.migration.records",
    "MigrateOptions": "spec_format.rewrites.migration.runner",
    "MigrationResult": "spec_format.rewrites.migration.runner",
    "chain": "spec_format.rewrites.migration.runner",
    "migrate": "spec_format.rewrites.migration.runner",
    "plan": "spec_format.rewrites.migration.runner",
    "resolve_target": "spec_format.rewrites.migration.runner",
}

__all__ = list(_NAMES)


__getattr__ = lazy_getattr(globals(), _NAMES)
