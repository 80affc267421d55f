"""The CLI reference page, written as Markdown from the click command objects typer builds:
per command its help text, a usage line, an arguments table and an options table.

typer bundles its own copy of click, so commands and parameters are told apart by what they
have (``commands``, ``param_type_name``), not by the classes of an installed click."""

from __future__ import annotations

import enum
import re
from typing import Any

from docgen.checks import _commands
from docgen.schema_walk import BANNER, _cell
from spec_format.base.errors import EXIT_MEANINGS

Command = Parameter = Any  # typer's bundled click classes

#: the exit-code table's meanings (base.errors.EXIT_MEANINGS; README.md has them in full)
EXIT_CODES = (
    "Exit codes are shared: " + ", ".join(f"{m.code} {m.meaning}" for m in EXIT_MEANINGS) + "."
)
_TYPE_NAMES = {"str": "text", "int": "integer", "float": "number", "path": "path"}


def _is_option(param: Parameter) -> bool:
    return param.param_type_name == "option"


def _is_argument(param: Parameter) -> bool:
    return param.param_type_name == "argument"


def _is_group(command: Command) -> bool:
    return hasattr(command, "commands")


def _plain(text: str, command: Command) -> str:
    """What the terminal shows of a help text: Rich markup rendered to plain text when the
    command uses it (as typer does), paragraphs kept, lines of a paragraph joined."""
    if getattr(command, "rich_markup_mode", None) == "rich":
        from rich.markup import render

        text = render(text).plain
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _md(text: str) -> str:
    """Markdown-safe prose: HTML and emphasis characters escaped outside `code` spans."""
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"([\\*_<>\[\]])", r"\\\1", parts[i]).replace("&", "&amp;")
    return "".join(parts)


def _default(param: Parameter) -> str:
    value = param.default
    if callable(value) or value is None or value == () or value == []:
        return ""
    if getattr(param, "is_flag", False) and value is False:
        return ""
    if not getattr(param, "show_default", True) and not getattr(param, "is_flag", False):
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        value = "on" if value else "off"
    return f"`{value}`"


def _type(param: Parameter) -> str:
    if getattr(param, "is_flag", False):
        text = "flag"
    elif hasattr(param.type, "choices"):
        text = " · ".join(f"`{c}`" for c in param.type.choices)
    elif getattr(param, "metavar", None):
        text = f"`{param.metavar}`"
    else:
        text = _TYPE_NAMES.get(param.type.name, param.type.name)
    if getattr(param, "multiple", False):
        text += ", repeatable"
    return text


def _usage(path: list[str], command: Command) -> str:
    pieces = [*path]
    if any(_is_option(p) for p in command.params):
        pieces.append("[OPTIONS]")
    for p in command.params:
        if _is_argument(p):
            name = (p.name or "").upper() + ("..." if p.nargs == -1 else "")
            pieces.append(name if p.required else f"[{name}]")
    if _is_group(command):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def _help(param: Any, command: Command) -> str:
    return _md(_plain(getattr(param, "help", None) or "", command))


def _command_section(path: list[str], command: Command) -> list[str]:
    title = " ".join(path)
    lines = ["", f"## {title}", ""]
    if command.help:
        lines += [_md(_plain(command.help, command)), ""]
    lines += ["```text", _usage(path, command), "```"]
    arguments = [p for p in command.params if _is_argument(p)]
    options = [p for p in command.params if _is_option(p) and not p.hidden]
    if arguments:
        lines += ["", "| Argument | Type | Description |", "|---|---|---|"]
        for p in arguments:
            name = (p.name or "").upper() + ("..." if p.nargs == -1 else "")
            kind = _type(p) + (", required" if p.required else "")
            lines.append(f"| `{name}` | {kind} | {_cell(_help(p, command))} |")
    if options:
        lines += ["", '<div class="cli-options" markdown>', ""]  # option names never split
        lines += ["| Option | Type | Default | Description |", "|---|---|---|---|"]
        for p in options:
            names = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
            lines.append(f"| {names} | {_type(p)} | {_default(p)} | {_cell(_help(p, command))} |")
        lines += ["", "</div>"]
    if _is_group(command):
        lines += ["", "| Command | What it does |", "|---|---|"]
        for name, sub in command.commands.items():
            anchor = "-".join([*path, name])
            summary = _md(_plain(sub.get_short_help_str(limit=300), sub))
            lines.append(f"| [`{name}`](#{anchor}) | {_cell(summary)} |")
    return lines


def cli_page() -> str:
    lines = [
        BANNER.format(source="the specfmt command line (the click commands typer builds)"),
        "# Command line",
        "",
        "Every command with its arguments and options; `specfmt COMMAND --help` prints the "
        f"same in the terminal. {EXIT_CODES}",
    ]

    def visit(command: Command, path: list[str]) -> None:
        lines.extend(_command_section(path, command))
        if _is_group(command):
            for name, sub in command.commands.items():
                visit(sub, [*path, name])

    visit(_commands(), ["specfmt"])
    return "\n".join(lines) + "\n"
