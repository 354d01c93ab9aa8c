"""Resource budgets of random allocation (issue 12): the fuzz campaign's over-budget calls.

Each reproducer comes from the 10 000-draw campaign (benchmarks/fuzz_run.py, its report's
failing calls, numbered as in the replay list) and must now give a clean answer or a
``NotApplicable`` naming the parameter that makes it expensive, within a wall-clock bound (and,
where memory was the failure, under a 2 GiB address-space cap in a subprocess, as the fuzz
workers run). Oracles: ``fractions.Fraction`` for exact dyadic rounding; no number computed
here is compared against the code under test.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import textwrap
import time
from fractions import Fraction

import pytest

from numeric.composition import compose
from numeric.errors import BudgetExceeded, NotApplicable, numeric_deadline
from numeric.mechanisms import RandomAllocation
from numeric.methods import delta
from numeric.shuffle import law as nlaw

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AS_CAP = 2 * 2**30  # the fuzz workers' RLIMIT_AS


def _run_capped(code: str, timeout: float) -> tuple[dict, float]:
    """Run ``code`` (which prints one JSON line last) in a fresh interpreter under RLIMIT_AS
    2 GiB; returns (that JSON, wall seconds of the call as measured inside)."""
    prog = textwrap.dedent(f"""
        import json, resource, time
        resource.setrlimit(resource.RLIMIT_AS, ({AS_CAP}, {AS_CAP}))
        from numeric.methods import load_plugins
        load_plugins()
    """) + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", prog], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return out, out["wall"]


def _random_allocation_call_capped(sigma: float, rounds: int, count: int, imports: str,
                                   call: str) -> tuple[dict, float]:
    """Run ``call`` (which sets ``out``) on ``count`` x RandomAllocation(sigma, rounds) bound to
    ``comp`` in a capped fresh interpreter; a NotApplicable becomes its message."""
    code = f"""
from numeric.composition import compose
from numeric.errors import NotApplicable
from numeric.mechanisms import RandomAllocation
{imports}
comp = compose([(RandomAllocation(sigma={sigma!r}, rounds={rounds}), {count})])
t = time.perf_counter()
try:
    {call}
except NotApplicable as exc:
    out = str(exc)
print(json.dumps({{"out": out, "wall": time.perf_counter() - t}}))
"""
    return _run_capped(code, timeout=60)


# --------------------------------------------------------------------------------------------
# numeric: the random-allocation cumulants are budgeted before any node is evaluated


@pytest.mark.parametrize(("sigma", "rounds"), [(1.0448193029106652, 14),   # replay 22-25
                                               (0.7058212610129492, 511)])  # replay 8
def test_heavy_cumulants_refused_up_front(sigma, rounds):
    t0 = time.perf_counter()
    with pytest.raises(NotApplicable, match=r"sigma=.*rounds=.*over the budget"):
        nlaw.pllr_cumulants(sigma, rounds, 2)
    assert time.perf_counter() - t0 < 3.0  # was 45-60 s


def test_aea_ea_of_heavy_random_allocation_is_not_applicable_fast():
    """Replay 8: aea-ea ran past the 60 s cap; now NotApplicable naming sigma and rounds."""
    comp = compose([(RandomAllocation(sigma=0.7058212610129492, rounds=511), 671824259)])
    t0 = time.perf_counter()
    with pytest.raises(NotApplicable, match="rounds=511"):
        delta(comp, 11.960027114923461, method="aea-ea")
    assert time.perf_counter() - t0 < 3.0


def test_cumulants_refused_under_a_short_deadline():
    """Under auto's deadline a cumulant quadrature estimated above the time left is refused."""
    nlaw._WEIGHTS.clear()
    t0 = time.perf_counter()
    with numeric_deadline(time.monotonic() + 0.5, 0.5), \
            pytest.raises(BudgetExceeded, match="rounds=27"):
        nlaw.pllr_cumulants(1.2701490404627935, 27, 2)  # replay 12: estimate ~4 s
    assert time.perf_counter() - t0 < 2.0


def test_cost_estimate_is_monotone_in_the_heavy_tail():
    """Smaller sigma (heavier lognormal tail) at the same M costs more; cheap cases are cheap."""
    nlaw._WEIGHTS.clear()
    cheap = nlaw.cumulant_cost(2.0, 1000)
    heavy = nlaw.cumulant_cost(1.0448193029106652, 14)
    assert 0.0 < cheap < 2.0 < nlaw.MAX_CUMULANT_SECONDS < heavy


# --------------------------------------------------------------------------------------------
# certify: exact dyadic rounding (the level-0 law's hot path) against Fraction


def test_dyadic_floor_ceil_match_fraction():
    from certify.engine import Endpoint
    from certify.lattice_grid import ceil_dyadic as ceil_endpoint
    from certify.lattice_grid import floor_dyadic as floor_endpoint

    rng = random.Random(12)
    cases = [(0, 0), (1, 0), (-1, 0), (3, -1), (-3, -1), (5, 3), (-5, 3), (1, -2000)]
    cases += [(rng.randrange(-2**130, 2**130), rng.randrange(-300, 60)) for _ in range(400)]
    for man, exp in cases:
        v = Fraction(man) * Fraction(2) ** exp
        e = Endpoint(man=man, exp=exp)
        assert floor_endpoint(e) == math.floor(v), (man, exp)
        assert ceil_endpoint(e) == math.ceil(v), (man, exp)


# --------------------------------------------------------------------------------------------
# certify: the shuffle products refused before allocating (memory deaths of the campaign)


def test_shuffle_epoch_product_refused_before_allocating():
    """Replay 41 in-process: the epoch lattice's product is refused (BudgetExceeded naming the
    epochs and the MiB) before FLINT allocates it."""
    pytest.importorskip("flint")
    from certify.mechanisms.random_allocation import certified_delta

    comp = compose([(RandomAllocation(sigma=0.16490098398660985, rounds=10211170),
                     165675113907936)])
    t0 = time.perf_counter()
    with pytest.raises(BudgetExceeded, match=r"epochs=165675113907936 .* MiB"):
        certified_delta(comp, 0.5384914452620609)
    assert time.perf_counter() - t0 < 10.0  # ~3 s under load; was a FLINT abort


@pytest.mark.slow
def test_shuffle_memory_death_is_not_applicable_under_2gib():
    """Replay 41: FLINT 'Unable to allocate memory' (status -6) under the 2 GiB cap; now a
    NotApplicable naming the epochs, within seconds."""
    pytest.importorskip("flint")
    out, wall = _random_allocation_call_capped(
        0.16490098398660985, 10211170, 165675113907936,
        imports="from certify.mechanisms.random_allocation import certified_delta",
        call='certified_delta(comp, 0.5384914452620609); out = "answer"')
    assert "epochs=165675113907936" in out["out"] and "MiB" in out["out"], out
    assert wall < 10.0


def test_level_zero_law_at_large_sigma_is_fast():
    """Replay 1: the level-0 law at sigma 388 took ~30 s in Fraction arithmetic; the one-epoch
    put/call laws of (388, 2387) now take well under the old time."""
    pytest.importorskip("flint")
    from certify.shuffle import one_epoch as oe

    oe.level_zero_laws.cache_clear()
    t0 = time.perf_counter()
    _, _, laws = oe.level_zero_laws(387.82353025698023, 2387)
    assert time.perf_counter() - t0 < 5.0
    for law in laws:  # each law is a measure of mass ~1 (units 2^-B)
        assert abs(law.total / 2**104 - 1) < 1e-6


def test_auto_on_replay_1_keeps_a_short_budget():
    """Replay 1 (auto took 18-27 s for a 3 s budget): with a 1 s budget auto returns (an answer
    or NotApplicable) within the budget plus one uninterruptible step."""
    pytest.importorskip("flint")
    out, wall = _random_allocation_call_capped(
        387.82353025698023, 2387, 84103577711045, imports="from numeric.methods import delta",
        call='r = delta(comp, 0.0, method="auto", time_budget=1.0); out = [r.delta, r.method]')
    assert wall < 1.0 * 1.5 + 1.5, out
    if isinstance(out["out"], list):
        assert 0.0 <= out["out"][0] <= 1.0


def test_saturated_upper_lattice_answers_fast():
    """Replay 47 (certified ran past 60 s: the +inf mass of the upper lattice grew to millions
    of bits over 1.8e14 epochs): once the +inf mass reaches 1 the upper end is 1 (vacuous but
    valid: delta <= 1), answered in seconds; the lower end stays in [0, 1]."""
    pytest.importorskip("flint")
    from certify.shuffle.multi_epoch import delta_bound

    t0 = time.perf_counter()
    b = delta_bound(0.08448260149438207, 108971, 175730201803223, 0.004527233926213555,
                    "P||Q")
    assert time.perf_counter() - t0 < 10.0
    assert b.upper_mpf == 1
    assert 0 <= b.lower_mpf <= 1


def test_one_epoch_delta_beyond_a_huge_c_max_is_enclosed_not_raised():
    """Fuzz seed 9090: sigma 0.063, M = 137120, eps = 532 (c = e^eps beyond c_max ~ 2e53, whose
    ball at the working precision overshot c_max) raised a plain ValueError inside `auto`."""
    pytest.importorskip("flint")
    from certify.shuffle.multi_epoch import delta_bound

    for direction in ("P||Q", "Q||P"):
        b = delta_bound(0.06327880477550771, 137120, 1, 532.0270972100211, direction)
        assert 0 <= b.lower_mpf <= b.upper_mpf <= 1


@pytest.mark.parametrize(("terms", "x", "max_rss_mib"), [
    # a subsampled Gaussian at rate 6e-8 beside randomized response with eps0 152: aborted
    # (FLINT "Unable to allocate memory") under 2 GiB of address space
    ("(PoissonSubsampledGaussian(sigma=0.2815719231469036, rate=6.076506434592853e-08), 1308), "
     "(RandomizedResponse(eps=152.08899018440854), 2140), "
     "(PoissonSubsampledGaussian(sigma=0.6940386276854786, rate=0.00011719171323041288), "
     "157730902)", 0.0, 600),
    # rate 1.9e-6 beside Laplace: 1.6 GB resident and 14 s for one interval
    ("(PoissonSubsampledGaussian(sigma=0.7144572726172498, rate=1.8501438991957398e-06), 46), "
     "(Laplace(scale=6811.979672567781, sensitivity=0.24392180274907946), 562486)",
     0.07327744797366727, 600),
])
def test_several_term_lattice_blocks_are_budgeted_before_allocation(terms, x, max_rss_mib):
    """Fuzz seed 9090: a single-step block of a several-term composition spanning ~1e8 grid
    units was built densely before its re-discretization; it is now refused up front (the
    lattice stops at the last level that fits, or another certified method answers)."""
    pytest.importorskip("flint")
    code = f"""
from numeric.composition import compose
from numeric.mechanisms import Laplace, PoissonSubsampledGaussian, RandomizedResponse
from numeric.methods import delta
comp = compose([{terms}])
t = time.perf_counter()
r = delta(comp, {x!r}, method="certified", time_budget=30.0)
# VmHWM: this process's own peak (ru_maxrss would carry over the forking parent's, pytest's)
rss = next(int(line.split()[1]) for line in open("/proc/self/status")
           if line.startswith("VmHWM")) / 1024
print(json.dumps({{"out": [str(r.lower_mpf), str(r.upper_mpf)], "rss": rss,
                  "wall": time.perf_counter() - t}}))
"""
    out, _ = _run_capped(code, timeout=120)
    lo, hi = (float(v) for v in out["out"])
    assert 0 <= lo <= hi <= 1
    assert out["rss"] < max_rss_mib, out
