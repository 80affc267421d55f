"""The ``specfmt`` typer application: one thin module per command, registered here."""

from __future__ import annotations

import importlib
import os
import sys
from collections import UserDict
from collections.abc import Iterator
from functools import cache

import typer
from typer.core import TyperCommand, TyperGroup

from spec_format import __version__
from spec_format.render.help import PlainWhenPiped, literal_help, plain_help, run_program

#: command name -> (module of spec_format.cli, attribute): a command function, or a Typer
#: app for a group. Listed in help order; a module is imported only when its command is
#: looked up (running it, its --help, the top-level --help or completion), so
#: ``specfmt validate`` never imports what ``convert`` or ``forward`` need.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate_cmd", "validate_command"),
    "rules": ("rules_cmd", "rules_command"),
    "explain": ("rules_cmd", "explain_command"),
    "migrate": ("rewrite_cmd", "migrate_command"),
    "fix": ("rewrite_cmd", "fix_command"),
    "history": ("history_cmd", "history_command"),
    "forward": ("forward_cmd", "forward_command"),
    "inspect": ("inspect_cmd", "inspect_command"),
    "serving": ("serving_cmd", "serving_command"),
    "convert": ("convert_cmd", "convert_command"),
    "schema": ("schema_cmd", "schema_app"),
}


class _LazyCommands(UserDict):
    """The click group's ``commands``: names known up front, each command built on first
    access (``name in commands`` and iterating the names import nothing)."""

    def __missing__(self, name: str):
        if name not in COMMANDS:
            raise KeyError(name)
        return _click_command(name)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self.data

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(COMMANDS), **self.data})

    def __len__(self) -> int:
        return len({**dict.fromkeys(COMMANDS), **self.data})


class _Command(PlainWhenPiped, TyperCommand):
    """A command whose help is plain text when piped."""


class _Group(PlainWhenPiped, TyperGroup):
    """A group (``schema``) whose help is plain text when piped."""


class _LazyGroup(PlainWhenPiped, TyperGroup):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.help = literal_help(self.help or "")
        self.commands = _LazyCommands()


@cache
def _click_command(name: str):
    """The click command of ``COMMANDS[name]``, its help escaped (see literal_help); built
    once per process."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(f"spec_format.cli.{module}"), attribute)
    kwargs = {
        "pretty_exceptions_short": app.pretty_exceptions_short,
        "rich_markup_mode": app.rich_markup_mode,
    }
    if isinstance(target, typer.Typer):
        for command in target.registered_commands:
            command.cls = _Command if command.cls in (None, TyperCommand) else command.cls
        info = typer.models.TyperInfo(target, name=name, cls=_Group)
        group = typer.main.get_group_from_info(
            info, suggest_commands=app.suggest_commands, **kwargs
        )
        group.help = literal_help(group.help or "")
        for command in group.commands.values():
            plain_help(command)
        return group
    info = typer.models.CommandInfo(name=name, callback=target, cls=_Command)
    command = typer.main.get_command_from_info(info, **kwargs)
    plain_help(command)
    return command


app = typer.Typer(
    name="specfmt",
    help="Schemas, validation and migration for speculators-format draft checkpoints.\n\n"
    # the extras of pyproject.toml (tests/test_docs.py checks that every one is named here)
    "Extras add the packages of one group of features (installing: README, docs Install): "
    "deep (numpy) for validate --deep and --scan-weights and inspect --token-freq; "
    "forward (torch) for specfmt forward; remote (huggingface_hub) for hf:// inputs; "
    "plot (matplotlib) for inspect --plot; dev for the tests, code generation and the docs.",
    cls=_LazyGroup,
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


def main() -> None:
    # specfmt never multiplies matrices with numpy (the weight scan is elementwise), but
    # importing numpy starts OpenBLAS's thread pool, one thread per core: ~25% of the import
    # on 2 cores, more on a large machine. A user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from spec_format.base.oserror import StreamFailure
    from spec_format.base.streams import flush_stdout, guard_standard_streams

    guard_standard_streams()

    try:  # --help and --version write outside any command's error handling
        try:
            code = run_program(
                lambda: app(standalone_mode=False, prog_name="specfmt"),
                lambda: typer.main.get_command(app),
            )
        finally:
            flush_stdout()
        failure = getattr(sys.stdout, "failure", None)
        if failure is not None and code != failure.exit_code:  # not reported yet: the code
            raise failure  # that wrote went on (click's --help)
    except StreamFailure as exc:
        sys.stderr.write(f"specfmt: {exc}\n")
        sys.exit(3)
    sys.exit(code)
