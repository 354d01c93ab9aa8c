"""certify.lattice_steps and the lattice method beyond the Gaussian family.

Oracles: closed forms of the single-step hockey-stick curves evaluated in mpmath (Laplace:
1 - e^{(eps - mu)/2}; randomized response / ApproxDP: the two-point law); a two-fold Laplace
composition by mpmath quadrature of the exact law (atoms plus density, 30 digits); the exact
binomial (KOV) composition of randomized response and its ApproxDP extension (GDP Eq. 13) from
``numeric.exact``; exact GDP composition (mu^2 adds, GDP Cor. 3.3) for heterogeneous Gaussians;
dp_accounting's PLD (optional) for Laplace at m = 1000.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")


from flint import arb  # noqa: E402
from lattice_contract import assert_step_contract, laplace_two_fold  # noqa: E402

from certify.combine import certified_epsilon  # noqa: E402
from certify.engine import workprec  # noqa: E402
from certify.lattice import (  # noqa: E402
    lattice_delta_interval,
    lattice_epsilon_interval,
    single_step_delta,
)
from certify.lattice_steps import (  # noqa: E402
    ApproxDPStep,
    GaussianStep,
    LaplaceStep,
    SubsampledGaussianStep,
    exact_value,
    lattice_step,
    register_lattice_step,
)
from certify.registry import unregister_certified  # noqa: E402
from numeric.exact import exact_delta, exact_epsilon  # noqa: E402
from numeric.gdp import delta_mu  # noqa: E402
from numeric.mechanisms import (  # noqa: E402
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from numeric.mechanisms.base import Mechanism, symmetric_cumulants  # noqa: E402

STEPS = [
    GaussianStep(1.5),
    GaussianStep(0.7, 2.0),
    SubsampledGaussianStep(1.0, 0.01),
    SubsampledGaussianStep(1.0, 0.01, swapped=True),
    SubsampledGaussianStep(0.8, 0.3, swapped=True),
    LaplaceStep(1.0),
    LaplaceStep(10.0),
    LaplaceStep(3.0, 0.5),
    ApproxDPStep(0.1),
    ApproxDPStep(1.0, 1e-3),
    ApproxDPStep(0.0, 0.01),
]
GRID = [k / 16 for k in range(-48, 49)]


def _f(x: arb) -> float:
    return float(x.mid())


# --- contract tests for every step ---------------------------------------------------------------


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.describe())
def test_step_contract(step):
    """delta_1 is non-increasing, convex in e^eps, >= 1 - e^eps and >= Q(L = +inf); the tails are
    non-increasing probabilities; the range gap/excess are >= 0; everything is a tight ball."""
    assert_step_contract(step)


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.describe())
def test_delta_matches_tails_where_continuous(step):
    """delta(eps) = Q(L > eps) - e^eps P(L > eps) = T_Q(eps) - e^eps T_P(eps) away from atoms."""
    with workprec(128):
        for e in (-2.3, -0.05, 0.3, 1.7):
            tq, tp = step.tails(arb(e))
            want = _f(tq) - math.exp(e) * _f(tp)
            assert _f(step.delta(arb(e))) == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("scale", "sens"), [(1.0, 1.0), (10.0, 1.0), (3.0, 0.5)])
def test_laplace_closed_form(scale, sens):
    mu = mp.mpf(sens) / scale
    for e in (-1.0, -0.05, 0.0, 0.04, 0.2, 1.5):
        with mp.workdps(40):
            if e <= -mu:
                want = 1 - mp.exp(e)
            elif e >= mu:
                want = mp.mpf(0)
            else:
                want = 1 - mp.exp((e - mu) / 2)
        with workprec(128):
            got = single_step_delta(Laplace(scale, sens), e)
        assert _f(got) == pytest.approx(float(want), rel=1e-15, abs=1e-300)


def test_two_point_closed_form():
    for eps0, d0 in ((0.1, 0.0), (1.0, 1e-3)):
        mech = RandomizedResponse(eps0) if d0 == 0 else ApproxDP(eps0, d0)
        for e in (0.0, 0.05, 0.5):
            with mp.workdps(40):
                a = mp.exp(eps0) / (1 + mp.exp(eps0))
                want = d0 + (1 - d0) * (a - mp.exp(e) * (1 - a)) if e < eps0 else d0
            with workprec(128):
                got = single_step_delta(mech, e)
            assert _f(got) == pytest.approx(float(want), rel=1e-15)


def test_exact_value_refuses_inexact_balls():
    with workprec(64):
        ball = arb(1) / 3
    with pytest.raises(ArithmeticError, match="exact"):
        exact_value(ball)
    with pytest.raises(ArithmeticError):
        LaplaceStep(1.0).delta(ball)


# --- registry -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NoisyCopy(Mechanism):
    """A user mechanism whose dominating pair is the Gaussian with this sigma."""

    sigma: float = 2.0

    def _cumulants(self, order):
        mu2 = 1.0 / self.sigma**2
        return symmetric_cumulants([-mu2 / 2, mu2][:order] + [0.0] * max(0, order - 2))


def test_registration_of_a_new_mechanism():
    with pytest.raises(ValueError, match="does not apply"):
        lattice_step(_NoisyCopy())
    register_lattice_step(_NoisyCopy)(lambda m, direction="P||Q": GaussianStep(m.sigma))
    try:
        a = lattice_delta_interval([(_NoisyCopy(2.0), 20)], 1.0, h=2.0**-9)
        b = lattice_delta_interval([(Gaussian(2.0), 20)], 1.0, h=2.0**-9)
        assert a.lower == b.lower and a.upper == b.upper
    finally:
        unregister_certified(_NoisyCopy)  # back to "no step"


def test_bad_direction():
    with pytest.raises(ValueError, match="direction"):
        lattice_step(Laplace(1.0), "sideways")


# --- compositions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.1, 0.6, 1.2, 1.9])
def test_laplace_two_fold_brackets_quadrature(eps):
    with mp.workdps(30):
        want = laplace_two_fold(1.0, eps)
    b = lattice_delta_interval([(Laplace(1.0), 2)], eps, h=2.0**-10)
    assert b.lower_mpf <= want <= b.upper_mpf
    assert float(b.upper_mpf - b.lower_mpf) <= 1e-5


def test_laplace_target_width_and_pld():
    """Issue 6: Laplace mu = 0.1, m = 1000, delta = 1e-5 to within 0.1% (here ~1e-6)."""
    b = lattice_epsilon_interval([(Laplace(10.0), 1000)], 1e-5)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert 0 < hi - lo <= 1e-4 * hi
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    ref = pld.from_laplace_mechanism(10.0, value_discretization_interval=1e-4)
    ref = ref.self_compose(1000).get_epsilon_for_delta(1e-5)
    assert lo - 1e-4 <= ref <= hi + 1e-4  # the PLD's own discretization error ~1e-4


def test_randomized_response_brackets_the_binomial():
    comp = [(RandomizedResponse(0.1), 1000)]
    exact = exact_epsilon(comp, 1e-5).epsilon
    b = lattice_epsilon_interval(comp, 1e-5)
    assert float(b.lower_mpf) <= exact <= float(b.upper_mpf)
    assert float(b.upper_mpf - b.lower_mpf) <= 1e-3 * exact
    for eps in (3.0, 10.0):
        want = exact_delta(comp, eps).delta
        d = lattice_delta_interval(comp, eps)
        assert float(d.lower_mpf) <= want * (1 + 1e-12) and want <= float(d.upper_mpf) * (1 + 1e-12)


def test_approx_dp_delta_part_enters_the_lattice():
    comp = [(ApproxDP(0.1, 1e-9), 1000)]
    exact = exact_epsilon(comp, 1e-5).epsilon
    b = lattice_epsilon_interval(comp, 1e-5)
    assert float(b.lower_mpf) <= exact <= float(b.upper_mpf)
    assert float(b.upper_mpf - b.lower_mpf) <= 1e-3 * exact
    # delta part above the target: no finite eps, and the upper end says so
    inf = lattice_epsilon_interval([(ApproxDP(0.1, 1e-7), 1000)], 1e-5)
    assert not inf.upper.is_finite


def test_heterogeneous_gaussians_bracket_gdp():
    comp = [(Gaussian(2.0), 30), (Gaussian(5.0), 200)]
    mu = math.sqrt(30 / 4 + 200 / 25)  # GDP Cor. 3.3
    for eps in (0.5, 3.0):
        d = lattice_delta_interval(comp, eps, h=2.0**-10)
        want = delta_mu(mu, eps)
        assert float(d.lower_mpf) <= want <= float(d.upper_mpf)
        assert float(d.upper_mpf - d.lower_mpf) <= 1e-4 * want


def test_heterogeneous_mixture_is_consistent():
    """Laplace + subsampled Gaussian + randomized response: the lattice interval must overlap every
    other certified method (combine raises if two are disjoint) and be the tightest."""
    comp = [(Laplace(20.0), 100), (PoissonSubsampledGaussian(1.0, 0.02), 300),
            (RandomizedResponse(0.05), 50)]
    b = certified_epsilon(comp, 1e-5)
    assert b.upper_method.startswith("lattice") and b.lower_method.startswith("lattice")
    assert float(b.upper_mpf - b.lower_mpf) <= 1e-3 * float(b.upper_mpf)
