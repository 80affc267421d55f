"""Where specfmt's documentation lives, for links printed by renderers and tools.

The docs site (``mkdocs.yml`` ``site_url``) publishes one page per rule id at
``rules/<ID>/``; the SARIF renderer's ``helpUri`` points there.
"""

from __future__ import annotations

DOCS_URL = "https://specfmt.dev/docs/"


def rule_doc_url(rule_id: str) -> str:
    """The documentation page of one rule id."""
    return f"{DOCS_URL}rules/{rule_id}/"
