"""Help screens and usage errors as plain text, like every other specfmt line (the command
line's help layout; click's classes, which typer carries).

On a terminal typer draws ``--help`` in rich panels. Piped (``specfmt schema vscode --help |
less``, a file, CI logs) those panels are padded to the width with spaces and framed with box
characters, so piped help (and help on a terminal too narrow for panels, see
:data:`PANELS_FROM`) is written by click's own layout instead, through
:class:`PlainHelpFormatter`: wrapped between words at ``COLUMNS`` (80 when unset, as click
does), option names and values never broken, no trailing spaces.

A usage error (an unknown option or command, a missing argument, a bad value) is one
``specfmt:`` line naming the command and the option, with a did-you-mean where a known name
is close and the command that shows the options, and exit code 2; never a panel.
"""

from __future__ import annotations

import copy
import difflib
import functools
import re
import sys
from collections.abc import Callable
from typing import Any

import typer

try:  # typer 0.28 carries its own copy of click; earlier releases use click itself
    from typer import _click as click
except ImportError:  # pragma: no cover - typer before 0.28
    import click  # type: ignore[no-redef]

from spec_format.render.text import terminal_width, wrap

#: what rich takes for a markup tag: ``[`` then a lowercase letter, ``#``, ``/`` or ``@``
_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
#: rich's escape of such a tag (see :func:`literal_help`)
_ESCAPED_TAG = re.compile(r"\\(\[[a-z#/@][^[]*?])")


def literal_help(text: str) -> str:
    """Help text with every ``[...]`` rich would read as markup escaped, so ``[@REV]`` and
    ``'.[forward]'`` reach the screen as written."""
    return _TAG.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def reflow(text: str) -> str:
    """A docstring's paragraphs, each on one line: the help screen wraps them to the
    terminal, so the source's hard line breaks must not reach it."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _plain(text: str) -> str:
    return _ESCAPED_TAG.sub(r"\1", text)


#: narrower than this, panels leave the help column a third of the screen (``fix --help``
#: was 100 lines at 80 columns, 56 in the plain layout): the plain layout is used instead
PANELS_FROM = 100


def rich_help_wanted() -> bool:
    """Panels on a terminal of at least :data:`PANELS_FROM` columns only."""
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and terminal_width(sys.stdout) >= PANELS_FROM


class PlainHelpFormatter(click.formatting.HelpFormatter):
    """click's help layout, wrapped by specfmt's wrapper (breaks only at spaces, a word
    longer than the line stays whole) and written without trailing spaces."""

    def _lines(self, text: str, indent: int, hang: int) -> list[str]:
        lines = wrap([(" " * indent + text, "")], self.width, hang)
        return ["".join(t for t, _ in line).replace("\0", " ").rstrip() for line in lines]

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        prefix = "Usage: " if prefix is None else prefix
        lead = " " * self.current_indent + prefix + prog
        for line in self._lines(f"{lead} {args}".rstrip(), 0, len(lead) + 1):
            self.write(line + "\n")

    def write_text(self, text: str) -> None:
        for paragraph in re.split(r"\n\s*\n", _plain(text).strip()):
            flat = " ".join(paragraph.split())
            for line in self._lines(flat, self.current_indent, self.current_indent):
                self.write(line + "\n")
            self.write("\n")
        if self.buffer and self.buffer[-1] == "\n":
            self.buffer.pop()

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = [(_plain(term), _plain(" ".join((text or "").split()))) for term, text in rows]
        first = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        start = self.current_indent + first
        for term, text in rows:
            head = " " * self.current_indent + term  # (\0: a space no line breaks at)
            if not text:
                self.write(head + "\n")
                continue
            if len(term) + col_spacing <= first:
                line = head.replace(" ", "\0") + "\0" * (first - len(term)) + text
                for part in self._lines(line, 0, start):
                    self.write(part + "\n")
            else:  # a long option name: its help on the next line
                self.write(head + "\n")
                for part in self._lines(text, start, start):
                    self.write(part + "\n")


class PlainWhenPiped:
    """Mixin for typer's command and group classes: rich panels on a terminal, click's
    plain layout (:class:`PlainHelpFormatter`) anywhere else."""

    def format_help(self, ctx: click.Context, formatter: click.formatting.HelpFormatter) -> None:
        if rich_help_wanted():
            return super().format_help(ctx, formatter)  # type: ignore[misc]
        width = terminal_width(sys.stdout)
        plain = PlainHelpFormatter(width=width, max_width=width)
        click.Command.format_help(self, ctx, plain)  # type: ignore[arg-type]
        formatter.write(plain.getvalue())
        return None

    def format_commands(
        self, ctx: click.Context, formatter: click.formatting.HelpFormatter
    ) -> None:
        """The commands with their whole first sentence (click cuts it to fit with
        ``...``, inside a word)."""
        rows = []
        for name in self.list_commands(ctx):  # type: ignore[attr-defined]
            command = self.get_command(ctx, name)  # type: ignore[attr-defined]
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# -- help text of a command ----------------------------------------------------------------


class _NoTypeColumn:
    """Mixed into an argument's click type: rich help shows the argument's name (``SRC``),
    not its type beside it (``<path>``)."""

    def get_metavar(self, param, ctx=None):
        return ""


def _unbraced(make: Any, ctx: click.Context, *, usage: bool = False) -> str:
    """typer writes a required argument as ``{PATHS}`` in the usage line; the usage of every
    other tool (and specfmt's docs) reads ``PATHS``."""
    var = make(ctx, usage=usage)
    return var[1:-1] if usage and var.startswith("{") and var.endswith("}") else var


def plain_help(command: click.Command) -> None:
    """Help text is plain text: escape it (:func:`literal_help`) and reflow it in a command
    and each of its parameters, once, as the command line builds the command, instead of
    at each ``help=``. Every value is written one way, in capitals: an option's enum by the
    option's name, its values in the help (``<a|b|c>`` would be split inside a word in a
    narrow column); any other option's value by its type (``PATH``, ``INTEGER``; typer's
    rich help wrote ``<path>``, ``<str>``); an argument by its name alone (``PATHS...``,
    not ``{paths}...`` or ``SRC <path>``)."""
    if command.help:
        command.help = literal_help(reflow(command.help))
    for param in command.params:
        if param.param_type_name == "argument":
            if not param.metavar:
                param.metavar = param.name.upper() + ("..." if param.nargs == -1 else "")
            param.make_metavar = functools.partial(_unbraced, param.make_metavar)
            kind = type(param.type)
            param.type = copy.copy(param.type)
            param.type.__class__ = type(f"Named{kind.__name__}", (_NoTypeColumn, kind), {})
        elif not param.metavar and hasattr(param.type, "choices"):
            long = [d for d in param.opts if d.startswith("--")]
            param.metavar = (long[0][2:] if long else param.name).upper().replace("-", "_")
            values = [str(getattr(c, "value", c)) for c in param.type.choices]
            if not all(v in (param.help or "") for v in values):
                param.help = f"{(param.help or '').rstrip('.')}: {', '.join(values)}."
        elif not param.is_flag and param.metavar is None and not param.count:
            param.metavar = param.type.name.upper()
        if getattr(param, "help", None):
            param.help = literal_help(reflow(param.help))


# -- usage errors --------------------------------------------------------------------------


def run_program(call: Callable[[], Any], root: Callable[[], click.Command]) -> int:
    """Run the program (``call``: the typer application, not in standalone mode) and return
    its exit code; a usage error is one ``specfmt:`` line (exit 2) instead of click's panel
    (``root``: the top command, to name the commands of an error raised without context)."""
    from spec_format.base.errors import ExitCode
    from spec_format.render.terminal import print_error

    try:
        code = call()
    except click.exceptions.NoArgsIsHelpError as exc:  # `specfmt`, `specfmt schema`
        sys.stdout.write(exc.ctx.get_help() + "\n")
        return ExitCode.USAGE
    except click.exceptions.ClickException as exc:
        print_error(usage_line(exc, command_path(root(), sys.argv[1:])))
        return ExitCode.USAGE if isinstance(exc, click.exceptions.UsageError) else exc.exit_code
    except typer.Abort:
        sys.stderr.write("specfmt: aborted\n")
        return ExitCode.FINDINGS
    return code if isinstance(code, int) else ExitCode.OK


def _options(command: click.Command) -> list[str]:
    return [o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")]


def _close(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


def _param_name(param: click.Parameter | None) -> str:
    if param is None:
        return ""
    if param.param_type_name == "argument":
        return param.human_readable_name
    return "/".join(param.opts)


def command_path(root: click.Command, words: list[str]) -> str:
    """``specfmt schema show``: the commands named among ``words`` (for an error click
    raises without its context, such as an option missing its value)."""
    command, path = root, ["specfmt"]
    for word in words:
        sub = command.commands.get(word) if hasattr(command, "commands") else None
        if sub is None:
            break
        command, path = sub, [*path, word]
    return " ".join(path)


def usage_line(error: click.exceptions.ClickException, fallback: str = "specfmt") -> str:
    """The ``specfmt:`` line (without the label) of a click usage error: where, what, and
    the command that shows what is accepted."""
    ctx: click.Context | None = getattr(error, "ctx", None)
    path = ctx.command_path if ctx is not None else fallback
    where = path.removeprefix("specfmt").strip()
    helped = f"`{path} --help`"
    if isinstance(error, click.exceptions.NoSuchOption):
        known = _options(ctx.command) if ctx is not None else list(error.possibilities or ())
        what = f"no such option {error.option_name}{_close(error.option_name, known)}"
        return f"{where + ': ' if where else ''}{what}; {helped} lists the options"
    if isinstance(error, click.exceptions.MissingParameter):
        name = _param_name(error.param)
        kind = error.param_type or (error.param.param_type_name if error.param else "argument")
        usage = ctx.get_usage().removeprefix("Usage: ") if ctx is not None else path
        return f"{where + ': ' if where else ''}missing {kind} {name}; usage: {usage}"
    if isinstance(error, click.exceptions.BadParameter):
        name = error.param_hint if isinstance(error.param_hint, str) else _param_name(error.param)
        name = name.replace("'", "").replace(" / ", "/") if name else ""
        place = " ".join(p for p in (where, name) if p)
        return f"{place + ': ' if place else ''}{_sentence(error.message)}; {helped} describes it"
    message = _sentence(error.format_message())
    command = re.fullmatch(r"no such command '([^']*)'\.?(?: did you mean .*)?", message, re.I)
    if command and ctx is not None and hasattr(ctx.command, "list_commands"):
        name = command.group(1)
        known = list(ctx.command.list_commands(ctx))
        what = f"no such command '{name}'{_close(name, known)}"
        return f"{where + ': ' if where else ''}{what}; {helped} lists the commands"
    option = re.fullmatch(r"option '([^']*)' requires an argument\.?", message, re.I)
    if option:
        return (
            f"{where + ': ' if where else ''}{option.group(1)} needs a value; {helped} describes it"
        )
    return f"{where + ': ' if where else ''}{message}; {helped} shows the usage"


def _sentence(text: str) -> str:
    """A click message as a clause of a specfmt line: no capital start, no final full stop."""
    text = " ".join(text.split()).rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
