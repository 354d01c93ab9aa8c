"""certify.lattice_target / certify.lattice_adaptive: the lattice on adaptive grids, refined to a
requested relative width.

Oracles (independent of the code under test): the GDP closed form in mpmath (Dong, Roth, Su,
Cor. 2.13) for Gaussian compositions, the exact binomial law of randomized response in mpmath,
the Laplace two-fold law by mpmath quadrature (tests/lattice_contract.py), and dp_accounting's
PLD values for DP-SGD recorded in docs/math.md (rate 0.01, sigma 1, delta 1e-5, rounded to three
decimals). The re-discretization steps are checked against their defining inequalities in mpmath.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from flint import fmpz_poly  # noqa: E402
from lattice_contract import gdp_delta, laplace_two_fold, rr_delta  # noqa: E402

import certify.lattice_jump as lattice_jump  # noqa: E402
import certify.lattice_target as lt  # noqa: E402
from certify.budget import time_budget  # noqa: E402
from certify.combine import certified_delta, certified_epsilon  # noqa: E402
from certify.engine import to_arb  # noqa: E402
from certify.lattice_adaptive import coarsen_lower, coarsen_upper  # noqa: E402
from certify.lattice_grid import epsilon_query_bits  # noqa: E402
from certify.lattice_lower import LowerLattice, Seq  # noqa: E402
from certify.lattice_measure import LatticePLD  # noqa: E402
from certify.lattice_target import (  # noqa: E402
    check_rel_width,
    target_delta_interval,
    target_epsilon_interval,
)
from numeric.composition import compose  # noqa: E402
from numeric.mechanisms import (  # noqa: E402
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)

PLD_EPS = {1000: 1.828, 10000: 6.188}  # dp_accounting PLD, rate 0.01, sigma 1, delta 1e-5
ROUND = 5e-4




# --- the re-discretization steps (sections C and D of certify.lattice_adaptive) -------------------


def _h(masses: dict[int, int], inf: int, unit: float, t: mp.mpf) -> mp.mpf:
    return inf + sum(c * max(mp.mpf(0), 1 - t * mp.exp(-k * mp.mpf(unit)))
                     for k, c in masses.items())


@pytest.mark.parametrize("seed", range(6))
def test_connect_the_dots_coarsening_dominates(seed):
    rng = random.Random(seed)
    unit, r = 2.0**-6, 2 ** rng.randint(1, 4)
    offset = rng.randint(-40, 10)
    coeffs = [rng.getrandbits(40) if rng.random() < 0.7 else 0 for _ in range(rng.randint(5, 60))]
    lat = LatticePLD(unit, 40, offset, fmpz_poly(coeffs), rng.getrandbits(20), 3, "P||Q", 1)
    out = coarsen_upper(lat, r)
    assert out.h == unit * r and out.total == lat.total and out.inf == lat.inf
    fine = {offset + k: c for k, c in enumerate(coeffs)}
    coarse = {(out.offset + k) * r: int(c) for k, c in enumerate(out.coeffs.coeffs())}
    assert all(int(c) >= 0 for c in out.coeffs.coeffs())
    with mp.workdps(50):
        for i in range(-80, 120):  # H is piecewise linear in t: check at and between the kinks
            t = mp.exp(mp.mpf(i) * unit / 2)
            assert _h(coarse, out.inf, unit, t) >= _h(fine, lat.inf, unit, t) - mp.mpf(10) ** -30


@pytest.mark.parametrize("seed", range(6))
def test_coarsened_test_statistic_keeps_the_invariants(seed):
    rng = random.Random(seed)
    unit, r = 2.0**-5, 2 ** rng.randint(1, 3)
    off = rng.randint(-30, 5)
    q = [rng.getrandbits(30) for _ in range(rng.randint(3, 40))]
    p = [rng.getrandbits(30) for _ in range(len(q))]
    low = LowerLattice(unit, 30, Seq(off, fmpz_poly(q), 0, 7), Seq(off, fmpz_poly(p), 5), 2,
                       "P||Q", 1, ((0.0, 2),))
    out = coarsen_lower(low, r)
    assert out.h == unit * r and out.q.inf == 7 and out.r.extra == 5
    qc = {out.q.offset + k: int(c) for k, c in enumerate(out.q.coeffs.coeffs())}
    rc = {out.r.offset + k: int(c) for k, c in enumerate(out.r.coeffs.coeffs())}
    with mp.workdps(50):
        for big in set(qc) | set(rc):
            cell = [j for j in range(off, off + len(q)) if j // r == big]
            assert qc.get(big, 0) == sum(q[j - off] for j in cell)  # Q: exact cell sums
            # P: e^{-J U} r'_J >= sum over the cell of e^{-j u} r_j (the tilted cell mass)
            lhs = mp.exp(-big * r * mp.mpf(unit)) * rc.get(big, 0)
            rhs = sum(mp.exp(-j * mp.mpf(unit)) * p[j - off] for j in cell)
            assert lhs >= rhs


# --- soundness against exact cases ----------------------------------------------------------------


@pytest.mark.parametrize(("sigma", "m", "eps"), [(2.0, 10, 0.5), (1.0, 50, 20.0), (4.0, 200, 2.0)])
def test_gaussian_brackets_gdp(sigma, m, eps):
    want = gdp_delta(math.sqrt(m) / sigma, eps)
    b = target_delta_interval([(Gaussian(sigma), m)], eps, rel_width=1e-3)
    assert b.lower_mpf <= want <= b.upper_mpf
    assert b.lower_mpf > 0


def test_heterogeneous_gaussians_bracket_gdp_epsilon():
    comp = [(Gaussian(2.0), 30), (Gaussian(5.0), 200), (Gaussian(1.0), 3)]
    mu = math.sqrt(30 / 4 + 200 / 25 + 3)  # GDP Cor. 3.3
    b = target_epsilon_interval(comp, 1e-6, rel_width=1e-3)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert gdp_delta(mu, lo) >= 1e-6 >= gdp_delta(mu, hi)
    assert hi - lo <= 1e-3 * hi


@pytest.mark.parametrize("delta", [1e-2, 1e-3, 1e-6])
def test_heterogeneous_gaussians_bracket_gdp_at_the_bits_delta_chooses(delta):
    # an eps query fixes its bits from delta (56 at 1e-2, 57 at 1e-3, 67 at 1e-6): every
    # rounding stays directed, so the GDP value must stay inside at each precision
    comp = [(Gaussian(2.0), 30), (Gaussian(5.0), 200), (Gaussian(1.0), 3)]
    mu = math.sqrt(30 / 4 + 200 / 25 + 3)
    b = target_epsilon_interval(comp, delta, rel_width=1e-3)
    assert b.inputs["bits"] == epsilon_query_bits(delta) < 80
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert gdp_delta(mu, lo) >= delta >= gdp_delta(mu, hi)


@pytest.mark.parametrize(("eps0", "m", "delta"), [(0.5, 40, 1e-3), (0.1, 300, 1e-2)])
def test_randomized_response_eps_brackets_the_binomial_at_few_bits(eps0, m, delta):
    b = target_epsilon_interval([(RandomizedResponse(eps0), m)], delta, rel_width=1e-3)
    assert b.inputs["bits"] == epsilon_query_bits(delta) <= 57
    lo, hi = b.lower_mpf, b.upper_mpf
    assert rr_delta(eps0, m, lo) >= delta >= rr_delta(eps0, m, hi)


def test_epsilon_query_bits_follow_delta():
    assert epsilon_query_bits(1e-5) == 64  # ceil(16.6) + 47
    assert epsilon_query_bits(1e-10) == 80  # 34 + 47, capped
    assert epsilon_query_bits(0.25) == 56  # 2 + 47, floored
    ds = [10.0 ** -k for k in range(1, 16)]
    bits = [epsilon_query_bits(d) for d in ds]
    assert bits == sorted(bits) and all(56 <= b <= 80 for b in bits)
    for bad in (0.0, 1.0, -1e-5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="delta"):
            epsilon_query_bits(bad)


@pytest.mark.parametrize("delta", ["1e-400", "0.99999999999999999999"])
def test_a_delta_beyond_floats_is_answered_at_the_default_bits(delta):
    # valid deltas whose float is 0 or 1 (Arb holds them): the query keeps 80 bits, no error
    b = target_epsilon_interval([(Gaussian(2.0), 3)], delta, rel_width=1e-2)
    assert b.inputs["bits"] == 80
    assert b.lower_mpf >= 0


@pytest.mark.parametrize(("eps0", "m", "eps"), [(0.1, 300, 2.0), (0.5, 40, 4.0), (0.05, 1000, 1.0)])
def test_randomized_response_brackets_the_binomial(eps0, m, eps):
    want = rr_delta(eps0, m, eps)
    b = target_delta_interval([(RandomizedResponse(eps0), m)], eps, rel_width=1e-2)
    assert b.lower_mpf <= want <= b.upper_mpf


@pytest.mark.parametrize("eps", [0.1, 0.6, 1.2, 1.9])
def test_laplace_two_fold_brackets_quadrature(eps):
    with mp.workdps(30):
        want = laplace_two_fold(1.0, eps)
    b = target_delta_interval([(Laplace(1.0), 2)], eps, rel_width=1e-3)
    assert b.lower_mpf <= want <= b.upper_mpf


@pytest.mark.parametrize("m", [1000, pytest.param(10000, marks=pytest.mark.slow)])
def test_dp_sgd_reaches_the_target_around_the_pld_value(m):
    b = target_epsilon_interval([(PoissonSubsampledGaussian(1.0, 0.01), m)], 1e-5)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert hi - lo <= 1e-4 * hi
    assert lo - ROUND <= PLD_EPS[m] <= hi + ROUND
    assert not any("above the target" in w for w in b.warnings)
    # epsilon_query_bits(1e-5) = 64; the levels after the first at SMALL_BITS (one word)
    assert b.inputs["bits"] == lattice_jump.SMALL_BITS < epsilon_query_bits(1e-5)
    for key in ("h", "resolution", "rounding_budget", "seconds", "rel_width_target"):
        assert key in b.inputs


@pytest.mark.parametrize("query", ["epsilon", "delta"])
def test_a_far_lower_order_is_carried_from_the_coarsest_level(query):
    # DP-SGD: Q||P's eps lies far below P||Q's, so the finer levels compute P||Q only and carry
    # Q||P's coarsest upper end; the interval is the one every order computed here gives
    comp = [(PoissonSubsampledGaussian(1.0, 0.01), 1000)]
    run, once, x = ((target_epsilon_interval, lt._epsilon_once, 1e-5) if query == "epsilon"
                    else (target_delta_interval, lt._delta_once, 1.0))
    b = run(comp, x)
    res = b.inputs["resolution"]
    assert b.inputs["carried_orders"] == {"Q||P": (lt.LEVELS[0].single, lt.LEVELS[0].composed)}
    assert set(b.inputs["h"]) == {"P||Q"}
    level = lt.LEVELS.index(lt.Resolution(res["single"], res["composed"]))
    assert level > 0
    full, _ = once(compose(comp), to_arb("x", x), lt.LEVELS[level], b.inputs["bits"])
    assert set(full.inputs["h"]) == {"P||Q", "Q||P"} and "carried_orders" not in full.inputs
    assert b.upper_mpf <= full.upper_mpf and full.lower_mpf <= b.lower_mpf
    assert full.inputs["per_direction"]["Q||P"] <= b.inputs["per_direction"]["Q||P"]


@pytest.mark.slow
def test_a_finer_target_gives_an_overlapping_tighter_interval():
    comp = [(PoissonSubsampledGaussian(2.0, 0.001), 10000)]
    a = target_epsilon_interval(comp, 1e-5, rel_width=1e-3)
    b = target_epsilon_interval(comp, 1e-5, rel_width=1e-5)
    assert a.lower_mpf <= b.upper_mpf and b.lower_mpf <= a.upper_mpf
    assert b.upper_mpf - b.lower_mpf <= 1e-5 * b.upper_mpf
    assert a.upper_mpf - a.lower_mpf <= 1e-3 * a.upper_mpf


def test_unreachable_target_warns_and_stays_sound():
    comp = [(Gaussian(3.0), 40)]
    with time_budget(5.0):
        b = target_delta_interval(comp, 1.0, rel_width=1e-12)
    assert any("above the target 1e-12" in w and "time budget" in w for w in b.warnings)
    want = gdp_delta(math.sqrt(40) / 3.0, 1.0)
    assert b.lower_mpf <= want <= b.upper_mpf


def test_certified_passes_rel_width_and_records_it():
    comp = [(PoissonSubsampledGaussian(1.0, 0.01), 100)]
    b = certified_epsilon(comp, 1e-5, rel_width=1e-3)
    assert b.inputs["rel_width"] == 1e-3
    assert b.upper_method.startswith("lattice[h=")
    assert float(b.upper_mpf - b.lower_mpf) <= 1e-3 * float(b.upper_mpf)
    d = certified_delta([(Laplace(2.0), 20)], 1.0)
    assert d.inputs["rel_width"] == 1e-4


@pytest.mark.parametrize("bad", [0, 1, -1e-3, float("nan"), "x", True, 2.0])
def test_bad_rel_width(bad):
    with pytest.raises(ValueError, match="rel_width"):
        check_rel_width(bad)
    with pytest.raises(ValueError, match="rel_width"):
        certified_epsilon([(Gaussian(1.0), 2)], 1e-5, rel_width=bad)


LAPLACE_SPEC = """
[[mechanism]]
type = "laplace"
scale = 4.0
count = 30
"""


def test_cli_rel_width_and_certificate_round_trip(capsys, tmp_path):
    from numeric.cli import main

    spec = tmp_path / "spec.toml"
    spec.write_text(LAPLACE_SPEC)
    cert = tmp_path / "cert.json"
    assert main(["certify", "--spec", str(spec), "--delta", "1e-5", "--rel-width", "1e-6",
                 "--out", str(cert)]) == 0
    capsys.readouterr()
    data = json.loads(cert.read_text())
    claim = data["claim"]
    assert claim["inputs"]["rel_width"] == 1e-6 and claim["upper_method"].startswith("lattice")
    lo, hi = Fraction(claim["lower"]), Fraction(claim["upper"])
    assert 0 < hi - lo <= hi * Fraction(1, 10**6)
    assert main(["verify", str(cert)]) == 0  # recomputed with the recorded target
    assert "verified" in capsys.readouterr().out
    assert main(["epsilon", "--spec", str(spec), "--delta", "1e-5", "--method", "certified",
                 "--rel-width", "1e-3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"]["rel_width"] == 1e-3
    lo2, hi2 = Fraction(out["lower"]), Fraction(out["upper"])
    assert lo2 <= hi and lo <= hi2 and hi2 - lo2 <= hi2 / 1000  # both certified: they overlap


# --- probe levels and the shared single-step evaluations ------------------------------------


def test_probe_bits_and_drop():
    from certify.lattice_jump import PROBE_BIT_DROP, probe_bits, probe_drop
    assert PROBE_BIT_DROP == 8
    assert [probe_bits(b) for b in (80, 64, 48, 44, 40, 24)] == [72, 56, 40, 40, 40, 24]
    assert [probe_bits(80, d) for d in (0, 5, 16)] == [80, 75, 64]
    # rounding r 2^D at most 1e-2 of delta, D at most PROBE_BIT_DROP
    assert probe_drop(1e-12, 1e-5) == PROBE_BIT_DROP
    assert probe_drop(1.1e-3 * 1e-10, 1e-10) == 3
    assert probe_drop(2.0**-5 * 1e-2 * 1e-10, 1e-10) == 5
    assert probe_drop(1.1e-2 * 1e-10, 1e-10) == 0
    assert probe_drop(0.0, 1e-5) == PROBE_BIT_DROP
    for bad in (math.nan, math.inf, -1.0):
        assert probe_drop(bad, 1e-5) == 0 and probe_drop(1e-20, bad) == 0
    assert probe_drop(1e-20, 0.0) == 0


def test_probe_levels_run_at_fewer_bits_and_the_answer_at_small_bits():
    # a level run only to measure the width's fall computes with 8 fewer bits than the query's
    # (epsilon_query_bits(1e-5) = 64); the level that meets the target at SMALL_BITS = 60
    comp = [(PoissonSubsampledGaussian(1.0, 0.01), 100)]
    b = target_epsilon_interval(comp, 1e-5)
    res = b.inputs["resolution"]
    probes = b.inputs["probe_levels"]
    assert probes and all(bits == 56 for *_, bits in probes)
    assert (lt.LEVELS[0].single, lt.LEVELS[0].composed) not in [p[:2] for p in probes]
    assert (res["single"], res["composed"]) not in [p[:2] for p in probes]
    assert b.inputs["bits"] == lattice_jump.SMALL_BITS == 60
    assert float(b.upper_mpf - b.lower_mpf) <= 1e-4 * float(b.upper_mpf)
    assert b.lower_mpf <= 0.718037 <= b.upper_mpf  # dp_accounting PLD (certified_grid.md)


def test_level_bits():
    level_bits = lattice_jump.level_bits
    assert lattice_jump.SMALL_BITS == 60
    # SMALL_BITS when the query's bits lie above it by at most the allowed drop
    assert [level_bits(64, d) for d in (0, 3, 4, 8)] == [64, 64, 60, 60]
    assert [level_bits(b, 8) for b in (80, 65, 64, 61, 60, 57)] == [80, 65, 60, 60, 60, 57]


def test_an_answer_at_small_bits_brackets_gdp():
    # one Gaussian term at delta 1e-5 (query bits 64): the answer's level runs at 60 bits,
    # every rounding still directed, so the GDP value stays inside
    sigma, m, delta = 2.0, 50, 1e-5
    b = target_epsilon_interval([(Gaussian(sigma), m)], delta)
    assert b.inputs["bits"] == 60
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    mu = math.sqrt(m) / sigma
    assert gdp_delta(mu, lo) >= delta >= gdp_delta(mu, hi)
    assert hi - lo <= 1e-4 * hi


def test_a_probe_level_is_certified_at_its_bits():
    # Gaussian: exact delta from GDP; every level's interval at probe bits brackets it
    sigma, m, eps = 2.0, 10, 0.5
    comp = compose([(Gaussian(sigma), m)])
    want = gdp_delta(math.sqrt(m) / sigma, eps)
    for level in (0, 6):
        out, _ = lt._delta_once(comp, to_arb("eps", eps), lt.LEVELS[level], 64, carry={},
                                prec=208)
        assert out.lower_mpf <= want <= out.upper_mpf


def test_shared_evaluations_are_bit_identical(monkeypatch):
    # adaptive_points with a memo filled by a coarser unit returns the same balls as a fresh
    # evaluation, and evaluates only the points the memo lacks
    from certify.lattice_adaptive import adaptive_points, evaluation_memo
    from certify.lattice_steps import lattice_step
    from certify.mechanisms.subsampled_gaussian import SubsampledGaussianStep

    step = lattice_step(PoissonSubsampledGaussian(0.8, 0.01))
    calls = [0]
    real = SubsampledGaussianStep.delta_tails

    def counted(self, s):
        calls[0] += 1
        return real(self, s)

    monkeypatch.setattr(SubsampledGaussianStep, "delta_tails", counted)
    memo: dict = {}
    std = step.rough_std()
    for single in (4, 8):
        unit = 2.0 ** math.floor(math.log2(std / single))
        args = (step, 100, unit, std / (20.0 * single**2), 192, 10 * std, single**2.0)
        tails_memo, tails_fresh = {}, {}
        adaptive_points(*args, {})  # the certified range's search (cached) is not counted
        calls[0] = 0
        idx, vals = adaptive_points(*args, tails_memo, memo=memo)
        with_memo = calls[0]
        calls[0] = 0
        idx2, vals2 = adaptive_points(*args, tails_fresh)
        assert idx == idx2 and with_memo <= calls[0] == len(idx)
        for a, c in zip(vals, vals2, strict=True):
            assert a.mid() == c.mid() and a.rad() == c.rad()
        for k in idx:
            for a, c in zip(tails_memo[k], tails_fresh[k], strict=True):
                assert a.mid() == c.mid() and a.rad() == c.rad()
    assert with_memo < len(idx)  # the finer unit reused the coarser unit's points
    assert evaluation_memo(step, 192, True) is evaluation_memo(step, 192, True)
    assert evaluation_memo(step, 192, True) is not evaluation_memo(step, 208, True)


def test_evaluation_memos_keep_a_bounded_number_of_points(monkeypatch):
    import certify.lattice_adaptive as la
    monkeypatch.setattr(la, "_MEMO_POINTS", 10)
    monkeypatch.setattr(la, "_memos", la.MemoStore())
    for name in ("a", "b"):
        la.evaluation_memo(name, 192, True).update({float(i): (i,) for i in range(6)})
    assert la.evaluation_memo("a", 192, True)  # a used again: b is now the oldest
    la.evaluation_memo("c", 192, True)  # 12 points kept > 10: the oldest (b) goes
    assert la._memos.keys() == [("a", 192, True), ("c", 192, True)]
    assert la._memos.kept == 6  # a's six points
    assert len(la.evaluation_memo("a", 192, True)) == 6
    big = la.evaluation_memo("a", 192, True)
    big.update({float(i): (i,) for i in range(20)})
    assert la.evaluation_memo("a", 192, True) == {}  # over the bound alone: emptied
    assert la._memos.kept == 0  # c holds none, a was emptied


def test_the_lower_side_keeps_its_point_weights_for_the_swapped_order():
    # rate 0.001, sigma 0.8, m = 1e3, delta 1e-5: the order Q||P lives below zero loss. With the
    # upper side's z (certify.lattice_adaptive.Z_UPPER) on both sides it kept ~120 single-step
    # points, its eps upper end stayed at 0.458 (finer levels: 0.167) above P||Q's 0.3036, and
    # the refinement climbed to (512, 1024) for 25 s instead of stopping at (32, 64)
    b = target_epsilon_interval([(PoissonSubsampledGaussian(0.8, 0.001), 1000)], 1e-5)
    assert b.upper_mpf - b.lower_mpf <= 1e-4 * b.upper_mpf
    assert b.inputs["resolution"]["single"] <= 64
    per = b.inputs["per_direction"]
    assert per["Q||P"] < float(b.lower_mpf) <= per["P||Q"]
