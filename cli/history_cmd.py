"""``specfmt history``: list format versions and migration steps."""

from __future__ import annotations

import typer

from spec_format.cli.common import emit, handle_errors
from spec_format.cli.options import TextOrJson


@handle_errors
def history_command(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Full step descriptions and the keys each touches."
    ),
    report_format: TextOrJson = "text",
) -> None:
    """List the known format versions and what each migration step changes."""
    from spec_format.rewrites import history

    emit(report_format, history.history, lambda: history.render(verbose))
