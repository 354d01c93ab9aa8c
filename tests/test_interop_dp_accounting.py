"""dp_accounting drop-ins: the certified accountant (certify.interop) and the labelled estimate
(numeric.interop). Contract (compose/ledger/supports/get_epsilon/get_delta), the relations, the
refusals, and cross-checks against dp_accounting's own accountants where it is installed.

Reference: SEED_EXACT = 10 x randomized response eps0 = 1/sqrt(10) at delta 1e-3, the exact
binomial formula (tests/test_certify_cli.py, fdp_reference.csv fig5).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import pytest

pytest.importorskip("flint", reason="the certified accountant needs python-flint (certify extra)")

from certify.interop.dp_accounting import (
    CertifiedPrivacyAccountant,
    bound_upper_float,
    certified_rr_eps0,
)
from numeric.interop import dp_accounting as nd
from numeric.interop.dp_accounting import (
    ComposedDpEvent,
    EpsilonDeltaDpEvent,
    EstimatePrivacyAccountant,
    GaussianDpEvent,
    LaplaceDpEvent,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    RandomizedResponseDpEvent,
    SelfComposedDpEvent,
    UnsupportedEventError,
)

SEED_EXACT = "2.88967273935981121240934495430976391917933761"
EPS0 = 1 / math.sqrt(10)
P_SEED = 2 / (1 + math.exp(EPS0))  # k = 2 buckets: eps0 = log((2 - p)/p) = 1/sqrt(10)


def _close(bound, exact: str, rel: float) -> bool:
    lo, hi = Fraction(bound.lower.decimal()), Fraction(bound.upper.decimal())
    x = Fraction(exact)
    return lo >= x * (1 - Fraction(rel)) and hi <= x * (1 + Fraction(rel))


# ---------------------------------------------------------------- the RR count (dp_accounting bug)

@pytest.mark.parametrize("relation", ["ADD_OR_REMOVE_ONE", "REPLACE_ONE", "REPLACE_SPECIAL"])
def test_randomized_response_count_is_composed(relation):
    acc = CertifiedPrivacyAccountant(relation).compose(RandomizedResponseDpEvent(P_SEED, 2), 10)
    eps = acc.get_epsilon(1e-3)
    assert _close(acc.last_bound, SEED_EXACT, 1e-13)
    assert eps == bound_upper_float(acc.last_bound)
    assert Fraction(eps) >= Fraction(acc.last_bound.upper.decimal())  # rounded up
    assert abs(eps - 2.8896727393598) < 1e-12


def test_rr_eps0_rounded_up():
    for p, k in [(P_SEED, 2), (0.3, 5), (0.9, 1000), (1e-9, 2)]:
        up = certified_rr_eps0(p, k)
        assert up >= nd.randomized_response_eps0(p, k)
        assert up <= nd.randomized_response_eps0(p, k) * (1 + 1e-14)


def test_self_composed_and_count_agree():
    a = CertifiedPrivacyAccountant().compose(SelfComposedDpEvent(
        RandomizedResponseDpEvent(P_SEED, 2), 5), 2)
    b = CertifiedPrivacyAccountant().compose(ComposedDpEvent(
        [RandomizedResponseDpEvent(P_SEED, 2)] * 10))
    assert a.get_epsilon(1e-3) == b.get_epsilon(1e-3)


# ---------------------------------------------------------------- relations

def test_replace_one_doubles_gaussian_sensitivity():
    # GDP: mu = Delta/sigma; sigma 2 under REPLACE_ONE is sigma 1 under ADD_OR_REMOVE_ONE
    r = CertifiedPrivacyAccountant("REPLACE_ONE").compose(GaussianDpEvent(2.0), 3)
    a = CertifiedPrivacyAccountant("ADD_OR_REMOVE_ONE").compose(GaussianDpEvent(1.0), 3)
    s = CertifiedPrivacyAccountant("REPLACE_SPECIAL").compose(GaussianDpEvent(1.0), 3)
    assert r.get_epsilon(1e-5) == a.get_epsilon(1e-5) == s.get_epsilon(1e-5)
    assert a.last_bound.lower_method.startswith("exact")
    assert r.get_delta(1.0) == a.get_delta(1.0)


def test_replace_one_doubles_laplace_sensitivity():
    r = CertifiedPrivacyAccountant("REPLACE_ONE").compose(LaplaceDpEvent(2.0))
    a = CertifiedPrivacyAccountant().compose(LaplaceDpEvent(1.0))
    assert r.translation().terms[0][0].mu == a.translation().terms[0][0].mu == 1.0


@pytest.mark.parametrize("relation", ["REPLACE_ONE", "REPLACE_SPECIAL"])
def test_poisson_refused_outside_add_remove(relation):
    ev = PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0))
    acc = CertifiedPrivacyAccountant(relation)
    assert not acc.supports(ev)
    with pytest.raises(UnsupportedEventError, match=rf"PoissonSampledDpEvent.*{relation}"):
        acc.compose(ev)
    assert acc.translation().terms == ()


def test_refusals_name_event_and_relation():
    acc = CertifiedPrivacyAccountant()
    lap = PoissonSampledDpEvent(0.1, LaplaceDpEvent(1.0))
    assert not acc.supports(lap)
    with pytest.raises(ValueError, match=r"LaplaceDpEvent.*ADD_OR_REMOVE_ONE"):
        acc.compose(lap)

    class DiscreteLaplaceDpEvent:  # duck-typed unknown event
        noise_parameter, sensitivity = 1.0, 1

    assert not acc.supports(DiscreteLaplaceDpEvent())
    with pytest.raises(UnsupportedEventError, match="DiscreteLaplaceDpEvent"):
        acc.compose(DiscreteLaplaceDpEvent())
    with pytest.raises(ValueError, match="neighboring_relation"):
        CertifiedPrivacyAccountant("REPLACE_TWO")


def test_bad_values():
    acc = CertifiedPrivacyAccountant()
    for ev, name in [(GaussianDpEvent(-1.0), "noise_multiplier"),
                     (RandomizedResponseDpEvent(1.5, 2), "noise_parameter"),
                     (RandomizedResponseDpEvent(0.5, 0), "num_buckets"),
                     (EpsilonDeltaDpEvent(1.0, 2.0), "delta")]:
        assert not acc.supports(ev)
        with pytest.raises(ValueError, match=name):
            acc.compose(ev)
    with pytest.raises(ValueError, match="count"):
        acc.compose(GaussianDpEvent(1.0), 0)
    acc.compose(GaussianDpEvent(1.0))
    with pytest.raises(ValueError, match="target_delta"):
        acc.get_epsilon(1.5)


# ---------------------------------------------------------------- contract

def test_compose_returns_self_and_ledger():
    acc = CertifiedPrivacyAccountant()
    assert acc.compose(NoOpDpEvent()) is acc
    g = GaussianDpEvent(1.0)
    acc.compose(g, 2).compose(g).compose(SelfComposedDpEvent(LaplaceDpEvent(3.0), 4))
    assert acc.ledger == ComposedDpEvent([SelfComposedDpEvent(g, 3),
                                          SelfComposedDpEvent(LaplaceDpEvent(3.0), 4)])
    assert CertifiedPrivacyAccountant().ledger == NoOpDpEvent()
    assert CertifiedPrivacyAccountant().compose(g).ledger == g


def test_empty_and_non_private():
    acc = CertifiedPrivacyAccountant()
    assert acc.get_epsilon(1e-5) == 0.0 and acc.get_delta(0.5) == 0.0
    acc.compose(EpsilonDeltaDpEvent(0.5, 1e-6), 3).compose(NonPrivateDpEvent())
    assert acc.get_epsilon(1e-5) == math.inf and acc.get_delta(1.0) == 1.0


def test_epsilon_delta_event():
    acc = CertifiedPrivacyAccountant().compose(EpsilonDeltaDpEvent(0.1, 1e-9), 100)
    b = acc.get_epsilon_interval(1e-3)
    assert b.upper_method.startswith("exact") and acc.get_epsilon(1e-3) < 100 * 0.1


def test_interval_and_get_delta_consistent():
    acc = CertifiedPrivacyAccountant().compose(GaussianDpEvent(2.0), 10)
    eps = acc.get_epsilon(1e-5)
    assert acc.last_bound.contains(acc.last_bound.lower.decimal())
    d = acc.get_delta(eps)
    assert d <= 1e-5 * (1 + 1e-9)
    assert acc.get_delta_interval(eps).quantity == "delta"


def test_estimate_accountant_is_labelled():
    acc = EstimatePrivacyAccountant().compose(GaussianDpEvent(1.0), 4)
    with pytest.warns(UserWarning, match="estimates"):
        e = acc.get_epsilon(1e-5)
    assert e.warnings[0].startswith("EstimatePrivacyAccountant returns estimates")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per instance
        acc.get_delta(1.0)
    c = CertifiedPrivacyAccountant().compose(GaussianDpEvent(1.0), 4)
    assert abs(float(e) - c.get_epsilon(1e-5)) < 1e-9
    with pytest.raises(ValueError, match="certified"):
        EstimatePrivacyAccountant(method="certified")


def test_duck_typed_events_without_the_library():
    class GaussianDpEvent:  # a stand-in with the library's class name and attributes
        def __init__(self, noise_multiplier):
            self.noise_multiplier = noise_multiplier

    acc = CertifiedPrivacyAccountant().compose(GaussianDpEvent(1.0), 4)
    ref = CertifiedPrivacyAccountant().compose(nd.GaussianDpEvent(1.0), 4)
    assert acc.get_epsilon(1e-5) == ref.get_epsilon(1e-5)


# ---------------------------------------------------------------- dp_accounting itself

def test_subclass_and_cross_checks_with_dp_accounting():
    dpa = pytest.importorskip("dp_accounting", reason="dp-accounting not installed (bench extra)")
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = CertifiedPrivacyAccountant(dpa.NeighboringRelation.REPLACE_ONE)
    assert isinstance(acc, dpa.PrivacyAccountant)
    assert isinstance(EstimatePrivacyAccountant(), dpa.PrivacyAccountant)
    assert issubclass(UnsupportedEventError, dpa.UnsupportedEventError)
    assert acc.neighboring_relation is dpa.NeighboringRelation.REPLACE_ONE
    # dp_accounting's PLD ignores the count of a randomized-response event; we do not
    rr = dpa.RandomizedResponseDpEvent(P_SEED, 2)
    pld = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE)
    assert pld.compose(rr, 10).get_epsilon(1e-3) < 1.0  # the bug: one step, not ten
    acc.compose(rr, 10)
    assert _close(acc.get_epsilon_interval(1e-3), SEED_EXACT, 1e-13)
    assert acc.ledger == dpa.SelfComposedDpEvent(rr, 10)
    # Gaussian: the certified interval holds the exact GDP value; PLD (optimistic lower
    # discretization aside) is >= the certified lower end
    for relation in (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
                     dpa.NeighboringRelation.REPLACE_ONE):
        ev = dpa.GaussianDpEvent(3.0)
        c = CertifiedPrivacyAccountant(relation).compose(ev, 20)
        p = pld_privacy_accountant.PLDAccountant(relation).compose(ev, 20)
        b = c.get_epsilon_interval(1e-5)
        assert float(b.lower_mpf) <= p.get_epsilon(1e-5) * (1 + 1e-3)
        assert float(b.upper_mpf) <= p.get_epsilon(1e-5) * (1 + 1e-3)  # both near exact
    # RDP is an upper bound too: the certified upper end is below it
    ev = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0))
    rdp = rdp_privacy_accountant.RdpAccountant().compose(ev, 100).get_epsilon(1e-5)
    c = CertifiedPrivacyAccountant(time_budget=2.0).compose(ev, 100)
    assert c.get_epsilon(1e-5) <= rdp
    assert CertifiedPrivacyAccountant().supports(ev)
    assert not CertifiedPrivacyAccountant().supports(dpa.UnsupportedDpEvent())


@pytest.mark.slow
def test_dpsgd_against_pld():
    dpa = pytest.importorskip("dp_accounting", reason="dp-accounting not installed (bench extra)")
    from dp_accounting.pld import pld_privacy_accountant

    ev = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0))
    c = CertifiedPrivacyAccountant().compose(ev, 1000)
    p = pld_privacy_accountant.PLDAccountant().compose(ev, 1000).get_epsilon(1e-5)
    b = c.get_epsilon_interval(1e-5)
    assert float(b.lower_mpf) <= p  # PLD 1.82824 inside [1.828216, 1.828279] (README)
    assert abs(c.get_epsilon(1e-5) - 1.82828) < 1e-4


# ---------------------------------------------------------------- the drop-ins' settings (issue 13)

# q = 0.5, sigma = 2, 3 steps: a subsampled Gaussian the lattice answers in about a second
_SMALL = (0.5, 2.0, 3)


def test_dropins_answer_like_the_certified_method():
    """Both drop-ins run `certified` with its default rel-width (1e-4), return the upper end of
    that very interval, and the interval is within 0.1% (so is the answer, of the truth)."""
    from certify.interop.opacus import CertifiedAccountant
    from certify.lattice_target import DEFAULT_REL_WIDTH
    from numeric import PoissonSubsampledGaussian, compose
    from numeric.methods import epsilon, load_plugins

    q, s, m = _SMALL
    acc = CertifiedPrivacyAccountant().compose(PoissonSampledDpEvent(q, GaussianDpEvent(s)), m)
    eps = acc.get_epsilon(1e-5)
    b = acc.last_bound
    assert b.inputs["rel_width"] == DEFAULT_REL_WIDTH == 1e-4
    assert b.upper_method.startswith("lattice")  # the discretized method the setting governs
    load_plugins()
    ref = epsilon(compose([(PoissonSubsampledGaussian(s, q), m)]), 1e-5, "certified")
    assert (b.lower, b.upper) == (ref.lower, ref.upper)  # bit for bit
    assert eps == ref.value and Fraction(eps) >= Fraction(b.upper.decimal())
    assert (b.upper_mpf - b.lower_mpf) / b.lower_mpf <= 1e-3
    op = CertifiedAccountant()
    for _ in range(m):
        op.step(noise_multiplier=s, sample_rate=q)
    assert op.get_epsilon(1e-5) == eps and (op.last_bound.lower, op.last_bound.upper) == (
        b.lower, b.upper)


def test_dropin_interval_holds_dp_accounting_pld():
    """Peer oracle: dp_accounting's PLD (discretization 1e-4), pessimistic (an upper bound up
    to its tail truncation) and optimistic (a lower one), brackets the same eps; the certified
    interval must meet [optimistic, pessimistic]."""
    pytest.importorskip("dp_accounting", reason="dp-accounting not installed (bench extra)")
    from dp_accounting.pld import privacy_loss_distribution as pld

    q, s, m = _SMALL
    acc = CertifiedPrivacyAccountant().compose(PoissonSampledDpEvent(q, GaussianDpEvent(s)), m)
    b = acc.get_epsilon_interval(1e-5)
    ends = [pld.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=p,
                                        value_discretization_interval=1e-4
                                        ).self_compose(m).get_epsilon_for_delta(1e-5)
            for p in (False, True)]
    assert float(b.lower_mpf) <= ends[1] and float(b.upper_mpf) >= ends[0]


def test_rel_width_option():
    from certify.interop.opacus import CertifiedAccountant

    q, s, m = _SMALL
    ev = PoissonSampledDpEvent(q, GaussianDpEvent(s))
    coarse = CertifiedPrivacyAccountant(rel_width=1e-2).compose(ev, m)
    fine = CertifiedPrivacyAccountant().compose(ev, m)
    c, f = coarse.get_epsilon_interval(1e-5), fine.get_epsilon_interval(1e-5)
    assert c.inputs["rel_width"] == 1e-2
    assert c.lower_mpf <= f.upper_mpf and f.lower_mpf <= c.upper_mpf  # both enclose eps
    for bad in (0, 1.5, float("nan"), "x", True):
        with pytest.raises(ValueError, match="rel_width"):
            CertifiedPrivacyAccountant(rel_width=bad)
        with pytest.raises(ValueError, match="rel_width"):
            CertifiedAccountant(rel_width=bad)
    assert CertifiedAccountant(rel_width=1e-3).rel_width == 1e-3
