"""ApproxDP composition (GDP Section 3.3), exact methods, the seed example and the accountant.

Reference values: docs/math.md section 2 (GDP Section 3.3 example, computed independently by the
maintainers) and shared/reference/fdp_reference.csv (``fig5``; mpmath dps80/120, Arb-certified).
"""

from __future__ import annotations

import math

import pytest

from numeric import (
    ApproxDP,
    EdgeworthAccountant,
    Estimate,
    Gaussian,
    PoissonSubsampledGaussian,
    RandomizedResponse,
    compose,
    epsilon,
    exact_epsilon,
)

HUNDRED = [(ApproxDP(0.1, 1e-6), 100)]


def test_section_3_3_delta_part():
    # 1 - (1 - 1e-6)^100 = 9.9995050e-5 (GDP Eq. 12)
    assert compose(HUNDRED).delta_part == pytest.approx(9.9995050e-5, rel=1e-7)


def test_section_3_3_exact_and_clt():
    # docs/math.md: exact eps 3.14528 (KOV with Eq. 13), Theorem 3.6 CLT eps 3.17181 at delta = 1e-3
    assert epsilon(HUNDRED, 1e-3, method="exact").epsilon == pytest.approx(3.14528, abs=5e-6)
    clt = epsilon(HUNDRED, 1e-3, method="clt")
    assert clt.epsilon == pytest.approx(3.17181, abs=5e-6)
    assert clt.estimate and clt.details["mu"] == pytest.approx(1.0, rel=1e-12)


def test_section_3_3_infeasible_below_delta_part():
    for method in ("exact", "clt", "gdp", "aea"):
        res = epsilon(HUNDRED, 5e-5, method=method)
        assert res.infinite and math.isinf(res.epsilon)
        assert res.to_dict()["epsilon"] is None and res.to_dict()["infinite"] is True
        assert res.warnings


def test_seed_example():
    # fdp_reference.csv fig5: n = 10, eps0 = 1/sqrt(10), delta = 1e-3
    comp = [(RandomizedResponse(1 / math.sqrt(10)), 10)]
    exact = exact_epsilon(comp, 1e-3)
    assert exact.epsilon == pytest.approx(2.88967273935981121240934495430976391917933761,
                                          rel=1e-12)
    assert exact.estimate is False
    clt = epsilon(comp, 1e-3, method="clt")  # GDP Thm 3.6: mu = sqrt(10 * eps0^2) = 1
    assert clt.epsilon == pytest.approx(3.13867054858293920858075477000320084916774930, rel=1e-12)


def test_exact_refusals_are_clear():
    with pytest.raises(ValueError, match="no exact method"):
        exact_epsilon([(PoissonSubsampledGaussian(1.0, 0.01), 10)], 1e-5)
    with pytest.raises(ValueError, match="different eps0"):
        exact_epsilon([(RandomizedResponse(0.1), 3), (RandomizedResponse(0.2), 3)], 1e-5)
    with pytest.raises(ValueError, match="mix"):
        exact_epsilon([(RandomizedResponse(0.1), 3), (Gaussian(1.0), 3)], 1e-5)


def test_exact_gaussian_is_gdp():
    comp = [(Gaussian(2.0), 4)]  # mu = 1
    assert exact_epsilon(comp, 1e-5).epsilon == pytest.approx(
        4.37717809568122462765011629324201091315343852, rel=1e-12)


def test_accountant_surface_and_labels():
    acc = EdgeworthAccountant(order=2)
    with pytest.raises(ValueError, match="empty"):
        acc.get_epsilon(1e-5)
    acc.compose(PoissonSubsampledGaussian(1.0, 0.01), 500).compose(
        PoissonSubsampledGaussian(1.0, 0.01), 500)
    assert len(acc.ledger) == 2
    eps = acc.get_epsilon(1e-5)
    assert isinstance(eps, Estimate) and eps.is_estimate
    assert "estimate" in repr(eps)
    assert float(eps) == pytest.approx(1.7826, abs=1e-3)  # docs/math.md table, m = 1e3: 1.783
    d = acc.get_delta(float(eps))
    assert float(d) == pytest.approx(1e-5, rel=1e-8)
    assert "estimate" in (EdgeworthAccountant.__doc__ or "").lower()
    with pytest.raises(ValueError, match="order"):
        EdgeworthAccountant(order=7)
