"""The ``specfmt`` typer application: one thin module per command, registered here."""

from __future__ import annotations

import inspect
import re
import sys

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
    help="Schemas, validation and migration for speculators-format draft checkpoints.\n\n"
    # the extras of pyproject.toml (tests/test_docs.py checks that every one is named here)
    "Extras add the packages of one group of features (installing: README, docs Install): "
    "deep (numpy) for validate --deep and --scan-weights and inspect --token-freq; "
    "forward (torch) for specfmt forward; remote (huggingface_hub) for hf:// inputs; "
    "plot (matplotlib) for inspect --plot; dev for the tests, code generation and the docs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"specfmt {__version__}\n")
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

#: what rich takes for a markup tag: ``[`` then a lowercase letter, ``#``, ``/`` or ``@``
_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def literal_help(text: str) -> str:
    """Help text with every ``[...]`` rich would read as markup escaped, so ``[@REV]`` and
    ``'specfmt[forward]'`` reach the screen as written."""
    return _TAG.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def _literal_help_everywhere(typer_app: typer.Typer) -> None:
    """Help text is plain text: escape it in every command, option and group (once, here,
    instead of at each ``help=``)."""
    if typer_app.info.help:
        typer_app.info.help = literal_help(typer_app.info.help)
    for command in typer_app.registered_commands:
        doc = command.help or inspect.getdoc(command.callback)
        if doc:
            command.help = literal_help(doc)
        for param in inspect.signature(command.callback).parameters.values():
            info = param.default
            if isinstance(info, typer.models.ParameterInfo) and info.help:
                info.help = literal_help(info.help)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _literal_help_everywhere(group.typer_instance)


_literal_help_everywhere(app)


def main() -> None:
    from spec_format.cli.common import ClosedStdout, PipeSafeStdout

    if sys.stdout is None:  # started with standard output closed (`>&-`)
        sys.stdout = ClosedStdout()
    for stream in (sys.stdout, sys.stderr):  # a message never fails on an odd character
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    sys.stdout = PipeSafeStdout(sys.stdout)  # `specfmt ... | head`: not an error
    from spec_format.cli.common import flush_stdout
    from spec_format.oserror import StreamFailure

    try:  # --help and --version write outside any command's error handling
        try:
            app()
        finally:
            flush_stdout()
    except StreamFailure as exc:
        sys.stderr.write(f"specfmt: {exc}\n")
        sys.exit(3)
