"""Certified random allocation (certify.shuffle): one epoch, E epochs, the method and the hook.

Oracles: the exact one-epoch TV values of the source paper's summary (sigma = 1: M = 2 -> 0.2978,
10 -> 0.1520, 100 -> 0.0514, 4 digits; Ertan and van Dijk arXiv:2610.09651 via MATH.md sec. 5),
the Gaussian mechanism at M = 1 (closed forms in mpmath at 50 digits: TV = 2 Phi(1/(2 sigma)) - 1,
delta(eps) of GDP Cor. 2.13, E epochs = mu sqrt(E)), and M = 2 by mpmath quadrature at 40 digits
(one integral numerically, the inner one in closed form).
"""

from __future__ import annotations

import json

import mpmath as mp
import pytest

pytest.importorskip("flint")

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from certify.shuffle.multi_epoch import delta_lower, epsilon_lower, epsilon_upper, upper_pld
from certify.shuffle.one_epoch import one_epoch_delta, one_epoch_tv

mp.mp.dps = 50


def _lo(b):
    return b.lower_mpf


def _hi(b):
    return b.upper_mpf


def _gauss_delta(eps, mu):
    """GDP Cor. 2.13: delta(eps) of N(0,1) vs N(mu,1) (symmetric pair)."""
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def _call(a, s):
    """E(Y - a)_+ for the lognormal Y = exp(X/s - 1/(2 s^2))."""
    if a <= 0:
        return 1 - a
    z = s * mp.log(a) + 1 / (2 * s)
    return mp.ncdf(-(z - 1 / s)) - a * mp.ncdf(-z)


def _put(a, s):
    """E(a - Y)_+."""
    if a <= 0:
        return mp.mpf(0)
    z = s * mp.log(a) + 1 / (2 * s)
    return a * mp.ncdf(z) - mp.ncdf(z - 1 / s)


def _delta_m2(eps, sigma, order):
    """delta(eps) at M = 2: E over X1 of a closed-form inner expectation (mpmath, 40 digits)."""
    with mp.workdps(40):
        s, c = mp.mpf(sigma), mp.exp(mp.mpf(eps))

        def f(x):
            y = mp.exp(x / s - 1 / (2 * s * s))
            inner = _call(2 * c - y, s) / 2 if order == "P||Q" else c * _put(2 / c - y, s) / 2
            return inner * mp.npdf(x)

        kink = (mp.log(2 * c if order == "P||Q" else 2 / c) + 1 / (2 * s * s)) * s
        return mp.quad(f, [-mp.inf, -8, kink, 8, mp.inf])


@pytest.mark.parametrize("rounds, ref", [(2, "0.2978"), (10, "0.1520"),
                                         pytest.param(100, "0.0514", marks=pytest.mark.slow)])
def test_tv_bracket_contains_reference_and_is_tight(rounds, ref):
    b = one_epoch_tv(1.0, rounds)
    r = mp.mpf(ref)
    assert _lo(b) <= r + mp.mpf("5e-5") and _hi(b) >= r - mp.mpf("5e-5")
    assert _lo(b) <= _hi(b)
    assert (_hi(b) - _lo(b)) / _hi(b) < 1e-3


@pytest.mark.parametrize("sigma", [1.0, 2.0])
def test_one_round_is_the_gaussian(sigma):
    tv = 2 * mp.ncdf(1 / (2 * mp.mpf(sigma))) - 1
    b = one_epoch_tv(sigma, 1)
    assert _lo(b) <= tv <= _hi(b)
    for eps in (0.25, 1.0):
        exact = _gauss_delta(eps, 1 / mp.mpf(sigma))
        for order in ("P||Q", "Q||P"):
            d = one_epoch_delta(sigma, 1, eps, order)
            assert _lo(d) <= exact <= _hi(d), (eps, order)


@pytest.mark.parametrize("eps", [0.0, 0.5, -0.5, 2.0])
@pytest.mark.parametrize("order", ["P||Q", "Q||P"])
def test_two_rounds_against_quadrature(eps, order):
    exact = _delta_m2(eps, 1.0, order)
    b = one_epoch_delta(1.0, 2, eps, order)
    assert _lo(b) <= exact <= _hi(b)
    if eps in (0.0, 0.5):
        assert (_hi(b) - _lo(b)) / exact < 2e-3


@pytest.mark.parametrize("order", ["P||Q", "Q||P"])
def test_monotone_in_eps(order):
    grid = [-1.0, -0.3, 0.0, 0.2, 0.7, 1.5, 3.0]
    bs = [one_epoch_delta(1.0, 10, e, order) for e in grid]
    for a, b in itertools.pairwise(bs):
        assert _lo(a) <= _hi(a)
        assert _lo(b) <= _hi(a)  # the true delta is non-increasing in eps
        assert _lo(b) <= _lo(a) + mp.mpf("1e-30") or _hi(b) <= _hi(a)


@settings(max_examples=5, deadline=None)
@given(sigma=st.sampled_from([0.8, 1.0, 1.5, 3.0]),
       eps=st.floats(min_value=-1.5, max_value=2.5, allow_nan=False),
       order=st.sampled_from(["P||Q", "Q||P"]))
def test_soundness_one_round_property(sigma, eps, order):
    exact = _gauss_delta(eps, 1 / mp.mpf(sigma)) if eps >= 0 else (
        1 - mp.exp(eps) + mp.exp(eps) * _gauss_delta(-eps, 1 / mp.mpf(sigma)))
    b = one_epoch_delta(sigma, 1, eps, order)
    assert _lo(b) <= exact <= _hi(b)


@settings(max_examples=4, deadline=None)
@given(eps=st.floats(min_value=-1.0, max_value=2.0, allow_nan=False),
       order=st.sampled_from(["P||Q", "Q||P"]))
def test_soundness_two_rounds_property(eps, order):
    exact = _delta_m2(eps, 1.0, order)
    b = one_epoch_delta(1.0, 2, eps, order)
    assert _lo(b) <= exact <= _hi(b)


def test_epochs_at_one_round_match_composed_gaussian():
    """E epochs at M = 1 are the Gaussian with mu = sqrt(E)/sigma (GDP Cor. 3.3)."""
    from flint import arb

    from certify.engine import endpoints

    sigma, epochs, h = 2.0, 4, 2.0**-8
    mu = mp.sqrt(epochs) / sigma
    for eps in (0.25, 1.0):
        exact = _gauss_delta(eps, mu)
        for order in ("P||Q", "Q||P"):
            lo = delta_lower(sigma, 1, epochs, arb(eps), order, h)
            up = upper_pld(sigma, 1, epochs, order, h).delta_upper(arb(eps))
            assert endpoints(lo)[0].to_mpf() <= exact <= endpoints(up)[1].to_mpf()
    target = mp.mpf("1e-3")
    eps_exact = mp.findroot(lambda e: _gauss_delta(e, mu) - target, 2.0)
    lo = epsilon_lower(sigma, 1, epochs, arb("1e-3"), h)
    hi = epsilon_upper(sigma, 1, epochs, arb("1e-3"), h)
    assert lo <= eps_exact <= hi
    assert (hi - lo) / eps_exact < 0.05


@pytest.mark.slow
def test_certified_method_and_hook_small_case():
    import numeric
    from numeric.composition import compose
    from numeric.mechanisms.random_allocation import RandomAllocation
    from numeric.shuffle.hooks import certified_shuffle

    comp = compose([(RandomAllocation(1.0, 10), 3)])
    b = numeric.epsilon(comp, 1e-3, method="certified")
    assert b.lower_method == "shuffle-lower-lattice"
    assert b.upper_method == "shuffle-upper-lattice"
    assert 0 < _lo(b) <= _hi(b) and (_hi(b) - _lo(b)) / _hi(b) < 0.02
    prov = certified_shuffle()
    tv = prov.tv(1.0, 10, 1)
    assert tv.lower <= 0.1520 + 5e-5 and tv.upper >= 0.1520 - 5e-5
    d = prov.delta(1.0, 10, 3, 0.5, "Q||P")
    assert 0 <= d.lower <= d.upper <= 1
    e = prov.epsilon(1.0, 10, 3, 1e-3)
    assert e.lower <= float(_hi(b)) and e.upper >= float(_lo(b))
    assert json.dumps(e.to_dict())


def test_bad_input():
    with pytest.raises(ValueError, match="direction"):
        one_epoch_delta(1.0, 2, 0.0, "P|Q")
    with pytest.raises(ValueError, match="rounds"):
        one_epoch_tv(1.0, 0)
    with pytest.raises(ValueError, match="sigma"):
        one_epoch_tv(-1.0, 2)


def test_certificate_round_trip(capsys, tmp_path):
    from numeric.cli import main

    spec = tmp_path / "spec.toml"
    spec.write_text('[[mechanism]]\ntype = "random-allocation"\nsigma = 1.0\nrounds = 10\n'
                    'count = 2\n')
    cert = tmp_path / "cert.json"
    assert main(["certify", "--spec", str(spec), "--delta", "1e-3", "--out", str(cert)]) == 0
    capsys.readouterr()
    assert main(["verify", str(cert)]) == 0
    assert "verified" in capsys.readouterr().out
