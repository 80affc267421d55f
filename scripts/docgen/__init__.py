"""The docs generator behind `python scripts/generate.py --only docs`.

Writes, from the catalog, the exported schemas, the rule registry and the command line:

* ``docs/reference/``: an index of format versions, one page per version and per type
  (every field with type, default, constraints, description and the versions it exists
  in), the field x version matrix, the consumer-defaults table and the CLI reference;
* ``docs/rules/``: one page per rule id from its page text
  (``spec_format/rules/docs/ID.md``), docstring and metadata, and an index;
* ``generated/docs/snippets/``: real command output that the hand-written guide includes
  (``--8<-- "name.txt"``), so examples in the guide are what the CLI prints today;
* ``docs/diagrams/``: SVG pictures drawn from the registry, the tensor contracts and the
  catalog (``docgen.diagrams``);
* ``generated/docs/nav.yml``: the site navigation (``mkdocs.yml`` inherits it), so new
  versions, types and rules appear without editing anything by hand;
* the marked values inside hand-written pages (``README.md``, ``schema/readers/README.md``,
  the guide): the covered releases and their counts (``docgen.sections``).

Like ruff's docs generator it also *checks* what it documents, and stops with a list of
problems instead of writing pages that lie:

* rule metadata names only known types and format versions;
* JSON examples in rule page texts parse, and their keys are fields some format version
  defines (a failing example may also use keys its own text names);
* every ``specfmt ...`` command line in the hand-written pages and in rule page texts names
  a command and options that exist. Commands that this build does not have yet (their
  work has not landed) are listed in ``PENDING_COMMANDS`` and skipped; once they exist
  they are checked like the rest.
"""

from __future__ import annotations

from pathlib import Path

from docgen.checks import check_cli_mentions, check_rules
from docgen.cli_output import snippets
from docgen.cli_reference import cli_page
from docgen.diagrams import all_diagrams
from docgen.nav import nav
from docgen.reference import (
    consumer_defaults,
    fields_matrix,
    reference_index,
    type_page,
    version_page,
)
from docgen.rules import rule_page, rules_index
from docgen.schema_walk import Catalogue, DocsError
from docgen.sections import sections
from docgen.serving import serving_docs
from spec_format.facts import catalog
from spec_format.rules import registry

__all__ = ["Catalogue", "DocsError", "check_cli_mentions", "check_rules", "generate"]


def generate(root: Path) -> dict[str, str]:
    cat = Catalogue.build()
    problems = check_rules(cat) + check_cli_mentions(root)
    if problems:
        raise DocsError(problems)
    out: dict[str, str] = {
        "docs/reference/index.md": reference_index(cat),
        "docs/reference/fields.md": fields_matrix(cat),
        "docs/reference/consumer-defaults.md": consumer_defaults(cat),
    }
    out["docs/reference/cli.md"] = cli_page()
    for version, entry in catalog.versions().items():
        out[f"docs/reference/{version}/index.md"] = version_page(cat, version)
        for t in entry.types:
            out[f"docs/reference/{version}/{t}.md"] = type_page(cat, version, t)
    out["docs/rules/index.md"] = rules_index()
    for rule in registry.RULES:
        out[f"docs/rules/{rule.id}.md"] = rule_page(root, rule)
    out.update(snippets(root))
    out.update(all_diagrams())
    out.update(serving_docs(root))
    out["generated/docs/nav.yml"] = nav(root, cat)
    out.update(sections(root))  # the covered releases inside hand-written pages
    return out
