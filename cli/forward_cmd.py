"""``specfmt forward``: parse options, call spec_format.forward.run_forward, render, exit.

torch is imported by ``run_forward`` only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from spec_format.cli.common import emit, handle_errors
from spec_format.cli.options import TextOrJson, verifier_option


@handle_errors
def forward_command(
    checkpoint: Path = typer.Argument(..., help="Draft checkpoint directory.", show_default=False),
    verifier: Annotated[
        str | None,
        verifier_option(
            "Verifier directory (config.json + safetensors): supplies embed_tokens / lm_head "
            "when the draft leaves them out (a local copy: the weights are needed)."
        ),
    ] = None,
    inputs: Path = typer.Option(
        None,
        "--inputs",
        help="safetensors file with input_ids [T] and hidden_states "
        "[T, A*Ht] ([T, H] for mtp). Default: seeded random inputs.",
    ),
    tokens: int = typer.Option(16, "--tokens", help="Length of the random inputs."),
    seed: int = typer.Option(0, "--seed", help="Seed of random inputs and random fills."),
    steps: int = typer.Option(
        None,
        "--steps",
        help="eagle3/peagle: tokens drafted after the last position "
        "(default: speculative_tokens - 1).",
    ),
    anchor: int = typer.Option(
        None, "--anchor", help="DFlash family: anchor position of the block (default: last)."
    ),
    top_k: int = typer.Option(5, "--top-k", help="Candidates shown per row."),
    device: Literal["auto", "cpu", "cuda"] = typer.Option(
        "auto", "--device", help="auto picks CUDA when present."
    ),
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = typer.Option(
        "auto", "--dtype", help="auto keeps the checkpoint's float dtype."
    ),
    dump: Path = typer.Option(
        None,
        "--dump",
        help="Write logits and draft_token_ids to this safetensors file (replaced "
        "atomically; /dev/null, /dev/stdout and FIFOs are written through).",
    ),
    compare: Path = typer.Option(
        None, "--compare", help="Compare with a --dump file; exit 1 on mismatch."
    ),
    atol: float = typer.Option(1e-3, "--atol", help="Absolute tolerance of --compare."),
    output_format: TextOrJson = "text",
) -> None:
    """Load a draft strictly and run specfmt's torch reference forward on it.

    The config is read and checked as `specfmt validate` does; a config with errors is
    refused with its findings (not for C022: the forward runs a draft no vLLM loads). Needs torch, the forward extra (its absence names the command
    that adds it). Exit codes: 0
    ok, 1 the config has errors or the checkpoint cannot run (missing/unexpected/misshapen
    tensor, NaN) or --compare mismatch, 2 usage error, unsupported feature or a run beyond
    the reference's limits, 3 an input could not be read or --dump could not be written.
    """
    from spec_format.base import progress
    from spec_format.forward import ForwardOptions, render_text, run_forward
    from spec_format.render.terminal import progress_display

    with progress.showing(progress_display(output_format == "text")):
        result = run_forward(
            ForwardOptions(
                checkpoint=checkpoint,
                verifier=verifier,
                inputs=inputs,
                tokens=tokens,
                seed=seed,
                steps=steps,
                anchor=anchor,
                top_k=top_k,
                device=device,
                dtype=dtype,
                dump=dump,
                compare=compare,
                atol=atol,
            )
        )
    emit(output_format, result.to_dict, lambda: render_text(result))
    raise typer.Exit(result.exit_code)
