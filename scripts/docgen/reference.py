"""Reference pages: versions, types (every field), the field x version matrix and the
consumer-defaults table."""

from __future__ import annotations

import html
import re
from typing import Any

from docgen.diagrams import FLOWS
from docgen.engines import group_lines
from docgen.nav import type_title
from docgen.schema_walk import (
    BANNER,
    MISSING,
    Catalogue,
    FieldDoc,
    _cell,
    _json,
    _minor,
    catalog_versions,
    constraints_text,
    ranges,
    type_text,
)
from spec_format.facts import catalog, export, schemas

#: front matter for pages of wide tables: the table of contents would take the width the
#: columns need (at 1280 px the tables then fit without scrolling)
HIDE_TOC = "---\nhide:\n  - toc\n---\n"


def _since_cell(cat: Catalogue, model_type: str, path: str, version: str) -> str:
    present = cat.field_versions(model_type, path)
    universe = cat.versions_of(model_type)
    text = ranges(present, universe)
    return text if text != ranges(universe, universe) else f"{text} (all)"


def _default_cell(fd: FieldDoc) -> str:
    if fd.required:
        return "required" if fd.default is MISSING else f"required (`{_json(fd.default)}`)"
    return "—" if fd.default is MISSING else f"`{_json(fd.default)}`"


def _obj_anchor(title: str) -> str:
    return "obj-" + re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _type_cell(doc: dict[str, Any], fd: FieldDoc) -> str:
    text = _cell(type_text(doc, fd.node))
    for branch in fd.objects:
        title = branch.get("title")
        if title:
            text = text.replace(f"({title})", f"([{title}](#{_obj_anchor(title)}))", 1)
    return text


def _extras(fd: FieldDoc) -> str:
    """Nothing about readers here: what each reader release makes of a field is the reader
    table's (the consumer-defaults page)."""
    return ""


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return _json(v)
    return str(v)


def type_page(cat: Catalogue, version: str, model_type: str) -> str:
    doc = cat.bundles[(version, model_type)]
    fields = cat.fields[(version, model_type)]
    universe = cat.versions_of(model_type)
    name = f"{model_type}{schemas.SCHEMA_SUFFIX}"
    lines = [
        HIDE_TOC,
        BANNER.format(source=f"schema/{version}/{name}"),
        f"# {model_type} (format {version})",
        "",
        doc.get("description", ""),
        "",
        "| Property | Value |",
        "|---|---|",
        f"| Schema `$id` | `{doc['$id']}` (draft-07: `{export.draft07_uri(version, name)}`) |",
        f"| Model / TypeScript name | `{doc.get('title', '')}` |",
        f"| In format versions | {ranges(universe, catalog_versions())} |",
        f"| Required keys | {', '.join(f'`{r}`' for r in doc.get('required', [])) or 'none'} |",
        f"| Unknown keys | {'kept (allowed)' if doc.get('additionalProperties', True) is not False else 'rejected'} |",
        "",
    ]
    if model_type in FLOWS:
        lines += [
            "## Data flow",
            "",
            f"![Data flow of a {type_title(model_type)} draft, with the tensors of its tensor "
            f"contract](../../diagrams/{model_type}-dataflow.svg){{ .diagram }}",
            "",
        ]
    lines += [
        "## Fields",
        "",
        "Defaults are what speculators writes and reads; where other readers assume something "
        "else, the description says so (see [consumer defaults](../consumer-defaults.md)). "
        "*In versions* lists the format versions whose schema of this type has the field.",
        "",
    ]
    lines += _field_table(cat, doc, model_type, [f for f in fields if not f.parent_title], version)
    previous = [v for v in universe if _minor(v) < _minor(version)]
    if previous:
        current = {f.path for f in fields}
        gone: dict[str, str] = {}
        for v in previous:
            for f in cat.fields[(v, model_type)]:
                if f.path not in current:
                    gone[f.path] = v
        if gone:
            lines += [
                "",
                "## Removed fields",
                "",
                "In older format versions of this type, not in this one (`specfmt migrate` drops "
                "or renames them).",
                "",
                "| Field | In versions |",
                "|---|---|",
            ]
            for path in sorted(gone):
                lines.append(
                    f"| `{path}` | {ranges(cat.field_versions(model_type, path), universe)} |"
                )
    seen: set[str] = set()
    for fd in fields:
        for branch in fd.objects:
            title = branch.get("title", fd.path)
            if title in seen:
                continue
            seen.add(title)
            children = [f for f in fields if f.parent_title == title]
            # the same object reached through several keys: document it once
            first_parent = children[0].path.rsplit(".", 1)[0] if children else fd.path
            children = [f for f in children if f.path.rsplit(".", 1)[0] == first_parent]
            lines += [
                "",
                f"## {title} {{#{_obj_anchor(title)}}}",
                "",
                f"The object at `{first_parent}`. {branch.get('description', '')}".rstrip(),
                "",
            ]
            lines += _field_table(
                cat, doc, model_type, children, version, prefix=first_parent + "."
            )
    return "\n".join(lines) + "\n"


def _field_table(
    cat: Catalogue,
    doc: dict[str, Any],
    model_type: str,
    fields: list[FieldDoc],
    version: str,
    prefix: str = "",
) -> list[str]:
    lines = [
        '<div class="field-table" markdown>',  # stacked rows where the column is narrow
        "",
        "| Field | Type | Default | Constraints | In versions | Description |",
        "|---|---|---|---|---|---|",
    ]
    for fd in fields:
        lines.append(
            "| "
            + " | ".join(
                [
                    f"`{fd.name}`",
                    _type_cell(doc, fd),
                    _default_cell(fd),
                    _cell(constraints_text(fd.node)),
                    _since_cell(cat, model_type, fd.path, version),
                    _cell(fd.node.get("description", "") + _extras(fd)),
                ]
            )
            + " |"
        )
    return [*lines, "", "</div>"]


def version_page(cat: Catalogue, version: str) -> str:
    entry = catalog.version_entry(version)
    versions = catalog_versions()
    index = versions.index(version)
    prev = versions[index - 1] if index else None
    lines = [
        BANNER.format(source=f"schema/catalog.json and schema/{version}/"),
        f"# Format {version}",
        "",
        f"What speculators {entry.release} writes (transformers {entry.transformers} spelling of "
        "shared keys).",
        "",
        "| Type | Model | Description |",
        "|---|---|---|",
    ]
    for t in entry.types:
        doc = cat.bundles[(version, t)]
        summary = doc.get("description", "").split(". ")[0].rstrip(".")
        lines.append(f"| [{t}]({t}.md) | `{doc.get('title', '')}` | {_cell(summary)} |")
    root = export.root_name(version)
    lines += [
        "",
        "## Schemas",
        "",
        "`$id` of the root schema (dispatching on `speculators_model_type` to the type's schema):",
        "",
        f"- 2020-12: `{schemas.schema_uri(version, root + schemas.SCHEMA_SUFFIX)}`",
        f"- draft-07: `{export.draft07_uri(version, root + schemas.SCHEMA_SUFFIX)}`",
        "",
        f"`specfmt schema export --format-version {version}` writes them (see "
        "[schemas for other languages](../../guide/schemas.md)). A `$id` names a schema; "
        "nothing is fetched from it (see [publishing](../../guide/publishing.md)).",
    ]
    if prev:
        lines += ["", f"## Changes from {prev}", ""]
        prev_types = set(catalog.version_entry(prev).types)
        changes = []
        for t in entry.types:
            if t not in prev_types:
                changes.append(f"- new type [{t}]({t}.md)")
                continue
            now = {f.path for f in cat.fields[(version, t)] if not f.parent_title}
            before = {f.path for f in cat.fields[(prev, t)] if not f.parent_title}
            added, removed = sorted(now - before), sorted(before - now)
            if added:
                changes.append(f"- [{t}]({t}.md): added " + ", ".join(f"`{a}`" for a in added))
            if removed:
                changes.append(f"- [{t}]({t}.md): removed " + ", ".join(f"`{r}`" for r in removed))
        for t in sorted(prev_types - set(entry.types)):
            changes.append(f"- type `{t}` is gone")
        lines += changes or ["No top-level field was added or removed."]
    return "\n".join(lines) + "\n"


def reference_index(cat: Catalogue) -> str:
    lines = [
        BANNER.format(source="schema/catalog.json"),
        "# Format reference",
        "",
        "A format version is a speculators release line. Each has its own JSON Schemas, one "
        "per `speculators_model_type`; these pages are generated from them.",
        "",
        "![Which format versions have which type, coloured by family]"
        "(../diagrams/type-timeline.svg){ .diagram }",
        "",
        "| Format | Release | transformers | Types |",
        "|---|---|---|---|",
    ]
    for version, entry in reversed(list(catalog.versions().items())):
        types = ", ".join(f"[{t}]({version}/{t}.md)" for t in entry.types)
        lines.append(
            f"| [{version}]({version}/index.md) | {entry.release} | {entry.transformers} | {types} |"
        )
    retired = catalog.retired_types()
    if retired:
        lines += [
            "",
            "## Retired types",
            "",
            "| Type | Last format | What | Note |",
            "|---|---|---|---|",
        ]
        for name, r in retired.items():
            lines.append(f"| `{name}` | {r.last_version} | {_cell(r.what)} | {_cell(r.note)} |")
    lines += [
        "",
        "## Also",
        "",
        "- [Field × version matrix](fields.md): every field of every type across versions.",
        "- [Consumer defaults](consumer-defaults.md): what each reader assumes when a key is "
        "absent.",
        "- [Command line](cli.md): every command's options.",
        "- [Which vLLM serves a draft](serving.md): the verdict of every covered vLLM release "
        "on the bundled examples (`specfmt serving`).",
    ]
    return "\n".join(lines) + "\n"


def _tree_order(paths: list[str]) -> list[str]:
    """Paths in first-seen order, each nested path right after its parent's subtree."""
    children: dict[str, list[str]] = {}
    roots = []
    for path in paths:
        parent = path.rsplit(".", 1)[0] if "." in path else None
        if parent is not None and parent in paths:
            children.setdefault(parent, []).append(path)
        else:
            roots.append(path)
    out: list[str] = []

    def visit(path: str) -> None:
        out.append(path)
        for child in children.get(path, []):
            visit(child)

    for root in roots:
        visit(root)
    return out


def _matrix_field(path: str, paths: list[str]) -> str:
    """A nested field as its last key, indented under its parent row (the full path in the
    tooltip), so the column stays narrow enough for every version column beside it."""
    parent = path.rsplit(".", 1)[0] if "." in path else None
    if parent is None or parent not in paths:
        return f"`{path}`"
    depth = path.count(".")
    leaf = path.rsplit(".", 1)[1]
    return f'{"&ensp;" * depth}<code title="{path}">.{leaf}</code>'


def _matrix_default(text: str, limit: int = 7) -> str:
    if len(text) <= limit:
        return f"`{_cell(text)}`"
    escaped = html.escape(text, quote=True).replace("|", "&#124;")
    short = html.escape(text[: limit - 1]).replace("|", "&#124;")
    return f'<code title="{escaped}">{short}…</code>'


def fields_matrix(cat: Catalogue) -> str:
    lines = [
        HIDE_TOC,
        BANNER.format(source="schema/"),
        "# Field × version matrix",
        "",
        "For each type: every field against every format version that has the type. Nested "
        "fields are indented under the object that holds them (hover for the dotted path). A "
        "cell shows the schema default (hover for a long one), ✓ for a field without one, "
        "and is empty where the version does not have the field. The version headers link to "
        "the type's page in that version.",
        "",
        "Types: " + ", ".join(f"[{type_title(t)}](#{t})" for t in cat.types()) + ".",
    ]
    for model_type in cat.types():
        versions = cat.versions_of(model_type)
        order: dict[str, None] = {}
        for v in versions:
            for f in cat.fields[(v, model_type)]:
                order.setdefault(f.path, None)
        paths = _tree_order(list(order))
        lines += [
            "",
            f"## {type_title(model_type)} (`{model_type}`) {{#{model_type}}}",
            "",
            '<div class="field-matrix" markdown>',
            "",
        ]
        lines.append(
            "| Field | " + " | ".join(f"[{v}]({v}/{model_type}.md)" for v in versions) + " |"
        )
        lines.append("|---|" + ":-:|" * len(versions))
        for path in paths:
            cells = []
            for v in versions:
                fd = next((f for f in cat.fields[(v, model_type)] if f.path == path), None)
                if fd is None:
                    cells.append("")
                elif fd.default is MISSING:
                    cells.append("✓")
                else:
                    cells.append(_matrix_default(_json(fd.default)))
            lines.append(f"| {_matrix_field(path, paths)} | " + " | ".join(cells) + " |")
        lines += ["", "</div>"]
    return "\n".join(lines) + "\n"


def consumer_defaults(cat: Catalogue) -> str:
    """What every covered reader release reads for each field of each type, from the
    reader table (schema/readers/), which the ``readers`` test group checks against the
    executed releases."""
    from spec_format.facts import catalog, disputes

    releases = disputes.covered()
    lines = [
        BANNER.format(source="the reader table in schema/readers/"),
        "# Consumer defaults",
        "",
        "A config that leaves a key out, or writes `null` or `[]`, relies on its reader, and "
        "readers do not agree. These tables are the reader table (`schema/readers/`): one file "
        "per reader release, every row checked by running that release's own code (vLLM's "
        "config reader from its wheel, each speculators release's config classes) in the "
        "`readers` test group. Rules [C001](../rules/C001.md) (readers act differently), "
        "[C015](../rules/C015.md) and [C016](../rules/C016.md) (a trained flag a release ignores), "
        "[C007](../rules/C007.md), "
        "[C008](../rules/C008.md), [C011](../rules/C011.md), [C012](../rules/C012.md) and "
        "[C013](../rules/C013.md) (what a release refuses), `specfmt fix` and `specfmt migrate` "
        "read the same table.",
        "",
        "Covered releases: " + ", ".join(f"`{r.id}`" for r in releases) + ". To add one, copy "
        "the nearest release's file to `schema/readers/<reader>-<version>.json`, add its "
        "environment recipe (`scripts/reader-envs.sh` for vLLM, `scripts/interop-envs.sh` for "
        "speculators), and run `pytest -m readers tests/readers -k <version>` until every row "
        "passes (`schema/readers/README.md`).",
        "",
        "Cells: what the release acts on when the field is absent (`null`: it treats the field "
        "as unset); `ignored`: it never reads the field; `refuses`: loading fails; `-`: the "
        "release does not serve the type.",
    ]
    lines += group_lines(releases)
    for model_type in catalog.current_types():
        serving = [r for r in releases if r.serves(model_type)]
        names = sorted({n for r in serving for n in r.fields(model_type)})
        if not names:
            continue
        lines += [
            "",
            f"## {model_type}",
            "",
            "| Field | " + " | ".join(f"`{r.id}`" for r in releases) + " |",
            "|---|" + "---|" * len(releases),
        ]
        for name in names:
            cells = []
            for r in releases:
                row = r.row(model_type, name) if r.serves(model_type) else None
                if not r.serves(model_type):
                    cells.append("-")
                elif row is None or row.get("ignored"):
                    cells.append("ignored")
                elif "rejects" in row.get("absent", {}):
                    cells.append("refuses")
                else:
                    value = row.get("absent", {}).get("reads")
                    scope = f" ({row['scope']})" if row.get("scope") else ""
                    cells.append(f"`{_json(value)}`{scope}")
            lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
