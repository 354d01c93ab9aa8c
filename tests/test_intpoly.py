"""Directed rescaling of integer mass polynomials, against Python's exact integer floor/ceil."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

flint = pytest.importorskip("flint")

from certify.intpoly import ceil_div_pow2, floor_div_pow2, plus_one_each, up_div_pow2  # noqa: E402


@given(st.lists(st.integers(0, 2**200), min_size=0, max_size=12), st.integers(0, 90))
@settings(max_examples=200, deadline=None)
def test_directed_rescaling_matches_integer_floor_and_ceil(coeffs, bits):
    p = flint.fmpz_poly(coeffs)
    d = 1 << bits
    up = [int(c) for c in ceil_div_pow2(p, bits).coeffs()]
    down = [int(c) for c in floor_div_pow2(p, bits).coeffs()]
    want_up = [-((-c) // d) for c in coeffs]  # Python ints: // is the floor
    want_down = [c // d for c in coeffs]
    strip = lambda xs: xs[: max([i + 1 for i, x in enumerate(xs) if x] or [0])]  # noqa: E731
    assert up == strip(want_up)
    assert down == strip(want_down)


@given(st.lists(st.integers(0, 2**200), min_size=0, max_size=12), st.integers(0, 90),
       st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_floor_plus_one_each_is_at_least_the_ceiling(coeffs, bits, extra):
    # the lattice products' upward rescaling (certify.lattice_grid.cut_rescale): floor, then
    # one unit on each of the n kept coefficients; n may exceed the normalized length
    d = 1 << bits
    n = len(coeffs) + extra
    got = [int(c) for c in plus_one_each(floor_div_pow2(flint.fmpz_poly(coeffs), bits),
                                         n).coeffs()]
    padded = coeffs + [0] * extra
    assert got == [c // d + 1 for c in padded]  # Python ints: // is the floor
    assert all(g >= -((-c) // d) for g, c in zip(got, padded, strict=True))
    assert plus_one_each(flint.fmpz_poly(coeffs), 0) == flint.fmpz_poly(coeffs)
    # up_div_pow2: the same on every coefficient up to the last non-zero one
    up = [int(c) for c in up_div_pow2(flint.fmpz_poly(coeffs), bits).coeffs()]
    kept = coeffs[: max([i + 1 for i, c in enumerate(coeffs) if c] or [0])]
    assert up == [c // d + 1 for c in kept]


def test_a_mass_below_one_unit_rounds_up_to_one_unit():
    # the bug this module fixes: -((-p) // d) on an fmpz_poly truncates toward zero (gives 0)
    up = ceil_div_pow2(flint.fmpz_poly([1, 3, 4, 5]), 2)
    assert [int(c) for c in up.coeffs()] == [1, 1, 1, 2]


def test_bound_float_ends_are_rounded_outward():
    # Bound.lower_value / Bound.value: the float ends of a certified enclosure, rounded outward,
    # checked against the exact dyadic ends (1/3 +- 2^-80 is not a binary64 number)
    from fractions import Fraction

    from certify.bound import Bound
    from certify.engine import Endpoint

    third = (1 << 80) // 3
    b = Bound("delta", Endpoint(third, -80), Endpoint(third + 1, -80), "test", "test", 128, ())
    lo, hi = Fraction(third, 1 << 80), Fraction(third + 1, 1 << 80)
    assert Fraction(b.lower_value) <= lo and Fraction(b.value) >= hi
    assert Fraction(b.lower_value) > lo - Fraction(1, 1 << 53)  # one float step at most
    assert Fraction(b.value) < hi + Fraction(1, 1 << 53)


@given(st.lists(st.integers(0, 2**170), min_size=0, max_size=40), st.integers(1, 9),
       st.data())
@settings(max_examples=200, deadline=None)
def test_decimate_regroups_the_coefficients_exactly(coeffs, r, data):
    from certify.intpoly import decimate

    shift = data.draw(st.integers(0, r - 1))
    parts = decimate(flint.fmpz_poly(coeffs), r, shift)
    padded = [0] * shift + coeffs
    strip = lambda xs: xs[: max([i + 1 for i, x in enumerate(xs) if x] or [0])]  # noqa: E731
    assert len(parts) == r
    for j, p in enumerate(parts):
        assert [int(c) for c in p.coeffs()] == strip(padded[j::r])


def test_decimate_rejects_bad_arguments():
    from certify.intpoly import decimate

    with pytest.raises(ValueError, match="r must"):
        decimate(flint.fmpz_poly([1]), 0)
    with pytest.raises(ValueError, match="shift must"):
        decimate(flint.fmpz_poly([1]), 2, 2)


@given(st.lists(st.integers(0, 2**170), min_size=0, max_size=80), st.integers(1, 70),
       st.data())
@settings(max_examples=200, deadline=None)
def test_cell_sums_equal_the_weighted_sums_of_the_residue_classes(coeffs, r, data):
    # cell_sums (a short product and every r-th coefficient) against the definition, in Python
    # integers: sum_j w_j c_{rJ + j - shift}
    from certify.intpoly import cell_sums

    shift = data.draw(st.integers(0, r - 1))
    weights = data.draw(st.lists(st.integers(0, 2**64), min_size=r, max_size=r))
    got = [int(c) for c in cell_sums(flint.fmpz_poly(coeffs), r, shift, weights).coeffs()]
    padded = [0] * shift + coeffs
    cells = [padded[r * J: r * J + r] for J in range((len(padded) + r - 1) // r)]
    want = [sum(w * c for w, c in zip(weights[: len(cell)], cell, strict=True)) for cell in cells]
    strip = lambda xs: xs[: max([i + 1 for i, x in enumerate(xs) if x] or [0])]  # noqa: E731
    assert got == strip(want)


def test_cell_sums_rejects_bad_arguments():
    from certify.intpoly import cell_sums

    with pytest.raises(ValueError, match="r must"):
        cell_sums(flint.fmpz_poly([1]), 0, 0, [])
    with pytest.raises(ValueError, match="shift must"):
        cell_sums(flint.fmpz_poly([1]), 2, 2, [1, 1])
    with pytest.raises(ValueError, match="weights must"):
        cell_sums(flint.fmpz_poly([1]), 2, 0, [1])


def test_the_cached_ceiling_addend_serves_every_length():
    # ceil_div_pow2 cuts its addend from a cached polynomial: lengths below, at and above the
    # cached one, and above the cache limit, each against Python's exact ceiling
    for n in (1, 5, 1024, 1500, 3000, (1 << 16) + 3):  # the last above the cache limit
        coeffs = [(i * 7919) % (1 << 90) for i in range(n)]
        coeffs[-1] += 1  # a non-zero leading coefficient: the length is n
        got = ceil_div_pow2(flint.fmpz_poly(coeffs), 80)
        want = [-((-c) // (1 << 80)) for c in coeffs]
        assert got == flint.fmpz_poly(want)


def test_cell_sums_are_normalized_when_the_top_cells_sum_to_zero():
    # FLINT's deflate keeps a zero last coefficient (an unnormalized polynomial that compares
    # unequal to the zero polynomial); cell_sums must hand back normalized polynomials
    from certify.intpoly import cell_sums

    w = [0] * 13
    w[11] = 1
    out = cell_sums(flint.fmpz_poly([1]), 13, 12, w)
    assert out == flint.fmpz_poly([]) and out.length() == 0
    out = cell_sums(flint.fmpz_poly([5, 0, 0, 1]), 2, 0, [1, 0])
    assert out == flint.fmpz_poly([5]) and out.length() == 1


def test_cell_sums_without_deflate_regroup_the_same_sums(monkeypatch):
    # the path taken where FLINT's deflate does not take every r-th coefficient (checked at
    # import): the residue classes of decimate, against the definition in Python integers
    import certify.intpoly as ip

    monkeypatch.setattr(ip, "_DEFLATE_TAKES_EVERY_RTH", False)
    rng = __import__("random").Random(7)
    for _ in range(60):
        r = rng.randint(1, 70)
        shift = rng.randrange(r)
        coeffs = [rng.getrandbits(rng.choice((1, 80, 170))) for _ in range(rng.randint(0, 90))]
        weights = [rng.getrandbits(64) for _ in range(r)]
        got = [int(c) for c in ip.cell_sums(flint.fmpz_poly(coeffs), r, shift, weights).coeffs()]
        padded = [0] * shift + coeffs
        cells = [padded[r * J: r * J + r] for J in range((len(padded) + r - 1) // r)]
        want = [sum(w * c for w, c in zip(weights[: len(cell)], cell, strict=True))
                for cell in cells]
        while want and want[-1] == 0:
            want.pop()
        assert got == want


@given(st.integers(-(2**120), 2**120), st.integers(-200, 60), st.integers(0, 2**70),
       st.integers(-220, 40))
@settings(max_examples=300, deadline=None)
def test_integer_ends_of_a_ball_match_exact_rationals(m, me, r, re):
    # engine.ceil_upper / floor_lower against the ball [mid - rad, mid + rad] in exact rationals
    # (Fraction), and against the endpoints() path they replace in the lattices
    from fractions import Fraction
    from math import ceil, floor

    from certify.engine import ceil_upper, endpoints, floor_lower
    from certify.lattice_grid import ceil_dyadic, floor_dyadic

    x = flint.arb(flint.arb(m) * flint.arb(2) ** me, flint.arb(r) * flint.arb(2) ** re)
    (mm, me2), (rm, re2) = x.mid().man_exp(), x.rad().man_exp()
    mid = Fraction(int(mm)) * Fraction(2) ** int(me2)
    rad = Fraction(int(rm)) * Fraction(2) ** int(re2)
    assert ceil_upper(x) == ceil(mid + rad) == ceil_dyadic(endpoints(x)[1])
    assert floor_lower(x) == floor(mid - rad) == floor_dyadic(endpoints(x)[0])


def test_integer_ends_of_a_non_finite_ball_raise():
    from certify.engine import Endpoint, ceil_upper, floor_lower
    from certify.lattice_grid import ceil_dyadic, floor_dyadic

    for bad in (flint.arb("nan"), flint.arb("inf"), flint.arb(1, "inf")):
        with pytest.raises(ArithmeticError):
            ceil_upper(bad)
        with pytest.raises(ArithmeticError):
            floor_lower(bad)
    # an infinite endpoint once read as its zero mantissa (an upper mass of 0)
    with pytest.raises(ArithmeticError):
        ceil_dyadic(Endpoint(inf=1))
    with pytest.raises(ArithmeticError):
        floor_dyadic(Endpoint(inf=-1))


def test_ends_of_a_ball_far_from_one_are_not_shifted_out():
    # an exact ball 2^(10^12) (Chernoff's bounds meet such numbers at 4e14 steps): its ends
    # keep their own exponent; aligning it with the zero radius's exponent shifted an integer
    # by 10^12 bits (MemoryError, caught by tests/test_fuzz_findings.py)
    from certify.engine import Endpoint, ceil_upper, endpoints, floor_lower

    big = flint.arb(2) ** (10**12)
    assert endpoints(big) == (Endpoint(1, 10**12), Endpoint(1, 10**12))
    lo, hi = endpoints(flint.arb(0, big))
    assert lo.man == -hi.man and hi.exp > 10**12 - 64
    tiny = flint.arb(2) ** (-(10**12))
    assert endpoints(tiny) == (Endpoint(1, -(10**12)), Endpoint(1, -(10**12)))
    assert (ceil_upper(tiny), floor_lower(tiny)) == (1, 0)
    assert (ceil_upper(-tiny), floor_lower(-tiny)) == (0, -1)
