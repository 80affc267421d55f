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


#: The word for a severity (``Severity.value``: error, warning, info) in each output. People
#: read "note" everywhere (text, tables, reports); the machine formats keep their own
#: vocabulary where the format mandates one (GitHub workflow commands: ``notice``; SARIF
#: 2.1.0 ``result.level``: ``note``); ``-f json`` keeps the value itself (``info``: the
#: stable key of ``counts`` and of the rule registry, which scripts already read).
SEVERITY_WORDS: dict[str, dict[str, str]] = {
    "text": {"error": "error", "warning": "warning", "info": "note"},
    "github": {"error": "error", "warning": "warning", "info": "notice"},
    "sarif": {"error": "error", "warning": "warning", "info": "note"},
}


def severity_word(severity: Any, output: str = "text") -> str:
    """The word ``output`` shows for ``severity`` (a Severity or its value)."""
    return SEVERITY_WORDS[output][str(getattr(severity, "value", severity))]


def plural(count: int, word: str) -> str:
    """``"1 warning"``, ``"2 warnings"``, ``"1,234 tensors"``: a count and its noun, agreeing."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def human_bytes(n: int) -> str:
    """A size in decimal units, as safetensors, the Hugging Face hub and ``--max-shard-size``
    write them: ``512 B``, ``1.2 kB``, ``3.4 MB``, ``16.1 GB``, ``1.0 TB``."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} B"  # pragma: no cover - unreachable
