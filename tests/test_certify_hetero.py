"""certify.lattice_hetero: heterogeneous compositions as one multi-exponentiation, and the
shared single-step evaluations (LatticeStep.delta_tails) it relies on for speed.

Oracles (independent of the code under test): exact integer convolution of the single-step
lattice measures (Python integers, hockey-stick curves in mpmath) for the multi-exponentiation
itself; the GDP closed form in mpmath for compositions of Gaussians with distinct noise levels
(mu = sqrt(sum_i c_i / sigma_i^2), Dong, Roth, Su 2022, Cor. 2.13 and 3.3); the exact law of a
composition of randomized responses with two different eps0 (enumeration of the two binomials in
mpmath); the step's own separate delta and tails calls for delta_tails. dp_accounting's PLD
(pessimistic and optimistic estimates) is a cross-check for heterogeneous DP-SGD, not an oracle.
"""

from __future__ import annotations

import math
import random

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from flint import arb, fmpz_poly  # noqa: E402
from lattice_contract import exact_hockey_stick, exact_lattice_composition  # noqa: E402

from certify.engine import workprec  # noqa: E402
from certify.lattice_adaptive import UPPER_OPS  # noqa: E402
from certify.lattice_hetero import (  # noqa: E402
    HORNER_FACTOR,
    HORNER_MIN_TERMS,
    MultiPower,
    multi_power,
)
from certify.lattice_measure import LatticePLD  # noqa: E402
from certify.lattice_target import target_delta_interval, target_epsilon_interval  # noqa: E402
from certify.mechanisms.subsampled_gaussian import SubsampledGaussianStep  # noqa: E402
from numeric.mechanisms import (  # noqa: E402
    Gaussian,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)

BITS = 80


def _gdp_delta(mu: float, eps: float) -> mp.mpf:
    """delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (GDP Cor. 2.13)."""
    with mp.workdps(40):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


# --- the multi-exponentiation against exact convolution --------------------------------------


def _random_step(rng: random.Random, h: float) -> LatticePLD:
    n = rng.randint(2, 9)
    cuts = sorted(rng.randrange(1, 1 << BITS) for _ in range(n - 1))
    masses = [b - a for a, b in zip([0, *cuts], [*cuts, 1 << BITS], strict=True)]
    return LatticePLD(h, BITS, rng.randint(-6, 3), fmpz_poly(masses), 0, 1, "P||Q", n)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("per_sigma", [2, 1 << 12])
def test_multi_power_dominates_the_exact_composition(seed, per_sigma):
    rng = random.Random(seed)
    h = 2.0**-5
    steps = [_random_step(rng, h) for _ in range(rng.randint(2, 4))]
    counts = [rng.randint(1, 5) for _ in steps]
    out = multi_power([(s, c, 0.01 * (i + 1)) for i, (s, c) in enumerate(zip(steps, counts,
                                                                                 strict=True))],
                      per_sigma, UPPER_OPS)
    assert out.count == sum(counts)
    law, total = exact_lattice_composition(list(zip(steps, counts, strict=True)))
    with mp.workdps(40), workprec(200):
        for eps in (-0.3, 0.0, 0.05, 0.2, 0.5):
            want = exact_hockey_stick(law, total, mp.mpf(eps), BITS)
            got = out.delta_upper(arb(eps))
            assert mp.mpf(got.upper().str(40, radius=False)) >= want * (1 - mp.mpf(10) ** -30)


def test_multi_power_without_coarsening_is_the_exact_composition_rounded_up():
    rng = random.Random(7)
    h = 2.0**-4
    steps = [_random_step(rng, h) for _ in range(3)]
    counts = [2, 3, 1]
    out = multi_power([(s, c, 1.0) for s, c in zip(steps, counts, strict=True)], 1 << 20,
                      UPPER_OPS)
    law, total = exact_lattice_composition(list(zip(steps, counts, strict=True)))
    # every product rounds each mass up by < 1 unit: at most (number of products) * length units
    excess = mp.mpf(out.total - (1 << BITS)) / 2**BITS
    assert 0 <= excess <= 1e-18
    with mp.workdps(40), workprec(200):
        for eps in (0.0, 0.1, 0.3):
            want = exact_hockey_stick(law, total, mp.mpf(eps), BITS)
            got = mp.mpf(out.delta_upper(arb(eps)).mid().str(40, radius=False))
            assert want <= got * (1 + mp.mpf(10) ** -25) and got - want <= 1e-17


def test_many_terms_run_the_horner_chain_finer():
    many, few = HORNER_MIN_TERMS, HORNER_MIN_TERMS - 1
    assert MultiPower([1] * many, [1.0] * many, 4, UPPER_OPS).horner == HORNER_FACTOR > 1
    assert MultiPower([1] * few, [1.0] * few, 4, UPPER_OPS).horner == 1


def _wide_block(h: float) -> LatticePLD:
    # one step spread over 2^10 units of h: its products are never coarser than its own unit
    return LatticePLD(h, BITS, -512, fmpz_poly([1 << (BITS - 10)] * 1024), 0, 1, "P||Q", 1024)


def test_many_terms_run_the_trees_products_finer_too():
    # a tree product settles to unit_below(sqrt(v) / (per_sigma * HORNER_FACTOR)) from
    # HORNER_MIN_TERMS terms on (never finer than its factors): 64 leaves of variance 1 at
    # per_sigma 4 give 8 / 16 -> 0.5, where per_sigma alone would give 8 / 4 = 2.0
    terms, per_sigma, h = 64, 4, 2.0**-12
    assert terms >= HORNER_MIN_TERMS and HORNER_FACTOR == 4
    acc = MultiPower([1] * terms, [1.0] * terms, per_sigma, UPPER_OPS)
    assert acc.floor < 1.0  # the floor unit is not the binding one here
    for _ in range(terms):
        acc.push(_wide_block(h))
    (key,) = acc.stacks
    ((top, v, leaves),) = acc.stacks[key]
    assert (v, leaves) == (64.0, 64)
    assert top.h == 2.0 ** math.floor(math.log2(8.0 / (per_sigma * HORNER_FACTOR))) == 0.5


@pytest.mark.parametrize("per_sigma", [2, 16])
def test_multi_power_of_many_terms_dominates_the_exact_composition(per_sigma):
    # enough terms for the finer Horner chain (HORNER_FACTOR), counts with several digit sets
    rng = random.Random(11)
    h = 2.0**-5
    steps = [_random_step(rng, h) for _ in range(HORNER_MIN_TERMS + 2)]
    counts = [rng.choice((1, 2, 3)) for _ in steps]
    parts = [(s, c, 0.01 * (1 + i % 7)) for i, (s, c) in enumerate(zip(steps, counts,
                                                                        strict=True))]
    out = multi_power(parts, per_sigma, UPPER_OPS)
    assert out.count == sum(counts)
    law, total = exact_lattice_composition(list(zip(steps, counts, strict=True)))
    with mp.workdps(40), workprec(200):
        for eps in (0.0, 1.0, 3.0, 6.0):
            want = exact_hockey_stick(law, total, mp.mpf(eps), BITS)
            got = out.delta_upper(arb(eps))
            assert mp.mpf(got.upper().str(40, radius=False)) >= want * (1 - mp.mpf(10) ** -30)


@pytest.mark.parametrize("bad", [[], [(None, 0, 1.0)], [(None, 2.5, 1.0)], [(None, True, 1.0)]])
def test_multi_power_rejects_bad_parts(bad):
    with pytest.raises(ValueError):
        multi_power(bad, 4, UPPER_OPS)


# --- end to end: exact heterogeneous cases ---------------------------------------------------

SIGMAS = (1.0, 1.3, 1.7, 2.2, 3.0, 4.5)
COUNTS = (3, 5, 2, 7, 1, 12)  # unequal binary digits: several digit sets, several trees
MU = math.sqrt(sum(c / s**2 for s, c in zip(SIGMAS, COUNTS, strict=True)))  # GDP Cor. 3.3


@pytest.mark.parametrize("eps", [0.5, 2.0, 5.0])
def test_distinct_gaussians_bracket_gdp_delta(eps):
    comp = [(Gaussian(s), c) for s, c in zip(SIGMAS, COUNTS, strict=True)]
    b = target_delta_interval(comp, eps, rel_width=1e-3)
    want = _gdp_delta(MU, eps)
    assert b.lower_mpf <= want <= b.upper_mpf
    assert b.upper_mpf - b.lower_mpf <= 1e-3 * b.upper_mpf


def test_many_distinct_gaussians_bracket_gdp_delta():
    # HORNER_MIN_TERMS + 10 noise levels: the multi-exponentiation's finer Horner chain
    sigmas = [2.0 + 0.05 * i for i in range(HORNER_MIN_TERMS + 10)]
    counts = [1 + i % 5 for i in range(len(sigmas))]
    mu = math.sqrt(sum(c / s**2 for s, c in zip(sigmas, counts, strict=True)))
    comp = [(Gaussian(s), c) for s, c in zip(sigmas, counts, strict=True)]
    b = target_delta_interval(comp, 2.0, rel_width=1e-3)
    want = _gdp_delta(mu, 2.0)
    assert b.lower_mpf <= want <= b.upper_mpf
    assert b.upper_mpf - b.lower_mpf <= 1e-3 * b.upper_mpf


@pytest.mark.parametrize("scale", [1.0, 1e20])
def test_distinct_gaussians_split_at_any_mass_bracket_gdp_delta(monkeypatch, scale):
    """The several-term split mass (HETERO_TAIL_SCALE x the one-term mass) is a tightness knob:
    with every product split (HETERO_MIN_SPAN 16, read by the products' operations) at the
    one-term mass or at 0.25 per end (the cap, which sends the ladder to (128, 128)), the
    interval still holds the GDP value."""
    import certify.lattice_hetero as lh

    monkeypatch.setattr(lh, "HETERO_MIN_SPAN", 16)
    monkeypatch.setattr(lh, "HETERO_TAIL_SCALE", scale)
    comp = [(Gaussian(s), c) for s, c in zip(SIGMAS, COUNTS, strict=True)]
    b = target_delta_interval(comp, 2.0, rel_width=1e-2)
    want = _gdp_delta(MU, 2.0)
    assert b.lower_mpf <= want <= b.upper_mpf
    assert b.upper_mpf - b.lower_mpf <= 1e-2 * b.upper_mpf


def test_distinct_subsampled_gaussians_at_rate_one_bracket_gdp_epsilon():
    comp = [(PoissonSubsampledGaussian(s, 1.0), c) for s, c in zip(SIGMAS, COUNTS, strict=True)]
    b = target_epsilon_interval(comp, 1e-6, rel_width=1e-4)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert _gdp_delta(MU, lo) >= 1e-6 >= _gdp_delta(MU, hi)
    assert hi - lo <= 1e-4 * hi


def _rr_two(e1: float, m1: int, e2: float, m2: int, eps: float) -> mp.mpf:
    """Randomized responses RR(e1)^m1 x RR(e2)^m2: L = sum (2k_i - m_i) e_i, k_i ~ Bin(m_i,
    e^e_i / (1 + e^e_i)) under Q; delta(eps) = E_Q[(1 - e^(eps - L))_+]."""
    with mp.workdps(40):
        a, b, e = mp.mpf(e1), mp.mpf(e2), mp.mpf(eps)
        qa, qb = mp.exp(a) / (1 + mp.exp(a)), mp.exp(b) / (1 + mp.exp(b))
        out = mp.mpf(0)
        for i in range(m1 + 1):
            pa = mp.binomial(m1, i) * qa**i * (1 - qa) ** (m1 - i)
            for j in range(m2 + 1):
                s = (2 * i - m1) * a + (2 * j - m2) * b
                if s > e:
                    pb = mp.binomial(m2, j) * qb**j * (1 - qb) ** (m2 - j)
                    out += pa * pb * (1 - mp.exp(e - s))
        return out


@pytest.mark.parametrize("eps", [0.5, 1.5])
def test_two_randomized_responses_bracket_the_exact_law(eps):
    comp = [(RandomizedResponse(0.25), 20), (RandomizedResponse(0.1), 50)]
    b = target_delta_interval(comp, eps, rel_width=1e-2)
    want = _rr_two(0.25, 20, 0.1, 50, eps)
    assert b.lower_mpf <= want <= b.upper_mpf


# --- heterogeneous DP-SGD: cross-check with dp_accounting ------------------------------------


def test_heterogeneous_dp_sgd_agrees_with_pld_brackets():
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    sigmas = (0.8, 1.1, 1.5, 2.0)
    comp = [(PoissonSubsampledGaussian(s, 0.01), 50) for s in sigmas]
    b = target_epsilon_interval(comp, 1e-5)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert hi - lo <= 1e-4 * hi
    assert not any("above the target" in w for w in b.warnings)
    est = {}
    for pess in (True, False):  # PLDAccountant has no switch: the PLDs built directly
        pld = None
        for s in sigmas:
            one = pldlib.from_gaussian_mechanism(
                s, sampling_prob=0.01, pessimistic_estimate=pess,
                value_discretization_interval=1e-4).self_compose(50)
            pld = one if pld is None else pld.compose(one)
        est[pess] = pld.get_epsilon_for_delta(1e-5)
    # PLD's optimistic estimate lies below the true eps, its pessimistic one above (up to its
    # own truncation): the certified interval must meet [optimistic, pessimistic]
    # (session hetero3: the loop used to build two pessimistic accountants)
    assert lo <= est[True] * (1 + 1e-6) and est[False] * (1 - 1e-6) <= hi
    assert est[True] > est[False]


# --- the shared single-step evaluation --------------------------------------------------------


@pytest.mark.parametrize("swapped", [False, True])
def test_delta_tails_encloses_the_mpmath_values(swapped):
    """The shared evaluation (delta and both tails from one x and two erfcs) against mpmath at
    50 digits: P = N(0, 1), Q = (1-p) N(0, 1) + p N(mu, 1), L = log q/p increasing in x; the
    crossing x0 of L = s by mpmath's root finder (not the step's closed form); P||Q tails are
    (Q(x >= x0), P(x >= x0)), Q||P (L' = -L) (P(x <= x0'), Q(x <= x0')) with L(x0') = -s; delta
    = first tail - e^s second."""
    import mpmath as mp

    sigma, rate = 0.9, 0.01
    step = SubsampledGaussianStep(sigma, rate, swapped)
    assert step.shared_tails
    rng = random.Random(3)
    with mp.workdps(50), workprec(208):
        mu, p = mp.mpf(1) / mp.mpf(sigma), mp.mpf(rate)
        keep = 1 - p

        def loss(x):
            return mp.log(keep + p * mp.exp(mu * x - mu * mu / 2))

        checked = 0
        for _ in range(60):  # s where the crossing exists (L > log(1-p), L' < -log(1-p))
            k = rng.randint(-4000, 5) if swapped else rng.randint(-5, 4000)
            e = arb(k) * arb(2.0**-9)
            s_mp = mp.mpf(k) * mp.mpf(2) ** -9
            d, t1, t2 = step.delta_tails(e)
            target = -s_mp if swapped else s_mp
            if target <= mp.log(keep):  # below the loss's infimum: the trivial branch
                continue
            x0 = mp.findroot(lambda x, t=target: loss(x) - t, mu / 2 + target / mu)
            if swapped:
                w1, w2 = mp.ncdf(x0), keep * mp.ncdf(x0) + p * mp.ncdf(x0 - mu)
            else:
                w1, w2 = keep * mp.ncdf(-x0) + p * mp.ncdf(mu - x0), mp.ncdf(-x0)
            want = (w1 - mp.exp(s_mp) * w2, w1, w2)
            for ball, value in zip((d, t1, t2), want, strict=True):
                tol = mp.mpf(10) ** -40 * max(1, abs(value))  # mpmath's own rounding
                assert mp.mpf(ball.lower()) - tol <= value <= mp.mpf(ball.upper()) + tol
            assert (d.mid(), d.rad()) == (step.delta(e).mid(), step.delta(e).rad())
            checked += 1
        assert checked >= 40


# --- renormalized tilted P side (certify.lattice_hetero.renormalize_lower) --------------------


@pytest.mark.parametrize("seed", range(4))
def test_renormalized_lower_block_is_never_less_conservative(seed):
    from certify.lattice_hetero import renormalize_lower
    from certify.lattice_lower import LowerLattice, Seq

    rng = random.Random(seed)
    n = rng.randint(5, 30)
    q = [rng.randrange(1 << 70) for _ in range(n)]
    r = [rng.randrange(1 << 60) for _ in range(n)]  # total far below 2^80: decayed P side
    low = LowerLattice(2.0**-3, BITS, Seq(-5, fmpz_poly(q), inf=7),
                       Seq(-5, fmpz_poly(r), extra=rng.randrange(1 << 40)), 10, "P||Q", n,
                       ((0.015625, 10),))
    new = renormalize_lower(low)
    assert int(new.r.coeffs(1)) + new.r.extra > (1 << BITS) * 0.99  # back to about 2^B
    assert new.q == low.q and len(new.tilts) == 2
    with workprec(200):
        for eps in (0.0, 0.3, 1.0):
            for k in range(-6, n - 4, 3):
                a = low.delta_lower_at(arb(eps), k)
                b = new.delta_lower_at(arb(eps), k)
                # the same test, the P side over-estimated a little more: never a higher value
                assert b.upper() <= a.upper() + 2.0**-100
                assert (a - b).upper() <= 1e-12


# --- the single-step atoms at the evaluations' precision (HETERO_EVAL_GUARD) ------------------


@pytest.mark.parametrize("lower", [False, True])
def test_atoms_started_below_the_needed_precision_recompute_higher(lower):
    """``upper_atoms`` / ``lower_atoms`` take the evaluations' precision for several terms (40
    guard bits). Started far too low (30 bits, balls ~2^-30 wide against the 2^-68 a mass
    needs), they must evaluate the step again at a higher precision and land within one unit
    of each tail (upper end) or mass (lower end) of the default 188-bit computation; without the
    re-evaluation the masses would be off by ~2^30 units."""
    from certify.lattice_adaptive import lower_atoms, upper_atoms

    class Counting(SubsampledGaussianStep):
        calls = 0

        def delta_tails(self, s):
            type(self).calls += 1
            return super().delta_tails(s)

    step = Counting(0.9, 0.01)
    unit, bits = 2.0**-9, 60
    idx = [-6, -3, 0, 1, 2, 3, 5, 8, 12, 20, 40, 80, 160, 320, 640, 1200]
    u = arb(unit)

    def evaluated(prec):
        with workprec(prec):
            return {k: step.delta_tails(arb(k) * u) for k in idx}

    low_vals, ref_vals = evaluated(30), evaluated(188)
    Counting.calls = 0
    if lower:
        got = lower_atoms(step, idx, unit, bits, {k: v[1:] for k, v in low_vals.items()}, 30)
        ref = lower_atoms(step, idx, unit, bits, {k: v[1:] for k, v in ref_vals.items()})
        # the tilt (any value is valid) comes from the first pass's midpoints, so it differs
        # in its last digits: the tilted masses compare after undoing it
        scale = math.exp(ref[3] - got[3])
        assert all(abs(a * scale - b) <= 1 + 1e-12 * b for a, b in zip(got[1], ref[1],
                                                                        strict=True))
        pairs = [*zip(got[0], ref[0], strict=True), (got[2], ref[2])]
    else:
        got = upper_atoms(step, idx, [low_vals[k][0] for k in idx], unit, bits, 30)
        ref = upper_atoms(step, idx, [ref_vals[k][0] for k in idx], unit, bits)

        def tails(atoms, inf):
            out = [inf]
            for a in reversed(atoms):
                out.append(out[-1] + a)
            return out

        pairs = list(zip(tails(*got), tails(*ref), strict=True))
    assert Counting.calls >= len(idx) - 1  # evaluated again
    assert all(abs(a - b) <= 1 for a, b in pairs), pairs
    assert any(b > 1 << 20 for _, b in pairs)  # masses of real size, not all near zero
