"""The options several commands take, declared once, in typer's ``Annotated`` form (the
default is the command's): aliases for the ones spelled the same everywhere
(``engine: Engine = None``), factories for the ones whose help says what the command does
with them (``quiet: Annotated[bool, quiet_option("...")] = False``), and the values of
``--format``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from spec_format.base.errors import UsageError

#: ``--format`` of the commands that print text or JSON
REPORT_FORMATS = ("text", "json")
_VERSIONISH = re.compile(r"[vV]?[0-9]+(\.[0-9]+)+")


def format_option(names: Iterable[str], version_option: str, help: str) -> Any:
    """``--format/-f``, the output format (case-insensitive; the default is the command's),
    whose error for a value that looks like a version (``--format 0.5``) names the option
    that was meant. The command receives the name, lower-cased."""
    names = list(names)

    def parse(value: Any) -> str:
        text = str(getattr(value, "value", value)).strip()
        if text.lower() in names:
            return text.lower()
        hint = (
            f"; did you mean {version_option} {text}?"
            if version_option and _VERSIONISH.fullmatch(text)
            else ""
        )
        raise typer.BadParameter(f"{text!r} is not one of {', '.join(names)}{hint}")

    return typer.Option(
        "--format",
        "-f",
        help=f"{help.rstrip('.')}: {', '.join(names)}.",
        callback=parse,
        autocompletion=lambda: names,
        metavar="FORMAT",  # the choices are in the help text, which wraps between words
        show_default=True,
    )


def verifier_option(help: str) -> Any:
    """--verifier, shared by every command that takes one: a path or hf://ORG/NAME[@REV]."""
    return typer.Option("--verifier", help=help, metavar="PATH|hf://ORG/NAME")


def quiet_option(help: str) -> Any:
    """``--quiet/-q``: what needs attention and one summary line (every command that prints
    findings has it; ``help`` says what that command leaves out)."""
    return typer.Option("--quiet", "-q", help=help)


#: --aux-layer-ids of fix and convert: a comma (or space) list, repeatable
def parse_aux_ids(values: list[str] | None) -> tuple[int, ...] | None:
    if not values:
        return None
    out = []
    for value in values:
        for part in value.replace(",", " ").split():
            try:
                out.append(int(part))
            except ValueError:
                raise UsageError(
                    f"--aux-layer-ids {value!r}: layer numbers of the verifier (each below its "
                    "num_hidden_layers), separated by commas"
                ) from None
    return tuple(out)


def engine_option(help: str) -> Any:
    return typer.Option("--engine", "-e", help=help, metavar="NAME==VERSION")


#: --engine of validate, fix and migrate (serving judges releases: its own help)
Engine = Annotated[
    list[str] | None,
    engine_option(
        "An engine release the draft is served or trained with, as pip writes it (repeatable): "
        "NAME==VERSION (vllm==0.30 is 0.30.0), a range (vllm>=0.28,<0.33: every covered "
        "release in it) or NAME (its newest covered release); the releases covered are those "
        "of the reader table (schema/readers/), and a newer one is judged as the newest with a "
        "warning (C021). Default: the newest covered release of each engine, and an error "
        "when no covered vLLM release can load the draft (C022)."
    ),
]
#: --config / --isolated, shared by validate, fix and migrate (see spec_format.runner.settings)
Config = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Read this specfmt.toml or pyproject.toml for every input instead of the closest "
        "one above each input.",
        metavar="PATH",
    ),
]
Isolated = Annotated[
    bool,
    typer.Option(
        "--isolated",
        "--no-config",
        help="Ignore every configuration file (specfmt.toml, the tool.specfmt table of "
        "pyproject.toml).",
    ),
]
#: --format of the commands that print a report as text or JSON and name no version
TextOrJson = Annotated[
    Literal["text", "json"], typer.Option("--format", "-f", help="Output format.")
]
#: --format of rules and explain, and the old spelling of -f json
ListFormat = Annotated[str, format_option(REPORT_FORMATS, "", "Output format.")]
OldJson = Annotated[bool, typer.Option("--json", hidden=True)]
#: --format of the commands whose version option is --format-version
Report = Annotated[str, format_option(REPORT_FORMATS, "--format-version", "Report format.")]
