"""The certified-mechanism contract: every registered mechanism, every capability, one bracket.

For each class in :mod:`certify.registry` (parametrized over the registry itself, so a new
built-in without a reference fails here), a small composition is certified by every applicable
method (:func:`certify.combine.certified_delta`) and the intersection must bracket a trusted
value computed independently in mpmath at 60 digits:

* Gaussian: the GDP profile delta_mu, mu^2 = m (sensitivity/sigma)^2 (GDP Cor. 2.13, 3.3);
* randomized response / ApproxDP: the binomial (KOV Thm 3.3) sum, with the delta part by GDP
  Eq. 12-13;
* Laplace: the two-fold composition by quadrature of the exact law of L under Q (as in
  tests/test_certify_lattice_steps.py);
* Poisson-subsampled Gaussian: one step, by quadrature of (q - e^eps p)_+ in both pair orders
  (as in tests/test_certify_lattice.py).

Also: a class without certified knowledge gets NotApplicable from ``capability`` and a clean
"not applicable" refusal from ``certified_epsilon`` (or NotApplicable when nothing applies), and
a time budget stops a slow composition.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from lattice_contract import laplace_two_fold, rr_delta  # noqa: E402

from certify.cgf import StepCGF  # noqa: E402
from certify.combine import certified_delta, certified_epsilon  # noqa: E402
from certify.exact_model import ExactComposition  # noqa: E402
from certify.moments import pllr_moments  # noqa: E402
from certify.pllr import ContinuousPart, PLLRMoments  # noqa: E402
from certify.registry import (  # noqa: E402
    CAPABILITIES,
    CertifiedMechanism,
    capability,
    find_capability,
    register_certified,
    registered,
    unregister_certified,
)
from certify.steps import LatticeStep  # noqa: E402
from numeric.errors import BudgetExceeded, NotApplicable  # noqa: E402
from numeric.mechanisms import (  # noqa: E402
    ApproxDP,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from numeric.mechanisms.base import symmetric_cumulants  # noqa: E402
from numeric.mechanisms.random_allocation import RandomAllocation  # noqa: E402

DPS = 60  # closed-form references (exact certified brackets are ~1e-39 wide)


# --- trusted references (mpmath, independent of certify) ------------------------------------------


def _gdp(mu2: mp.mpf, eps: mp.mpf) -> mp.mpf:
    mu = mp.sqrt(mu2)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def _binomial(eps0: mp.mpf, n: int, eps: mp.mpf) -> mp.mpf:
    return rr_delta(eps0, n, eps, DPS)  # the binomial formula (tests/lattice_contract.py)


def _subsampled_one_step(sigma: float, rate: float, eps: mp.mpf) -> mp.mpf:
    """delta(eps) of one Poisson-subsampled Gaussian step in closed form (both orders).

    L(x) = log(1 - p + p e^(mu x - mu^2/2)) is increasing, so {L > e} = {x > x_e} with
    x_e = (log((e^e - 1 + p)/p) + mu^2/2)/mu when e^e > 1 - p (else the whole line):
    P||Q: Q(L > eps) - e^eps P(L > eps); Q||P: P(L < -eps) - e^eps Q(L < -eps).
    """
    mu, p = 1 / mp.mpf(sigma), mp.mpf(rate)

    def cut(e):
        return (mp.log((mp.exp(e) - 1 + p) / p) + mu * mu / 2) / mu

    def sf(x):
        return mp.erfc(x / mp.sqrt(2)) / 2

    x = cut(eps)
    forward = (1 - p) * sf(x) + p * sf(x - mu) - mp.exp(eps) * sf(x)
    if mp.exp(-eps) > 1 - p:
        y = cut(-eps)
        swapped = (1 - sf(y)) - mp.exp(eps) * ((1 - p) * (1 - sf(y)) + p * (1 - sf(y - mu)))
    else:
        swapped = mp.mpf(0)
    return max(forward, swapped, mp.mpf(0))


# class -> (composition, eps, trusted delta(eps))
CASES = {
    Gaussian: ([(Gaussian(8.0, 0.5), 10)], 0.1,
               lambda: _gdp(10 * (mp.mpf(0.5) / 8) ** 2, mp.mpf(0.1))),
    Laplace: ([(Laplace(1.0), 2)], 0.6, lambda: laplace_two_fold(1.0, 0.6)),
    RandomizedResponse: ([(RandomizedResponse(0.5), 5)], 1.0,
                         lambda: _binomial(mp.mpf(0.5), 5, mp.mpf(1))),
    ApproxDP: ([(ApproxDP(0.3, 1e-3), 4)], 0.5,
               lambda: (lambda d: d + (1 - d) * _binomial(mp.mpf(0.3), 4, mp.mpf(0.5)))(
                   1 - (1 - mp.mpf(1e-3)) ** 4)),
    PoissonSubsampledGaussian: ([(PoissonSubsampledGaussian(4.0, 0.2), 1)], 0.1,
                                lambda: _subsampled_one_step(4.0, 0.2, mp.mpf(0.1))),
    # one round per epoch is the Gaussian with mu = 1/sigma: 3 epochs are mu^2 = 3/4
    RandomAllocation: ([(RandomAllocation(2.0, 1), 3)], 0.5,
                       lambda: _gdp(mp.mpf(3) / 4, mp.mpf(0.5))),
}
QUADRATURE_DPS = 30  # references by quadrature (brackets from the lattice are ~1e-8 wide)


def _registered_classes() -> list[type]:
    import certify.mechanisms  # noqa: F401  (registers the built-ins)

    return list(registered())


@pytest.mark.parametrize("cls", _registered_classes(), ids=lambda c: c.__name__)
def test_registered_mechanism_brackets_a_trusted_value(cls):
    assert cls in CASES, f"registered mechanism {cls.__name__} has no contract reference"
    comp, eps, ref = CASES[cls]
    with mp.workdps(QUADRATURE_DPS if cls is Laplace else DPS):
        want = ref()
    b = certified_delta(comp, eps)
    with mp.workdps(DPS):
        slack = mp.mpf(10) ** -45
        assert b.lower_mpf - slack <= want <= b.upper_mpf + slack, (b.to_dict(), want)
    assert not any(w.startswith("not applicable: ") and "Error" in w for w in b.warnings)


@pytest.mark.parametrize("cls", _registered_classes(), ids=lambda c: c.__name__)
def test_registered_capabilities_have_their_types(cls):
    knowledge = registered()[cls]
    assert isinstance(knowledge, CertifiedMechanism) and knowledge.name
    (mech, count), = CASES[cls][0]
    kinds = {"moments": PLLRMoments, "continuous_parts": (ContinuousPart, type(None)),
             "lattice_step": LatticeStep, "chernoff": StepCGF,
             "exact_profile": ExactComposition, "normal_pllr": bool}
    assert set(kinds) == set(CAPABILITIES)
    for name in CAPABILITIES:
        fn = getattr(knowledge, name)
        if fn is None:
            continue
        assert capability(mech, name) is fn
        try:
            if name == "moments":
                out = pllr_moments(mech)
            elif name in ("lattice_step", "chernoff"):
                out = fn(mech, "P||Q")
            elif name == "exact_profile":
                out = fn(mech, count)
            else:
                out = fn(mech)
        except NotApplicable as exc:  # a capability may refuse an instance (e.g. rate < 1)
            assert type(mech).__name__ in str(exc)
            continue
        assert isinstance(out, kinds[name]), (name, out)


# --- a mechanism certify knows nothing about ------------------------------------------------------


@dataclass(frozen=True)
class _Unknown(Mechanism):
    sigma: float = 10.0

    def _cumulants(self, order):
        mu2 = 1.0 / self.sigma**2
        return symmetric_cumulants([-mu2 / 2, mu2][:order] + [0.0] * max(0, order - 2))


@pytest.mark.parametrize("name", CAPABILITIES)
def test_unknown_mechanism_capability_is_not_applicable(name):
    assert find_capability(_Unknown(), name) is None
    with pytest.raises(NotApplicable, match=rf"does not apply to _Unknown.*{name}"):
        capability(_Unknown(), name)
    with pytest.raises(ValueError, match="name must be one of"):
        capability(_Unknown(), "telepathy")


def test_unknown_mechanism_alone_is_not_applicable():
    with pytest.raises(NotApplicable, match="no certified method applies") as ei:
        certified_epsilon([(_Unknown(), 5)], 1e-5)
    for method in ("exact", "one-step", "eeai", "chernoff", "lattice"):
        assert f"{method} (" in str(ei.value)


def test_unknown_mechanism_gets_clean_refusals_when_another_method_applies():
    # a lattice step only: exact, EEAI and Chernoff refuse cleanly, the lattice answers
    register_certified(_Unknown, CertifiedMechanism(
        "_Unknown", lattice_step=lambda m, d: capability(Gaussian(m.sigma), "lattice_step")(
            Gaussian(m.sigma), d)))
    try:
        b = certified_epsilon([(_Unknown(), 5)], 1e-3)
        ref = certified_epsilon([(Gaussian(10.0), 5)], 1e-3)
    finally:
        unregister_certified(_Unknown)
    assert b.lower_method.startswith(("lattice", "trivial"))
    assert b.lower_mpf <= ref.lower_mpf and ref.upper_mpf <= b.upper_mpf
    refusals = [w for w in b.warnings if w.startswith("not applicable: ")]
    assert sorted(w.split(" ")[2] for w in refusals) == ["chernoff", "eeai", "exact", "one-step"]
    # the capability refusals name the mechanism; one-step refuses five steps
    assert all("_Unknown" in w for w in refusals if "one-step" not in w)


def test_register_refuses_a_duplicate_and_bad_knowledge():
    with pytest.raises(ValueError, match="already"):
        register_certified(Gaussian, CertifiedMechanism("Gaussian"))
    with pytest.raises(ValueError, match="knowledge"):
        register_certified(_Unknown, {"moments": None})
    with pytest.raises(ValueError, match="callable"):
        CertifiedMechanism("x", moments=3)
    with pytest.raises(ValueError, match="cls"):
        unregister_certified(_Unknown)


# --- vacuous parts and bad input -----------------------------------------------------------------


def test_a_vacuous_part_does_not_make_the_result_vacuous():
    # small delta: the EEAI alone is vacuous, the result (Chernoff, lattice) is not (a mechanism
    # without an exact profile, so that every method runs)
    b = certified_epsilon([(Laplace(1.0), 10)], 1e-5)
    assert not b.vacuous
    assert not any(w.startswith("vacuous:") for w in b.warnings)
    assert any("eeai alone was vacuous" in w and "EEAI" in w for w in b.warnings)


@pytest.mark.parametrize("budget", [0, -1.0, float("nan"), float("inf"), "soon", True])
def test_bad_time_budget(budget):
    with pytest.raises(ValueError, match="time_budget"):
        certified_delta([(Gaussian(1.0), 2)], 1.0, time_budget=budget)


def test_bad_input_is_a_value_error_not_a_refusal():
    with pytest.raises(ValueError, match="eps must be >= 0") as ei:
        certified_delta([(_Unknown(), 2)], -1.0)
    assert not isinstance(ei.value, NotApplicable)
    with pytest.raises(ValueError, match="delta must lie in") as ei:
        certified_epsilon([(Laplace(1.0), 2)], 1.5)
    assert not isinstance(ei.value, NotApplicable)


# --- the time budget -----------------------------------------------------------------------------


def test_time_budget_stops_the_lattice_cooperatively():
    # 30 distinct Laplace terms: EEAI and Chernoff take well under a second, the default lattice
    # ~20 s; under a 2 s budget the lattice runs on the finest coarser grid the budget affords
    # (chosen from point counts, so the answer does not depend on the machine's load): labelled,
    # sound and no wider than the cheap methods' answer
    # (certfast: the adaptive lattice reaches the default 1e-4 target within 2 s here, so a
    # target it cannot reach is asked for)
    comp = [(Laplace(1.0 + i / 10), 10) for i in range(30)]
    t0 = time.process_time()
    b = certified_delta(comp, 1.0, time_budget=2, rel_width=1e-9)
    assert time.process_time() - t0 < 6
    assert any("the time budget affords no finer grid" in w for w in b.warnings)
    from certify.chernoff import chernoff_delta_bound
    from certify.eeai import delta_interval

    both = delta_interval(comp, 1.0).intersect(chernoff_delta_bound(comp, 1.0))
    assert both.lower_mpf <= b.lower_mpf <= b.upper_mpf <= both.upper_mpf
    again = certified_delta(comp, 1.0, time_budget=2, rel_width=1e-9)  # warm caches: same answer
    assert (again.lower, again.upper) == (b.lower, b.upper)


def test_time_budget_coarsens_the_lattice_up_front():
    comp = [(PoissonSubsampledGaussian(0.8 + 0.15 * i, 0.01), 100) for i in range(6)]
    t0 = time.process_time()
    b = certified_epsilon(comp, 1e-5, time_budget=2, rel_width=1e-9)
    assert time.process_time() - t0 < 6
    assert b.upper.is_finite and b.upper_method.startswith("lattice[h=")
    assert any("the time budget affords no finer grid" in w for w in b.warnings)
    from certify.chernoff import chernoff_epsilon_bound

    assert b.upper_mpf <= chernoff_epsilon_bound(comp, 1e-5).upper_mpf  # tighter than no lattice


def test_budget_exceeded_when_nothing_finishes():
    from certify.budget import check_deadline, time_budget

    with time_budget(1e-9):
        time.sleep(1e-3)
        with pytest.raises(BudgetExceeded, match=r"time budget of 1e-09 s exceeded \(in x\)"):
            check_deadline("in x")
    check_deadline("outside")  # no deadline: never raises


def test_distinct_arb_enclosed_gaussian_terms_are_not_merged():
    # found by the fuzz: two rate-1 subsampled Gaussians (Arb-enclosed mu = sqrt(1/sigma^2)) were
    # keyed by id() of freed objects and merged into one mu; the truth is mu-GDP with
    # mu^2 = 3/4 + 4/9 (GDP Cor. 3.3), solved here by mpmath bisection at 50 digits
    comp = [(PoissonSubsampledGaussian(2.0, 1.0), 3), (PoissonSubsampledGaussian(3.0, 1.0), 4)]
    b = certified_epsilon(comp, 1e-5)
    with mp.workdps(50):
        mu = mp.sqrt(mp.mpf(3) / 4 + mp.mpf(4) / 9)
        lo, hi = mp.mpf(0), mp.mpf(20)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _gdp(mu * mu, mid) > mp.mpf(1e-5) else (lo, mid)
        assert b.lower_mpf <= hi and lo <= b.upper_mpf
        assert b.upper_mpf - b.lower_mpf < mp.mpf(10) ** -20
