"""``specfmt migrate``: convert a config between format versions, step by step.

>>> from spec_format.migrate import migrate, MigrateOptions
>>> result = migrate(config_dict, MigrateOptions(to="0.9"))  # doctest: +SKIP
>>> result.document, result.changes, result.problems  # doctest: +SKIP
"""

from spec_format.migrate.records import ABSENT, Change, Problem
from spec_format.migrate.runner import (
    MigrateOptions,
    MigrationResult,
    chain,
    migrate,
    plan,
    resolve_target,
)

__all__ = [
    "ABSENT",
    "Change",
    "MigrateOptions",
    "MigrationResult",
    "Problem",
    "chain",
    "migrate",
    "plan",
    "resolve_target",
]
