r"""E epochs of random allocation: certified delta(eps) and eps(delta), both ends.

Both ends compose E copies of a single-epoch lattice measure built directly from the laws of
:mod:`certify.shuffle.law` (the connect-the-dots lattice of :mod:`certify.lattice` would
accept the one-epoch hockey-stick enclosure as a step and give a valid upper end, but it
rebuilds tail masses from chords of H at spacing h, which multiplies the one-epoch bracket
width by about 2/h; the measures below avoid that).

**Lower end: a dominated lattice measure.** Notation of :mod:`certify.lattice`: for a pair
order with PLLR L and :math:`\nu = \mathcal L_Q(L)`, :math:`H_\nu(t) = \int (1 - te^{-s})_+
\,d\nu(s)` and :math:`\delta_E(\varepsilon) = \int g_\varepsilon\, d\nu^{*E}`,
:math:`g_\varepsilon(s) = (1 - e^{\varepsilon - s})_+` non-decreasing in s.

*Lemma 1' (hybrid argument, reversed).* If :math:`\mu` is a non-negative measure with
:math:`H_\mu \le H_\nu` on :math:`[0, \infty)` then :math:`\delta_E(\varepsilon) \ge \int
g_\varepsilon\, d\mu^{*E}`. *Proof.* As Lemma 1 of :mod:`certify.lattice` with the inequality
reversed: with :math:`\rho \ge 0` the convolution of the other factors, :math:`\int
g_\varepsilon\,d(\nu*\rho) = \int H_\nu(e^{\varepsilon - r})\,d\rho(r) \ge \int
H_\mu(e^{\varepsilon - r})\,d\rho(r)`; replace the factors one at a time. QED

*The measures.* Order ``P||Q`` (P = H0, :math:`e^L = u = S/M`): :math:`H_\nu(t) =
E_{H0}(u - t)_+`, a convex **non-decreasing** function of S. The call-lower law D' of
:mod:`certify.shuffle.law` (Jensen merges, downward moves, removals) satisfies
:math:`\int (x/M - t)_+\,dD'(x) \le E(S/M - t)_+` for every t >= 0 at once, so
:math:`\mu = \sum_i w_i (x_i/M)\,\delta_{\log(x_i/M)}` (the size-biased image of D') has
:math:`H_\mu(t) = \int (x/M - t)_+\,dD' \le H_\nu(t)`. Order ``Q||P`` (Q = H0, :math:`e^L =
1/u`): :math:`H_\nu(t) = E_{H0}(1 - tS/M)_+`, convex **non-increasing** in S, so the put-lower
law D gives :math:`\mu = \sum_i w_i\,\delta_{\log(M/x_i)}` with :math:`H_\mu \le H_\nu` (the
atom x = 0, i.e. L = +inf, is removed). *Onto the lattice* :math:`h\mathbb Z`: every atom is
moved **down** to :math:`h\lfloor s/h\rfloor` (the floor of the lower end of an Arb ball of
s/h), which lowers :math:`H_\mu` because :math:`(1 - te^{-s})_+` is non-decreasing in s; the
masses are rounded **down** to units :math:`2^{-B}`. Total mass <= 1 (D' has mean <= M).

*Composition.* Binary powering with exact FLINT products, each rescaled with **floor**, and the
outer tails of mass <= :math:`2^{-B}\tau` deleted: each only lowers the measure, and
:math:`\mu \mapsto \int g_\varepsilon\, d\mu^{*E}` is monotone in each factor (g >= 0). The
value :math:`2^{-B}\sum_{s_k > \varepsilon} c_k (1 - e^{\varepsilon - s_k})` is evaluated in
Arb (:meth:`certify.lattice.LatticePLD.delta_upper`, here used for its value) and its lower end
taken. delta(eps) is the max over the two orders, so the larger lower bound is one; it is
non-increasing in eps, so a certified lower bound above delta at eps_lo gives
:math:`\varepsilon(\delta) \ge \varepsilon_{lo}`.

**Upper end: a dominating lattice measure.** Lemma 1 of :mod:`certify.lattice`: a measure
:math:`\mu \ge 0` with :math:`H_\mu \ge H_\nu` on :math:`[0, \infty)` gives
:math:`\delta_E(\varepsilon) \le \int g_\varepsilon\, d\mu^{*E}`. From the put-upper law U
(:math:`F(c) \le F_U(c) = \int (c - x/M)_+ dU + c\Delta` for :math:`c \le c_{\max}`; the mass A
deleted above :math:`M c_{\max}` recorded):

* ``P||Q``: :math:`H_\nu(t) = 1 - t + F(t)` and :math:`(t - x/M)_+ = t - x/M + (x/M - t)_+` give,
  for :math:`t \le c_{\max}`, :math:`H_\nu(t) \le \int (x/M - t)_+\,dU + (1 - m_U) +
  t(|U| + \Delta - 1)` (:math:`m_U = \int x/M\,dU`), which is at most :math:`H_\mu(t)` for
  :math:`\mu = \sum_i w_i (x_i/M)\,\delta_{\log(x_i/M)} + [(1 - m_U)_+ + c_{\max}(|U| + \Delta
  - 1)_+]\,\delta_{+\infty}`; for :math:`t > c_{\max}`, :math:`H_\nu(t) \le H_\nu(c_{\max})
  \le H_\mu(c_{\max}) = H_\mu(t)` (U has no mass above :math:`M c_{\max}`).
* ``Q||P``: :math:`H_\nu(t) = tF(1/t) \le \int (1 - tx/M)_+\,d(U + A) + \Delta` for every t
  (the deleted part A lies at :math:`x \ge M c_{\max}`, where :math:`(1 - tx/M)_+ \le (1 -
  tc_{\max})_+`), so :math:`\mu = \sum_i w_i\,\delta_{\log(M/x_i)} + |A|\,\delta_{-\log
  c_{\max}} + (\Delta + U(\{0\}))\,\delta_{+\infty}`.

Atoms are moved **up** to :math:`h\lceil s/h\rceil` (raising :math:`H_\mu`), masses rounded
**up**; the composition rounds products up, moves the high tail (mass <= :math:`2^{-B}\tau`) to
+inf and lumps the low tail up (Lemma 3 of :mod:`certify.lattice`); delta and eps(delta) take the
max over the orders.

The moves onto the lattice cost about h/2 of PLLR per epoch (first order) at each end, so the
grid is fine (:data:`H_LOWER`); the law's own error is second order (:mod:`certify.shuffle.law`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from flint import arb, fmpz_poly

from ..bound import Bound
from ..budget import check_deadline
from ..engine import DEFAULT_PRECISION, Endpoint, endpoints, to_arb, workprec
from ..intpoly import floor_div_pow2
from ..lattice import LatticePLD
from ..lattice_grid import TRUNC_BITS, ceil_dyadic, cut_points, floor_dyadic
from ..lattice_measure import multiply_lattices
from ..search import bisect, snap_down, snap_up
from .law import BITS, LatticeLaw, require_product
from .one_epoch import ASSUMPTIONS, DIRECTIONS, PREC, call_lower_law, one_epoch, put_lower_law

__all__ = [
    "H_LOWER",
    "clear_caches",
    "default_h",
    "delta_bound",
    "delta_lower",
    "epsilon_bound",
    "epsilon_lower",
    "epsilon_upper",
    "lower_pld",
    "tv_bound",
    "upper_pld",
]

H_LOWER = 2.0**-14
"""Lattice spacing at sigma = 1, M = 1000, E = 100 (see :func:`default_h`)."""


def default_h(sigma: float, rounds: int, epochs: int) -> float:
    r"""Lattice spacing: :math:`2^{\lfloor\log_2(\mu/(50E))\rfloor}` clamped to
    :math:`[2^{-18}, 2^{-8}]`, :math:`\mu = \sqrt{E(e^{1/\sigma^2} - 1)/M}` (the GDP scale of
    the composed PLLR): each end moves the composed PLLR by at most E h, about 2% of mu.
    A floating-point choice (tightness and cost only)."""
    mu = math.sqrt(epochs * math.expm1(min(1.0 / float(sigma) ** 2, 700.0)) / rounds)
    k = math.floor(math.log2(max(mu / (50.0 * epochs), 2.0**-18)))
    return 2.0 ** min(max(k, -18), -8)

_TAU = 1 << (BITS - TRUNC_BITS)  # per product, at most 2^-64 of mass moved or deleted at each end
# (the upper end multiplies with certify.lattice_measure.multiply_lattices, whose cut is the same)
_EPOCH_BYTES = 400
"""Bytes per output coefficient of an epoch product (FLINT transients ~310 B for 104-bit
masses, measured; rounded up)."""

A_LOWER = ("lower end: a dominated lattice measure (H_mu <= H on [0, inf): size-biased "
           "call-lower law for P||Q, put-lower law for Q||P, atoms moved down onto h Z), "
           "composed with floor rounding; proof in certify.shuffle.multi_epoch")
A_UPPER = ("upper end: a dominating lattice measure (H_mu >= H on [0, inf): size-biased "
           "put-upper law for P||Q, put-upper law for Q||P, atoms moved up onto h Z), composed "
           "with ceil rounding; proof in certify.shuffle.multi_epoch")


def _floor_log_index(x: arb, h: arb) -> int:
    """floor of the lower end of log(x)/h (moving an atom down is safe)."""
    return floor_dyadic(endpoints(x.log() / h)[0])


def _base(law: LatticeLaw, rounds: int, direction: str, h: float) -> tuple[int, list[int]]:
    """The single-epoch lower measure on hZ (module docstring): (offset, masses)."""
    out: dict[int, int] = {}
    hh = arb(h)
    step = Fraction(2) ** law.e
    with workprec(PREC):
        for i, w in enumerate(law.masses):
            if not w:
                continue
            if i % 4096 == 0:
                check_deadline("in the random-allocation epoch lattice")
            idx = law.offset + i
            if idx <= 0:  # x = 0: Q-mass 0 (P||Q) or L = +inf (Q||P): removed
                continue
            x = Fraction(idx) * step / rounds  # x/M, exact
            xb = arb(x.numerator) / x.denominator
            if direction == "P||Q":
                q = w * x
                mass = q.numerator // q.denominator
                k = _floor_log_index(xb, hh)
            else:
                mass = w
                k = _floor_log_index(1 / xb, hh)
            if mass > 0:
                out[k] = out.get(k, 0) + mass
    if not out:
        return 0, []
    lo, hi = min(out), max(out)
    return lo, [out.get(k, 0) for k in range(lo, hi + 1)]


def _multiply(a: tuple[int, fmpz_poly], b: tuple[int, fmpz_poly],
              what: str = "the random-allocation epochs (lower lattice)"
              ) -> tuple[int, fmpz_poly]:
    """Product rescaled with floor; outer tails of mass <= tau deleted (both only lower it)."""
    check_deadline("in the random-allocation lower lattice")
    require_product(a[1].length() + b[1].length(), _EPOCH_BYTES, what)
    prod = floor_div_pow2(a[1] * b[1], BITS)
    low, top = cut_points(prod, _TAU)
    kept = prod.truncate(top + 1)
    if low > 0:
        kept = kept.right_shift(low)
    return a[0] + b[0] + low, kept


def _ceil_log_index(x: arb, h: arb) -> int:
    """ceil of the upper end of log(x)/h (moving an atom up is safe for the upper end)."""
    return ceil_dyadic(endpoints(x.log() / h)[1])


def _upper_base(law: LatticeLaw, rounds: int, direction: str, h: float, c_max: Fraction
                ) -> tuple[int, list[int], int]:
    """The single-epoch dominating measure on hZ (module docstring, "Upper end"):
    (offset, masses, mass at +inf), units 2^-B, all rounded up."""
    out: dict[int, int] = {}
    hh = arb(h)
    step = Fraction(2) ** law.e
    one = 1 << BITS
    inf = law.dropped if direction == "Q||P" else 0
    moment = Fraction(0)
    with workprec(PREC):
        for i, w in enumerate(law.masses):
            if not w:
                continue
            if i % 4096 == 0:
                check_deadline("in the random-allocation epoch lattice")
            idx = law.offset + i
            if idx <= 0:
                if direction == "Q||P":
                    inf += w  # x = 0: L = +inf
                continue
            x = Fraction(idx) * step / rounds
            xb = arb(x.numerator) / x.denominator
            if direction == "P||Q":
                q = w * x
                moment += q
                mass = -((-q.numerator) // q.denominator)
                k = _ceil_log_index(xb, hh)
            else:
                mass = w
                k = _ceil_log_index(1 / xb, hh)
            out[k] = out.get(k, 0) + mass
        if direction == "P||Q":
            inf += max(0, math.ceil(one - moment))
            excess = law.total + law.dropped - one
            inf += max(0, math.ceil(c_max * excess))
        elif law.above:
            k = _ceil_log_index(1 / (arb(c_max.numerator) / c_max.denominator), hh)
            out[k] = out.get(k, 0) + law.above
    if not out:
        return 0, [], inf
    lo, hi = min(out), max(out)
    return lo, [out.get(k, 0) for k in range(lo, hi + 1)], inf


def _multiply_upper(a: LatticePLD, b: LatticePLD,
                    what: str = "the random-allocation epochs (upper lattice)") -> LatticePLD:
    r""":func:`certify.lattice_measure.multiply_lattices`, refused before allocating when too
    long (:func:`certify.shuffle.law.require_product`).

    **Saturation.** Once a factor's mass at +inf reaches :math:`2^B` (mass 1), the product is
    the measure of unit mass at +inf alone (H = 1). Proof that it still dominates: every
    hockey-stick divergence is at most 1, so H = 1 >= H of the composed pair at every eps; and
    the exact product it replaces would also have H >= 1 (its +inf mass is at least
    :math:`a_\infty |b| \ge 1`, the upper measures having total mass >= 1), so no answer is
    lost. Without it the +inf mass, rounded up at each product, grew to millions of bits over
    E ~ 1e14 epochs (issue 12: 2 s a product, 60 s in all at sigma 0.084)."""
    one = 1 << a.bits
    if a.inf >= one or b.inf >= one:
        return LatticePLD(a.h, a.bits, 0, fmpz_poly([]), one, a.count + b.count, a.direction,
                          max(a.points, b.points), a.products + b.products + 1)
    require_product(a.coeffs.length() + b.coeffs.length(), _EPOCH_BYTES, what)
    return multiply_lattices(a, b)


def _what(end: str, sigma, rounds: int, epochs: int, h: float) -> str:
    """The budget messages' naming of the expensive inputs."""
    return (f"shuffle {end} end: the lattice of epochs={epochs} epochs (sigma={float(sigma):g}, "
            f"rounds={rounds}, spacing h={h:g}; many epochs and a fine h make it long)")


def _check_direction_and_epochs(direction: str, epochs: int) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")


def _power(base, epochs: int, multiply):
    """``base`` composed ``epochs`` times by binary powering with the given product."""
    acc = None
    sq = base
    for bit in range(epochs.bit_length()):
        if bit:
            sq = multiply(sq, sq)
        if (epochs >> bit) & 1:
            acc = sq if acc is None else multiply(acc, sq)
    return acc


def upper_pld(sigma: float | Fraction, rounds: int, epochs: int, direction: str,
              h: float | None = None) -> LatticePLD:
    r"""The composed dominating lattice measure of ``epochs`` epochs in one pair order: its
    :meth:`~certify.lattice.LatticePLD.delta_upper` bounds delta(eps) from above.

    Raises:
        ValueError: on bad input.
    """
    _check_direction_and_epochs(direction, epochs)
    return _upper_cached(sigma, rounds, epochs, direction,
                         default_h(sigma, rounds, epochs) if h is None else h)


@lru_cache(maxsize=4)
def _upper_cached(sigma, rounds: int, epochs: int, direction: str, h: float) -> LatticePLD:
    ep = one_epoch(sigma, rounds)
    off, masses, inf = _upper_base(ep.upper.law, rounds, direction, h, ep.c_max)
    base = LatticePLD(h, BITS, off, fmpz_poly(masses), inf, 1, direction, len(masses))
    what = _what("upper", sigma, rounds, epochs, h)
    return _power(base, epochs, lambda a, b: _multiply_upper(a, b, what))


def epsilon_upper(sigma, rounds: int, epochs: int, delta: arb, h: float | None = None
                  ) -> float:
    """A dyadic eps* >= 0 with certified delta(eps*) <= delta in both orders (inf if none)."""
    worst = 0.0
    tf = float(delta.lower())
    for d in DIRECTIONS:
        lat = upper_pld(sigma, rounds, epochs, d, h)

        def ok(x: float, lat=lat) -> bool:
            with workprec(DEFAULT_PRECISION):
                return bool(lat.delta_upper(arb(x)).upper() <= delta.lower())

        if ok(0.0):
            continue
        s, c, inf = lat.float_profile()
        if inf >= tf:
            return math.inf

        def fl(x: float, s=s, c=c, inf=inf) -> float:
            m = s > x
            return inf + float(np.dot(c[m], -np.expm1(x - s[m])))

        top = float(s[-1]) + lat.h if len(s) else lat.h
        _, hi = bisect(lambda x, fl=fl: fl(x) <= tf, 0.0, top, rel_tol=1e-13, abs_tol=1e-13)
        found = None
        for q in snap_up(max(hi, worst), 8):
            if ok(q):
                found = q
                break
        if found is None:
            raise ArithmeticError("shuffle: could not certify the epsilon upper bound")
        worst = max(worst, found)
    return worst


def lower_pld(sigma: float | Fraction, rounds: int, epochs: int, direction: str,
              h: float | None = None) -> LatticePLD:
    r"""The composed lower lattice measure of ``epochs`` epochs in one pair order.

    Raises:
        ValueError: on bad input.
    """
    _check_direction_and_epochs(direction, epochs)
    return _lower_cached(sigma, rounds, epochs, direction,
                         default_h(sigma, rounds, epochs) if h is None else h)


@lru_cache(maxsize=4)
def _lower_cached(sigma, rounds: int, epochs: int, direction: str, h: float) -> LatticePLD:
    law = call_lower_law(sigma, rounds)[0] if direction == "P||Q" else put_lower_law(sigma,
                                                                                     rounds)
    off, masses = _base(law, rounds, direction, h)
    base = (off, fmpz_poly(masses))
    what = _what("lower", sigma, rounds, epochs, h)
    acc = _power(base, epochs, lambda a, b: _multiply(a, b, what))
    return LatticePLD(h, BITS, acc[0], acc[1], 0, epochs, direction, len(masses))


def delta_lower(sigma, rounds: int, epochs: int, eps: arb, direction: str,
                h: float | None = None) -> arb:
    """Certified lower bound (an exact ball, >= 0) on delta(eps) of ``epochs`` epochs in one
    order; ``eps`` exact or a ball (evaluated at its upper end)."""
    lat = lower_pld(sigma, rounds, epochs, direction, h)
    with workprec(DEFAULT_PRECISION):
        e_hi = arb(eps.upper()) if not eps.is_exact() else eps
        v = lat.delta_upper(e_hi)
        lo = arb(v.lower())
    return lo if lo > 0 else arb(0)


def epsilon_lower(sigma, rounds: int, epochs: int, delta: arb, h: float | None = None
                  ) -> float:
    """A dyadic eps_lo >= 0 with certified delta(eps_lo) > delta (max over orders; 0 if none)."""
    best = 0.0
    tf = float(delta.upper())
    for d in DIRECTIONS:
        lat = lower_pld(sigma, rounds, epochs, d, h)
        s, c, _ = lat.float_profile()

        def fl(x: float, s=s, c=c) -> float:
            m = s > x
            return float(np.dot(c[m], -np.expm1(x - s[m])))

        def ok(x: float, lat=lat) -> bool:
            with workprec(DEFAULT_PRECISION):
                return bool(lat.delta_upper(arb(x)).lower() > delta.upper())

        if not fl(0.0) > tf * (1 + 1e-12):
            continue
        top = float(s[-1]) if len(s) else 0.0
        if fl(top) > tf:
            continue
        good, _bad = bisect(lambda x, fl=fl: fl(x) > tf * (1 + 1e-12), top, 0.0,
                            rel_tol=1e-13, abs_tol=1e-13)[::-1]
        for q in snap_down(good, 8):
            if q <= best:
                break
            if ok(q):
                best = q
                break
    return best


def clear_caches() -> None:
    """Clear every cache of certify.shuffle (one-epoch laws and composed measures)."""
    from . import one_epoch as oe

    for fn in (oe.one_epoch, oe.call_lower_law, oe.put_lower_law, oe.level_zero_laws,
               _lower_cached, _upper_cached):
        fn.cache_clear()


def _bound(quantity: str, lo: Endpoint, hi: Endpoint, lm: str, um: str, direction: str,
           inputs: dict, extra: tuple[str, ...] = ()) -> Bound:
    return Bound(quantity, lo, hi, lm, um, PREC, ASSUMPTIONS + extra, direction, (), inputs)


def delta_bound(sigma, rounds: int, epochs: int, eps, direction: str) -> Bound:
    """Certified delta(eps) of ``epochs`` epochs of random allocation in one pair order.

    Args:
        sigma: Noise multiplier > 0.
        rounds: Rounds per epoch M >= 1.
        epochs: E >= 1.
        eps: eps (float taken exactly, int, decimal string or Arb ball); eps >= 0 for E > 1.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        A :class:`~certify.bound.Bound`.

    Raises:
        ValueError: on bad input.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    e = to_arb("eps", eps)
    inputs = {"sigma": float(sigma), "rounds": rounds, "epochs": epochs, "eps": str(eps)}
    if epochs == 1:
        ball = one_epoch(sigma, rounds).delta(e, direction)
        lo, hi = endpoints(ball)
        return _bound("delta", lo, hi, "shuffle-lattice", "shuffle-lattice", direction, inputs)
    if not (e >= 0):
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    lo_b = delta_lower(sigma, rounds, epochs, e, direction)
    lat = upper_pld(sigma, rounds, epochs, direction)
    with workprec(DEFAULT_PRECISION):
        e_lo = arb(e.lower()) if not e.is_exact() else e
        up = lat.delta_upper(e_lo)
    hi = endpoints(arb(up.upper()))[1]
    if hi.to_mpf() > 1:
        hi = Endpoint(1, 0)
    lo = endpoints(lo_b)[0]
    inputs["h"] = lat.h
    return _bound("delta", lo, hi, "shuffle-lower-lattice", "shuffle-upper-lattice", direction,
                  inputs, (A_LOWER, A_UPPER))


def tv_bound(sigma, rounds: int, epochs: int) -> Bound:
    """Certified total variation of ``epochs`` epochs (delta(0); equal in both orders)."""
    b = delta_bound(sigma, rounds, epochs, 0, "P||Q")
    return Bound("delta", b.lower, b.upper, b.lower_method, b.upper_method, b.precision,
                 (*b.assumptions, "total variation = delta(0)"), b.direction, b.warnings,
                 b.inputs)


def epsilon_bound(sigma, rounds: int, epochs: int, delta) -> Bound:
    """Certified eps(delta) of ``epochs`` >= 2 epochs (max over the pair orders): the lower end
    of this module, the upper end of the lattice.

    Raises:
        ValueError: on bad input.
    """
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    up_v = epsilon_upper(sigma, rounds, epochs, target)
    lo_v = epsilon_lower(sigma, rounds, epochs, target)
    lo = endpoints(arb(lo_v))[0]
    hi = endpoints(arb(up_v))[1] if math.isfinite(up_v) else Endpoint(inf=1)
    if lo_v > up_v:  # impossible unless a bug
        raise ArithmeticError("shuffle: lower end above upper end")
    inputs = {"sigma": float(sigma), "rounds": rounds, "epochs": epochs, "delta": str(delta),
              "h": default_h(sigma, rounds, epochs)}
    lm = "shuffle-lower-lattice" if lo_v > 0 else "trivial"
    return Bound("epsilon", lo, hi, lm, "shuffle-upper-lattice", PREC,
                 (*ASSUMPTIONS, A_LOWER, A_UPPER), "P||Q", (), inputs)
