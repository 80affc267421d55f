"""The ``specfmt`` typer application: one thin module per command, registered here."""

from __future__ import annotations

import enum
import importlib
import inspect
import os
import re
import sys
import typing
from collections.abc import Iterator, MutableMapping
from functools import cache

import typer
from typer.core import TyperCommand, TyperGroup

from spec_format import __version__
from spec_format.cli.plainhelp import PlainWhenPiped

#: command name -> (module of spec_format.cli, attribute): a command function, or a Typer
#: app for a group. Listed in help order; a module is imported only when its command is
#: looked up (running it, its --help, the top-level --help or completion), so
#: ``specfmt validate`` never imports what ``convert`` or ``forward`` need.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate_cmd", "validate_command"),
    "rules": ("rules_cmd", "rules_command"),
    "explain": ("rules_cmd", "explain_command"),
    "migrate": ("migrate_cmd", "migrate_command"),
    "fix": ("fix_cmd", "fix_command"),
    "history": ("history_cmd", "history_command"),
    "forward": ("forward_cmd", "forward_command"),
    "inspect": ("inspect_cmd", "inspect_command"),
    "serving": ("serving_cmd", "serving_command"),
    "convert": ("convert_cmd", "convert_command"),
    "schema": ("schema_cmd", "schema_app"),
}


class _LazyCommands(MutableMapping):
    """The click group's ``commands``: names known up front, each command built on first
    access (``name in commands`` and iterating the names import nothing)."""

    def __init__(self) -> None:
        self._extra: dict = {}

    def __getitem__(self, name: str):
        if name in self._extra:
            return self._extra[name]
        if name not in COMMANDS:
            raise KeyError(name)
        return _click_command(name)

    def __setitem__(self, name: str, command) -> None:
        self._extra[name] = command

    def __delitem__(self, name: str) -> None:
        del self._extra[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (n for n in self._extra if n not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(1 for n in self._extra if n not in COMMANDS)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._extra


class _Command(PlainWhenPiped, TyperCommand):
    """A command whose help is plain text when piped."""


class _Group(PlainWhenPiped, TyperGroup):
    """A group (``schema``) whose help is plain text when piped."""


class _LazyGroup(PlainWhenPiped, TyperGroup):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
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
        _literal_help_everywhere(target)
        info = typer.models.TyperInfo(target, name=name, cls=_Group)
        group = typer.main.get_group_from_info(
            info, suggest_commands=app.suggest_commands, **kwargs
        )
        for command in group.commands.values():
            _one_metavar_style(command)
        return group
    info = typer.models.CommandInfo(name=name, callback=target, cls=_Command)
    _literal_help_command(info)
    return _one_metavar_style(typer.main.get_command_from_info(info, **kwargs))


class _NoTypeColumn:
    """Mixed into an argument's click type: rich help shows the argument's name (``SRC``),
    not its type beside it (``<path>``)."""

    def get_metavar(self, param, ctx=None):
        return ""


def _one_metavar_style(command):
    """Every value in help written one way, in capitals: an option without a metavar of its
    own is named by its type (``PATH``, ``TEXT``, ``INTEGER``, ``FLOAT``; typer's rich help
    wrote ``<path>``, ``<str>``), and an argument shows only its name."""
    import copy

    for param in command.params:
        if isinstance(param, typer.core.TyperArgument):
            kind = type(param.type)
            param.type = copy.copy(param.type)
            param.type.__class__ = type(f"Named{kind.__name__}", (_NoTypeColumn, kind), {})
        elif not param.is_flag and param.metavar is None and not param.count:
            param.metavar = param.type.name.upper()
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


#: what rich takes for a markup tag: ``[`` then a lowercase letter, ``#``, ``/`` or ``@``
_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def literal_help(text: str) -> str:
    """Help text with every ``[...]`` rich would read as markup escaped, so ``[@REV]`` and
    ``'.[forward]'`` reach the screen as written."""
    return _TAG.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def reflow(text: str) -> str:
    """A docstring's paragraphs, each on one line: the help screen wraps them to the
    terminal, so the source's hard line breaks must not reach it."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _literal_help_command(command: typer.models.CommandInfo) -> None:
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


def _literal_help_everywhere(typer_app: typer.Typer) -> None:
    """Help text is plain text: escape it in every command, option and group (once, here,
    instead of at each ``help=``)."""
    if typer_app.info.help:
        typer_app.info.help = literal_help(typer_app.info.help)
    for command in typer_app.registered_commands:
        _literal_help_command(command)
        command.cls = _Command if command.cls in (None, TyperCommand) else command.cls
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
    # specfmt never multiplies matrices with numpy (the weight scan is elementwise), but
    # importing numpy starts OpenBLAS's thread pool, one thread per core: ~25% of the import
    # on 2 cores, more on a large machine. A user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from spec_format.cli.common import ClosedStderr, ClosedStdout, PipeSafeStdout

    if sys.stdout is None:  # started with standard output closed (`>&-`)
        sys.stdout = ClosedStdout()
    if sys.stderr is None:  # standard error closed (`2>&-`): messages are dropped
        sys.stderr = ClosedStderr()
    for stream in (sys.stdout, sys.stderr):  # a message never fails on an odd character
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    sys.stdout = PipeSafeStdout(sys.stdout)  # `specfmt ... | head`: not an error
    from spec_format.base.oserror import StreamFailure
    from spec_format.cli.common import flush_stdout
    from spec_format.cli.plainhelp import run

    try:  # --help and --version write outside any command's error handling
        try:
            code = run(app)
        finally:
            flush_stdout()
        failure = getattr(sys.stdout, "failure", None)
        if failure is not None and code != failure.exit_code:  # not reported yet: the code
            raise failure  # that wrote went on (click's --help)
    except StreamFailure as exc:
        sys.stderr.write(f"specfmt: {exc}\n")
        sys.exit(3)
    sys.exit(code)
