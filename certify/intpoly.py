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

__all__ = ["ceil_div_pow2", "cell_sums", "decimate", "far_band", "floor_div_pow2",
           "plus_one_each", "square_sparse_tail", "up_div_pow2"]


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
    return (p + _ceil_addend(n, bits)) // fmpz(1 << bits)


def plus_one_each(p: fmpz_poly, n: int) -> fmpz_poly:
    r"""The polynomial :math:`p + \sum_{i < n} x^i`: one unit added to each of the first n
    coefficients (with :func:`floor_div_pow2`, :math:`\lfloor c / 2^B \rfloor + 1 \ge \lceil c /
    2^B \rceil`, equal unless :math:`2^B` divides c: a ceiling that costs one addition of
    one-word integers instead of an addition of :math:`2^B - 1` before the division).

    Args:
        p: Integer polynomial of length at most n.
        n: The number of coefficients that get one unit, >= 0.

    Returns:
        The sum (length n when n > 0).
    """
    return p + _ceil_addend(n, 1) if n > 0 else p


def up_div_pow2(p: fmpz_poly, bits: int) -> fmpz_poly:
    r"""Coefficient-wise :math:`\lfloor c / 2^{bits} \rfloor + 1 \ge \lceil c / 2^{bits} \rceil`
    on every coefficient up to p's last non-zero one (:func:`floor_div_pow2`, then
    :func:`plus_one_each`): rounding up for masses that need upper bounds only, one unit above
    the ceiling where :math:`2^{bits}` divides the coefficient (zeros inside p included).

    Args:
        p: Integer polynomial with non-negative coefficients.
        bits: The shift, >= 0.

    Returns:
        The rescaled polynomial.
    """
    return plus_one_each(floor_div_pow2(p, bits), p.length())


_ADDEND_MAX_LENGTH = 1 << 16  # cached addends up to this length (~4.5 MB each at 80 bits)
_ONES_MAX_LENGTH = 1 << 20  # the ones of plus_one_each (one word each: 8 MB at most), which
# serve every long product (80 000 kept coefficients at rate 0.01, 600 000 at rate 0.001):
# rebuilt per call, 80 000 ones cost 2.2 ms against 0.2 ms to cut them from the cached ones
_ADDEND_BITS_KEPT = 4  # the ones, the 64-bit weights, the products' B (probe and answer levels)
_addends: dict[int, fmpz_poly] = {}


def _ceil_addend(n: int, bits: int) -> fmpz_poly:
    r"""The polynomial :math:`(2^{bits} - 1) \sum_{i < n} x^i` of :func:`ceil_div_pow2`, cut
    from a cached longer one (building it costs ~30% of a rescaling: n small integers converted
    and a scalar product, measured at n = 5e3 .. 2e5). The constant d - 1 is spread by a scalar
    product in C: a list of n big Python ints converted one by one costs ~10x the rescaling
    itself (measured, n = 5000, bits = 80)."""
    limit = _ONES_MAX_LENGTH if bits == 1 else _ADDEND_MAX_LENGTH
    if n > limit:
        return fmpz_poly([1] * n) * fmpz((1 << bits) - 1)
    k = _addends.get(bits)
    if k is None or k.length() < n:
        size = min(limit, max(n, 1024, 2 * (0 if k is None else k.length())))
        k = fmpz_poly([1] * size) * fmpz((1 << bits) - 1)
        if bits not in _addends and len(_addends) >= _ADDEND_BITS_KEPT:
            _addends.pop(next(iter(_addends)))
        _addends[bits] = k
    return k if k.length() == n else k.truncate(n)


def cell_sums(p: fmpz_poly, r: int, shift: int, weights: list[int]) -> fmpz_poly:
    r"""The weighted cell sums :math:`\sum_{j<r} w_j P_j` of the residue classes
    :math:`P_j` of :func:`decimate` (``decimate(p, r, shift)``), exactly, without splitting
    the coefficients: with :math:`q = x^{shift} p` and :math:`W(x) = \sum_{j<r} w_j
    x^{r-1-j}`, coefficient :math:`rJ + r - 1` of the product :math:`qW` is
    :math:`\sum_j w_j q_{rJ+j}`, so the result is every r-th coefficient of
    :math:`qW / x^{r-1}` (FLINT's ``deflate``, which takes coefficients 0, r, 2r, ...; checked
    once at import, else the coefficients are regrouped one by one). One short product in C
    instead of r Python-level regroupings and r - 1 additions (1.5-2x faster at r = 2, 4, 64,
    n = 300 .. 6e4, measured; the coarsening of the composed laws was ~25% of a rate-0.001
    query, issue 16).

    Args:
        p: Integer polynomial.
        r: Cell length, >= 1.
        shift: Zero coefficients put in front, 0 <= shift < r.
        weights: ``r`` integers :math:`w_0, ..., w_{r-1}`.

    Returns:
        The polynomial with coefficient J equal to :math:`\sum_j w_j c_{rJ + j - shift}`.

    Raises:
        ValueError: on r < 1, a shift outside [0, r) or ``len(weights) != r``.
    """
    if not (isinstance(r, int) and r >= 1):
        raise ValueError(f"r must be an integer >= 1, got {r!r}")
    if not (isinstance(shift, int) and 0 <= shift < r):
        raise ValueError(f"shift must be an integer in [0, r), got {shift!r}")
    if len(weights) != r:
        raise ValueError(f"weights must hold r = {r} integers, got {len(weights)}")
    if not _DEFLATE_TAKES_EVERY_RTH:
        parts = decimate(p, r, shift)
        return sum((c * w for c, w in zip(parts[1:], weights[1:], strict=True)),
                   parts[0] * weights[0])
    # x^(1 + shift) W: coefficient rJ + r - 1 of qW moves to r(J + 1), so deflate takes it
    # straight from the product, and only the short result loses its leading zero (no shifted
    # copy of the long product: 6.5 -> ~5 ms at n = 5e4, r = 2, 80-bit masses)
    out = (p * fmpz_poly([0] * (1 + shift) + weights[::-1])).deflate(r).right_shift(1)
    # deflate keeps its length (L - 1) // r + 1 even when the last coefficient it takes is 0:
    # an unnormalized polynomial, unequal to its normalized twin (found by the property
    # test); truncate copies and normalizes
    return out.truncate(out.length())


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


def _deflate_takes_every_rth() -> bool:
    """Whether ``fmpz_poly.deflate(r)`` returns coefficients 0, r, 2r, ... of any polynomial
    (FLINT documents it only for polynomials in :math:`x^r`; :func:`cell_sums` relies on it)."""
    try:
        got = fmpz_poly([1, 2, 3, 4, 5, 6, 7]).deflate(3)
    except Exception:  # any refusal means: not usable here
        return False
    return got == fmpz_poly([1, 4, 7]) and fmpz_poly([1, 2, 3, 4, 5, 6, 7, 8]).deflate(
        3) == fmpz_poly([1, 4, 7]) and fmpz_poly([]).deflate(3).length() == 0


_DEFLATE_TAKES_EVERY_RTH = _deflate_takes_every_rth()
