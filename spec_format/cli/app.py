"""The ``specfmt`` typer application: one thin module per command, registered here."""

from __future__ import annotations

import enum
import inspect
import re
import sys
import typing

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


def reflow(text: str) -> str:
    """A docstring's paragraphs, each on one line: the help screen wraps them to the
    terminal, so the source's hard line breaks must not reach it."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _literal_help_everywhere(typer_app: typer.Typer) -> None:
    """Help text is plain text: escape it in every command, option and group (once, here,
    instead of at each ``help=``)."""
    if typer_app.info.help:
        typer_app.info.help = literal_help(typer_app.info.help)
    for command in typer_app.registered_commands:
        doc = command.help or inspect.getdoc(command.callback)
        if doc:
            command.help = literal_help(reflow(doc))
        hints = typing.get_type_hints(command.callback)
        for name, param in inspect.signature(command.callback).parameters.items():
            info = param.default
            kind = hints.get(name)
            if (
                isinstance(info, typer.models.OptionInfo)
                and not info.metavar
                and isinstance(kind, type)
                and issubclass(kind, enum.Enum)
            ):  # <a|b|c> would be split inside a word in a narrow column: name it, list them
                long = [d for d in (info.param_decls or ()) if d.startswith("--")]
                info.metavar = (long[0][2:] if long else name).upper().replace("-", "_")
                values = [str(c.value) for c in kind]
                if not all(v in (info.help or "") for v in values):
                    info.help = f"{(info.help or '').rstrip('.')}: {', '.join(values)}."
            if isinstance(info, typer.models.ArgumentInfo) and not info.metavar:
                many = str(param.annotation).startswith(("list", "List"))
                info.metavar = name.upper() + ("..." if many else "")  # not {paths}...
            if isinstance(info, typer.models.ParameterInfo) and info.help:
                info.help = literal_help(reflow(info.help))
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _literal_help_everywhere(group.typer_instance)


_literal_help_everywhere(app)


def _plain_usage_metavar() -> None:
    """typer writes a required argument as ``{PATHS}`` in the usage line; the usage of every
    other tool (and specfmt's docs) reads ``PATHS``."""
    from typer.core import TyperArgument

    make = TyperArgument.make_metavar

    def make_metavar(self, ctx, *, usage: bool = False) -> str:
        var = make(self, ctx, usage=usage)
        return var[1:-1] if usage and var.startswith("{") and var.endswith("}") else var

    TyperArgument.make_metavar = make_metavar


_plain_usage_metavar()


def main() -> None:
    from spec_format.cli.common import PipeSafeStdout

    for stream in (sys.stdout, sys.stderr):  # a message never fails on an odd character
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    sys.stdout = PipeSafeStdout(sys.stdout)  # `specfmt ... | head`: not an error
    app()
