"""certify.lattice_target: the one-term ladder's jump with a measured width factor per level.

Oracle: the documented rule restated here (the factor between the last two finished levels, at
most 2, at least 1.64 when measured from the coarsest level, the fixed rule below 1.25; the
predicted jump x = log(ratio) / log(factor) rounded up, to the nearest level from x >= 5, at
least 1, at most 10), and the measured widths of a real query (rate 0.001, sigma 0.8, m = 1e5,
delta 1e-10, 2026-12-02: levels (2, 4) and (16, 32) at 5.39e-2 and 4.38e-3 relative, (128, 256)
1.03e-4, just above the target 1e-4, first met at (256, 256), index 13, 3.4e-5 wide; the
measured factor 1.52 alone jumped to (512, 512), 1.1e-5 wide, 28 s; the floor 1.64 jumps to
(256, 512), one level above the first that meets it). Only the
choice of level depends on the rule: every level's interval is proven on its own.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("flint")

from lattice_contract import dyadic_epsilon_bound

from certify import lattice_target as lt
from certify.lattice_jump import measured_width_per_level
from certify.lattice_target import LEVELS

REL = 1e-4




def test_measured_factor_is_the_geometric_fall_per_level_clipped():
    assert measured_width_per_level(()) is None
    assert measured_width_per_level(((0, 0.05),)) is None
    assert measured_width_per_level(((0, 0.0537), (6, 0.00417))) == 1.64  # 1.53, from (2, 4)
    assert measured_width_per_level(((0, 0.0537), (6, 0.0011))) == pytest.approx(
        (0.0537 / 0.0011) ** (1 / 6), rel=1e-12)  # 1.91: kept
    # sigma 0.5, m = 1e7, delta 1e-10: 1.56 from (2, 4) -> 1.64, 9 levels for a ratio of 68.2
    f = measured_width_per_level(((0, 0.0985), (6, 0.00682)))
    assert f == 1.64 and math.ceil(math.log(68.2, f) - 0.5) == 9
    assert measured_width_per_level(((6, 0.00417), (12, 0.0002))) == pytest.approx(
        (0.00417 / 0.0002) ** (1 / 6), rel=1e-12)  # 1.66 between fine levels: kept
    assert measured_width_per_level(((0, 0.1), (1, 0.099))) is None  # no fall: no rate
    assert measured_width_per_level(((0, 0.777), (6, 0.776))) is None
    assert measured_width_per_level(((0, 1.0), (1, 1e-3))) == 2.0  # clipped above
    assert measured_width_per_level(((3, 0.1), (3, 0.01))) is None  # same level
    assert measured_width_per_level(((0, 0.0), (2, 0.01))) is None
    assert measured_width_per_level(((0, math.inf), (2, 0.01))) is None


def test_measured_jump_reaches_the_level_that_met_the_target():
    # the real query of the module docstring: (16, 32) gave [4.0599239, 4.0777953]; the
    # target was first met at (256, 256); the measured 1.52 per level alone went to (512, 512),
    # the floor 1.64 goes to (256, 512)
    i = next(k for k, lv in enumerate(LEVELS) if (lv.single, lv.composed) == (16, 32))
    upper = 4.0777953
    b = dyadic_epsilon_bound(4.0599239, upper)
    history = ((0, 0.0539), (i, 0.00438))
    got, why = lt._next_level(i, b, REL, 810, 1278, 480_000.0, None, False, history=history)
    assert why is None
    assert (LEVELS[got].single, LEVELS[got].composed) == (256, 512)
    without, _ = lt._next_level(i, b, REL, 810, 1278, 480_000.0, None, False)
    assert LEVELS[without] == LEVELS[i + 6]  # the fixed rule's cap


@pytest.mark.parametrize("ratio", [1.01, 1.5, 3.0, 41.7, 1e4])
@pytest.mark.parametrize("factor_history", [((0, 0.06), (6, 0.0026)), ((0, 0.08), (6, 0.0032)),
                                            ((2, 0.01), (3, 0.009))])
def test_measured_jump_follows_the_documented_rule(ratio, factor_history):
    i = 6
    upper = 4.0
    b = dyadic_epsilon_bound(upper * (1 - ratio * REL), upper)
    got, why = lt._next_level(i, b, REL, 800, 1300, math.inf, None, False,
                              history=factor_history)
    (i0, w0), (i1, w1) = factor_history
    f = (w0 / w1) ** (1 / (i1 - i0))
    cap = 2 if f < 1.25 else 10  # a stall: at most 2 levels up, with the fixed factor
    slack = 0.0 if f < 1.25 else 0.5
    f = 1.8 if f < 1.25 else min(max(f, 1.64) if i0 == 0 else f, 2.0)
    r = float((b.upper_mpf - b.lower_mpf) / (REL * upper))
    x = math.log(max(r, 1.0), f)
    jump = min(cap, max(1, math.ceil(x - (slack if x >= 5 else 0.0))))
    assert why is None
    assert got == min(i + jump, len(LEVELS) - 1)


def test_a_stall_is_a_fall_below_125_per_level():
    from certify.lattice_jump import stalled

    assert not stalled(())
    assert not stalled(((0, 0.5),))
    assert stalled(((0, 0.777), (6, 0.776)))  # the real query of the STALLED_MAX_JUMP docstring
    assert stalled(((0, 0.1), (2, 0.1 / 1.5)))  # 1.22 per level
    assert not stalled(((0, 0.1), (2, 0.1 / 1.6)))  # 1.26 per level
    assert not stalled(((0, 0.0537), (6, 0.00417)))
    i = 6
    b = dyadic_epsilon_bound(0.1025352, 0.4577173)
    got, why = lt._next_level(i, b, REL, 1310, 1736, 480_000.0, None, False,
                              history=((0, 0.777), (i, 0.776)))
    assert (got, why) == (i + 2, None)


def test_measured_cost_factor_is_the_evaluations_growth_per_level_clipped():
    from certify.lattice_jump import measured_cost_per_level

    assert measured_cost_per_level(()) is None
    assert measured_cost_per_level(((0, 0.05, 500),)) is None
    assert measured_cost_per_level(((0, 0.05), (6, 0.001))) is None  # no evaluations recorded
    # rate 0.1, sigma 2, m = 10: 500 -> 2195 evaluations from (2, 4) to (16, 32)
    assert measured_cost_per_level(((0, 0.05, 500), (6, 4.6e-4, 2195))) == pytest.approx(
        (2195 / 500) ** (1 / 6), rel=1e-12)
    assert measured_cost_per_level(((0, 0.05, 500), (1, 0.02, 500))) == 1.2
    assert measured_cost_per_level(((0, 0.05, 500), (1, 0.02, 5000))) == 2.0


def test_the_measured_cost_lets_the_budget_reach_the_predicted_level():
    # with the fixed 1.5 per level the two-level jump from (16, 32) costs 2195 * 2.25 = 4939
    # evaluations, beyond a budget of 7000 with 700 spent; at the measured 1.28 it is 3600
    i = 6
    b = dyadic_epsilon_bound(0.7984, 0.7988)
    history = ((0, 0.05, 500), (i, 5e-4, 2195))
    got, why = lt._next_level(i, b, REL, 2195, 2695, 7000.0, None, False, history=history)
    assert why is None and got > i
    fixed, _ = lt._next_level(i, b, REL, 2195, 2695, 7000.0, None, False,
                              history=((0, 0.05), (i, 5e-4)))
    assert fixed < got
