"""The ``specfmt`` typer application: one thin module per command, registered here."""

from __future__ import annotations

import typer

from spec_format import __version__
from spec_format.cli.convert_cmd import convert_command
from spec_format.cli.fix_cmd import fix_command
from spec_format.cli.forward_cmd import forward_command
from spec_format.cli.history_cmd import history_command
from spec_format.cli.inspect_cmd import inspect_command
from spec_format.cli.migrate_cmd import migrate_command
from spec_format.cli.rules_cmd import explain_command, rules_command
from spec_format.cli.schema_cmd import schema_app
from spec_format.cli.validate_cmd import validate_command

app = typer.Typer(
    name="specfmt",
    help="Schemas, validation and migration for speculators-format draft checkpoints.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"specfmt {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """specfmt: the reference tool for speculative-decoding draft checkpoints."""


app.command("validate")(validate_command)
app.command("rules")(rules_command)
app.command("explain")(explain_command)
app.command("migrate")(migrate_command)
app.command("fix")(fix_command)
app.command("history")(history_command)
app.command("forward")(forward_command)
app.command("inspect")(inspect_command)
app.command("convert")(convert_command)
app.add_typer(schema_app, name="schema")


def main() -> None:
    import sys

    for stream in (sys.stdout, sys.stderr):  # a message never fails on an odd character
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        app()
    except BrokenPipeError:
        # the reader of our output went away (`specfmt ... | head`): not an error
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)
