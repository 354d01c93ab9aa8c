"""``auto`` keeps its time budget in the numeric steps too (issue 12; docs/budgets.md).

The numeric steps inside ``auto`` (exact, saddlepoint, the AEA fallback) run under the call's
deadline (``numeric.errors.numeric_deadline``): the subsampled-Gaussian CGF batches and cumulant
quadrature refuse up front when a *low* cost estimate exceeds the time left, or once the deadline
has passed; a step that runs returns exactly what it returns without a budget. The cost
estimates are checked here against measured CPU time (they must stay below it: a refused step
could not have finished), and the numbers against runs without a deadline.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from numeric.aea import aea_epsilon
from numeric.auto import auto_epsilon
from numeric.cgf import clear_cgf_cache
from numeric.errors import BudgetExceeded, NotApplicable, check_time, numeric_deadline, require_time
from numeric.mechanisms import subsampled_gaussian as sg
from numeric.mechanisms.subsampled_gaussian import PoissonSubsampledGaussian
from numeric.saddlepoint import saddlepoint_epsilon


def _cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def test_no_deadline_never_refuses():
    require_time(1e9, "a step")
    check_time("a step")
    with numeric_deadline(None):
        require_time(1e9, "a step")


def test_deadline_refuses_and_is_restored():
    with numeric_deadline(time.monotonic() + 60.0, 60.0):
        require_time(1.0, "a cheap step")
        with pytest.raises(BudgetExceeded, match=r"time budget of 60 s: the big step needs"):
            require_time(120.0, "the big step")
        with pytest.raises(BudgetExceeded):
            require_time(math.nan, "a step of unknown cost")
        with numeric_deadline(time.monotonic() - 1.0, 0.5):  # an earlier inner deadline wins
            with pytest.raises(BudgetExceeded, match=r"time budget of 0.5 s exceeded \(here\)"):
                check_time("here")
        with numeric_deadline(time.monotonic() + 1e6, 1e6):  # a later one does not extend it
            with pytest.raises(BudgetExceeded, match="60 s"):
                require_time(120.0, "the big step")
        check_time("after the inner blocks")
    require_time(1e9, "outside again")


def test_cgf_batch_estimate_is_low():
    # a cold rule at sigma 0.01: extension plus 8 tilts (measured 19-20 ns per tilt-node)
    mu, t = 100.0, np.linspace(0.5, 3.0, 8)
    rule = sg._SGRule(mu, 0.01)
    panels = max(rule.panels_for((t + 1.0).tolist()))
    estimate = sg._cgf_seconds(panels, t.size, panels)
    spent = _cpu(lambda: rule.cgf(t, 6))
    assert 0.0 < estimate <= spent


def test_cumulant_quadrature_estimate_is_low():
    mu, rate = 1.0 / 0.0123, 0.0107  # not cached by another test
    sg._cached_cumulants.cache_clear()
    estimate = 40 * sg._panels(mu) * sg._SECONDS_PER_CUMULANT_NODE
    spent = _cpu(lambda: sg._cached_cumulants(mu, rate, 6))
    assert 0.0 < estimate <= spent


def test_numbers_unchanged_under_a_deadline():
    comp = [(PoissonSubsampledGaussian(0.3, 0.01), 1000)]
    clear_cgf_cache()
    free = saddlepoint_epsilon(comp, 1e-6)
    clear_cgf_cache()
    with numeric_deadline(time.monotonic() + 600.0, 600.0):
        timed = saddlepoint_epsilon(comp, 1e-6)
    assert timed.epsilon == free.epsilon
    assert timed.details.get("diagnostics") == free.details.get("diagnostics")


def test_expired_deadline_refuses_the_saddlepoint_and_aea():
    comp = [(PoissonSubsampledGaussian(0.31, 0.011), 1000)]
    clear_cgf_cache()
    sg._cached_cumulants.cache_clear()
    with numeric_deadline(time.monotonic() - 1.0, 1.0):
        with pytest.raises(BudgetExceeded, match="subsampled-Gaussian CGF"):
            saddlepoint_epsilon(comp, 1e-6)
        with pytest.raises(BudgetExceeded, match="cumulant quadrature"):
            aea_epsilon(comp, 1e-6)


def test_auto_records_the_skipped_saddlepoint():
    comp = [(PoissonSubsampledGaussian(0.32, 0.012), 1000)]
    expected = aea_epsilon(comp, 1e-6)  # warms the cumulant cache (not the CGF rule)
    clear_cgf_cache()
    res = auto_epsilon(comp, 1e-6, time_budget=1e-6)
    tried = res.details["tried"]
    assert any(s.startswith("saddlepoint: time budget of 1e-06 s exceeded") for s in tried)
    assert any(s.startswith("certified: not run") for s in tried)
    assert res.method == "aea" and res.epsilon == expected.epsilon  # the same number
    assert res.warnings  # says why nothing safer was available


def test_auto_refusal_is_not_applicable_when_nothing_fits():
    comp = [(PoissonSubsampledGaussian(0.33, 0.013), 1000)]
    clear_cgf_cache()
    sg._cached_cumulants.cache_clear()
    with pytest.raises(NotApplicable, match="time budget"):
        auto_epsilon(comp, 1e-6, time_budget=1e-6)


def test_certified_sg_moments_check_the_deadline():
    flint = pytest.importorskip("flint")
    from certify.budget import time_budget
    from certify.mechanisms.subsampled_gaussian import SubsampledGaussianLaw

    law = SubsampledGaussianLaw(flint.arb(20), flint.arb("0.01"), under_q=False)
    with time_budget(1e-9):
        time.sleep(1e-3)
        with pytest.raises(BudgetExceeded, match="moment quadrature"):
            law.law()


def test_sg_power_moment_negative_s_estimate_is_low():
    flint = pytest.importorskip("flint")
    from certify.mechanisms import subsampled_gaussian as csg

    sigma, rate, s = 0.2, 0.01, -1000.0  # measured 0.02 s at 128 bits
    with flint.ctx.workprec(128):
        spent = _cpu(lambda: csg.sg_power_moment(sigma, rate, flint.arb(s)))
    estimate = min(csg._QUAD_SECONDS_NEG * -s / sigma**2, csg._QUAD_SECONDS_NEG_CAP) * 128 / 53
    assert 0.0 < estimate <= spent


@pytest.mark.slow
@pytest.mark.parametrize("sigma,rate,count,delta", [
    (0.00303237357067297, 0.18722460763985205, 62590002087186, 0.004047272959634859),
    (0.05659222474373912, 0.285769471104482, 38, 2.5752781289596002e-14),
    (0.05, 0.01, 1000, 1e-10),
])
def test_slow_calls_keep_the_budget(sigma, rate, count, delta):
    # from the fuzz campaign's slow auto calls (/tmp/budget_slow_calls.json, issue 12)
    clear_cgf_cache()
    t0 = time.monotonic()
    try:
        auto_epsilon([(PoissonSubsampledGaussian(sigma, rate), count)], delta)
    except NotApplicable:
        pass
    assert time.monotonic() - t0 < 3.5 + 1.5  # the budget, plus one uninterruptible quadrature
