r"""derive.lattice: certified lattice steps for mechanisms compiled from densities or pmfs.

Oracles, independent of derive's sympy integration and of the step code:

* mpmath tanh-sinh quadrature (30 digits, split at the crossing point found by mpmath) of the
  single-step hockey-stick integral :math:`\int (q - e^\varepsilon p)_+ dx` for logistic and
  generalized-Gaussian noise, both pair orders;
* exact sums over the outcomes of a 3-point pmf (single step) and the multinomial law of the
  m-fold composition (mpmath, 40 digits);
* certify's own closed-form steps (Laplace, Gaussian, randomized response, Poisson-subsampled
  Gaussian) for the same pairs written as derive specs;
* dp_accounting PLDs (optional) built here from the exact law of the logistic PLLR (closed-form
  inverse and CDF), rounded pessimistically and optimistically: they bracket eps(delta).
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from pathlib import Path

import pytest

sp = pytest.importorskip("sympy")
mp = pytest.importorskip("mpmath")
pytest.importorskip("flint")

from flint import arb  # noqa: E402
from lattice_contract import assert_step_contract  # noqa: E402

from certify.engine import workprec  # noqa: E402
from certify.lattice import (  # noqa: E402
    lattice_delta_bound,
    lattice_delta_interval,
    lattice_epsilon_interval,
    single_step_delta,
)
from certify.lattice_steps import (  # noqa: E402
    ApproxDPStep,
    GaussianStep,
    LaplaceStep,
    SubsampledGaussianStep,
    lattice_step,
)
from derive.builtins import GAUSSIAN, LAPLACE, RANDOMIZED_RESPONSE  # noqa: E402
from derive.compile import compile_mechanism  # noqa: E402
from derive.lattice import DerivedLatticeStep, _sign, arb_function  # noqa: E402
from derive.mechanism import DensityMechanism, DiscreteMechanism, Parameter  # noqa: E402
from numeric.exact import exact_epsilon  # noqa: E402
from numeric.mechanisms import Laplace, PoissonSubsampledGaussian, RandomizedResponse  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GRID = [k / 16 for k in range(-48, 49)]


def _example(name: str, attr: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, attr)


def _compile(spec, order=4, **values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_mechanism(spec, order=order, strategy="quadrature", **values)


_x = sp.Symbol("x", real=True)
_mu = sp.Symbol("mu", positive=True)
_c = sp.Symbol("c", positive=True)
_w = sp.Symbol("w", positive=True)


def _phi(z):
    return sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)


LOGISTIC = _example("logistic_noise", "LOGISTIC")
GENERALIZED_GAUSSIAN = _example("generalized_gaussian_noise", "GENERALIZED_GAUSSIAN")
THREE_POINT = DiscreteMechanism(
    "three-point",
    p=(sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6)),
    q=(sp.Rational(1, 2) - _c / 4, sp.Rational(1, 3), sp.Rational(1, 6) + _c / 4),
    params=(Parameter(_c, default=0.6, domain=(0.0, 1.0), typical=(0.1, 0.9)),),
    description="an asymmetric 3-point pair with an atom of L at 0",
)
MIXTURE = DensityMechanism(
    "gaussian-mixture", _x, _phi(_x), (_phi(_x - _mu) + _phi(_x + _mu)) / 2,
    params=(Parameter(_mu, default=1.0, typical=(0.5, 2.0)),),
    description="Q a symmetric Gaussian mixture: L = log cosh(mu x) - mu^2/2, not monotone",
)


def _subsampled(declared):
    return DensityMechanism(
        "subsampled-gaussian", _x, _phi(_x), (1 - _w) * _phi(_x) + _w * _phi(_x - _mu),
        params=(Parameter(_mu, default=1.0, typical=(0.5, 2.0)),
                Parameter(_w, default=0.1, domain=(0.0, 1.0), typical=(0.01, 0.5))),
        pllr_monotone=declared,
        description="Poisson-subsampled Gaussian; L = log(1 - w + w e^{mu x - mu^2/2})",
    )


SUBSAMPLED = _subsampled("increasing")


@pytest.fixture(scope="module")
def mechs():
    return {
        "rr": _compile(RANDOMIZED_RESPONSE, eps0=1.0),
        "three": _compile(THREE_POINT, order=2, c=0.6),  # derive's symbolic tidying: slow at 4
        "laplace": _compile(LAPLACE, mu=1.0),
        "gaussian": _compile(GAUSSIAN, mu=0.5),
        "logistic": _compile(LOGISTIC, mu=0.5),
        "gengauss": _compile(GENERALIZED_GAUSSIAN, mu=0.5),
        "subsampled": _compile(SUBSAMPLED, mu=1.0, w=0.1),
    }


CASES = [(name, d) for name in ("rr", "three", "laplace", "gaussian", "logistic", "gengauss",
                                 "subsampled") for d in ("P||Q", "Q||P")]


def _f(x: arb) -> float:
    return float(x.mid())


def _mpf(x: arb):
    """The ball's midpoint as an mpmath number (70 digits; arb.mid rounds to ctx.prec)."""
    with workprec(256), mp.workdps(80):
        return +mp.mpf(x.mid().str(70, radius=False))


# --- contract ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "direction"), CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_step_contract(mechs, name, direction):
    """delta_1 non-increasing, convex in e^eps, >= 1 - e^eps; tails non-increasing probabilities;
    tight balls; delta = T_Q - e^eps T_P away from atoms."""
    step = lattice_step(mechs[name], direction)
    assert isinstance(step, DerivedLatticeStep)
    assert_step_contract(step, GRID)
    with workprec(128):
        for e in (-2.3, -0.05, 0.3, 1.7):  # no atom of any case here
            tq, tp = step.tails(arb(e))
            want = tq - arb(e).exp() * tp
            assert abs(_f(step.delta(arb(e)) - want)) <= 1e-28
    assert step.rough_std() > 0
    assert direction in step.describe()


def test_steps_are_cached_and_hash_equal(mechs):
    m = mechs["logistic"]
    a = lattice_step(m)
    assert lattice_step(m) is a
    twin = _compile(LOGISTIC, mu=0.5)
    b = lattice_step(twin)
    assert a == b and hash(a) == hash(b)
    assert lattice_step(m, "Q||P") != a


def test_tails_need_exact_points(mechs):
    step = lattice_step(mechs["logistic"])
    with workprec(64):
        third = arb(1) / 3
    with pytest.raises(ArithmeticError, match="exact"):
        step.tails(third)
    # delta accepts a ball: the enclosure covers delta over it (delta is non-increasing)
    with workprec(128):
        d = step.delta(arb(0.25, 1e-3))
        assert d.contains(step.delta(arb(0.25)))


# --- single-step oracles -----------------------------------------------------------------------


def _quad_delta(p, q, eps, guess, kinks=()):
    """int (q - e^eps p)_+ dx by mpmath, split at the crossing log(q/p) = eps and the kinks."""
    xc = mp.findroot(lambda x: mp.log(q(x) / p(x)) - eps, guess)
    pts = sorted({xc - 8, xc, xc + 8, *kinks})
    return mp.quad(lambda x: max(q(x) - mp.exp(eps) * p(x), 0), [-mp.inf, *pts, mp.inf])


@pytest.mark.parametrize("direction", ["P||Q", "Q||P"])
def test_logistic_matches_quadrature(mechs, direction):
    step = lattice_step(mechs["logistic"], direction)
    mu = mp.mpf(0.5)

    def p0(x):
        return mp.exp(-x) / (1 + mp.exp(-x)) ** 2

    def q0(x):
        return p0(x - mu)

    p, q = (q0, p0) if direction == "Q||P" else (p0, q0)
    with mp.workdps(30):
        for e in (-0.4, -0.1, 0.0, 0.15, 0.45):
            want = _quad_delta(p, q, mp.mpf(e), 0.25)
            with workprec(128):
                got = step.delta(arb(e))
            assert abs(_f(got) - float(want)) <= 1e-16 * float(want) + 1e-25
            assert abs(_mpf(got) - want) <= mp.mpf(10) ** -25


def test_generalized_gaussian_matches_quadrature(mechs):
    """sympy's antiderivatives here are incomplete gamma functions (substitution v = mu - x)."""
    step = lattice_step(mechs["gengauss"])
    mu = mp.mpf(0.5)
    with mp.workdps(30):
        c = 1 / (2 * mp.gamma(mp.mpf(5) / 3))

        def p(x):
            return c * mp.exp(-abs(x) ** mp.mpf(1.5))

        def q(x):
            return p(x - mu)

        for e in (-0.3, 0.0, 0.2):
            want = _quad_delta(p, q, mp.mpf(e), 0.25, kinks=(0, mu))
            with workprec(128):
                got = step.delta(arb(e))
            assert abs(_mpf(got) - want) <= mp.mpf(10) ** -25


def _three_point(c):
    p = [mp.mpf(1) / 2, mp.mpf(1) / 3, mp.mpf(1) / 6]
    q = [mp.mpf(1) / 2 - c / 4, mp.mpf(1) / 3, mp.mpf(1) / 6 + c / 4]
    return p, q


@pytest.mark.parametrize("direction", ["P||Q", "Q||P"])
def test_three_point_exact_sums(mechs, direction):
    step = lattice_step(mechs["three"], direction)
    with mp.workdps(40):
        p, q = _three_point(mp.mpf(0.6))
        if direction == "Q||P":
            p, q = q, p
        ell = [mp.log(b / a) for a, b in zip(p, q, strict=True)]
        assert ell[1] == 0  # an atom of L exactly at a grid point
        for e in (-1.0, -0.2, 0.0, 0.1, 0.3, 0.7):
            want_d = mp.fsum(max(b - mp.exp(e) * a, 0) for a, b in zip(p, q, strict=True))
            want_q = mp.fsum(b for b, v in zip(q, ell, strict=True) if v >= e)
            want_p = mp.fsum(a for a, v in zip(p, ell, strict=True) if v >= e)
            with workprec(128):
                d = step.delta(arb(e))
                tq, tp = step.tails(arb(e))
            for got, want in ((d, want_d), (tq, want_q), (tp, want_p)):
                assert abs(_mpf(got) - want) <= mp.mpf(10) ** -30
                assert got.rad() < 1e-30


@pytest.mark.parametrize(("name", "ref"), [
    ("rr", ApproxDPStep(1.0)),
    ("laplace", LaplaceStep(1.0)),
    ("gaussian", GaussianStep(2.0)),
])
def test_builtin_pairs_agree_with_certify_steps(mechs, name, ref):
    """The built-ins written as derive specs give the same enclosures as certify's closed
    forms, at grid points, atoms (+-1 for Laplace and RR) and the kink of Laplace's law."""
    step = lattice_step(mechs[name])
    with workprec(128):
        for e in [*GRID, 1.0, -1.0, 0.0]:
            x = arb(e)
            for a, b in ((step.delta(x), ref.delta(x)), *zip(step.tails(x), ref.tails(x),
                                                              strict=True)):
                assert a.overlaps(b)
                assert abs(_f(a) - _f(b)) <= 1e-30


@pytest.mark.parametrize("direction", ["P||Q", "Q||P"])
def test_declared_monotone_subsampled_gaussian(mechs, direction):
    """sympy cannot prove 1 - w + w e^t > 0 (w < 1 is not a sympy assumption), so the spec
    declares monotonicity; the step says so and agrees with certify's closed form."""
    step = lattice_step(mechs["subsampled"], direction)
    ref = SubsampledGaussianStep(1.0, 0.1, swapped=direction == "Q||P")
    assert "ASSUMPTION" in step.describe() and step.assumptions
    with workprec(128):
        for e in [*GRID, math.log(0.9), -math.log(0.9)]:
            x = arb(e)
            for a, b in ((step.delta(x), ref.delta(x)), *zip(step.tails(x), ref.tails(x),
                                                              strict=True)):
                assert a.overlaps(b)
                assert abs(_f(a) - _f(b)) <= 1e-28


def test_decreasing_pllr_mirrors_the_increasing_one(mechs):
    """Q = Logistic(-mu, 1): L is decreasing; x -> -x maps the pair onto the logistic example,
    so both orders give the same law of L."""
    x = LOGISTIC.x
    mu = LOGISTIC.params[0].symbol
    left = DensityMechanism("logistic-left", x, LOGISTIC.p, LOGISTIC.p.subs(x, x + mu),
                            params=LOGISTIC.params)
    mech = _compile(left, mu=0.5)
    assert not lattice_step(mech)._state.plan.pieces[0].increasing
    for direction in ("P||Q", "Q||P"):
        a, b = lattice_step(mech, direction), lattice_step(mechs["logistic"], direction)
        with workprec(128):
            for e in GRID[::4]:
                x_ = arb(e)
                for u, v in ((a.delta(x_), b.delta(x_)), *zip(a.tails(x_), b.tails(x_),
                                                              strict=True)):
                    assert u.overlaps(v) and abs(_f(u) - _f(v)) <= 1e-30


# --- refusals ------------------------------------------------------------------------------------


def test_non_monotone_pllr_is_refused():
    mech = _compile(MIXTURE, mu=1.0)
    with pytest.raises(ValueError, match=r"does not apply.*not proven monotone"):
        lattice_step(mech)
    with pytest.raises(ValueError, match="does not apply"):
        single_step_delta(mech, 0.5)


def test_wrong_declarations_are_caught():
    wrong = DensityMechanism(
        "gaussian-mixture-declared", _x, MIXTURE.p, MIXTURE.q, params=MIXTURE.params,
        pllr_monotone="increasing")
    with pytest.raises(ValueError, match=r"does not apply.*(wrong sign|contradict)"):
        lattice_step(_compile(wrong, mu=1.0))
    contra = DensityMechanism("logistic-declared", LOGISTIC.x, LOGISTIC.p, LOGISTIC.q,
                              params=LOGISTIC.params, pllr_monotone="decreasing")
    with pytest.raises(ValueError, match=r"does not apply.*proven positive"):
        lattice_step(_compile(contra, mu=0.5))
    undeclared = _subsampled(None)
    with pytest.raises(ValueError, match=r"does not apply.*not proven monotone"):
        lattice_step(_compile(undeclared, mu=1.0, w=0.1))
    with pytest.raises(ValueError, match="pllr_monotone"):
        _subsampled("up")


def test_sign_calculus():
    u = sp.Symbol("u", positive=True)
    assert _sign(sp.exp(_mu) - 1) == 1
    assert _sign(sp.sqrt(_mu + u) - sp.sqrt(u)) == 1
    assert _sign(sp.log(1 + u)) == 1
    assert _sign(sp.tanh(_x)) is None
    assert _sign(sp.exp(_x) - sp.exp(-_x)) is None
    assert _sign(1 - _w + _w * sp.exp(_x)) is None  # needs w < 1


def test_arb_compiler_is_strict_and_rigorous():
    f = arb_function(sp.erf(_x / sp.sqrt(2)) / 2 + sp.Rational(1, 3), [_x])
    with workprec(200):
        v = f([arb(1)])
    with mp.workdps(60):
        want = mp.erf(1 / mp.sqrt(2)) / 2 + mp.mpf(1) / 3
    with mp.workdps(60):
        assert abs(_mpf(v) - want) <= mp.mpf(float(v.rad())) * 2 + mp.mpf(10) ** -58
    for bad in (sp.Float(0.1) * _x, sp.Piecewise((1, _x > 0), (0, True)), sp.besselj(0, _x),
                sp.Integral(_x, _x), sp.I * _x, _mu * _x):
        with pytest.raises(TypeError):
            arb_function(bad, [_x])


# --- compositions --------------------------------------------------------------------------------


def test_derived_laplace_composition_equals_builtin(mechs):
    comp_d = [(mechs["laplace"], 100)]
    comp_b = [(Laplace(1.0), 100)]
    a = lattice_epsilon_interval(comp_d, 1e-5, h=2.0**-10)
    b = lattice_epsilon_interval(comp_b, 1e-5, h=2.0**-10)
    assert a.lower_mpf <= b.upper_mpf and b.lower_mpf <= a.upper_mpf
    assert abs(float(a.lower_mpf - b.lower_mpf)) <= 1e-9
    assert abs(float(a.upper_mpf - b.upper_mpf)) <= 1e-9


def test_derived_randomized_response_brackets_the_binomial(mechs):
    comp = [(mechs["rr"], 200)]
    exact = exact_epsilon([(RandomizedResponse(1.0), 200)], 1e-5).epsilon
    b = lattice_epsilon_interval(comp, 1e-5, h=2.0**-10)
    assert float(b.lower_mpf) <= exact <= float(b.upper_mpf)
    assert float(b.upper_mpf - b.lower_mpf) <= 1e-4 * exact


def _three_point_delta(m, eps):
    """delta(eps) of the m-fold composition, max over orders, by the multinomial law."""
    with mp.workdps(40):
        p, q = _three_point(mp.mpf(0.6))
        best = mp.mpf(0)
        for pp, qq in ((p, q), (q, p)):
            ell = [mp.log(b / a) for a, b in zip(pp, qq, strict=True)]
            total = mp.mpf(0)
            for i in range(m + 1):
                for j in range(m + 1 - i):
                    k = m - i - j
                    loss = i * ell[0] + j * ell[1] + k * ell[2]
                    if loss > eps:
                        w = mp.factorial(m) / (mp.factorial(i) * mp.factorial(j) * mp.factorial(k))
                        total += w * qq[0] ** i * qq[1] ** j * qq[2] ** k * (
                            1 - mp.exp(eps - loss))
            best = max(best, total)
        return best


def test_three_point_composition_brackets_the_multinomial(mechs):
    comp = [(mechs["three"], 60)]
    for eps in (1.0, 3.0):
        want = _three_point_delta(60, eps)
        b = lattice_delta_interval(comp, eps, h=2.0**-10)
        assert b.lower_mpf <= want <= b.upper_mpf
        assert float(b.upper_mpf - b.lower_mpf) <= 1e-3 * float(want)


def _logistic_pld(mu, d, pessimistic):
    """dp_accounting PLD of logistic noise from the exact law of L under Q (rounded up or
    down to multiples of d): Q(L <= l) = F_Q(x_l), x_l = -log u, u = (r - 1)/(1 - r e^mu),
    r = e^{(l - mu)/2}, F_Q(x) = 1/(1 + u e^mu)."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

    def cdf(ell):
        if ell <= -mu:
            return mp.mpf(0)
        if ell >= mu:
            return mp.mpf(1)
        r = mp.exp((ell - mu) / 2)
        u = (r - 1) / (1 - r * mp.exp(mu))
        return 1 / (1 + u * mp.exp(mu))

    kmin, kmax = math.floor(-mu / d) - 1, math.ceil(mu / d) + 1
    pmf = {}
    with mp.workdps(30):
        prev = cdf(kmin * d)
        for k in range(kmin + 1, kmax + 1):
            cur = cdf(k * d)
            if cur > prev:
                pmf[k if pessimistic else k - 1] = float(cur - prev)
            prev = cur
    return pld.PrivacyLossDistribution.create_from_rounded_probability(
        pmf, 0.0, d, pessimistic_estimate=pessimistic)


def test_logistic_composition_bracketed_by_pld(mechs):
    """m = 100 steps of logistic noise, mu = 0.2: the certified interval lies between the
    optimistic and pessimistic PLDs (dp_accounting, d = 2e-5) and is ~1e-6 wide."""
    mech = _compile(LOGISTIC, mu=0.2)
    b = lattice_epsilon_interval([(mech, 100)], 1e-5)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert 0 < hi - lo <= 1e-5
    opt = _logistic_pld(0.2, 2e-5, False).self_compose(100).get_epsilon_for_delta(1e-5)
    pes = _logistic_pld(0.2, 2e-5, True).self_compose(100).get_epsilon_for_delta(1e-5)
    assert opt <= lo <= hi <= pes
    assert pes - opt <= 3e-3


@pytest.mark.slow
def test_logistic_composition_m1000(mechs):
    mech = _compile(LOGISTIC, mu=0.1)
    b = lattice_epsilon_interval([(mech, 1000)], 1e-5)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert 0 < hi - lo <= 1e-4 * hi
    opt = _logistic_pld(0.1, 1e-5, False).self_compose(1000).get_epsilon_for_delta(1e-5)
    pes = _logistic_pld(0.1, 1e-5, True).self_compose(1000).get_epsilon_for_delta(1e-5)
    assert opt <= lo <= hi <= pes


@pytest.mark.slow
def test_declared_subsampled_composition_equals_builtin(mechs):
    comp_d = [(mechs["subsampled"], 200)]
    comp_b = [(PoissonSubsampledGaussian(1.0, 0.1), 200)]
    a = lattice_epsilon_interval(comp_d, 1e-5)
    b = lattice_epsilon_interval(comp_b, 1e-5)
    assert a.lower_mpf <= b.upper_mpf and b.lower_mpf <= a.upper_mpf
    assert abs(float(a.upper_mpf - b.upper_mpf)) <= 1e-6 * float(b.upper_mpf)


@pytest.mark.slow
def test_generalized_gaussian_composition(mechs):
    """Generalized Gaussian, m = 100: a narrow certified interval containing the AEA estimate
    to its own accuracy (AEA is an estimate; here within 1%)."""
    from numeric import compose, epsilon

    mech = mechs["gengauss"]
    b = lattice_epsilon_interval([(mech, 100)], 1e-5)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert 0 < hi - lo <= 1e-5 * hi
    aea = epsilon(compose([(mech, 100)]), 1e-5, "aea").epsilon
    assert abs(aea - lo) <= 1e-2 * lo


def test_declared_monotonicity_reaches_the_bound(mechs):
    """A declared (unproven) monotone PLLR is listed in the Bound's assumptions, hence in
    certificates; proven ones add nothing."""
    b = lattice_delta_bound([(mechs["subsampled"], 2)], 1.0, h=2.0**-6)
    assert any(a.startswith("ASSUMPTION") for a in b.assumptions)
    b = lattice_delta_bound([(mechs["logistic"], 2)], 1.0, h=2.0**-6)
    assert not any(a.startswith("ASSUMPTION") for a in b.assumptions)
