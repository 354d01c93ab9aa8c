r"""The law of the lognormal sum S enclosed in convex order: two fixed-point lattice laws.

**Setting.** Y = exp(X/sigma - 1/(2 sigma^2)), X ~ N(0, 1) (E Y = 1), S = Y_1 + ... + Y_M
i.i.d. Everything one epoch of random allocation needs under P = H0 is a value of the *put
function*

.. math::

    F(c) = E\,(c - S/M)_+ = E\,\varphi_c(S), \qquad \varphi_c(s) = (c - s/M)_+, \quad c > 0,

because :math:`E(S/M - c)_+ = 1 - c + F(c)` (E S = M exactly) and
:math:`E(1 - e^\varepsilon S/M)_+ = e^\varepsilon F(e^{-\varepsilon})`
(:mod:`certify.shuffle.one_epoch`). :math:`\varphi_c` is **convex, non-increasing, non-negative,
bounded by c on [0, inf) and zero on [Mc, inf)**. This module computes an *upper law* U and a
*lower law* D (non-negative measures on a lattice, masses integers in units :math:`2^{-B}`) with

.. math::

    \int \varphi_c\, dD \;\le\; F(c) \;\le\; \int \varphi_c\, dU + c\,\Delta_U
    \qquad (0 < c \le c_{\max}),

:math:`\Delta_U` a recorded mass. The proof uses only the following facts.

**(O) Orders.** Write :math:`A \preceq B` if :math:`E g(A) \le E g(B)` for every convex
non-increasing g >= 0 (on measures: :math:`\int g\,d\alpha \le \int g\,d\beta`).
(a) A *mean-preserving spread* of an atom (mass w at x moved to x_- < x < x_+ with weights
:math:`w(x_+ - x)/(x_+ - x_-)` and :math:`w(x - x_-)/(x_+ - x_-)`) or of a law supported in
:math:`[x_-, x_+]` onto :math:`\{x_-, x_+\}` gives B with :math:`A \preceq B` (g lies below its
chord); (b) moving mass *down* or *adding* mass gives :math:`A \preceq B` (g non-increasing,
g >= 0); (c) the reverse operations -- merging masses into one atom at their mean (Jensen),
moving mass *up*, removing mass (in particular moving it to +inf) -- give :math:`B \preceq A`;
(d) :math:`\preceq` is preserved by convolution with a fixed non-negative measure and so, one
factor at a time, by convolution of both sides: :math:`\int g\,d(\alpha*\rho) = \int\int g(x+r)
\,d\alpha(x)\,d\rho(r)` and :math:`x \mapsto g(x + r)` is again convex non-increasing.
(e) Mass at a location :math:`\ge M c_{\max}` of a *partial* sum may be deleted exactly: the
summands still to be added are >= 0, so every final location stays >= Mc and
:math:`\varphi_c = 0` there. (f) Mass deleted anywhere else from the upper law is recorded in
:math:`\Delta_U`: with :math:`\alpha = \alpha' + \epsilon` and any measure :math:`\rho`,
:math:`\int\varphi_c\,d(\alpha*\rho) \le \int\varphi_c\,d(\alpha'*\rho) + c|\epsilon||\rho|`;
for a product of two laws each carrying recorded mass,
:math:`(\alpha'+\epsilon_a)*(\beta'+\epsilon_b) = \alpha'*\beta' + [\epsilon_a*(\beta'+
\epsilon_b) + \alpha'*\epsilon_b]`, of mass :math:`\Delta_a(|\beta'|+\Delta_b) + |\alpha'|
\Delta_b` (rounded up).

**Level 0 (one Y).** Knots :math:`0 = t_0 < t_1 < \dots < t_K = C` (multiples of
:math:`g_0 = 2^{e_0}`: spacing :math:`g_0` up to :math:`Y_1`, then doubling on each doubling of
y; the tail carries little mass, so coarse spacing there costs little accuracy). With
:math:`z(t) = \sigma\log t + 1/(2\sigma)`, :math:`P(Y \le t) = \Phi(z(t))`,
:math:`E[Y; Y \le t] = \Phi(z(t) - 1/\sigma)` (complete the square) and
:math:`J(t) = E(t - Y)_+ = t\Phi(z(t)) - \Phi(z(t) - 1/\sigma)`, :math:`J(0) = 0`, all Arb
balls (``erfc``, outward rounding).

* *Upper law:* Y capped at C (moved down, (b)) and spread onto the knots by linear
  interpolation ((a)); the mass at knot i is :math:`E\,\mathrm{hat}_i(Y)` =
  :math:`(J_{i+1} - J_i)/(t_{i+1} - t_i) - (J_i - J_{i-1})/(t_i - t_{i-1})` (0 < i < K), at 0
  :math:`J_1/t_1`, at C (with the capped mass) :math:`1 - (J_K - J_{K-1})/(t_K - t_{K-1})`
  (the hat functions are second differences of :math:`(t - y)_+`). Each is rounded **up** to
  :math:`2^{-B}` ((b)).
* *Lower law:* Y > C is removed ((c)); each cell :math:`[t_i, t_{i+1})` is merged into one atom
  at its conditional mean :math:`\mu_i/p_i` ((c), Jensen; :math:`p_i = \Phi(z_{i+1}) -
  \Phi(z_i)`, :math:`\mu_i = \Phi(z_{i+1} - 1/\sigma) - \Phi(z_i - 1/\sigma)`), placed at the
  upper end of its Arb ball rounded up to units :math:`g_0 2^{-20}` and not above
  :math:`t_{i+1}` (moved up, (c)), with mass rounded **down**; then merged onto the lattice
  :math:`g_0\mathbb Z` by :func:`contract` ((c)).

**Sums.** :math:`S` is the M-fold convolution, by binary powering (block sums of :math:`2^k`
terms squared, the blocks of M's binary digits multiplied into an accumulator), FLINT
``fmpz_poly`` products (exact), each rescaled by :math:`2^{-B}` with **ceil** (upper law) or
**floor** (lower law) ((b), (c)). The grid of a sum of n terms is :math:`g_0 2^{\lfloor \log_2
n\rfloor/2}` (about :math:`g_0\sqrt n`: the spread/merge error of a block is second order in its
grid step, relative to its standard deviation ~ sqrt(n)); re-gridding onto a coarser grid is
:func:`spread` (upper; (a) with the lower share rounded up, i.e. a little mass moved down, (b))
or :func:`contract` (lower; (c)). After each product: locations :math:`> M c_{\max}` are deleted
((e)); the outer tails of mass at most :math:`2^{-B}\tau` each are deleted ((c) for the lower
law; (f), recorded in :math:`\Delta_U`, for the upper law).

Why this is tight: (a) and (c) change a block's variance by at most (grid step)^2/4, a second
order effect on F (whose dependence on the law is through its smooth body), whereas the
monotone rounding of each Y up/down would move S by a first-order amount proportional to M.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

from flint import arb, fmpz, fmpz_poly

from numeric.errors import BudgetExceeded

from ..budget import check_deadline, require
from ..engine import endpoints, workprec
from ..intpoly import ceil_div_pow2
from ..lattice_grid import ceil_dyadic, floor_dyadic
from ..special import normal_cdf

__all__ = [
    "BITS",
    "CALL_LOWER",
    "PUT_LOWER",
    "PUT_UPPER",
    "LatticeLaw",
    "contract",
    "contract_down",
    "level_zero",
    "require_product",
    "spread",
    "sum_laws",
]

PUT_UPPER, PUT_LOWER, CALL_LOWER = "put-upper", "put-lower", "call-lower"

BITS = 104
"""Fixed-point bits B: masses are integers in units of 2^-B."""

PRODUCT_MEMORY_MIB = 512.0
"""Largest estimated transient memory of one FLINT product of lattice laws (MiB). The fuzz cap
is 2 GiB of *address space* (RLIMIT_AS, counting FLINT's and numpy's transient buffers and the
interpreter's ~0.5 GiB); a product above it is refused before it is allocated (issue 12)."""

PRODUCT_BYTES = 600
"""Bytes per output coefficient of a product of :func:`sum_laws` (measured ~310 B of FLINT
transients for 104-bit masses, plus the Python int and fmpz lists of the coefficients;
rounded up)."""

PRODUCT_SECONDS = 1.5e-6
"""Typical seconds per output coefficient of a product, with its rescaling and tail cut
(measured 1.7-2 us under load on the 2-core machine, ~1.3 us idle). It was a low estimate
(1e-6) until the issue-12 fuzz found ``auto`` calls whose last product ended 0.15-0.5 s past the
deadline: a typical estimate keeps the budget within its error (:func:`certify.budget.require`)."""

_TAU = 1 << 30  # outer tail mass deleted per product: at most 2^-74 at each end
_LOC_BITS = 20  # sub-grid units of level-0 atom locations in the lower law


@dataclass(frozen=True)
class LatticeLaw:
    r"""A non-negative measure with masses ``masses[i]`` (units :math:`2^{-B}`) at
    :math:`(\mathrm{offset} + i)\,2^{e}`, plus the recorded deleted mass ``dropped`` (units
    :math:`2^{-B}`, upper laws only; (f) of the module docstring).

    Attributes:
        e: Grid exponent (step :math:`2^e`, exact).
        offset: Index of the first mass.
        masses: Python ints >= 0.
        dropped: Recorded mass :math:`\Delta` (0 for lower laws).
        kind: ``"put-upper"``, ``"put-lower"`` or ``"call-lower"`` (module docstring).
        terms: Number of summands n.
        above: Put-upper laws: the mass deleted by (e) (units :math:`2^{-B}`, rounded up), all
            of it at locations :math:`> M c_{\max}` (products: a part with a deleted factor lies
            there too, the other summands being >= 0). Used by the E-epoch upper end for
            :math:`c > c_{\max}` (:mod:`certify.shuffle.multi_epoch`).
    """

    e: int
    offset: int
    masses: tuple[int, ...]
    dropped: int
    kind: str
    terms: int
    above: int = 0

    @property
    def upper(self) -> bool:
        """True for the put-upper law (masses rounded up)."""
        return self.kind == PUT_UPPER

    @property
    def total(self) -> int:
        """Total kept mass (units 2^-B)."""
        return sum(self.masses)





def _knots(n1: int, cap: int) -> list[int]:
    """Knot indices (units g0): 0..n1 step 1, then the step doubles on each doubling, to cap."""
    out = list(range(min(n1, cap) + 1))
    step, top = 2, 2 * n1
    while out[-1] < cap:
        nxt = min(out[-1] + step, cap)
        out.append(nxt)
        if nxt >= top:
            step, top = 2 * step, 2 * top
    return out


def _phi_values(sigma: arb, knots: list[int], e0: int) -> tuple[list[arb], list[arb]]:
    """(Phi(z(t)), Phi(z(t) - 1/sigma)) at the knots t = k 2^e0 (Arb; t = 0 gives 0, 0)."""
    a_vals, b_vals = [arb(0)], [arb(0)]
    inv = 1 / sigma
    half = 1 / (2 * sigma)
    g0 = arb(2) ** e0
    for j, k in enumerate(knots[1:]):
        if j % 512 == 0:
            check_deadline("in the random-allocation level-0 law")
        z = sigma * (arb(k) * g0).log() + half
        a_vals.append(normal_cdf(z))
        b_vals.append(normal_cdf(z - inv))
    return a_vals, b_vals


def level_zero(sigma: arb, e0: int, n1: int, cap: int, prec: int
               ) -> tuple[LatticeLaw, LatticeLaw, LatticeLaw]:
    r"""(put-upper, put-lower, call-lower) laws of one Y on the grid :math:`2^{e_0}\mathbb Z`
    (module docstring, "Level 0"): knots spaced :math:`g_0` up to ``n1`` units, then doubling;
    cap ``cap`` units.

    Args:
        sigma: The noise multiplier (exact ball).
        e0: Grid exponent of :math:`g_0`.
        n1: Fine-knot range (units of g0).
        cap: The cap C (units of g0).
        prec: Arb precision (bits), at least B + 64.

    Returns:
        The three level-0 laws.
    """
    knots = _knots(n1, cap)
    scale = arb(2) ** BITS
    with workprec(prec):
        a_vals, b_vals = _phi_values(sigma, knots, e0)
        g0 = arb(2) ** e0
        t = [arb(k) * g0 for k in knots]
        jv = [t[i] * a_vals[i] - b_vals[i] for i in range(len(knots))]
        jv[0] = arb(0)
        n = len(knots)
        up = [0] * (cap + 1)
        for i in range(n):
            if i % 512 == 0:
                check_deadline("in the random-allocation level-0 law")
            if i == 0:
                m = jv[1] / t[1]
            elif i == n - 1:
                m = 1 - (jv[i] - jv[i - 1]) / (t[i] - t[i - 1])
            else:
                m = ((jv[i + 1] - jv[i]) / (t[i + 1] - t[i])
                     - (jv[i] - jv[i - 1]) / (t[i] - t[i - 1]))
            hi = endpoints(m * scale)[1]
            up[knots[i]] = max(0, ceil_dyadic(hi))
        atoms_up: list[tuple[int, int]] = []  # put-lower: locations rounded up
        atoms_dn: list[tuple[int, int]] = []  # call-lower: locations rounded down
        unit = arb(2) ** (e0 - _LOC_BITS)
        for i in range(n - 1):
            if i % 512 == 0:
                check_deadline("in the random-allocation level-0 law")
            p = a_vals[i + 1] - a_vals[i]
            w = floor_dyadic(endpoints(p * scale)[0])
            if w <= 0:
                continue
            mu = b_vals[i + 1] - b_vals[i]
            loc = mu / p / unit
            left, right = knots[i] << _LOC_BITS, knots[i + 1] << _LOC_BITS
            if loc.is_finite():
                x_up = ceil_dyadic(endpoints(loc)[1])
                x_dn = floor_dyadic(endpoints(loc)[0])
            else:
                x_up, x_dn = right, left
            atoms_up.append((min(max(x_up, left), right), w))
            atoms_dn.append((max(min(x_dn, right), left), w))
        # call-lower: Y > C merged into its conditional mean (>= C) and moved down to C
        w_tail = floor_dyadic(endpoints((1 - a_vals[-1]) * scale)[0])
        if w_tail > 0:
            atoms_dn.append((knots[-1] << _LOC_BITS, w_tail))
    lo_off, lo_masses = contract(atoms_up, 1 << _LOC_BITS)
    dn_off, dn_masses = contract_down(atoms_dn, 1 << _LOC_BITS)
    return (LatticeLaw(e0, 0, tuple(up), 0, PUT_UPPER, 1),
            LatticeLaw(e0, lo_off, tuple(lo_masses), 0, PUT_LOWER, 1),
            LatticeLaw(e0, dn_off, tuple(dn_masses), 0, CALL_LOWER, 1))


def contract(atoms: list[tuple[int, int]], r: int) -> tuple[int, list[int]]:
    r"""Merge atoms onto the lattice :math:`r\mathbb Z` by mean-preserving contraction and
    upward moves only ((c) of the module docstring).

    Sweep the atoms (location x >= 0, mass w; sorted by x) left to right, forming groups. A group
    opened by an atom at x targets :math:`T = r\lceil x/r\rceil`; atoms are added whole while the
    group mean stays :math:`\le T`; the first atom (x > T) that would push it above T is split:
    the part :math:`\lfloor (TW - X)/(x - T)\rfloor` (W, X the group's mass and first moment)
    joins, keeping the mean :math:`\le T`, the rest opens the next group. Each closed group is a
    Jensen merge into its mean followed by an upward move to T, so the result is
    :math:`\preceq` the input; no mass is lost.

    Args:
        atoms: (location, mass) pairs, integers >= 0, sorted by location.
        r: Target spacing (in the locations' units).

    Returns:
        (offset, masses): masses[i] at location (offset + i) r.
    """
    out: dict[int, int] = {}
    big_w = big_x = 0
    target = 0
    for x, w in atoms:
        while w > 0:
            if big_w == 0:
                target = -(-x // r) * r
                if x == target:
                    out[target // r] = out.get(target // r, 0) + w
                    w = 0
                else:
                    big_w, big_x, w = w, w * x, 0
                break
            if big_x + w * x <= target * (big_w + w):
                big_w, big_x, w = big_w + w, big_x + w * x, 0
                break
            part = (target * big_w - big_x) // (x - target)
            out[target // r] = out.get(target // r, 0) + big_w + part
            w -= part
            big_w = big_x = 0
    if big_w:
        out[target // r] = out.get(target // r, 0) + big_w
    if not out:
        return 0, []
    lo, hi = min(out), max(out)
    return lo, [out.get(i, 0) for i in range(lo, hi + 1)]


def contract_down(atoms: list[tuple[int, int]], r: int) -> tuple[int, list[int]]:
    r"""The mirror image of :func:`contract`: Jensen merges and **downward** moves only, so the
    result is below the input for every convex *non-decreasing* g >= 0 (the call order of
    :mod:`certify.shuffle.law`, used by the call-lower law). Implemented as :func:`contract` on
    the negated locations."""
    neg = [(-x, w) for x, w in reversed(atoms)]
    off, masses = contract(neg, r)
    if not masses:
        return 0, []
    return -(off + len(masses) - 1), masses[::-1]


def spread(law: LatticeLaw, e: int) -> LatticeLaw:
    r"""Upper law re-gridded onto :math:`2^e\mathbb Z` (e >= law.e): each atom split linearly
    between its two coarse neighbours, the lower share rounded **up** ((a) then (b))."""
    if e == law.e:
        return law
    r = 1 << (e - law.e)
    if r == 2:
        return _spread2(law)
    out: dict[int, int] = {}
    for i, w in enumerate(law.masses):
        if not w:
            continue
        x = law.offset + i
        lo, j = divmod(x, r)
        if j == 0:
            out[lo] = out.get(lo, 0) + w
            continue
        down = -((-w * (r - j)) // r)
        out[lo] = out.get(lo, 0) + down
        out[lo + 1] = out.get(lo + 1, 0) + (w - down)
    return _from_dict(out, e, law)


def _spread2(law: LatticeLaw) -> LatticeLaw:
    """:func:`spread` for a ratio of 2 (the same operation, vectorized by slicing): an atom at an
    even index 2q stays at q; one at 2q + 1 gives ceil(w/2) to q and the rest to q + 1."""
    m = list(law.masses)
    if law.offset % 2:
        m = [0, *m]
    if len(m) % 2:
        m.append(0)
    q0 = (law.offset - (law.offset % 2)) // 2
    even, odd = m[0::2], m[1::2]
    down = [-((-w) >> 1) for w in odd]
    up = [w - d for w, d in zip(odd, down, strict=True)]
    out = [a + b for a, b in zip(even, down, strict=True)]
    out.append(0)
    for i, u in enumerate(up):
        if u:
            out[i + 1] += u
    while out and out[-1] == 0:
        out.pop()
    k = 0
    while k < len(out) and out[k] == 0:
        k += 1
    return replace(law, e=law.e + 1, offset=q0 + k, masses=tuple(out[k:]))


def _regrid(law: LatticeLaw, e: int) -> LatticeLaw:
    if e == law.e:
        return law
    if law.upper:
        return spread(law, e)
    r = 1 << (e - law.e)
    atoms = [(law.offset + i, w) for i, w in enumerate(law.masses) if w]
    off, masses = (contract if law.kind == PUT_LOWER else contract_down)(atoms, r)
    return replace(law, e=e, offset=off, masses=tuple(masses))


def _from_dict(out: dict[int, int], e: int, law: LatticeLaw) -> LatticeLaw:
    if not out:
        return replace(law, e=e, offset=0, masses=())
    lo, hi = min(out), max(out)
    return replace(law, e=e, offset=lo, masses=tuple(out.get(i, 0) for i in range(lo, hi + 1)))


def _grid_exponent(e0: int, n: int) -> int:
    """Grid exponent for a sum of n terms: e0 + floor(log2 n / 2) (step ~ g0 sqrt(n))."""
    return e0 + (n.bit_length() - 1) // 2


def require_product(length: int, bytes_per: int, what: str) -> None:
    """Refuse a FLINT product of ``length`` output coefficients before it is allocated: over
    :data:`PRODUCT_MEMORY_MIB` (estimated at ``bytes_per`` bytes a coefficient) always, and
    when its estimated time exceeds the time left of a budget (:func:`certify.budget.require`).

    Raises:
        BudgetExceeded: naming ``what`` (the parameter that makes the product long).
    """
    mib = length * bytes_per / 2.0**20
    if not (mib <= PRODUCT_MEMORY_MIB):
        raise BudgetExceeded(f"{what}: a product of {length} lattice points needs about "
                             f"{mib:.0f} MiB, over the memory budget of "
                             f"{PRODUCT_MEMORY_MIB:.0f} MiB")
    require(length * PRODUCT_SECONDS, f"{what} (a product of {length} lattice points)")


def _product(a: LatticeLaw, b: LatticeLaw, limit: Fraction, e0: int) -> LatticeLaw:
    """The convolution a * b, rescaled, truncated (module docstring, "Sums") and re-gridded."""
    check_deadline("in the random-allocation convolutions")
    e = max(a.e, b.e)
    a, b = _regrid(a, e), _regrid(b, e)
    require_product(len(a.masses) + len(b.masses), PRODUCT_BYTES,
                    f"shuffle: the one-epoch law of the sum of {a.terms + b.terms} rounds (a large "
                    "rounds and sigma make it long)")
    n = a.terms + b.terms
    if not a.masses or not b.masses:
        coeffs: list[int] = []
    else:
        prod = fmpz_poly(list(a.masses)) * fmpz_poly(list(b.masses))
        div = fmpz(1 << BITS)
        prod = ceil_div_pow2(prod, BITS) if a.upper else prod // div  # ceil / floor per coefficient
        coeffs = [int(c) for c in prod.coeffs()]
    offset = a.offset + b.offset
    dropped = above = 0
    if a.upper:
        ta, tb = a.total, b.total
        d2 = a.dropped * (tb + b.dropped) + ta * b.dropped
        dropped = -((-d2) >> BITS)
        a2 = a.above * (tb + b.dropped + b.above) + (ta + a.dropped) * b.above
        above = -((-a2) >> BITS)
    coeffs, cut = _limit(coeffs, math.floor(limit / Fraction(2) ** e) - offset, a.kind)
    above += cut if a.upper else 0
    # outer tails of mass <= tau each: deleted ((c) lower; (f) upper, recorded)
    acc, hi = 0, len(coeffs)
    while hi > 0 and acc + coeffs[hi - 1] <= _TAU:
        acc += coeffs[hi - 1]
        hi -= 1
    acc_lo, lo = 0, 0
    while lo < hi and acc_lo + coeffs[lo] <= _TAU:
        acc_lo += coeffs[lo]
        lo += 1
    if a.upper:
        dropped += acc + acc_lo
    law = LatticeLaw(e, offset + lo, tuple(coeffs[lo:hi]), dropped, a.kind, n, above)
    return _regrid(law, _grid_exponent(e0, n))


def sum_laws(base: LatticeLaw, count: int, limit: Fraction, e0: int) -> LatticeLaw:
    r"""The ``count``-fold convolution of ``base`` by binary powering (module docstring).

    Args:
        base: A level-0 law (one term).
        count: Number of terms M >= 1.
        limit: :math:`M c_{\max}` (locations above it are deleted exactly).
        e0: Level-0 grid exponent.

    Returns:
        The law of the sum (an upper law if ``base`` is one, else a lower law).
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count!r}")
    acc = None
    block = base
    for bit in range(count.bit_length()):
        if bit:
            block = _product(block, block, limit, e0)
        if (count >> bit) & 1:
            acc = block if acc is None else _product(acc, block, limit, e0)
    if acc.terms == 1:  # one term: apply the limit too
        top = math.floor(limit / Fraction(2) ** acc.e) - acc.offset
        kept, cut = _limit(list(acc.masses), top, acc.kind)
        acc = replace(acc, masses=tuple(kept), above=acc.above + (cut if acc.upper else 0))
    return acc


def _limit(coeffs: list[int], top: int, kind: str) -> tuple[list[int], int]:
    """Mass at indices > top (locations > M c_max): deleted exactly for the put laws ((e)),
    moved down onto index top for the call-lower law (a downward move). Returns the kept
    coefficients and the deleted mass."""
    if top + 1 >= len(coeffs):
        return coeffs, 0
    if top < 0:
        return [], sum(coeffs)
    extra = sum(coeffs[top + 1:])
    if kind == CALL_LOWER:
        return [*coeffs[:top], coeffs[top] + extra], 0
    return coeffs[:top + 1], extra
