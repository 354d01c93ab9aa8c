"""The saddlepoint's log delta where its terms cancel in floats (fuzz seed 1303).

log delta at a tilt t is K(t) - t K'(t) + (t s)^2/2 + log(factor). For a Gaussian at a composed
mu ~ 1.3e8 the first and third terms are -+mu^2/8 = 2.1e15, whose float spacing is 0.25: the
saddlepoint returned delta(0) = e^-0.25 = 0.7788 for a true 1, unflagged and marked exact.
Oracle: the Gaussian's closed form delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)
(Dong, Roth, Su 2022, Cor. 2.13), by mpmath at 40 digits.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

import numeric
from numeric.composition import compose
from numeric.errors import NotApplicable
from numeric.mechanisms import Gaussian, PoissonSubsampledGaussian
from numeric.saddlepoint.points import LOG_ROUNDING_ULPS, Point

SIGMA, SENS = 0.012995784987629455, 0.10462564142017305  # the fuzz draw's Gaussian


def _gdp_delta(mu: float, eps: float) -> float:
    with mp.workdps(40):
        m, e = mp.mpf(mu), mp.mpf(eps)
        return float(mp.ncdf(m / 2 - e / m) - mp.exp(e) * mp.ncdf(-m / 2 - e / m))


def test_delta_refused_where_float_rounding_swamps_log_delta():
    comp = compose([(Gaussian(sigma=SIGMA, sensitivity=SENS), 256476556593412)])
    with pytest.raises(NotApplicable, match="float rounding"):
        numeric.delta(comp, 0.0, method="saddlepoint")
    mu = SENS / SIGMA * math.sqrt(256476556593412)
    res = numeric.delta(comp, 0.0, method="auto")
    assert res.value == pytest.approx(_gdp_delta(mu, 0.0), rel=1e-12)


def test_smaller_rounding_is_warned_and_the_answer_is_an_estimate():
    """m = 1e10: terms of 1.6e11 leave ~1e-4 in log delta: warned, estimate=True (a Gaussian
    composition is otherwise reported exact), and within that of the closed form."""
    comp = compose([(Gaussian(sigma=SIGMA, sensitivity=SENS), 10**10)])
    res = numeric.delta(comp, 0.0, method="saddlepoint")
    said = [w for w in res.warnings if "float rounding" in w]
    assert said and res.estimate
    mu = SENS / SIGMA * 1e5
    assert res.value == pytest.approx(_gdp_delta(mu, 0.0), rel=2e-4)
    auto = numeric.delta(comp, 0.0, method="auto")
    assert auto.method != "saddlepoint"


@pytest.mark.parametrize(("sigma", "rate", "m"), [(1.0, 0.01, 1000), (0.8, 0.1, 10**5),
                                                  (2.0, 0.001, 10**6)])
def test_ordinary_queries_are_not_flagged(sigma, rate, m):
    comp = compose([(PoissonSubsampledGaussian(sigma, rate), m)])
    for res in (numeric.epsilon(comp, 1e-5, method="saddlepoint"),
                numeric.epsilon(comp, 0.5, method="saddlepoint"),
                numeric.delta(comp, 1.0, method="saddlepoint")):
        assert not any("float rounding" in w for w in res.warnings)


def test_eps_from_a_huge_gaussian_is_not_flagged_and_matches_the_closed_form():
    """eps(1e-5) at mu = 1.29e8: the terms are 1e16, but d log delta / d eps = -t moves eps by
    ~10 on 8.3e15 (relative 1e-15): no warning."""
    comp = compose([(Gaussian(sigma=SIGMA, sensitivity=SENS), 256476556593412)])
    res = numeric.epsilon(comp, 1e-5, method="saddlepoint")
    assert not any("float rounding" in w for w in res.warnings)
    mu = SENS / SIGMA * math.sqrt(256476556593412)
    assert _gdp_delta(mu, res.value * (1 - 1e-12)) > 1e-5 > _gdp_delta(mu, res.value * (1 + 1e-12))


def test_log_rounding_counts_ulps_of_the_largest_term():
    p = Point(-0.5, 0.0, 0.0, 1.0, 1.0, 1.0, log_terms=2.0**52)
    assert p.log_rounding == LOG_ROUNDING_ULPS
    assert math.isnan(Point(-0.5, 0.0, 0.0, 1.0, 1.0, 1.0).log_rounding)
