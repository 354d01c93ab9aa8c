"""``auto`` keeps its time budget (issue 12, "no valid query of auto takes more than its time
budget").

The fuzz campaign of seed 31337 (``benchmarks/fuzz_run.py --draws 10000 --checked 1000 --seed
31337 --jobs 2``) left 40 of 2398 ``auto`` calls over the 3.5 s budget, at most 6.25 s: steps
that could not read the clock while they ran. Two kinds:

* a certified Arb quadrature (the subsampled Gaussian's Chernoff moment E_P[w^s]): 155 000
  evaluations of the integrand inside one ``acb.integral``, 7 s on an idle machine. Now the
  deadline is read at every evaluation (:func:`certify.budget.integral`);
* a long FLINT product of the certified lattice (~1 s at 1e6 coefficients), started just before
  the deadline. Now a product whose typical cost exceeds the time left is refused before it
  starts (:data:`certify.lattice_grid.PRODUCT_SECONDS`), and ``auto`` keeps
  :data:`numeric.auto.RESERVE_FRACTION` of its budget back from the certified step.

A budget never changes a number: a step finishes exactly as without one, or is refused.
"""

from __future__ import annotations

import random
import time

import pytest

flint = pytest.importorskip("flint")

from certify.budget import integral, time_budget  # noqa: E402
from certify.lattice_grid import PRODUCT_SECONDS, mul_cut_rescale  # noqa: E402
from certify.mechanisms.subsampled_gaussian import sg_power_moment  # noqa: E402
from numeric import auto as auto_module  # noqa: E402
from numeric.auto import AUTO_TIME_BUDGET, RESERVE_FRACTION, auto_delta, auto_epsilon  # noqa: E402
from numeric.cgf import clear_cgf_cache  # noqa: E402
from numeric.errors import BudgetExceeded, NotApplicable  # noqa: E402
from numeric.mechanisms import Gaussian, Laplace, PoissonSubsampledGaussian  # noqa: E402

acb, arb = flint.acb, flint.arb


def _integrand(z, analytic):
    return (-z * z / 2).exp() * (3 * z).cos()


def _same_ball(a, b) -> bool:
    return a.real.mid() == b.real.mid() and a.real.rad() == b.real.rad() and \
        a.imag.mid() == b.imag.mid() and a.imag.rad() == b.imag.rad()


# ---------------------------------------------------------------------------------------------
# certify.budget.integral


def test_integral_without_or_within_a_budget_is_acb_integral_bit_for_bit():
    plain = acb.integral(_integrand, arb(-10), arb(12))
    assert _same_ball(integral(_integrand, arb(-10), arb(12), "test"), plain)
    with time_budget(60.0):
        assert _same_ball(integral(_integrand, arb(-10), arb(12), "test"), plain)
    # the value is the oracle's: int e^{-z^2/2} cos 3z = sqrt(2 pi) e^{-9/2} (tails < 1e-20)
    exact = (2 * arb.pi()).sqrt() * arb(-4.5).exp()
    assert abs(float((plain.real - exact).mid())) < 1e-15


def test_integral_past_its_deadline_raises_and_names_the_step():
    with time_budget(1e-9):
        time.sleep(1e-3)
        with pytest.raises(BudgetExceeded, match="in the test quadrature"):
            integral(_integrand, arb(-10), arb(12), "in the test quadrature")


def test_integral_stops_within_an_evaluation_of_the_deadline():
    calls = []

    def slow(z, analytic):
        calls.append(1)
        time.sleep(0.002)
        return _integrand(z, analytic)

    t0 = time.monotonic()
    with time_budget(0.05), pytest.raises(BudgetExceeded, match="slow quadrature"):
        integral(slow, arb(-40), arb(40), "in the slow quadrature")
    spent = time.monotonic() - t0
    # without the budget this integral needs far more than 25 evaluations of 2 ms
    assert spent < 0.05 + 0.5
    assert 0 < len(calls) < 200


def test_chernoff_moment_quadrature_keeps_a_short_budget():
    # the fuzz's slowest auto call spent 6 s in this one, the last step of the certified
    # evaluation's precision loop (128 .. 2048 bits). The evaluations now read the clock; Arb
    # computes its Gauss-Legendre nodes for a new precision inside acb.integral before any
    # evaluation, which cannot: at 1024 bits the whole quadrature takes ~2 s (idle machine),
    # the budgeted one 0.02 s, or ~0.2 s when the nodes are new to the process.
    t0 = time.monotonic()
    with flint.ctx.workprec(1024), time_budget(0.02), pytest.raises(BudgetExceeded):
        sg_power_moment(0.29516826037787214, 1.6147059640587024e-06, arb(-1e-8))
    assert time.monotonic() - t0 < 1.0  # half the unbudgeted time, at any load up to ~4


def test_precision_doubling_is_refused_with_its_typical_growth():
    from certify.budget import PRECISION_DOUBLING_FACTOR
    from certify.chernoff import chernoff_delta_bound

    assert PRECISION_DOUBLING_FACTOR >= 3.4  # the least growth measured (256 -> 512 bits)
    comp = [(PoissonSubsampledGaussian(0.29516826037787214, 1.6147059640587024e-06), 1344)]
    t0 = time.monotonic()
    with time_budget(1.0):
        try:
            chernoff_delta_bound(comp, 287.0)
        except (NotApplicable, ArithmeticError):  # refused (BudgetExceeded), or no finite ball
            pass
    assert time.monotonic() - t0 < 1.0 + 0.5


# ---------------------------------------------------------------------------------------------
# the lattice product


def _poly(n: int, bits: int, seed: int) -> flint.fmpz_poly:
    rng = random.Random(seed)
    return flint.fmpz_poly([rng.getrandbits(bits) for _ in range(n)])


def test_long_product_refused_before_it_starts_when_it_cannot_fit():
    a = _poly(200_000, 80, 1)
    assert 2 * 200_000 * PRODUCT_SECONDS > 0.01
    t0 = time.monotonic()
    with time_budget(0.01), pytest.raises(BudgetExceeded, match="lattice product of 400000"):
        mul_cut_rescale(a, a, 80, True)
    assert time.monotonic() - t0 < 0.05  # refused, not computed (the product takes ~0.2 s)


def test_products_are_unchanged_under_a_budget():
    a, b = _poly(40_000, 80, 2), _poly(9_000, 80, 3)
    plain = mul_cut_rescale(a, b, 80, False)
    with time_budget(60.0):
        assert mul_cut_rescale(a, b, 80, False) == plain
    small = _poly(1000, 80, 4)
    with time_budget(1e-9):  # short products are not estimated (the caller checks after)
        time.sleep(1e-3)
        assert mul_cut_rescale(small, small, 80, True) == mul_cut_rescale(small, small, 80, True)


# ---------------------------------------------------------------------------------------------
# auto


class _Recorder:
    """A certified plug-in that records the time budget it was given and refuses."""

    options = ("time_budget",)

    def __init__(self) -> None:
        self.budgets: list[float] = []

    def _fn(self, comp, x, **options):
        self.budgets.append(options["time_budget"])
        raise NotApplicable("recorder: refuses everything")

    delta_fn = epsilon_fn = _fn


def test_auto_keeps_a_reserve_from_the_certified_step(monkeypatch):
    rec = _Recorder()
    monkeypatch.setattr(auto_module, "get_method", lambda name, required=True: rec)
    comp = [(Laplace(1.0), 3), (PoissonSubsampledGaussian(0.8, 0.3), 2)]  # no exact method
    t0 = time.monotonic()
    res = auto_epsilon(comp, 1e-5, time_budget=2.0)
    spent_before = time.monotonic() - t0
    assert res.estimate and any("recorder" in t for t in res.details["tried"])
    assert len(rec.budgets) == 1
    assert 0 < rec.budgets[0] <= 2.0 * (1 - RESERVE_FRACTION)
    assert rec.budgets[0] >= 2.0 * (1 - RESERVE_FRACTION) - spent_before - 1e-9
    auto_delta(comp, 1.0, time_budget=AUTO_TIME_BUDGET)
    assert rec.budgets[1] <= AUTO_TIME_BUDGET * (1 - RESERVE_FRACTION)


@pytest.mark.parametrize("terms,query,x", [
    # seed 31337's slowest auto call (6.25 s; 7.3 s replayed alone): Chernoff quadratures
    ([(PoissonSubsampledGaussian(0.29516826037787214, 1.6147059640587024e-06), 1344),
      (PoissonSubsampledGaussian(0.007414104446605727, 2.3058529446702837e-05), 670237400)],
     "delta", 287.0),
    # 4.91 s: the certified lattice's last level
    ([(Laplace(0.003084312791758161, sensitivity=10.972546425612034), 994)],
     "epsilon", 5.09e-226),
])
def test_fuzz_overruns_now_keep_the_budget(terms, query, x):
    clear_cgf_cache()
    t0 = time.monotonic()
    fn = auto_delta if query == "delta" else auto_epsilon
    res = fn(terms, x)
    spent = time.monotonic() - t0
    assert spent < AUTO_TIME_BUDGET + 0.5  # the budget, plus slack for a loaded machine
    assert res.warnings  # whatever answered says what it is


def test_gaussian_auto_is_exact_and_fast():
    t0 = time.monotonic()
    res = auto_epsilon([(Gaussian(1.0), 100)], 1e-5)
    assert res.method == "exact" and time.monotonic() - t0 < AUTO_TIME_BUDGET


def test_long_rediscretization_refused_before_it_starts():
    # seed 777's slowest auto call ran 0.7 s past the deadline in one re-discretization by
    # r = 2 of a 2.6e6-coefficient lower-end sequence (the estimate counted r, not the length)
    from certify.lattice_adaptive import coarsen_upper
    from certify.lattice_measure import LatticePLD

    coeffs = flint.fmpz_poly([1 << 70] * 1_000_000)
    lat = LatticePLD(2.0**-12, 80, 0, coeffs, 0, 1, "P||Q", 1)
    t0 = time.monotonic()
    with time_budget(0.05), pytest.raises(BudgetExceeded, match="of 1000000 points"):
        coarsen_upper(lat, 2)
    assert time.monotonic() - t0 < 0.05 + 0.1  # refused, not computed (~0.3 s)
    small = LatticePLD(2.0**-12, 80, 0, flint.fmpz_poly([1 << 70] * 1000), 0, 1, "P||Q", 1)
    plain = coarsen_upper(small, 2)
    with time_budget(60.0):
        assert coarsen_upper(small, 2) == plain  # a budget never changes a number
