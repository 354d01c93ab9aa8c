"""numeric.solvers.brentq takes the same steps as SciPy's brentq, to the last bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from numeric.solvers import brentq


def _problems(seed: int, n: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        kind = rng.integers(4)
        c = rng.uniform(-3, 3)
        s = rng.uniform(0.1, 5)
        if kind == 0:
            def f(x, c=c, s=s):
                return math.tanh(s * (x - c))
        elif kind == 1:
            def f(x, c=c, s=s):
                return (x - c) ** 3 + s * (x - c)
        elif kind == 2:
            def f(x, c=c, s=s):
                return math.expm1(s * (x - c)) - 0.1 * (x - c)
        else:
            def f(x, c=c, s=s):
                return math.log1p(math.exp(s * (x - c))) - math.log(2.0)
        a = c - rng.uniform(0.01, 7)
        b = c + rng.uniform(0.01, 7)
        if rng.integers(2):
            a, b = b, a
        yield f, a, b


@pytest.mark.parametrize("tol", [(1e-14, 8.9e-16), (1e-15, 4 * np.finfo(float).eps), (1e-6, 1e-10)])
def test_bit_identical_to_scipy(tol):
    xtol, rtol = tol
    for f, a, b in _problems(1234, 400):
        want = optimize.brentq(f, a, b, xtol=xtol, rtol=rtol, maxiter=200)
        got = brentq(f, a, b, xtol=xtol, rtol=rtol, maxiter=200)
        assert got.hex() == float(want).hex(), (a, b, got, want)


def test_endpoint_roots_and_bad_input():
    assert brentq(lambda x: x, 0.0, 1.0, xtol=1e-12, rtol=1e-15, maxiter=10) == 0.0
    assert brentq(lambda x: x - 1.0, 0.0, 1.0, xtol=1e-12, rtol=1e-15, maxiter=10) == 1.0
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: 1.0 + x * x, -1.0, 1.0, xtol=1e-12, rtol=1e-15, maxiter=10)
    with pytest.raises(ValueError, match="NaN"):
        brentq(lambda x: math.nan, -1.0, 1.0, xtol=1e-12, rtol=1e-15, maxiter=10)
    with pytest.raises(ValueError, match="xtol"):
        brentq(lambda x: x, -1.0, 1.0, xtol=0.0, rtol=1e-15, maxiter=10)
    with pytest.raises(ValueError, match="rtol"):
        brentq(lambda x: x, -1.0, 1.0, xtol=1e-12, rtol=1e-17, maxiter=10)
    with pytest.raises(ArithmeticError):
        brentq(lambda x: math.exp(5 * x) - 2.0, 0.0, 1.0, xtol=1e-15, rtol=1e-15, maxiter=2)


def test_vanishing_secant_denominators_bisect_like_scipy():
    # Where f takes equal values at two iterates (e.g. an AEA surrogate that underflows at a tiny
    # delta), a secant denominator vanishes: C divides to inf/NaN and bisects, Python would raise
    # ZeroDivisionError. The iterates must still match SciPy's. A quantized line (plateaus of
    # equal values, tiny like an underflowing surrogate) makes 13 of these 37 searches divide by
    # zero (counted with an instrumented copy when this test was written).
    for jump in np.linspace(0.013, 0.987, 37):
        def f(x, jump=jump):
            k = round((jump - x) * 8)
            return math.ldexp(k if k != 0 else (1 if x < jump else -1), -990)
        want = optimize.brentq(f, 0.0, 1.0, xtol=1e-14, rtol=8.9e-16, maxiter=200)
        got = brentq(f, 0.0, 1.0, xtol=1e-14, rtol=8.9e-16, maxiter=200)
        assert got.hex() == want.hex()
