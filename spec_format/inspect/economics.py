"""Is a draft worth serving: expected tokens per verifier step, speedup and break-even.

The model (seed document, section 3; standard speculative-decoding algebra): with
per-position acceptance ``a`` and ``g`` drafted tokens, one verifier step commits

    E(a, g) = (1 - a^(g+1)) / (1 - a)        (g + 1 when a = 1)

tokens, and costs one verifier forward plus the draft's forwards, each ``c`` verifier
forwards. A chain drafter (``draft_forwards == "per_token"``: EAGLE-3, MTP) runs ``g``
forwards per step, a parallel or block drafter (``"per_step"``: P-EAGLE, the DFlash family)
one. The speedup over plain decoding is ``S = E / (1 + n * c)`` with ``n`` those forwards.

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The acceptances the report tabulates (and the plot marks) when none are given.
DEFAULT_ACCEPTANCE = (0.5, 0.6, 0.7, 0.8, 0.9)
#: Break-even acceptance is bracketed until the interval is this narrow.
TOLERANCE = 1e-12
#: The largest gamma the search for the best one tries.
MAX_GAMMA = 64

PER_TOKEN = "per_token"
PER_STEP = "per_step"


def expected_tokens(a: float, g: int) -> float:
    """Tokens committed per verifier step: the accepted drafts plus the bonus token."""
    if a == 1.0:
        return g + 1.0
    return (1.0 - a ** (g + 1)) / (1.0 - a)


def draft_forwards(g: int, mode: str) -> int:
    """Draft forward passes in one speculative step."""
    return g if mode == PER_TOKEN else 1


def step_cost(g: int, c: float, mode: str) -> float:
    """Cost of one speculative step in verifier forwards."""
    return 1.0 + draft_forwards(g, mode) * c


def speedup(a: float, g: int, c: float, mode: str = PER_TOKEN) -> float:
    return expected_tokens(a, g) / step_cost(g, c, mode)


def break_even(g: int, c: float, mode: str = PER_TOKEN) -> float | None:
    """The acceptance at which speculation pays for itself (S = 1), or ``None`` when it
    never does (even a = 1 commits fewer tokens than the step costs).

    E is continuous and strictly increasing in ``a`` on [0, 1], from 1 to g + 1, so the
    root of E(a) = cost is unique; bisection brackets it to :data:`TOLERANCE`.
    """
    cost = step_cost(g, c, mode)
    if cost <= 1.0:
        return 0.0
    if cost >= g + 1.0:
        return None
    lo, hi = 0.0, 1.0
    while hi - lo > TOLERANCE:
        mid = (lo + hi) / 2.0
        if expected_tokens(mid, g) < cost:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class BestGamma:
    gamma: int
    speedup: float
    at_limit: bool  # still rising at MAX_GAMMA


def best_gamma(a: float, c: float, mode: str = PER_TOKEN) -> BestGamma | None:
    """The gamma that maximises S at acceptance ``a`` (chain drafters only).

    For ``per_step`` drafters the step cost does not grow with gamma, so S only grows with
    it and gamma is bounded by what the draft was trained for: ``None``.
    """
    if mode != PER_TOKEN:
        return None
    best = BestGamma(1, speedup(a, 1, c, mode), False)
    for g in range(2, MAX_GAMMA + 1):
        s = speedup(a, g, c, mode)
        if s <= best.speedup:
            return best  # S is unimodal in g: concave numerator over a linear cost
        best = BestGamma(g, s, g == MAX_GAMMA)
    return best
