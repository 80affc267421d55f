"""``specfmt history``: list format versions and migration steps."""

from __future__ import annotations

import json
import sys

import typer

from spec_format.cli.common import ReportFormat, handle_errors, print_text


@handle_errors
def history_command(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Full step descriptions and the keys each touches."
    ),
    report_format: ReportFormat = typer.Option(
        ReportFormat.text, "--format", "-f", help="Output format."
    ),
) -> None:
    """List the known format versions and what each migration step changes."""
    from spec_format.rewrites import history

    if report_format.value == "json":
        sys.stdout.write(json.dumps(history.history(), indent=2) + "\n")
    else:
        print_text(history.render(verbose))
