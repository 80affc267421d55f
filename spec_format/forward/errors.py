"""Errors of the reference forward. Each is one clean line (or a short list) at the CLI."""

from __future__ import annotations

from spec_format.base.errors import ExitCode, SpecfmtError


class UnsupportedError(SpecfmtError):
    """The checkpoint asks for something the reference forward does not implement.

    Examples: a ``rope_type`` without a port here, a draft layer ``model_type`` that the
    training library itself has no layer class for. Exit code 2 (a tool limit, not a
    finding about the checkpoint).
    """

    exit_code = int(ExitCode.USAGE)


class CheckpointError(SpecfmtError):
    """The checkpoint cannot be run as it is: a missing, unexpected or misshapen tensor,
    a NaN/Inf weight, a verifier that does not fit. ``problems`` holds one line per
    problem, each naming the tensor or field; exit code 1 (errors found).
    """

    exit_code = int(ExitCode.FINDINGS)
    #: problem lines shown; the rest are counted
    SHOWN = 60

    def __init__(self, summary: str, problems: list[str] | None = None) -> None:
        self.summary = summary
        self.problems = list(problems or [])
        lines = [summary, *(f"  {p}" for p in self.problems[: self.SHOWN])]
        if len(self.problems) > self.SHOWN:
            lines.append(f"  ... and {len(self.problems) - self.SHOWN} more")
        super().__init__("\n".join(lines))
