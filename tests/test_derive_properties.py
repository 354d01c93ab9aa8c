"""Property tests over each built-in spec's declared parameter domain.

Values are drawn log-uniformly from each parameter's declared typical range; the compiled
mechanism must agree with numeric's independent implementation (a different algorithm: atoms plus
Gauss-Legendre central moments, or the exact two-point law) and satisfy the PLLR identities.
Values outside the declared domain must be refused with a ValueError naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("sympy")

from hypothesis import given, settings
from hypothesis import strategies as st

from derive import BUILTINS, compile_mechanism
from numeric import Gaussian, Laplace, RandomizedResponse, aea_epsilon

NUMERIC_TWIN = {
    "gaussian": lambda v: Gaussian(1.0 / v),
    "laplace": lambda v: Laplace(1.0 / v),
    "randomized-response": lambda v: RandomizedResponse(v),
}


def _in_typical(spec):
    (param,) = spec.params
    lo, hi = param.typical
    return st.floats(math.log(lo), math.log(hi)).map(math.exp)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_declared_domain_is_sampled_and_matches_numeric(name):
    spec = BUILTINS[name]
    (param,) = spec.params

    @settings(max_examples=8, deadline=None)
    @given(value=_in_typical(spec))
    def check(value):
        mech = compile_mechanism(spec, **{str(param.symbol): value})
        got = mech.pllr_cumulants(4)
        ref = NUMERIC_TWIN[name](value).pllr_cumulants(4)
        scale = ref.x[1] ** (np.arange(1, 5) / 2.0)  # standardized units for vanishing cumulants
        assert np.all(np.abs(np.array(got.x) - ref.x) <= 1e-9 * np.abs(ref.x) + 1e-12 * scale)
        assert np.all(np.abs(np.array(got.y) - ref.y) <= 1e-9 * np.abs(ref.y) + 1e-12 * scale)
        assert got.x[0] <= 0.0 <= got.y[0]
        res = aea_epsilon([(mech, 50)], 1e-5)
        assert math.isfinite(res.epsilon) and res.epsilon >= 0.0

    check()


@pytest.mark.parametrize("name", sorted(BUILTINS))
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_outside_domain_is_refused(name, bad):
    spec = BUILTINS[name]
    (param,) = spec.params
    with pytest.raises(ValueError, match=str(param.symbol)):
        compile_mechanism(spec, **{str(param.symbol): bad})
