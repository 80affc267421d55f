"""Source kinds of ``specfmt convert``: one module per kind (``name``, ``description``,
``detect``, ``plan``; see :class:`spec_format.convert.plan.SourceKind`)."""

KINDS = (
    "zlab_dflash",
    "native_mtp",
)
