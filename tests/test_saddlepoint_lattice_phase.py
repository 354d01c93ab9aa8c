"""The lattice phase diagnostic of the saddlepoint estimate (purely atomic compositions).

Found by a probe (2026-12-03): randomized-response mixtures whose spans are commensurate
(RR(3) + RR(1.5), RR(2) + RR(1)) at delta ~1e-10 passed every diagnostic while the saddlepoint
delta was up to 7% off, and ``auto`` returned it. The tilted weight decays over 1/t, which is
comparable to the lattice spacing there, so the atoms' phase relative to eps matters
(``numeric.saddlepoint.diagnostics.lattice_phase_error``).

Oracle: the exact composed delta of two randomized-response terms, a double binomial sum over
the privacy-loss atoms in log space (numpy/scipy floats, independent of the code under test):
delta(eps) = sum over (j, k) with L > eps of P(j, k) (1 - e^{eps - L}),
L = e0 (n - 2j) + e1 (n2 - 2k), j ~ Bin(n, 1/(1 + e^{e0})), k ~ Bin(n2, 1/(1 + e^{e1})).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

import numeric
from numeric.composition import compose
from numeric.mechanisms import RandomizedResponse
from numeric.saddlepoint import saddlepoint_delta
from numeric.saddlepoint.diagnostics import atomic_phase_error, lattice_phase_error


def _exact_rr_pair_delta(e0: float, n: int, e1: float, n2: int, eps: float) -> float:
    def atoms(e: float, count: int) -> tuple[np.ndarray, np.ndarray]:
        k = np.arange(count + 1)  # k "low" outcomes: loss e (count - 2k)
        log_hi, log_lo = e - np.log1p(np.exp(e)), -np.log1p(np.exp(e))
        logpmf = (gammaln(count + 1) - gammaln(k + 1) - gammaln(count - k + 1)
                  + (count - k) * log_hi + k * log_lo)
        return logpmf, e * (count - 2 * k)

    pa, la = atoms(e0, n)
    pb, lb = atoms(e1, n2)
    loss = la[:, None] + lb[None, :]
    logp = pa[:, None] + pb[None, :]
    above = loss > eps
    return float(np.sum(np.exp(logp[above]) * -np.expm1(eps - loss[above])))


# (e0, n, e1, n2, eps): the saddlepoint delta was 7.2% and 4.0% above the exact one, unflagged
_COMMENSURATE = [(3.0, 3000, 1.5, 800, 9366.01), (2.0, 2000, 1.0, 400, 3596.03)]


def test_oracle_matches_the_exact_method_on_one_term():
    # the oracle with an empty second term against numeric's exact randomized response
    comp = compose([(RandomizedResponse(2.0), 300)])
    exact = numeric.delta(comp, 400.0, method="exact").delta
    assert _exact_rr_pair_delta(2.0, 300, 1.0, 0, 400.0) == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize(("e0", "n", "e1", "n2", "eps"), _COMMENSURATE)
def test_commensurate_lattice_is_flagged(e0, n, e1, n2, eps):
    comp = compose([(RandomizedResponse(e0), n), (RandomizedResponse(e1), n2)])
    exact = _exact_rr_pair_delta(e0, n, e1, n2, eps)
    sp = saddlepoint_delta(comp, eps)
    assert abs(sp.delta / exact - 1.0) > 0.02  # really off
    assert any("lattice" in w for w in sp.details["diagnostics"]), sp.warnings


@pytest.mark.parametrize(("e0", "n", "e1", "n2", "eps"), _COMMENSURATE[1:])
def test_auto_is_not_fooled_by_a_commensurate_lattice(e0, n, e1, n2, eps):
    comp = compose([(RandomizedResponse(e0), n), (RandomizedResponse(e1), n2)])
    exact = _exact_rr_pair_delta(e0, n, e1, n2, eps)
    res = numeric.delta(comp, eps)
    assert res.method != "saddlepoint"
    assert res.delta >= exact * (1.0 - 1e-9)  # a certified upper end


def _brute_force_phase_error(t: float, h: float) -> float:
    """max over 32 phases of |h sum_k w(phi + k h) / int w - 1|, summed term by term."""
    k = np.arange(200000)
    worst = 0.0
    for phi in np.linspace(0.0, h, 33)[1:]:
        z = phi + k * h
        total = h * float(np.sum(np.exp(-t * z) - np.exp(-(t + 1.0) * z)))
        worst = max(worst, abs(total / (1.0 / t - 1.0 / (t + 1.0)) - 1.0))
    return worst


@pytest.mark.parametrize(("t", "h"), [(0.05, 3.7), (0.2, 1.0), (1.5, 0.3), (0.01, 2.0)])
def test_phase_error_is_the_lattice_sum(t, h):
    assert lattice_phase_error(t, h) == pytest.approx(_brute_force_phase_error(t, h), rel=1e-9)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(t=st.floats(0.05, 3.0), h=st.floats(0.05, 5.0))
def test_phase_error_is_the_lattice_sum_anywhere(t, h):
    assert lattice_phase_error(t, h) == pytest.approx(_brute_force_phase_error(t, h), rel=1e-8)


@pytest.mark.parametrize("t", [0.0, -0.3, math.nan, math.inf])
def test_phase_error_is_zero_off_the_positive_tilts(t):
    assert lattice_phase_error(t, 1.0) == 0.0


def test_phase_error_follows_the_composed_lattice():
    t = 0.05
    # spans 3.734 and 1.867: a lattice of spacing 1.867, modulus 1
    same = compose([(RandomizedResponse(1.867), 5000), (RandomizedResponse(1.867 / 2), 800)])
    assert atomic_phase_error(same, t, False) == pytest.approx(
        lattice_phase_error(t, 1.867), rel=1e-9)
    # one term: its own span
    one = compose([(RandomizedResponse(1.867), 5000)])
    assert atomic_phase_error(one, t, False) == pytest.approx(
        lattice_phase_error(t, 3.734), rel=1e-9)
    # incommensurate spans with many steps: far below the one-lattice value
    mixed = compose([(RandomizedResponse(1.867), 5000), (RandomizedResponse(1.5), 800)])
    assert atomic_phase_error(mixed, t, False) < 0.2 * lattice_phase_error(t, 3.734)
    # not purely atomic, or t <= 0: no phase term
    assert atomic_phase_error(one, -0.2, False) == 0.0
