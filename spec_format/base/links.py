"""Where specfmt's documentation lives, for links printed by renderers and tools.

The docs site (``mkdocs build``) has one page per rule id at ``rules/<ID>/``. No public
address serves it yet, so the project sets none here (``DOCS_URL`` is None); whoever serves
the site (the project once it is published, or a team that builds it for its own CI) names
its address with the ``SPECFMT_DOCS_URL`` environment variable, and from then on the SARIF
renderer links every rule to its page (``helpUri``) as well as carrying its whole explanation
as ``help`` text (the text `specfmt explain <ID>` prints), which it always does. A link that
leads nowhere is worse than none, so no address is guessed.
"""

from __future__ import annotations

import os

#: the project's own published address, once there is one (then the default of every run)
DOCS_URL: str | None = None
#: the environment variable that names where the docs site is served
DOCS_URL_VARIABLE = "SPECFMT_DOCS_URL"


def docs_url() -> str | None:
    """The docs site's address, ending in ``/``: ``SPECFMT_DOCS_URL``, else :data:`DOCS_URL`."""
    url = os.environ.get(DOCS_URL_VARIABLE, "").strip() or DOCS_URL
    if not url:
        return None
    return url if url.endswith("/") else f"{url}/"


def rule_doc_url(rule_id: str) -> str | None:
    """The documentation page of one rule id, when the docs are served somewhere."""
    url = docs_url()
    return f"{url}rules/{rule_id}/" if url else None
