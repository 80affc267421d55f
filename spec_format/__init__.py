"""specfmt: schemas, validation, migration and a reference forward for speculators drafts.

The import name is ``spec_format``; the command is ``specfmt``.
"""

__version__ = "0.1.0"
