"""The speedup model: expected tokens, break-even, best gamma, both cost models."""

from __future__ import annotations

import pytest

from spec_format.inspect import economics as ec


def test_expected_tokens_limits():
    assert ec.expected_tokens(0.0, 3) == 1.0  # only the bonus token
    assert ec.expected_tokens(1.0, 3) == 4.0
    assert ec.expected_tokens(0.5, 2) == pytest.approx(1 + 0.5 + 0.25)


@pytest.mark.parametrize("mode", [ec.PER_TOKEN, ec.PER_STEP])
@pytest.mark.parametrize("g", [1, 3, 7])
@pytest.mark.parametrize("c", [0.01, 0.0488, 0.3])
def test_break_even_is_exact(mode, g, c):
    a = ec.break_even(g, c, mode)
    assert a is not None
    assert ec.speedup(a, g, c, mode) == pytest.approx(1.0, abs=1e-9)
    assert ec.speedup(max(0.0, a - 1e-6), g, c, mode) < 1.0 < ec.speedup(a + 1e-6, g, c, mode)


def test_block_cost_model_charges_one_forward():
    # per_step: E(a*, g) = 1 + c whatever g is
    a = ec.break_even(7, 0.2, ec.PER_STEP)
    assert ec.expected_tokens(a, 7) == pytest.approx(1.2, abs=1e-9)
    assert ec.step_cost(7, 0.2, ec.PER_STEP) == pytest.approx(1.2)
    assert ec.step_cost(7, 0.2, ec.PER_TOKEN) == pytest.approx(2.4)
    assert ec.best_gamma(0.8, 0.2, ec.PER_STEP) is None


def test_no_break_even_when_the_step_never_pays():
    assert ec.break_even(3, 1.0) is None  # 1 + 3c = 4 = g + 1
    assert ec.break_even(3, 0.0) == 0.0


@pytest.mark.parametrize("a", [0.3, 0.6, 0.78, 0.95])
@pytest.mark.parametrize("c", [0.02, 0.0488, 0.3])
def test_best_gamma_is_the_brute_force_optimum(a, c):
    best = ec.best_gamma(a, c)
    brute = max(range(1, ec.MAX_GAMMA + 1), key=lambda g: ec.speedup(a, g, c))
    assert best.gamma == brute
    assert best.speedup == pytest.approx(ec.speedup(a, brute, c))


def test_best_gamma_stops_at_the_search_limit():
    best = ec.best_gamma(0.999, 0.0001)
    assert best.gamma == ec.MAX_GAMMA and best.at_limit
