"""Filling a message template: one ``str.format`` template, or a dict of them by variant."""

from __future__ import annotations

from typing import Any


def fill(template: str | dict[str, str], variant: str | None, owner: str, **params: Any) -> str:
    """``template`` (of ``owner``, named in errors) filled with ``params``."""
    if isinstance(template, dict):
        if variant not in template:
            raise KeyError(f"rule {owner} has no message variant {variant!r}")
        template = template[variant]
    elif variant is not None:
        raise KeyError(f"rule {owner} has one message; got variant {variant!r}")
    return template.format(**params)
