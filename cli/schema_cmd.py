"""``specfmt schema``: export, show and wire up the bundled JSON Schemas."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from spec_format.base.streams import stdout
from spec_format.cli.common import handle_errors
from spec_format.facts import catalog, export, versions

schema_app = typer.Typer(
    name="schema",
    help="Export the JSON Schemas (self-contained, 2020-12 or draft-07), print one, or set up "
    "an editor.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)

#: ``--version``, the name ``--format-version`` had before every command spelled it the same
_OLD_VERSION = typer.Option(None, "--version", hidden=True)

_VERSION_HELP = "Format version (default: every version for export, the newest for the others)."


def _line(*given: str | None) -> str | None:
    """The format line --format-version (or the old --version) names: a UsageError when
    unknown, None when neither is given."""
    text = next((g for g in given if g), None)
    return versions.option_version(text, "--format-version")[0] if text else None


@schema_app.command("export")
@handle_errors
def export_command(
    version: str = typer.Option(None, "--format-version", help=_VERSION_HELP),
    old_version: str = _OLD_VERSION,
    draft: export.Draft = typer.Option(
        export.Draft.D2020_12,
        "--draft",
        help="JSON Schema dialect: 2020-12 (the source) or 07 (draft-07, for editors).",
    ),
    output: Path = typer.Option(
        Path("specfmt-schemas"),
        "--output",
        "-o",
        help="Folder to write into; files go to <folder>/<version>/ (draft-07 under "
        "<version>/draft-07/).",
        file_okay=False,
    ),
    codegen: bool = typer.Option(
        False,
        "--codegen",
        help="Keep oneOf + the OpenAPI discriminator (what code generators turn into tagged "
        "unions) instead of the enum + if/then dispatch validators and editors understand.",
    ),
) -> None:
    """Write one self-contained schema per type and one root schema per format version.

    Every $ref is resolved inside each file, so nothing needs to be fetched; the $id of each
    file is a stable identifier (never fetched; see the publishing guide).
    """
    from spec_format.api import write_schemas

    line = _line(version, old_version)
    chosen = [line] if line else list(catalog.versions())
    files = export.export_all(chosen, drafts=(draft,), codegen=codegen)
    for path in write_schemas(files, output):
        stdout().write(f"{path}\n")


@schema_app.command("show")
@handle_errors
def show_command(
    model_type: str = typer.Argument(
        ...,
        metavar="TYPE",
        help="A speculators_model_type (eagle3, dflash, ...) or 'speculators' "
        "for the version's root schema.",
    ),
    version: str = typer.Option(
        None, "--format-version", help="Format version (default: the newest that has TYPE)."
    ),
    old_version: str = _OLD_VERSION,
    draft: export.Draft = typer.Option(
        export.Draft.D2020_12, "--draft", help="JSON Schema dialect: 2020-12 or 07."
    ),
) -> None:
    """Print the self-contained schema of one type (or the root schema)."""
    stdout().write(export.dumps(export.shown(model_type, _line(version, old_version), draft)))


@schema_app.command("vscode")
@handle_errors
def vscode_command(
    version: str = typer.Option(
        None, "--format-version", help="Format version (default: the newest)."
    ),
    old_version: str = _OLD_VERSION,
    schema_dir: Path = typer.Option(
        Path(".vscode/specfmt"),
        "--schema-dir",
        help="Folder (relative to the workspace) to write the draft-07 root schema into; the "
        "settings point at that file, so the editor needs no network.",
        file_okay=False,
    ),
    url: str = typer.Option(
        None,
        "--url",
        help="Point the settings at this address instead, where you publish the draft-07 root "
        "schema (see the publishing guide); writes nothing.",
    ),
    match: list[str] = typer.Option(
        None,
        "--match",
        help="Path glob of draft config.json files (repeatable); replaces the default globs.",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Write the editor variant: unknown keys (typos such as norm_before_residul, "
        "C014) at the top level and in speculators_config, its verifier and proposal methods "
        "are flagged as warnings with the known keys listed. Readers accept unknown keys; "
        "this variant is for editors only.",
    ),
) -> None:
    """Write the schema into the workspace and print a VS Code settings snippet for it.

    config.json is too common a name to match alone (every Hugging Face model has one), so
    the snippet matches paths: directories named after a draft type or 'speculator'. Paste it
    into .vscode/settings.json and adjust the globs to your layout.
    """
    from spec_format.api import vscode_workspace

    line = _line(version, old_version) or catalog.latest_version()
    written, settings = vscode_workspace(
        line, schema_dir, url=url, match=match or (), strict=strict
    )
    if written is not None:
        typer.echo(f"wrote {written}", err=True)
    json.dump(settings, stdout(), indent=2)
    stdout().write("\n")
