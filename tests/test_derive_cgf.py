"""The numeric CGF of derive-compiled mechanisms (derive.cgf): K_Y(t) and its derivatives against
the built-in mechanisms' closed forms, the identities K_Y(-1) = K_Y(0) = 0, the essential range of
the PLLR, NotApplicable for divergent tilts, and a saddlepoint answer for the README's logistic
mechanism."""

from __future__ import annotations

import importlib.util
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

sp = pytest.importorskip("sympy")

from derive.builtins import GAUSSIAN, LAPLACE, RANDOMIZED_RESPONSE  # noqa: E402
from derive.compile import CompiledMechanism, compile_mechanism  # noqa: E402
from derive.mechanism import DensityMechanism, Parameter, QuadratureFallbackWarning  # noqa: E402
from numeric import Gaussian, Laplace, RandomizedResponse, compose, epsilon  # noqa: E402
from numeric.cgf import pllr_cgf  # noqa: E402
from numeric.errors import NotApplicable  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FAST = 0.5  # seconds per sympy integral (as in the other derive tests, sharing their caches)
TILTS = np.array([-1.0, -0.999, -0.8, -0.5, -0.3, -1e-3, 0.0, 1e-3, 0.4, 1.0, 1.7, 2.5, 2.99])
ORDER = 6


def _logistic():
    spec = importlib.util.spec_from_file_location("logistic_noise", EXAMPLES / "logistic_noise.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.LOGISTIC


def _compile(spec, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QuadratureFallbackWarning)
        return compile_mechanism(spec, symbolic_timeout=FAST, **kw)


def _assert_matches(derived, builtin, tilts=TILTS, rtol=1e-9):
    k, d = derived.cgf_batch(tilts, ORDER)
    assert k.shape == (tilts.size,) and d.shape == (tilts.size, ORDER)
    for i, t in enumerate(tilts):
        k_ref, d_ref = pllr_cgf(builtin, float(t), ORDER)
        assert abs(k[i] - k_ref) <= rtol * max(abs(k_ref), 1e-3), (t, k[i], k_ref)
        sigma = math.sqrt(d_ref[1])
        for j in range(ORDER):  # the j+1-th cumulant of the tilted law, on its scale sigma^(j+1)
            scale = max(abs(d_ref[j]), sigma ** (j + 1))
            assert abs(d[i, j] - d_ref[j]) <= rtol * scale, (t, j + 1, d[i, j], d_ref[j])


def test_the_methods_exist_with_the_contract_names():
    for name in ("cgf_batch", "pllr_sup", "pllr_inf"):
        assert callable(getattr(CompiledMechanism, name))


@pytest.mark.parametrize("mu", [0.05, 1.0, 3.0])
def test_gaussian_matches_the_closed_form(mu):
    _assert_matches(_compile(GAUSSIAN, mu=mu), Gaussian(sigma=1.0 / mu))


@pytest.mark.parametrize("mu", [1e-4, 0.3, 1.0, 4.0, 30.0])
def test_laplace_matches_the_closed_form(mu):
    _assert_matches(_compile(LAPLACE, mu=mu), Laplace(scale=1.0 / mu))


@pytest.mark.parametrize("eps0", [0.1, 1.0, 5.0])
def test_randomized_response_matches_the_closed_form(eps0):
    _assert_matches(_compile(RANDOMIZED_RESPONSE, eps0=eps0), RandomizedResponse(eps=eps0))


@pytest.mark.parametrize("name", ["gaussian", "laplace", "randomized-response", "logistic"])
def test_identities_at_minus_one_and_zero(name):
    spec = {"gaussian": GAUSSIAN, "laplace": LAPLACE, "randomized-response": RANDOMIZED_RESPONSE,
            "logistic": None}[name] or _logistic()
    mech = _compile(spec)
    k, d = mech.cgf_batch(np.array([-1.0, 0.0]), 2)
    assert np.all(np.abs(k) <= 1e-14), k
    # K'(-1) = kappa_1(X) = -KL(P||Q), K'(0) = kappa_1(Y) = KL(Q||P); K'' likewise
    # (docs/math.md section 1)
    x, y = mech.derived(2).floats()
    assert d[0] == pytest.approx(x[:2], rel=1e-9)
    assert d[1] == pytest.approx(y[:2], rel=1e-9)


def test_logistic_derivatives_at_zero_are_the_derived_cumulants():
    """No closed form here: K^(j)(0) = kappa_j(Y), derived by mpmath quadrature at 30 digits."""
    mech = _compile(_logistic(), mu=0.7)
    _, d = mech.cgf_batch(np.array([0.0]), 4)
    y = mech.derived(4).floats()[1]
    sigma = math.sqrt(y[1])
    for j in range(4):
        assert abs(d[0, j] - y[j]) <= 1e-10 * max(abs(y[j]), sigma ** (j + 1)), (j, d[0, j], y[j])


def test_heavy_tails_converge():
    """Cauchy noise: q ~ 1/x^2, L bounded, so E_Q e^{tY} is finite for every t; the u = R/x map
    makes the tails smooth."""
    x, mu = sp.symbols("x mu", real=True)
    p = 1 / (sp.pi * (1 + x**2))
    cauchy = DensityMechanism("cauchy", x, p, p.subs(x, x - mu),
                              params=(Parameter(mu, default=1.0, typical=(0.1, 5.0)),))
    mech = compile_mechanism(cauchy, mu=1.5, strategy="quadrature", order=2)
    k, d = mech.cgf_batch(np.array([-1.0, 0.0, 2.0]), 2)
    assert abs(k[0]) <= 1e-12 and abs(k[1]) <= 1e-12 and k[2] > 0
    assert d[1, 0] == pytest.approx(mech.derived(2).floats()[1][0], rel=1e-9)
    assert (mech.pllr_inf(), mech.pllr_sup()) == (-math.inf, math.inf)  # L not monotone


def test_divergent_tilts_do_not_apply():
    """P Gaussian, Q Laplace: L ~ x^2/2 in the tails, so E_Q e^{tY} = int q^(1+t) p^(-t) diverges
    for every t > 0 (and is finite on [-1, 0])."""
    x, mu = sp.symbols("x mu", real=True)
    p = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)
    q = sp.exp(-sp.Abs(x - mu)) / 2
    spec = DensityMechanism("gauss-vs-laplace", x, p, q, breakpoints=(mu,),
                            params=(Parameter(mu, default=1.0, typical=(0.1, 5.0)),))
    mech = compile_mechanism(spec, mu=1.0, strategy="quadrature", order=2)
    k, _ = mech.cgf_batch(np.array([-1.0, -0.5, 0.0]), 2)
    assert np.all(np.abs(k[[0, 2]]) <= 1e-12) and k[1] < 0
    for t in (0.01, 0.5, 3.0):
        with pytest.raises(NotApplicable, match=r"diverges"):
            mech.cgf_batch(np.array([-0.5, t]), 2)


def test_pllr_range():
    assert (_compile(GAUSSIAN, mu=1.3).pllr_inf(), _compile(GAUSSIAN, mu=1.3).pllr_sup()) == (
        -math.inf, math.inf)
    lap = _compile(LAPLACE, mu=0.8)
    assert (lap.pllr_inf(), lap.pllr_sup()) == (-0.8, 0.8) == (-Laplace(1.25).mu, Laplace(1.25).mu)
    rr = _compile(RANDOMIZED_RESPONSE, eps0=1.1)
    assert (rr.pllr_inf(), rr.pllr_sup()) == (-1.1, 1.1)
    logistic = _compile(_logistic(), mu=0.2)  # L increases from -mu to mu (proven monotone)
    assert (logistic.pllr_inf(), logistic.pllr_sup()) == (-0.2, 0.2)


def test_bad_arguments():
    mech = _compile(LAPLACE, mu=1.0)
    with pytest.raises(ValueError, match="t must be finite"):
        mech.cgf_batch(np.array([0.0, math.nan]), 2)
    for n in (0, 1.5, True):
        with pytest.raises(ValueError, match="n must be"):
            mech.cgf_batch(np.array([0.0]), n)
    _, d = mech.cgf_batch(np.array([0.3]), 1)
    assert d.shape == (1, 1)


def test_logistic_saddlepoint_is_close_to_aea_at_m_1000():
    """The README's logistic mechanism (mu = 0.2): with the numeric CGF the saddlepoint method
    answers, within 1e-4 of the AEA estimate at m = 1000 (measured 1.1e-5; both inside the
    certified lattice interval [21.526698, 21.526715])."""
    comp = compose([(_compile(_logistic(), mu=0.2), 1000)])
    sp_eps = epsilon(comp, 1e-5, "saddlepoint").epsilon
    aea_eps = epsilon(comp, 1e-5, "aea", order=2).epsilon
    assert sp_eps == pytest.approx(aea_eps, rel=1e-4)
    assert sp_eps == pytest.approx(21.5267, abs=2e-4)


@pytest.mark.parametrize(("spec", "values", "builtin"), [
    (GAUSSIAN, {"mu": 0.5}, Gaussian(2.0)),
    (LAPLACE, {"mu": 1.0}, Laplace(1.0)),
    (RANDOMIZED_RESPONSE, {"eps0": 0.5}, RandomizedResponse(0.5)),
], ids=["gaussian", "laplace", "randomized-response"])
def test_saddlepoint_of_derived_builtins_equals_the_builtins(spec, values, builtin):
    derived = _compile(spec, **values)
    assert derived.cgf_closed_form == derived.purely_atomic == (spec.kind == "discrete")
    got = epsilon(compose([(derived, 100)]), 1e-5, "saddlepoint")
    want = epsilon(compose([(builtin, 100)]), 1e-5, "saddlepoint")
    assert got.epsilon == pytest.approx(want.epsilon, rel=1e-10)
    assert len(got.warnings) == len(want.warnings)
