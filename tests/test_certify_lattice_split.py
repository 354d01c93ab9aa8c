"""certify.lattice_split / certify.lattice_split_lower: composed lattice laws with a fine core and
coarse tails (issue 16).

Oracles (independent of the code under test): exact rational convolutions and hockey-stick
curves in mpmath at 50 digits for the dominance steps; the GDP closed form (Dong, Roth, Su,
Cor. 2.13) for Gaussian compositions and the exact binomial law of randomized response, both in
mpmath at 40 digits, for the end-to-end brackets. The end-to-end tests move a large share of the
mass (1e-2 per end, coarse ratio 4) to the tails, so that the coarse pieces carry real weight.
"""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from flint import fmpz_poly  # noqa: E402
from lattice_contract import gdp_delta, rr_delta  # noqa: E402

import certify.lattice_target as lt  # noqa: E402
from certify import lattice_split  # noqa: E402
from certify.lattice_lower import LowerLattice, Seq  # noqa: E402
from certify.lattice_measure import LatticePLD  # noqa: E402
from certify.lattice_split import (  # noqa: E402
    SplitPLD,
    check_tail_params,
    coarsen_cells,
    coarsen_split,
    multiply_split,
    split_upper,
)
from certify.lattice_split_lower import (  # noqa: E402
    multiply_split_lower,
    split_lower,
)
from numeric.mechanisms import (  # noqa: E402
    Gaussian,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)

BITS = 40


@pytest.fixture(autouse=True)
def _split_short_laws(monkeypatch, request):
    """The laws here are short: split them anyway (the default keeps laws under
    lattice_split.MIN_SPAN fine units whole)."""
    monkeypatch.setattr(lattice_split, "MIN_SPAN", 1024 if "dp_sgd" in request.node.name else 16)




# --- dominance of the split, the product and the re-discretization (upper end) ---------------


def _atoms(x) -> tuple[dict, int]:
    """{loss: mass} (exact dyadic losses as fractions of the fine unit's exponent) and inf."""
    out: dict = {}
    if isinstance(x, SplitPLD):
        pieces, inf = (x.core, x.tail), x.inf
    else:
        pieces, inf = (x,), x.inf
    for p in pieces:
        for k, c in enumerate(p.coeffs.coeffs()):
            if int(c):
                s = (p.offset + k) * p.h
                out[s] = out.get(s, 0) + int(c)
    return out, inf


def _weights(atoms: dict) -> list:
    """[(mass, e^{-s})] in mpmath (at the caller's precision)."""
    return [(c, mp.exp(-mp.mpf(s))) for s, c in atoms.items()]


def _h(atoms, inf: int, t: mp.mpf) -> mp.mpf:
    """H(t) = inf + sum c (1 - t e^{-s})_+ of atoms given as a dict or as _weights."""
    if isinstance(atoms, dict):
        atoms = _weights(atoms)
    return inf + mp.fsum(c * (1 - t * e) for c, e in atoms if t * e < 1)


def _check_dominates(big, small, lo: float, hi: float, n: int = 150) -> None:
    a, ia = _atoms(big)
    b, ib = _atoms(small)
    with mp.workdps(50):
        wa, wb = _weights(a), _weights(b)
        for i in range(n + 1):
            t = mp.exp(mp.mpf(lo) + (mp.mpf(hi) - lo) * i / n)
            assert _h(wa, ia, t) >= _h(wb, ib, t) - mp.mpf(10) ** -30


def _random_lattice(rng: random.Random, unit: float, n: int, inf: int = 0) -> LatticePLD:
    # a bulk and a long thin tail (the shape of a subsampled Gaussian's loss law)
    coeffs = [rng.getrandbits(BITS - 6) if k < n // 4 else
              (rng.getrandbits(BITS - 30) if rng.random() < 0.3 else 0) for k in range(n)]
    return LatticePLD(unit, BITS, rng.randint(-n // 8, 4), fmpz_poly(coeffs), inf, 1, "P||Q", n)


@pytest.mark.parametrize("seed", range(4))
def test_split_dominates_the_law(seed):
    rng = random.Random(seed)
    unit, r = 2.0**-7, 2 ** rng.randint(1, 3)
    lat = _random_lattice(rng, unit, rng.randint(300, 500), rng.getrandbits(8))
    out = split_upper(lat, r, 1e-2)
    assert out.tail.coeffs.length() > 0  # the tail carries mass: the test has teeth
    assert out.total == lat.total and out.inf == lat.inf
    _check_dominates(out, lat, -1.0, (lat.offset + lat.coeffs.length() + 2 * r) * unit)


@pytest.mark.parametrize("seed", range(4))
def test_split_product_dominates_the_exact_product(seed):
    rng = random.Random(100 + seed)
    unit, r = 2.0**-6, 4
    a = split_upper(_random_lattice(rng, unit, rng.randint(260, 320), rng.getrandbits(6)), r,
                    1e-2)
    b = a if seed % 2 else split_upper(_random_lattice(rng, unit, rng.randint(260, 320)), r,
                                       1e-2)  # odd seeds: a square (its own cross-term path)
    out = multiply_split(a, b, 1e-2)
    # the exact product of the two (core + tail) laws, in exact integers (units 2^-2B)
    xa, ia = _atoms(a)
    xb, ib = _atoms(b)
    prod: dict = {}
    for s1, c1 in xa.items():
        for s2, c2 in xb.items():
            prod[s1 + s2] = prod.get(s1 + s2, 0) + c1 * c2
    fa, fb = sum(xa.values()), sum(xb.values())
    inf2 = ia * (fb + ib) + fa * ib
    scale = mp.mpf(2) ** -BITS
    got, gi = _atoms(out)
    with mp.workdps(50):
        wp, wg = _weights(prod), _weights(got)
        for i in range(151):
            t = mp.exp(mp.mpf(-1) + mp.mpf(12) * i / 150)
            exact = (_h(wp, inf2, t)) * scale
            assert _h(wg, gi, t) >= exact - mp.mpf(10) ** -30
    # and coarsening the whole law by 2 (Step 4) dominates it as well
    _check_dominates(coarsen_split(out, 2), out, -1.0, 12.0)


@pytest.mark.parametrize("seed", range(4))
def test_cell_coarsening_dominates(seed):
    rng = random.Random(300 + seed)
    unit, r = 2.0**-6, 2 ** rng.randint(1, 5)
    lat = _random_lattice(rng, unit, rng.randint(40, 120), rng.getrandbits(5))
    out = coarsen_cells(lat, r)
    assert out.h == unit * r and out.total == lat.total
    assert all(int(c) >= 0 for c in out.coeffs.coeffs())
    _check_dominates(out, lat, -1.0, (lat.offset + lat.coeffs.length() + 2 * r) * unit)


def test_bad_tail_parameters():
    for bad in (3, 1, 0, True, 2.0):
        with pytest.raises(ValueError, match="ratio"):
            check_tail_params(bad, 1e-9)
    for bad in (-1e-3, 0.5, float("nan")):
        with pytest.raises(ValueError, match="tail_mass"):
            check_tail_params(4, bad)


# --- lower end: the Q side is exact cell sums, the tilted P side dominates ----------------------


def _lower(rng: random.Random, unit: float, n: int) -> LowerLattice:
    off = rng.randint(-n // 4, 0)
    q = [rng.getrandbits(BITS - 8) if k < n // 3 else rng.getrandbits(BITS - 30) for k in range(n)]
    p = [rng.getrandbits(BITS - 8) if k < n // 3 else rng.getrandbits(BITS - 28) for k in range(n)]
    # a large unlocated tilted mass E, so that its cross terms matter
    return LowerLattice(unit, BITS, Seq(off, fmpz_poly(q), 0, 3),
                        Seq(off, fmpz_poly(p), 1 << (BITS - 3)), 1, "P||Q", n, ((0.0, 1),))


def _tilted(low: LowerLattice) -> tuple[dict, dict, int, int, float]:
    """(Q masses, tilted P masses e^{-ju} r_j at labels j in fine units, Q inf, E, Gamma)."""
    q: dict = {}
    p: dict = {}
    pieces = [(low, 1)] + ([(low.tail, low.ratio)] if low.tail is not None else [])
    for part, r in pieces:
        for k, c in enumerate(part.q.coeffs.coeffs()):
            j = (part.q.offset + k) * r
            q[j] = q.get(j, 0) + int(c)
        for k, c in enumerate(part.r.coeffs.coeffs()):
            j = (part.r.offset + k) * r
            p[j] = p.get(j, 0) + int(c)
    return q, p, low.q.inf, low.r.extra, math.fsum(g * c for g, c in low.tilts)


@pytest.mark.parametrize("seed", range(4))
def test_lower_split_and_product_keep_the_test_sound(seed):
    """The statistic S' of the split product is the fine sum S = S_a + S_b moved down by less
    than two coarse cells (each block's value floored at most once, the product's once more),
    so for every threshold K: the computed Q'(S' > K) <= Q(S > K) (Q rounded down) and the
    computed bound on P(S' > K) >= P(S > K + 2r) (exact laws in rationals / mpmath)."""
    rng = random.Random(200 + seed)
    unit, r = 2.0**-6, 4
    a0 = _lower(rng, unit, rng.randint(280, 340))
    b0 = a0 if seed % 2 else _lower(rng, unit, rng.randint(280, 340))  # odd seeds: a square
    a = split_lower(a0, r, 0.2)  # tails of real weight
    b = a if seed % 2 else split_lower(b0, r, 0.2)
    assert a.tail is not None and b.tail is not None
    out = multiply_split_lower(a, b, r, 0.2)
    # exact laws of the fine statistic S = S_a + S_b (units 2^-2B): Q and untilted P
    qa, pa, *_ = _tilted(a0)
    qb, pb, *_ = _tilted(b0)
    for law, low in ((pa, a0), (pb, b0)):  # one placement of E (the bound covers any)
        j = low.r.offset + rng.randrange(low.r.coeffs.length())
        law[j] = law.get(j, 0) + low.r.extra
    with mp.workdps(60):
        u = mp.mpf(unit)
        # the true untilted P law of one block: P(S = j) = e^{-ju} r_j (tilt 0 here)
        qx: dict = {}
        px: dict = {}
        for j1, c1 in qa.items():
            for j2, c2 in qb.items():
                qx[j1 + j2] = qx.get(j1 + j2, 0) + c1 * c2
        for j1, c1 in pa.items():
            for j2, c2 in pb.items():
                px[j1 + j2] = px.get(j1 + j2, 0) + c1 * c2 * mp.exp(-(j1 + j2) * u)
        qo, po, _, extra, gamma = _tilted(out)
        scale = mp.mpf(2) ** -BITS
        keys = sorted(set(qx) | set(qo))
        for k in range(keys[0] - 2, keys[-1] + 2, 3):
            # Q: S' <= S, so Q'(S' > K) <= Q(S' > K) <= Q(S > K)
            q_new = sum(c for j, c in qo.items() if j > k) * scale
            q_true = sum(c for j, c in qx.items() if j > k) * scale**2
            assert q_new <= q_true + mp.mpf(10) ** -40
            # P: the computed bound on P(S' > K) >= P(S' > K) >= P(S > K + 2r)
            p_bound = (sum(c * mp.exp(-j * u) for j, c in po.items() if j > k)
                       + extra * mp.exp(-(k + 1) * u)) * mp.exp(-gamma) * scale
            p_true = sum(c for j, c in px.items() if j > k + 2 * r) * scale**2
            assert p_bound >= p_true - mp.mpf(10) ** -40


# --- end to end: exact cases with heavy tails, and the DP-SGD rows against the one-lattice law


@pytest.fixture
def heavy_tails(monkeypatch):
    """The target lattice with 1e-2 of the mass per end in coarse tails of ratio 4."""
    monkeypatch.setattr(lt, "SPLIT_TAILS", True)
    monkeypatch.setattr(lt, "tail_mass_for", lambda delta: 1e-2)
    monkeypatch.setattr(lt, "ONE_TERM_TAIL_RATIO", 4)
    lt._term_upper.cache_clear()
    lt._term_lower.cache_clear()
    yield
    lt._term_upper.cache_clear()
    lt._term_lower.cache_clear()


@pytest.mark.parametrize(("sigma", "m", "eps"), [(2.0, 10, 0.5), (1.0, 50, 20.0), (4.0, 200, 2.0)])
def test_gaussian_with_heavy_tails_brackets_gdp(heavy_tails, sigma, m, eps):
    want = gdp_delta(math.sqrt(m) / sigma, eps)
    b = lt.target_delta_interval([(Gaussian(sigma), m)], eps, rel_width=1e-3)
    assert b.lower_mpf <= want <= b.upper_mpf
    assert b.lower_mpf > 0


def test_gaussian_rate_one_with_heavy_tails_brackets_gdp_epsilon(heavy_tails):
    sigma, m, delta = 1.5, 64, 1e-6
    mu = math.sqrt(m) / sigma
    b = lt.target_epsilon_interval([(PoissonSubsampledGaussian(sigma, 1.0), m)], delta,
                                   rel_width=1e-3)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert gdp_delta(mu, lo) >= delta >= gdp_delta(mu, hi)


@pytest.mark.parametrize(("eps0", "m", "eps"), [(0.1, 300, 2.0), (0.05, 1000, 1.0)])
def test_randomized_response_with_heavy_tails_brackets_the_binomial(heavy_tails, eps0, m, eps):
    want = rr_delta(eps0, m, eps)
    b = lt.target_delta_interval([(RandomizedResponse(eps0), m)], eps, rel_width=1e-2)
    assert b.lower_mpf <= want <= b.upper_mpf


def _interval(split: bool, comp, delta: float):
    lt.SPLIT_TAILS = split
    lt._term_upper.cache_clear()
    lt._term_lower.cache_clear()
    try:
        return lt.target_epsilon_interval(comp, delta)
    finally:
        lt.SPLIT_TAILS = True
        lt._term_upper.cache_clear()
        lt._term_lower.cache_clear()


@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_dp_sgd_split_agrees_with_the_one_lattice_law(delta):
    """Rate 0.001, sigma 2, m = 100 (the sampled component is the far tail): the two methods'
    intervals overlap and the split one is not wider (both are sound enclosures)."""
    comp = [(PoissonSubsampledGaussian(2.0, 0.001), 100)]
    old, new = _interval(False, comp, delta), _interval(True, comp, delta)
    assert new.lower_mpf <= old.upper_mpf and old.lower_mpf <= new.upper_mpf
    w_old, w_new = old.upper_mpf - old.lower_mpf, new.upper_mpf - new.lower_mpf
    assert w_new <= w_old * (1 + 1e-3)  # not wider beyond noise (measured: +3.4e-6)
    assert new.inputs["composed_points"]["P||Q"] < old.inputs["composed_points"]["P||Q"]


@pytest.mark.parametrize("seed", range(2))
def test_square_path_matches_the_general_product(seed):
    """A square's one cross product T (2 C^ + T) is the same measure as the general
    C^ T + T (C^ + T): the two paths differ only by rounding (a unit 2^-B per coefficient per
    product, cuts of at most 2^-B per end, and the re-tilting factor e^g of the lower end,
    which the rounded totals move in its last bits): tail masses within 1e-6 relative, where a
    lost or doubled cross term moves them by a third or more."""
    rng = random.Random(400 + seed)
    unit, r = 2.0**-6, 4
    a0 = _lower(rng, unit, rng.randint(280, 340))
    a = split_lower(a0, r, 0.2)
    b = split_lower(a0, r, 0.2)  # an equal law, another object: the general path
    sq, gen = multiply_split_lower(a, a, r, 0.2), multiply_split_lower(a, b, r, 0.2)
    for side in ("q", "r"):
        x = int(getattr(sq.tail, side).coeffs(1))
        y = int(getattr(gen.tail, side).coeffs(1))
        assert x > 0 and abs(x - y) <= 1e-6 * y
    u = split_upper(_random_lattice(rng, unit, rng.randint(260, 320)), r, 1e-2)
    w = dataclasses.replace(u)  # an equal law, another object
    sq_u, gen_u = multiply_split(u, u, 1e-2), multiply_split(u, w, 1e-2)
    x, y = int(sq_u.tail.coeffs(1)), int(gen_u.tail.coeffs(1))
    assert x > 0 and abs(x - y) <= 1e-6 * y
