"""Strict time and memory budgets (issue 12, "Resource budgets").

Reproducers from the fuzz campaign (``benchmarks/fuzz_run.py --draws 10000 --seed 4242``, the
slow ``auto`` calls): each one ran far past ``auto``'s 3.5 s budget because a step could not
check the deadline while it ran (the lattice re-discretization by a factor r ~ 4e6: 56 s; the
Chernoff order search at sigma 0.003: 10 s before the quadrature refused anyway; the AEA
fallback after the deadline). Now such a step is refused up front
(:func:`certify.budget.require`) and ``auto``'s budget counts from the start of the call.

Wall-clock assertions are loose (the machine may be loaded); the deterministic part is *which*
refusal is recorded. Numbers never depend on a budget: a method either returns exactly what it
returns without one or is refused.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import time

import pytest

pytest.importorskip("flint")

from certify.budget import require, time_budget
from certify.chernoff import chernoff_delta_bound, chernoff_epsilon_bound
from numeric.auto import MIN_CERTIFIED_SECONDS, auto_delta, auto_epsilon
from numeric.composition import compose
from numeric.errors import BudgetExceeded, NotApplicable
from numeric.mechanisms import Gaussian, Laplace, PoissonSubsampledGaussian

# ---------------------------------------------------------------------------------------------
# certify.budget.require


def test_require_is_a_no_op_without_a_budget():
    require(1e9, "a step of a billion seconds")
    require(math.inf, "an unbounded step")


def test_require_refuses_what_cannot_fit_and_names_it():
    with time_budget(2.0):
        require(0.0, "a free step")
        with pytest.raises(BudgetExceeded, match=r"time budget of 2 s: the step r = 7 needs "
                                                 r"about 42 s, [0-9.]+ s left"):
            require(42.0, "the step r = 7")
        with pytest.raises(BudgetExceeded):  # NaN is not "cheap"
            require(math.nan, "a step of unknown cost")
    assert issubclass(BudgetExceeded, NotApplicable)


# ---------------------------------------------------------------------------------------------
# reproducers


# fuzz draw: auto delta(0) ran 56 s (lattice re-discretization by r = 4194304 between the
# Laplace lattice and the sigma = 136035 subsampled Gaussian lattice)
_COARSEN = [(PoissonSubsampledGaussian(sigma=2470.666624394936, rate=0.000631537584599119), 1),
            (Laplace(scale=0.35177665410936254), 7),
            (PoissonSubsampledGaussian(sigma=136035.12577513154, rate=0.007748964171443689),
             484884)]


def test_lattice_refuses_a_huge_rediscretization_up_front():
    from certify.lattice_target import target_delta_interval

    start = time.monotonic()
    with pytest.raises(BudgetExceeded, match="re-discretization by a factor"), \
            time_budget(3.5):
        target_delta_interval(compose(_COARSEN), 0.0)
    assert time.monotonic() - start < 20.0  # 56 s before (idle: ~1 s)


# fuzz draw: the Chernoff order search at sigma 0.0033 ran 2.9-10 s (80 golden-section steps of
# a 60 ms objective), then the certified quadrature refused sigma < 0.05 anyway
_SMALL_SIGMA = [(PoissonSubsampledGaussian(sigma=0.0033453750998257473,
                                           rate=0.008339433239512202), 5130)]


def test_chernoff_small_sigma_keeps_the_budget():
    # At sigma < 0.05 Chernoff now uses exact integer-order sums (docs/extremes.md), so the slow
    # order search is no longer reached; whichever path runs, it answers or refuses in time.
    start = time.monotonic()
    with time_budget(1.5):
        try:
            res = chernoff_epsilon_bound(compose(_SMALL_SIGMA), 1e-10)
        except BudgetExceeded:
            res = None
    assert time.monotonic() - start < 10.0
    if res is not None:
        assert 0 <= res.lower_mpf <= res.upper_mpf


def test_a_budget_does_not_change_a_chernoff_number():
    comp = compose([(PoissonSubsampledGaussian(sigma=1.0, rate=0.01), 100)])
    free = chernoff_delta_bound(comp, 1.0)
    with time_budget(600.0):
        timed = chernoff_delta_bound(comp, 1.0)
    assert (timed.lower_mpf, timed.upper_mpf, timed.upper_method) == \
        (free.lower_mpf, free.upper_mpf, free.upper_method)


# ---------------------------------------------------------------------------------------------
# auto: one budget for the whole call


# diagnostics fire here (a few Laplace steps), so auto goes on to the certified step
_FIRES = [(Laplace(scale=1.0), 3)]


def test_auto_certified_step_not_started_without_time_left():
    res = auto_epsilon(_FIRES, 1e-6, time_budget=MIN_CERTIFIED_SECONDS / 1000)
    tried = "\n".join(res.details["tried"])
    assert "certified: not run" in tried, tried
    assert res.estimate and res.warnings  # an estimate, flagged as such


def test_auto_with_a_budget_still_answers_certified():
    res = auto_delta(_FIRES, 1.0, time_budget=60.0)
    assert res.certified and res.lower <= res.upper


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, True, "3 s"])
def test_auto_time_budget_is_validated(bad):
    with pytest.raises(ValueError, match="time_budget"):
        auto_epsilon([(Gaussian(sigma=1.0), 1)], 1e-5, time_budget=bad)
    with pytest.raises(ValueError, match="time_budget"):
        auto_delta([(Gaussian(sigma=1.0), 1)], 1.0, time_budget=bad)


# ---------------------------------------------------------------------------------------------
# memory


_MEMORY_SCRIPT = textwrap.dedent("""
    import resource
    from numeric.mechanisms import ApproxDP
    from numeric.methods import delta
    r = delta([(ApproxDP(eps=0.057, delta=0.029), 520_000_000)], 0.0, "auto")
    # the peak of this process image: Linux keeps ru_maxrss across exec, so it would count the
    # pages of the forking pytest process (412 MB late in the suite); VmHWM is reset by exec
    try:
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(repr(r.delta), peak)
""")


def test_approx_dp_many_steps_at_eps_zero_is_small():
    """The issue's 3.3 GB case: auto delta(0) of ApproxDP(0.057, 0.029) x 5.2e8 steps.

    Oracle (closed form): delta = d + (1 - d) delta_pure >= d with the composed delta part
    d = 1 - (1 - 0.029)^(5.2e8) = 1 - exp(5.2e8 log 0.971) (Dong, Roth, Su, GDP, Eq. 12-13),
    which is 1 to double precision (exp(-1.5e7) underflows), and delta <= 1: exactly 1.0.
    """
    out = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT], capture_output=True,
                         text=True, timeout=120, check=True)
    value, rss_kb = out.stdout.split()
    assert float(value) == 1.0
    assert int(rss_kb) < 400 * 1024  # 3.3 GB in the issue; ~90 MB measured


def test_approx_dp_closed_form_oracle():
    # (1 - 0.029)^(5.2e8) underflows: the oracle of the test above
    assert math.exp(520_000_000 * math.log1p(-0.029)) == 0.0


# fuzz-like: the subsampled Gaussian at sigma 0.06 and a large order: the first certified
# quadrature (not interruptible) is estimated from max(1, s) mu^2 and refused up front
def test_chernoff_first_quadrature_refused_up_front():
    from certify.chernoff import _Direction, _require_first
    from certify.mechanisms.subsampled_gaussian import _sg_cgf

    step = _sg_cgf(0.06, 0.3, "P||Q")
    assert step.cost(3.0) == 0.0  # integer order: the exact binomial sum
    d = _Direction("P||Q", ((step, 10),))
    with pytest.raises(BudgetExceeded, match="certified evaluation"), time_budget(0.5):
        _require_first([d], {"P||Q": 64.5})  # ~18000 units x 2e-4 s = 3.6 s
    with time_budget(600.0):
        _require_first([d], {"P||Q": 64.5})


# the windowed exact binomial profile at n = 1e9 (a window of ~2e5-7e5 Arb terms per sum)
def test_exact_binomial_window_keeps_the_budget():
    from certify.exact import exact_epsilon_bound
    from numeric.mechanisms import RandomizedResponse

    start = time.monotonic()
    with pytest.raises(BudgetExceeded, match="exact binomial window"), time_budget(1.0):
        exact_epsilon_bound([(RandomizedResponse(eps=0.01), 10**9)], 1e-6)
    assert time.monotonic() - start < 10.0


def test_lattice_refuses_a_loss_beyond_its_point_budget_without_a_budget():
    """sigma 1e-3: one step's loss spans ~5e5 units (1/(2 sigma^2)); the lattice squared blocks
    of 1e6-1.7e7 coefficients for over 600 s (no time budget to stop it). It now refuses up front
    and the certified answer comes from the other methods (reveal, docs/extremes.md)."""
    from certify import certified_epsilon

    comp = compose([(PoissonSubsampledGaussian(sigma=1e-3, rate=0.01), 1000)])
    start = time.monotonic()
    b = certified_epsilon(comp, 1e-5)
    assert time.monotonic() - start < 60.0
    assert any("lattice" in w and "point budget" in w for w in b.warnings), b.warnings
    assert b.upper.is_finite and not b.upper_method.startswith("lattice")
