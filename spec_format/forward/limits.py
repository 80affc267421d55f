"""Bounds on what one forward may compute, checked before anything is allocated (no torch).

Sizes that shape a tensor (H, I, nH*hd, L, A*Ht, D, ...) are bounded by the weights
themselves: the tensor contract must match the checkpoint's headers exactly before the
model is built (``loader.check_weights``). What no weight bounds is bounded here:

* the work of the run: the largest single activation (attention scores of P positions,
  P x P x nH; logits, rows x D; MLP and projection outputs) must fit ``WORK_LIMIT``
  values, where P = tokens + chained steps + block size;
* loops that do not shape a tensor: ``--steps`` and ``num_jacobi_passes``;
* tensors the checkpoint leaves out and the forward fills randomly (no ``--verifier``):
  at most ``RANDOM_FILL_LIMIT`` values, or as many as the checkpoint itself holds;
* ``--seed``, which torch takes as a 64-bit integer.
"""

from __future__ import annotations

from spec_format.base.errors import UsageError
from spec_format.facts import catalog
from spec_format.forward.config import DraftSpec
from spec_format.forward.errors import UnsupportedError

#: values of the largest single activation (float32: 1 GiB)
WORK_LIMIT = 1 << 28
#: chained EAGLE steps (speculators drafts a handful; vLLM's largest configs use ~10)
MAX_STEPS = 64
#: XPress refinement passes (speculators' default is 6)
MAX_JACOBI_PASSES = 64
#: values filled randomly when the checkpoint has fewer (float32: 1 GiB)
RANDOM_FILL_LIMIT = 1 << 28
SEED_RANGE = (0, 1 << 64)


def check_seed(seed: int) -> None:
    low, high = SEED_RANGE
    if not low <= seed < high:
        raise UsageError(f"--seed must be between 0 and 2**64 - 1 (got {seed})")


def check_steps(steps: int) -> None:
    if steps > MAX_STEPS:
        raise UsageError(
            f"--steps is {steps}; the reference forward chains at most {MAX_STEPS} steps "
            f"(pass --steps N with N <= {MAX_STEPS})"
        )


def default_steps(spec: DraftSpec) -> int:
    """``speculative_tokens - 1``, at most ``MAX_STEPS`` (a note says when it is cut)."""
    steps = max((spec.speculative_tokens or 1) - 1, 0)
    if steps > MAX_STEPS:
        spec.notes.append(
            f"speculative_tokens is {spec.speculative_tokens}: chained {MAX_STEPS} steps, the "
            "most the reference forward runs (pass --steps N for another number)"
        )
    return min(steps, MAX_STEPS)


def check_model_loops(spec: DraftSpec) -> None:
    if (
        spec.model_type in catalog.with_feature("jacobi-passes")
        and spec.flag("num_jacobi_passes") > MAX_JACOBI_PASSES
    ):
        raise UnsupportedError(
            f"num_jacobi_passes is {spec.flag('num_jacobi_passes')}; the reference forward "
            f"runs at most {MAX_JACOBI_PASSES} refinement passes"
        )


def _work_terms(spec: DraftSpec, tokens: int, steps: int) -> dict[str, int]:
    L = spec.layer
    block = spec.flag("block_size") if spec.model_type in catalog.family("block") else 0
    P = tokens + steps + block
    rows = block if block else tokens + steps
    width = max(2 * L.H, L.nH * L.hd)
    return {
        f"attention scores ({P} x {P} positions x {L.nH} heads)": P * P * L.nH,
        f"logits ({rows} rows x {spec.D} draft vocabulary)": rows * spec.D,
        f"MLP activations ({P} positions x {L.I})": P * L.I,
        f"input hidden states ({tokens} x {spec.A * spec.Ht})": tokens * spec.A * spec.Ht,
        f"projections ({P} positions x {width})": P * width,
    }


def check_work(spec: DraftSpec, tokens: int, steps: int, *, what: str = "--tokens") -> None:
    """Refuse a run whose largest activation exceeds ``WORK_LIMIT`` values, saying how many
    tokens would fit (or that none would: the config's sizes are too large)."""
    name, size = max(_work_terms(spec, tokens, steps).items(), key=lambda kv: kv[1])
    if size <= WORK_LIMIT:
        return

    def fits(t: int) -> bool:
        return max(_work_terms(spec, t, steps).values()) <= WORK_LIMIT

    low, high = 0, tokens  # fits(low) or low == 0; not fits(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    fix = (
        f"use {what} {low} or fewer"
        if low >= 1
        else "no number of tokens fits: the config's sizes are too large for it"
    )
    raise UsageError(
        f"{what} {tokens}: the {name} would hold {size:,} values, more than the "
        f"{WORK_LIMIT:,} the reference forward computes at once; {fix}"
    )


def check_random_fill(randoms: dict[str, int], checkpoint_values: int) -> None:
    """``randoms``: tensor name -> values to fill randomly."""
    total = sum(randoms.values())
    limit = max(RANDOM_FILL_LIMIT, checkpoint_values)
    if total > limit:
        names = ", ".join(randoms)
        raise UsageError(
            f"{names}: not in the checkpoint, and filling them randomly needs {total:,} "
            f"values (more than {limit:,}); pass --verifier DIR to take them from the verifier"
        )
