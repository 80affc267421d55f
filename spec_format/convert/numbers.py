"""Number guards for convert: a float where the format wants an integer stops the plan.

A source config may say ``"head_dim": 16.5`` or ``"hidden_size": 1e+308``. The format's
schema calls such a value the wrong type (S102, :mod:`spec_format.base.numguard`), and the tensor
contract reads it as no value at all, falling back to a derived size (``hd = H / nH``); a
plan built on that fallback would blame the tensors ("the source does not match its own
config") or write a checkpoint that only the final validation refuses. So the planned
config's numbers are checked against the target schema before any tensor is matched against
it and before anything is written, and the first one named with the fix.
"""

from __future__ import annotations

import itertools
from typing import Any

from spec_format.base.numguard import is_format_integer
from spec_format.convert.plan import ConvertRefused
from spec_format.facts import catalog, schemas

#: integer fields named in one refusal (the rest are counted)
SHOWN = 3


def refuse_non_integers(config: dict[str, Any], line: str, where: str) -> None:
    """Raise :class:`ConvertRefused` when a number of ``config`` sits where the schema of
    format ``line`` wants an integer but is not one (a fraction, or past what a double holds
    exactly). Other schema problems are left to the full validation of the output."""
    model_type = config.get("speculators_model_type")
    entry = catalog.versions().get(line)
    if entry is None or not isinstance(model_type, str) or model_type not in entry.types:
        return
    if schemas.accepts(line, model_type, config):
        return
    errors = schemas.validator(line, model_type).iter_errors(config)
    bad = [e for e in itertools.islice(errors, 1000) if _not_an_integer(e)]
    if not bad:
        return
    shown = ", ".join(
        f"{'/'.join(str(p) for p in e.absolute_path)} = {e.instance!r}" for e in bad[:SHOWN]
    )
    more = f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
    raise ConvertRefused(
        f"{where}: the converted config would have {shown}{more}, where format {line} needs "
        "an integer; fix the source config (sizes and counts are whole numbers); nothing "
        "was written"
    )


def _not_an_integer(error: Any) -> bool:
    """A float where ``integer`` is the type, here or in every branch of an ``anyOf``."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        return all(_not_an_integer(e) or e.validator != "type" for e in error.context) and any(
            _not_an_integer(e) for e in error.context
        )
    if error.validator != "type" or not isinstance(error.instance, float):
        return False
    types = error.validator_value
    types = [types] if isinstance(types, str) else list(types)
    return "integer" in types and not is_format_integer(None, error.instance)
