"""Where specfmt's documentation lives, for links printed by renderers and tools.

The docs site (``mkdocs build``) has one page per rule id at ``rules/<ID>/``, but no address
serves it yet, so there is nothing to link to: ``DOCS_URL`` is None and the SARIF renderer
carries each rule's whole explanation as ``help`` text instead of a ``helpUri`` (the same
text `specfmt explain <ID>` prints). Set ``DOCS_URL`` once the site is published.
"""

from __future__ import annotations

DOCS_URL: str | None = None


def rule_doc_url(rule_id: str) -> str | None:
    """The documentation page of one rule id, when the docs are published somewhere."""
    return f"{DOCS_URL}rules/{rule_id}/" if DOCS_URL else None
