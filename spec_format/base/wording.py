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


def human_bytes(n: int) -> str:
    """A size in binary units, as every specfmt message and report says one (``512 B``,
    ``8.0 KiB``, ``1.9 GiB``): one unit system, the one of the limits (16 MiB, 4 GiB)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover - unreachable
