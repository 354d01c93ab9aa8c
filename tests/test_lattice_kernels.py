"""The re-discretization kernels of the adaptive lattice (certify.lattice_adaptive sections C, D)
against a plain-Python-integer reference of the same formulas (the list implementation they
replaced): same integers, so the certified numbers do not move."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

flint = pytest.importorskip("flint")

from certify.lattice_adaptive import coarsen_lower, coarsen_upper  # noqa: E402
from certify.lattice_lower import LowerLattice, Seq  # noqa: E402
from certify.lattice_measure import LatticePLD  # noqa: E402

_W = 64


def _ceil_shift(v: int) -> int:
    return -((-v) >> _W)  # Python ints: exact ceil(v / 2^64)


def _ref_upper(cs: list[int], offset: int, r: int, w: list[int]) -> tuple[int, list[int]]:
    """Section C with Python ints: residue j of a coarse cell sends ceil(c w_j / 2^64) up."""
    j0, first = divmod(offset, r)
    cs = [0] * first + cs
    n = -(-len(cs) // r)
    cs += [0] * (n * r - len(cs))
    out = [*cs[0::r], 0]
    for j in range(1, r):
        for J, c in enumerate(cs[j::r]):
            up = _ceil_shift(c * w[j - 1])
            out[J] += c - up
            out[J + 1] += up
    return j0, out


def _ref_seq(cs: list[int], offset: int, r: int, w: list[int] | None) -> tuple[int, list[int]]:
    """Section D with Python ints: coarse cell sums (Q), weighted sums rounded up (tilted P:
    the floor plus one unit on every cell up to the last non-zero one, >= the ceiling)."""
    j0, first = divmod(offset, r)
    cs = [0] * first + cs
    n = -(-len(cs) // r)
    cs += [0] * (n * r - len(cs))
    if w is None:
        return j0, [sum(cs[J * r: J * r + r]) for J in range(n)]
    sums = [sum(c * wj for c, wj in zip(cs[J * r: J * r + r], w, strict=True)) for J in range(n)]
    sums = _strip(sums)
    assert all((v >> _W) + 1 >= _ceil_shift(v) for v in sums)
    return j0, [(v >> _W) + 1 for v in sums]


def _ints(p) -> list[int]:
    return [int(c) for c in p.coeffs()]


def _strip(xs: list[int]) -> list[int]:
    return xs[: max([i + 1 for i, x in enumerate(xs) if x] or [0])]


masses = st.lists(st.one_of(st.just(0), st.integers(0, 2**100)), min_size=1, max_size=50)


@given(masses, st.integers(-60, 60), st.sampled_from([1, 2, 4, 8]), st.integers(-20, -3))
@settings(max_examples=60, deadline=None)
def test_coarsen_upper_matches_the_integer_reference(cs, offset, r, e):
    from certify.engine import DEFAULT_PRECISION, endpoints, workprec
    from certify.lattice_grid import ceil_dyadic

    h = 2.0**e
    lat = LatticePLD(h, 80, offset, flint.fmpz_poly(cs), 7, 3, "P||Q", 5, 2)
    out = coarsen_upper(lat, r)
    with workprec(DEFAULT_PRECISION):
        u = flint.arb(h)
        den = 1 - (-(r * u)).exp()
        w = [ceil_dyadic(endpoints((1 - (-(j * u)).exp()) / den * (1 << _W))[1])
             for j in range(1, r)]
    j0, ref = _ref_upper(cs, offset, r, w)
    assert out.offset == j0 and out.h == h * r and out.inf == 7
    assert _ints(out.coeffs) == _strip(ref)
    assert sum(ref) == sum(cs)  # total unchanged: mass only moves up (Lemma 2, section C)


@given(masses, masses, st.integers(-60, 60), st.sampled_from([1, 2, 4, 8]))
@settings(max_examples=60, deadline=None)
def test_coarsen_lower_matches_the_integer_reference(qs, rs, offset, r):
    from certify.engine import DEFAULT_PRECISION, endpoints, workprec
    from certify.lattice_grid import ceil_dyadic

    h = 2.0**-9
    low = LowerLattice(h, 80, Seq(offset, flint.fmpz_poly(qs), 0, 3),
                       Seq(offset + 1, flint.fmpz_poly(rs), 11, 0), 3, "P||Q", 5, ((0.25, 3),))
    out = coarsen_lower(low, r)
    with workprec(DEFAULT_PRECISION):
        u = flint.arb(h)
        w = [1 << _W, *[ceil_dyadic(endpoints((-(i * u)).exp() * (1 << _W))[1])
                        for i in range(1, r)]]
    jq, ref_q = _ref_seq(qs, offset, r, None)
    jr, ref_r = _ref_seq(rs, offset + 1, r, w if r > 1 else None)
    assert (out.q.offset, _ints(out.q.coeffs), out.q.inf) == (jq, _strip(ref_q), 3)
    assert (out.r.offset, _ints(out.r.coeffs), out.r.extra) == (jr, _strip(ref_r), 11)


@given(st.lists(st.one_of(st.just(0), st.integers(0, 2**40), st.integers(0, 2**170)),
                min_size=1, max_size=60), st.sampled_from([64, 72, 80]), st.booleans())
@settings(max_examples=80, deadline=None)
def test_cut_rescale_cuts_exact_tails_and_rounds_in_the_asked_direction(cs, bits, up):
    from certify.lattice_grid import cut_rescale

    tau = 1 << (2 * bits - 64)  # 2^-64 of mass in units 2^-2B
    cs = _strip(cs) or [0]
    n = len(cs)
    # reference cut (Lemma 3 on the exact coefficients): smallest top, then largest low
    top = next(k for k in range(n) if sum(cs[k + 1:]) <= tau)
    low = max(k for k in range(top + 1) if sum(cs[:k]) <= tau)
    d = 1 << bits
    rnd = (lambda v: -((-v) // d)) if up else (lambda v: v // d)
    # kept masses: the floor, plus one unit each when rounding up (>= the ceiling)
    kept = (lambda v: v // d + 1) if up else (lambda v: v // d)
    got = cut_rescale(flint.fmpz_poly(cs), bits, up)
    assert got[0] == low
    # (the zero polynomial has no coefficients to keep)
    assert _ints(got[1]) == (_strip([kept(c) for c in cs[low:top + 1]]) if any(cs) else [])
    assert got[2:] == (rnd(sum(cs[top + 1:])), rnd(sum(cs[:low])))
    if up:  # every kept mass at least its exact share
        assert all(k * d >= c for k, c in zip(_ints(got[1]), cs[low:top + 1], strict=False))
        assert len(_ints(got[1])) == (top + 1 - low if any(cs) else 0)


def test_rounding_dust_in_a_far_tail_is_cut_not_kept():
    # bulk: 2^10 masses of 2^70 units; tail: 2^7 atoms of one unit, 2^11 apart. Each product
    # of a bulk mass and a tail atom is 2^-10 of a unit: rounded up first, the 2^17 such
    # coefficients would weigh 2^17 units = 2^-63 > 2^-64 and could not be cut (the support
    # then doubles with every squaring); their exact mass is 2^-73, so they go to +infinity.
    from certify.lattice_measure import multiply_lattices

    bits = 80
    cs = [1 << 70] * (1 << 10) + [0] * (1 << 18)
    for k in range(128):
        cs[(1 << 10) + (k << 11)] = 1
    lat = LatticePLD(2.0**-10, bits, 0, flint.fmpz_poly(cs), 0, 1, "P||Q", 5)
    sq = multiply_lattices(lat, lat)
    assert sq.coeffs.length() <= 1 << 11  # only the bulk squared is kept
    exact = sum(cs) ** 2  # units 2^-2B
    assert sq.total << bits >= exact  # every mass rounded up, none lost
    assert sq.inf >= 2 * 127  # the bulk-tail products beyond the bulk (2 x 127 units) at +inf


@given(st.lists(st.one_of(st.just(0), st.integers(0, 2**30)), min_size=0, max_size=50),
       st.one_of(st.just(0), st.integers(0, 2**34)))
@settings(max_examples=150, deadline=None)
def test_cut_sums_are_the_extreme_cuts_and_their_exact_masses(cs, tau):
    from certify.lattice_grid import cut_points, cut_sums

    low, top, above, below = cut_sums(flint.fmpz_poly(cs), tau)
    cs = _strip(cs)
    n = len(cs)
    if n == 0:
        assert (low, top, above, below) == (0, -1, 0, 0)
        return
    assert top == next(k for k in range(n) if sum(cs[k + 1:]) <= tau)
    assert low == max(k for k in range(top + 1) if sum(cs[:k]) <= tau)
    assert (above, below) == (sum(cs[top + 1:]), sum(cs[:low]))
    assert cut_points(flint.fmpz_poly(cs), tau) == (low, top)


@pytest.mark.parametrize("seed", range(6))
def test_cut_sums_gallop_matches_prefix_sums_on_long_products(seed):
    # products of bell-shaped 80-bit masses with zero runs, as the lattice cuts them (long
    # enough that the galloping search and the bisection after it both take many steps); the
    # oracle is the definition by exact prefix sums
    import random

    from certify.lattice_grid import cut_sums

    rng = random.Random(seed)
    n = rng.randrange(200, 1500)
    sd = n / rng.uniform(4, 12)
    cs = [0 if rng.random() < 0.1 else
          int(2**80 * math.exp(-((i - n / 2) / sd) ** 2 / 2) * rng.uniform(0.5, 1.5))
          for i in range(n)]
    p = flint.fmpz_poly(cs) * flint.fmpz_poly(cs[::-1])
    c = [int(x) for x in p.coeffs()]
    for tau in (0, 1, 1 << 60, 1 << 100, 1 << rng.randrange(100, 170), sum(c), sum(c) * 2):
        low, top, above, below = cut_sums(p, tau)
        suffix = [0] * (len(c) + 1)
        for k in range(len(c) - 1, -1, -1):
            suffix[k] = suffix[k + 1] + c[k]
        want_top = next(k for k in range(len(c)) if suffix[k + 1] <= tau)
        prefix = 0
        want_low = 0
        for k in range(want_top + 1):
            if prefix <= tau:
                want_low = k
            prefix += c[k]
        assert (top, low) == (want_top, want_low)
        assert (above, below) == (suffix[top + 1], sum(c[:low]))


def test_retilt_keeps_the_certified_test_value_and_renormalises():
    # the identity P(S = j) = e^{-jh - Gamma} r_j is unchanged by r -> e^g r, Gamma -> Gamma + g:
    # the certified test value moves only by the rounding of the new weights (tiny)
    from certify.engine import DEFAULT_PRECISION, workprec
    from certify.lattice_lower import lower_lattice, retilt
    from numeric.mechanisms import Gaussian

    low = retilt(lower_lattice([(Gaussian(2.0), 5)], h=2.0**-6))
    assert retilt(low) is low  # normalised: unchanged
    shrunk = type(low)(low.h, low.bits, low.q, type(low.r)(low.r.offset, low.r.coeffs * 9 // 10,
                                                           low.r.extra, low.r.inf),
                       low.count, low.direction, low.points, (*low.tilts, (-0.10536051565782628,
                                                                           1)))
    # shrunk: the tilted side at 0.9 of its mass with Gamma lowered to match (as after a
    # coarsening); re-tilting must give back total 1 and the same test values
    back = retilt(shrunk)
    tot = int(back.r.coeffs(1)) + back.r.extra
    assert abs(tot / 2.0**low.bits - 1.0) < 1e-12
    with workprec(DEFAULT_PRECISION):
        for e in (0.5, 1.0, 2.0):
            a, _ = shrunk.delta_lower(flint.arb(e))
            b, _ = back.delta_lower(flint.arb(e))
            assert abs(float(a.mid()) - float(b.mid())) <= 1e-15 + 1e-12 * abs(float(a.mid()))
            assert float(b.lower()) <= float(a.lower()) + 1e-15  # re-tilting never gains power


def test_dp_sgd_ten_million_steps_lower_end_is_not_lost_in_the_tilted_side():
    # rate 0.01, sigma 1, m = 1e7 (eps ~ 1014): without re-tilting, every coarsening left the
    # tilted law a little below 1 and the squarings drove it below the fixed-point cut, so the
    # lower end stayed at 440 (resolution (16, 32)) while the upper end was 1016
    from certify import lattice_target
    from certify.engine import to_arb
    from certify.lattice_adaptive import Resolution
    from numeric.composition import compose
    from numeric.mechanisms import PoissonSubsampledGaussian

    comp = compose([(PoissonSubsampledGaussian(1.0, 0.01), 10**7)])
    b, _ = lattice_target._epsilon_once(comp, to_arb("delta", 1e-5), Resolution(16, 32), 80)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert lo <= hi and (hi - lo) / hi < 5e-3


@pytest.mark.parametrize("seed", range(6))
def test_lower_float_search_over_supports_matches_the_dense_search(seed):
    """The lower end's float search looks at the indices carrying mass only (a gap between the
    Q and tilted-P supports was searched point by point: 2.4e7 points, 2 GB, 9 s). Reference: the
    dense search written out here, max over every K in [lo, hi) of
    sum_{j>K} Q'_j - e^eps (sum_{j>K} e^{-jh} R'_j + e^{-(K+1)h} E), times 2^-B, in mpmath."""
    import random

    import mpmath as mp

    rng = random.Random(seed)
    bits, h = 40, 2.0**-2
    nq, nr = rng.randint(1, 12), rng.randint(1, 12)
    qo = rng.randint(-20, 20)
    ro = qo + rng.choice([-300, -40, 0, 5, 60, 400])  # overlapping or far apart
    q = [rng.randrange(1 << 36) for _ in range(nq)]
    r = [rng.randrange(1 << 36) for _ in range(nr)]
    extra = rng.choice([0, rng.randrange(1 << 30)])
    low = LowerLattice(h, bits, Seq(qo, flint.fmpz_poly(q), inf=rng.randrange(1 << 20)),
                       Seq(ro, flint.fmpz_poly(r), extra=extra), 3, "P||Q", nq, ())
    lo, hi = min(qo, ro), max(qo + nq, ro + nr)
    qd = {qo + i: c for i, c in enumerate(q)}
    rd = {ro + i: c for i, c in enumerate(r)}
    for eps in (0.0, 0.7, 3.0):
        with mp.workdps(40):
            def test_value(j, eps=eps):  # threshold K = j - 1: sums over indices >= j
                qs = sum(c for i, c in qd.items() if i >= j) + low.q.inf
                ps = sum(c * mp.exp(-i * h) for i, c in rd.items() if i >= j)
                ps = (ps + extra * mp.exp(-j * h)) * mp.exp(eps - low.shift)
                return (qs - ps) * mp.mpf(2) ** -bits

            best = max(test_value(j) for j in range(lo, hi))
        got, k = low.float_profile(eps)
        assert abs(got - float(best)) <= 1e-9 * max(1.0, abs(float(best)))
        assert lo - 1 <= k < hi


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-10**12, 10**12), max_size=60))
def test_sorted_unique_is_numpys_unique(values):
    import numpy as np

    from certify.lattice_lower import _sorted_unique

    x = np.array(values, dtype=np.int64)
    got, want = _sorted_unique(x), np.unique(x)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("count", [1, 2])
def test_a_sparse_product_rounds_up_without_units_on_its_zeros_only_for_single_steps(count):
    # cut_rescale: floor + 1 (>= the ceiling) puts a unit on every kept coefficient, zeros
    # included; the first product of single-step laws is sparse, so its callers keep the exact
    # ceiling there (count 1), and later products take floor + 1 (count 2)
    from certify.lattice_measure import multiply_lattices

    bits = 80
    cs = [0] * 40
    cs[0], cs[17], cs[39] = 1 << 79, 1 << 78, (1 << 78) + 12345
    lat = LatticePLD(2.0**-10, bits, 0, flint.fmpz_poly(cs), 0, count, "P||Q", 3)
    out = multiply_lattices(lat, lat)
    exact = [sum(cs[i] * cs[k - i] for i in range(40) if 0 <= k - i < 40) for k in range(79)]
    got = _ints(out.coeffs)
    assert out.offset == 0 and len(got) == 79
    d = 1 << bits
    assert all(g * d >= e for g, e in zip(got, exact, strict=True))  # every mass >= its share
    if count == 1:
        assert got == [-((-e) // d) for e in exact]  # the exact ceiling: zeros stay zero
    else:
        assert got == [e // d + 1 for e in exact]  # floor + 1: a unit on each zero too
