r"""Directed rescaling of integer polynomials (the lattices' fixed-point masses).

The lattice measures (:mod:`certify.lattice_measure`, :mod:`certify.lattice_lower`,
:mod:`certify.shuffle`) hold masses as integers in units of :math:`2^{-B}`; a product of two
measures has units :math:`2^{-2B}` and is rescaled coefficient-wise, up (an upper end: every mass
rounded up) or down (a lower end). Masses are non-negative, so

.. math:: \lceil c / 2^B \rceil = \lfloor (c + 2^B - 1) / 2^B \rfloor, \qquad c \ge 0,

and python-flint's ``fmpz_poly // fmpz`` is the coefficient-wise floor for non-negative
coefficients. (It truncates toward zero, so the idiom ``-((-p) // d)`` is *not* a ceiling: for
``0 < c < d`` it gives 0. Found by the shuffle work; :func:`ceil_div_pow2` replaces it.)
"""

from __future__ import annotations

from flint import fmpz, fmpz_poly

__all__ = ["ceil_div_pow2", "decimate", "far_band", "floor_div_pow2", "square_sparse_tail"]


def ceil_div_pow2(p: fmpz_poly, bits: int) -> fmpz_poly:
    r"""Coefficient-wise :math:`\lceil c / 2^{bits} \rceil` of a polynomial, coefficients >= 0.

    Args:
        p: Integer polynomial with non-negative coefficients (masses).
        bits: The shift, >= 0.

    Returns:
        The rescaled polynomial, every coefficient rounded up.
    """
    n = p.length()
    if n == 0 or bits == 0:
        return p
    d = fmpz(1 << bits)
    # the constant d - 1 is spread by a scalar product in C: a list of n big Python ints
    # converted one by one costs ~10x the rescaling itself (measured, n = 5000, bits = 80)
    return (p + fmpz_poly([1] * n) * (d - 1)) // d


def floor_div_pow2(p: fmpz_poly, bits: int) -> fmpz_poly:
    r"""Coefficient-wise :math:`\lfloor c / 2^{bits} \rfloor` of a polynomial, coefficients >= 0.

    Args:
        p: Integer polynomial with non-negative coefficients (masses).
        bits: The shift, >= 0.

    Returns:
        The rescaled polynomial, every coefficient rounded down.
    """
    if bits == 0:
        return p
    return p // fmpz(1 << bits)


def decimate(p: fmpz_poly, r: int, shift: int = 0) -> list[fmpz_poly]:
    r"""The ``r`` residue classes of the coefficients of :math:`x^{shift} p`.

    Args:
        p: Integer polynomial.
        r: Number of classes, >= 1.
        shift: Zero coefficients put in front, 0 <= shift < r.

    Returns:
        ``[P_0, ..., P_{r-1}]`` with :math:`P_j = \sum_J c_{rJ + j - shift} x^J` (coefficients of
        negative index are 0): exact, the same coefficients regrouped.

    Raises:
        ValueError: on r < 1 or a shift outside [0, r).
    """
    if not (isinstance(r, int) and r >= 1):
        raise ValueError(f"r must be an integer >= 1, got {r!r}")
    if not (isinstance(shift, int) and 0 <= shift < r):
        raise ValueError(f"shift must be an integer in [0, r), got {shift!r}")
    cs = [fmpz(0)] * shift + p.coeffs()
    return [fmpz_poly(cs[j::r]) for j in range(r)]


# ---------------------------------------------------------------------------------------------
# exact square of a single-step block with a long, sparse, evenly spaced tail

_SPARSE_MIN_LENGTH = 1 << 18  # below this the dense square is as fast (measured at 7e4-9e4)
_SPARSE_PROBES = 32  # coefficients sampled in the upper half before any conversion
_BAND_MIN_POINTS = 8  # a far band with fewer points is not worth the bookkeeping
_BAND_MIN_GAP = 64
_MAX_STRAY = 4  # misaligned points allowed after the far band


def far_band(nz: list[int]) -> tuple[int, int, int] | None:
    """A run of evenly spaced non-zero indices worth splitting off: ``(k, g, j)`` with
    ``nz[k:j]`` equally spaced by ``g``; either a final run followed by at most _MAX_STRAY
    stray points ``nz[j:]``, or (when there is none) an initial run (k = 0). None if neither
    has at least _BAND_MIN_POINTS points and a gap of at least _BAND_MIN_GAP."""
    n = len(nz)
    for j in range(n, max(n - _MAX_STRAY, 1) - 1, -1):
        if j < _BAND_MIN_POINTS:
            break
        g = nz[j - 1] - nz[j - 2]
        k = j - 2
        while k > 0 and nz[k] - nz[k - 1] == g:
            k -= 1
        if j - k >= _BAND_MIN_POINTS and g >= _BAND_MIN_GAP:
            return k, g, j
    if n >= _BAND_MIN_POINTS:
        g = nz[1] - nz[0]
        j = 2
        while j < n and nz[j] - nz[j - 1] == g:
            j += 1
        if j >= _BAND_MIN_POINTS and g >= _BAND_MIN_GAP and j < n:
            return 0, g, j
    return None


def square_sparse_tail(p: fmpz_poly) -> fmpz_poly:
    r"""The exact square :math:`p^2` (bit for bit ``p * p``), faster when p is a single-step
    block: a short head H, a long far band :math:`F = x^s Q(x^g)` of evenly spaced points and a
    few stray points E after it (the adaptive single-step lattice at small sampling rates: ~900
    non-zero coefficients over ~5e5 units, 115 of them 4096 units apart; FLINT's dense square
    then multiplies ~5e5 mostly zero 80-bit coefficients, 22-37% of the product time of a
    rate-0.001 query, issue 16).

    Exact algebra, no rounding: with :math:`p = H + F + E`,

    .. math:: p^2 = H^2 + 2HF + F^2 + E(2p - E), \qquad
        HF = \sum_{t=0}^{g-1} x^{s+t} (Q \cdot h_t)(x^g),

    where :math:`H = \sum_b x^{gb} H_b` (blocks of g coefficients) and :math:`h_t = \sum_b
    H_b[t] y^b`: the coefficient of :math:`x^{s + gK + t}` in HF is :math:`\sum_b q_{K-b}
    H_b[t]`. :math:`F^2 = x^{2s} (Q^2)(x^g)`. Every product is an integer product (FLINT), the
    sums are integer sums, so the result equals ``p * p`` exactly.

    Not used by the lattice by default: on the blocks alone it is 2-3x faster than ``p * p``,
    but whole rate-0.001 queries were 8-15% slower with it in paired runs (peak memory 12-15%
    lower); kept, exact and tested, for a two-lattice product (docs/lattice-speed.md).

    Args:
        p: Integer polynomial.

    Returns:
        :math:`p^2` (FLINT's dense square whenever p has no qualifying far band).
    """
    n = p.length()
    if n < _SPARSE_MIN_LENGTH:
        return p * p
    step = max(1, n // (2 * _SPARSE_PROBES))
    if sum(1 for i in range(n // 2, n, step) if p[i] != 0) > 4:
        return p * p  # dense upper half: nothing to gain
    cs = p.coeffs()
    return _square_by_bands(p, cs, [i for i, c in enumerate(cs) if c])


def _band_cross(cs: list, rest: list[int], q: fmpz_poly, o: int, g: int, size: int) -> fmpz_poly:
    r"""The exact product :math:`x^o Q(x^g) \cdot R` with R the coefficients ``cs[i]``, i in
    ``rest``: :math:`\sum_t x^{o+t} (Q \cdot h_t)(x^g)`, :math:`h_t(y) = \sum_b c_{t+gb} y^b`
    over the residues t (mod g) of ``rest`` (the coefficient of :math:`x^{o + t + gK}` is
    :math:`\sum_b q_{K-b} c_{t+gb}`)."""
    out = [fmpz(0)] * size
    lo: dict[int, int] = {}
    hi: dict[int, int] = {}
    for i in rest:
        t = i % g
        lo[t] = min(lo.get(t, i), i)
        hi[t] = max(hi.get(t, i), i)
    for t, a in lo.items():
        prod = (q * fmpz_poly(cs[a:hi[t] + 1:g])).coeffs()
        first = o + a
        out[first:first + g * len(prod):g] = prod
    return fmpz_poly(out)


def _square_by_bands(p: fmpz_poly, cs: list, nz: list[int]) -> fmpz_poly:
    """:func:`square_sparse_tail` on p with coefficient list cs and non-zero indices nz."""
    band = far_band(nz) if len(cs) >= _SPARSE_MIN_LENGTH else None
    if band is None:
        return p * p
    k, g, j = band
    o = nz[k]
    q = fmpz_poly(cs[o:nz[j - 1] + 1:g])
    size = 2 * len(cs)
    if j == len(nz) and k == 0:  # a single band: p = F, p^2 = F^2
        return (q * q).inflate(g).left_shift(2 * o)
    if k == 0:  # an initial band F = x^o Q(x^g), the rest R above it: F^2 + 2FR + R^2
        e = nz[j]
        rest = p.right_shift(e)
        out = _square_by_bands(rest, cs[e:], [i - e for i in nz[j:]]).left_shift(2 * e)
        cross = _band_cross(cs, nz[j:], q, o, g, size)
        return out + cross * 2 + (q * q).inflate(g).left_shift(2 * o)
    # a final band: head H below it, then the stray points E
    head = p.truncate(o)
    out = _square_by_bands(head, cs[:o], nz[:k])  # the head may have a band of its own
    out = out + _band_cross(cs, nz[:k], q, o, g, size) * 2 + (q * q).inflate(g).left_shift(2 * o)
    if j < len(nz):  # the stray points E: p^2 = (H + F)^2 + E (2p - E)
        stray = fmpz_poly(0)
        for i in nz[j:]:
            stray = stray + fmpz_poly([cs[i]]).left_shift(i)
        twice = p * 2 - stray
        for i in nz[j:]:
            out = out + (twice * cs[i]).left_shift(i)
    return out
