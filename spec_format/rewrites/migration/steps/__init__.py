"""The migration steps, one module per pair of adjacent format versions.

Listed explicitly (not discovered) so the chain never depends on import order or on
stray files; :func:`spec_format.rewrites.migration.chain` checks that they link the catalog's
versions with no gap.
"""

from importlib import import_module

#: the step modules in chain order, each named once (scripts/new_version.py appends here)
NAMES = (
    "v0_1_to_v0_2",
    "v0_2_to_v0_3",
    "v0_3_to_v0_4",
    "v0_4_to_v0_5",
    "v0_5_to_v0_6",
    "v0_6_to_v0_7",
    "v0_7_to_v0_8",
    "v0_8_to_v0_9",
)
STEP_MODULES = tuple(import_module(f"{__name__}.{name}") for name in NAMES)
