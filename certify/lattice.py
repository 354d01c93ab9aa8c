r"""Certified upper bounds on delta(eps) and eps(delta) from a dominating lattice PLD.

Scope: compositions (homogeneous or heterogeneous, counts up to 1e9) of mechanisms with a
registered single-step enclosure (:mod:`certify.lattice_steps`: Gaussian, Poisson-subsampled
Gaussian in both pair orders, Laplace, randomized response, ApproxDP with its delta part as mass
at +infinity; derive registers the mechanisms it compiles when their law can be enclosed), all
terms on one grid. :func:`lattice_delta_bound` and :func:`lattice_epsilon_bound` give the
**upper** end (lower end trivial 0); the **lower** end (an exactly evaluated binned threshold
test, section "Lower bound" at the end) is added by :func:`lattice_delta_interval` and
:func:`lattice_epsilon_interval`.

**Notation.** For a finite non-negative measure :math:`\nu` on :math:`(-\infty, +\infty]` let

.. math::

    H_\nu(t) = \int (1 - t e^{-s})_+ \, d\nu(s), \qquad t \ge 0

(with :math:`t e^{-\infty} = 0`). For a pair (P, Q) with PLLR :math:`L = \log(dQ/dP)` and
:math:`\nu = \mathcal L_Q(L)` this is the hockey-stick curve, :math:`H(e^\varepsilon) =
\delta(\varepsilon) = E_Q[(1 - e^{\varepsilon - L})_+]` (MATH.md section 1), convex and
non-increasing in t, :math:`H(0) = 1`, and :math:`H(t) \ge 1 - t` (take the whole space as the
event). For an m-fold composition with independent steps, :math:`\delta_m(\varepsilon) =
\int g_\varepsilon \, d(\nu_1 * \cdots * \nu_m)` with :math:`g_\varepsilon(s) = (1 -
e^{\varepsilon - s})_+`, which is non-decreasing in s and lies in [0, 1].

**Lemma 1 (hybrid argument).** If :math:`\mu_i` are finite non-negative measures with
:math:`H_{\mu_i} \ge H_{\nu_i}` on :math:`[0, \infty)` then :math:`\delta_m(\varepsilon) \le
\int g_\varepsilon\, d(\mu_1 * \cdots * \mu_m)` for every real eps. *Proof.* Replace one factor
at a time. With R the sum of the other coordinates (law :math:`\rho`, a non-negative measure on
:math:`(-\infty, \infty]`), Fubini gives :math:`\int g_\varepsilon\, d(\nu_1 * \rho) = \int
H_{\nu_1}(e^{\varepsilon - r})\, d\rho(r) \le \int H_{\mu_1}(e^{\varepsilon - r})\, d\rho(r)`
(:math:`e^{\varepsilon - r} = 0` for r = +inf). Repeat for each factor. QED

**Lemma 2 (connect the dots; Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, *Connect the Dots:
Tighter Discrete Approximations of Privacy Loss Distributions*, PETS 2022).** Let
:math:`\varepsilon_0 < \dots < \varepsilon_n` be grid points, :math:`t_i = e^{\varepsilon_i}`,
:math:`H_i = H(t_i)` for the true single-step curve. Let :math:`\hat H` be the piecewise-linear
interpolation of the points :math:`(0, 1), (t_0, H_0), \dots, (t_n, H_n)`, constant
:math:`H_n` for :math:`t \ge t_n`. Then (i) :math:`\hat H \ge H` on :math:`[0, \infty)`: on each
:math:`[t_{i}, t_{i+1}]` and on :math:`[0, t_0]` a chord of a convex function lies above it, and
for :math:`t \ge t_n`, :math:`H(t) \le H_n` as H is non-increasing. (ii) :math:`\hat H =
H_\mu` for the measure :math:`\mu` with atoms at :math:`\varepsilon_0, \dots, \varepsilon_n,
+\infty`: a measure with atoms :math:`c_i` at :math:`\varepsilon_i` and :math:`c_\infty` has
:math:`H_\mu(t) = c_\infty + \sum_i c_i (1 - t/t_i)_+`, piecewise linear in t with kinks at
:math:`t_i` where the slope jumps by :math:`c_i/t_i`. With chord slopes
:math:`\sigma_{-1} = (H_0 - 1)/t_0`, :math:`\sigma_i = (H_{i+1} - H_i)/(t_{i+1} - t_i)` and
:math:`\sigma_n = 0`, take :math:`c_i = t_i(\sigma_i - \sigma_{i-1}) \ge 0` (convexity) and
:math:`c_\infty = H_n`. Summation by parts gives the **tail masses in closed form**

.. math::

    G_k := \mu((\varepsilon_k, +\infty]) = \sum_{i > k} c_i + c_\infty = H_k - t_k \sigma_k
    \quad (0 \le k < n), \qquad G_n = H_n, \qquad G_{-1} := \mu(\mathbb R \cup \{\infty\}) = 1,

i.e. the tail above :math:`\varepsilon_k` is where the chord through :math:`t_k, t_{k+1}`
meets t = 0. Each :math:`G_k` depends on two adjacent :math:`H` values only, so no errors
accumulate. (The matching P-side, :math:`c_i/t_i` at :math:`\varepsilon_i` plus
:math:`1 - (1 - H_0)/t_0 \ge 0` at :math:`-\infty`, makes :math:`\mu` the Q-law of a genuine
pair, as in DGKKM; Lemma 1 does not need it.) The grid ends are chosen so that the error is
negligible: on :math:`[0, t_0]`, :math:`\hat H - H \le H_0 - (1 - t_0)` (from
:math:`H(t) \ge 1 - t`) and beyond :math:`t_n` it is at most :math:`H_n`; both are made
:math:`\le 2^{-72}/m` per step.

**Lemma 3 (safe lattice operations).** Write :math:`\nu \preceq \nu'` if
:math:`\nu((s, \infty]) \le \nu'((s, \infty])` for all :math:`s \in [-\infty, \infty)` (the
total mass included). For non-decreasing :math:`g \ge 0`, :math:`\int g\,d\nu = \int_0^\infty
\nu(g > u)\,du \le \int g\, d\nu'` since each :math:`\{g > u\}` is an upper set; convolution with
a fixed non-negative measure preserves :math:`\preceq` (:math:`(\nu * \rho)((s,\infty]) = \int
\nu((s - r, \infty])\, d\rho(r)`). The following operations produce a :math:`\nu'` with
:math:`\nu \preceq \nu'` and are the only ones used: raising any mass (rounding fixed-point
masses **up**, even though the total then exceeds 1, which is harmless because every integrand
is non-negative); rounding tail masses :math:`G_k` up (the single step: fixed-point tails
:math:`T_k = \lceil 2^B \overline{G_k} \rceil`, made non-increasing by a running minimum, with
:math:`T_{-1} = 2^B` exactly, masses :math:`T_{k-1} - T_k`, mass at infinity :math:`T_n`);
moving mass to a higher grid point (the low tail of a composed law, of mass at most
:math:`2^{-64}`, is lumped onto the lowest kept point); and moving mass to :math:`+\infty` (the
high tail, also at most :math:`2^{-64}`, counts as fully privacy-violating).

**Algorithm.** Grid :math:`\varepsilon_i = i h` (h a binary64 number, exact in Arb). The single-
step :math:`H_i = \delta_1(ih)` are Arb balls of the closed forms below; :math:`G_k` are formed
in Arb and their upper ends rounded as above with B fixed-point bits (default 80). The m-fold
convolution is by binary powering with FLINT ``fmpz_poly`` multiplication (exact), each product
(scale :math:`2^{2B}`) rescaled by :math:`\lceil c/2^B\rceil` per coefficient and truncated as
in Lemma 3. Finally :math:`\delta(\varepsilon) \le 2^{-B}\bigl(c_\infty + \sum_{s_k >
\varepsilon} c_k (1 - e^{\varepsilon - s_k})\bigr)` is evaluated in Arb (``arb_poly`` Horner
at :math:`e^{-h}`). This profile is non-increasing in eps (it is :math:`\int g_\varepsilon` of a
non-negative measure), so an eps* with certified profile :math:`\le \delta` bounds
:math:`\varepsilon(\delta) \le \varepsilon^*`; eps* is found by floating-point bisection on the
same profile and then certified in Arb. Gaps: per step, the range errors of Lemma 2
(:math:`2 \cdot 2^{-72}/m`); per product, at most (number of coefficients) x :math:`2^{-B}` from
rounding plus :math:`2 \cdot 2^{-64}` from truncation. They are *inside* the bound, not added to
it: the bound is a value of a dominating measure, whatever these sizes are; they only control
tightness. The discretization error itself is second order in h (DGKKM).

**Single-step hockey-stick curves** and tails: closed forms in Arb, one class per mechanism in
:mod:`certify.lattice_steps` (which also records the masses at +-infinity used by the range
tests: below the grid the error is at most :math:`H_0 - (1 - t_0(1 - P(L = -\infty)))`, above
it :math:`H_n - Q(L = +\infty)`, both by the same chord arguments with the line
:math:`1 - t(1 - P(L = -\infty)) \le H(t)`, from the event :math:`\{L > -\infty\}`, and the
constant :math:`Q(L = +\infty) \le H`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from flint import arb, arb_poly, ctx, fmpz, fmpz_poly

from numeric.composition import Composition, compose
from numeric.mechanisms.base import DIRECTION_PQ

from .bound import Bound
from .engine import DEFAULT_PRECISION, Endpoint, endpoints, to_arb, workprec
from .lattice_steps import LatticeStep, lattice_step

__all__ = [
    "DEFAULT_BITS",
    "LatticePLD",
    "LowerLattice",
    "default_grid",
    "lattice_delta_bound",
    "lattice_delta_interval",
    "lattice_epsilon_bound",
    "lattice_epsilon_interval",
    "lattice_pld",
    "lower_lattice",
    "single_step_delta",
]

DEFAULT_BITS = 80
"""Fixed-point bits B: masses are integers in units of 2^-B."""

_RANGE_BITS = 72  # per-step range error of Lemma 2 at most 2^-72 / m on each side
_TRUNC_BITS = 64  # per product, at most 2^-64 of mass truncated at each end
_N1_MAX = 60_000  # single-step grid points (Arb evaluations)
_N2_MAX = 500_000  # composed grid points (FLINT products)
_H_FINE = 2.0**-12  # default spacing when affordable (about 2.4e-4)
_MAX_COUNT = 10**9

_A_METHOD = (
    "lattice: connect-the-dots dominating discretization of the single-step hockey-stick curve "
    "(Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022), composed exactly with FLINT "
    "integer polynomials; fixed-point rounding, truncation and lumping only in the safe "
    "direction (proof in certify.lattice)"
)


def single_step_delta(mechanism: Any, eps: Any, direction: str = DIRECTION_PQ) -> arb:
    r"""Certified single-step hockey-stick :math:`\delta_1(\varepsilon)` (see
    :mod:`certify.lattice_steps`).

    Args:
        mechanism: A mechanism with a registered lattice step.
        eps: Any real (float taken exactly, or an ``arb``).
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        An Arb ball at the current precision.

    Raises:
        ValueError: if the mechanism is not supported.
    """
    step = lattice_step(mechanism, direction)
    return step.delta(eps if isinstance(eps, arb) else arb(float(eps)))


# ---------------------------------------------------------------------------------------------
# grid range and spacing


def _search(pred, start: float, outward: float) -> float:
    """A point x = start + k*outward (k >= 0, doubling) with pred(x) certified, then refined.

    ``pred`` is monotone: once true moving outward it stays true. Returns a point where it holds,
    refined by bisection towards ``start`` (every returned point satisfies pred).
    """
    good = start
    with workprec(DEFAULT_PRECISION):
        step = outward
        for _ in range(80):
            good = start + step
            if pred(arb(good)):
                break
            step *= 2.0
        else:
            raise ArithmeticError("lattice: grid range search did not terminate")
        bad = start + step / 2.0 if step != outward else start
        if pred(arb(bad)):
            return bad
        for _ in range(30):
            mid = 0.5 * (good + bad)
            if pred(arb(mid)):
                good = mid
            else:
                bad = mid
    return good


@lru_cache(maxsize=64)
def _range(step: LatticeStep, count: int) -> tuple[float, float]:
    """[lo, hi] with gap(lo) <= tol and excess(hi) <= tol, tol = 2^-72 / count (certified)."""
    tol = arb(2.0**-_RANGE_BITS) / count

    def low_ok(e: arb) -> bool:
        return bool(step.gap(e).upper() <= tol)

    def high_ok(e: arb) -> bool:
        return bool(step.excess(e).upper() <= tol)

    lo = _search(low_ok, 0.0, -0.25) if not low_ok(arb(0)) else 0.0
    hi = _search(high_ok, 0.0, 0.25) if not high_ok(arb(0)) else 0.0
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi


def default_grid(composition: Any, count: int | None = None,
                 direction: str = DIRECTION_PQ) -> float:
    r"""Default spacing h: :math:`2^{-12}` unless the grids would exceed their size caps.

    The largest single-step grid is kept below 60 000 points and the composed window (estimated
    as the sum of the single-step ranges plus 28 standard deviations of the composed PLLR, or the
    sum of count x range if smaller) below 500 000 points; h is rounded up to 8 significant bits
    (a short binary number).

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts, or a mechanism
            together with ``count``.
        count: Number of steps when ``composition`` is a single mechanism.
        direction: ``"P||Q"`` or ``"Q||P"``.
    """
    comp = compose(composition if count is None else [(composition, count)])
    terms, total = _terms(comp, direction)
    ranges = [_range(step, total) for step, _ in terms]
    width1 = max(hi - lo for lo, hi in ranges)
    spread = sum(c * (hi - lo) for (_, c), (lo, hi) in zip(terms, ranges, strict=True))
    var = sum(c * step.rough_std() ** 2 for step, c in terms)
    window = sum(hi - lo for lo, hi in ranges) + 28.0 * math.sqrt(var)
    width2 = min(spread, window)
    h = max(_H_FINE, width1 / _N1_MAX, width2 / _N2_MAX)
    m, e = math.frexp(h)
    return math.ldexp(math.ceil(m * 256) / 256, e)


# ---------------------------------------------------------------------------------------------
# the lattice measure


@dataclass(frozen=True)
class LatticePLD:
    r"""A non-negative measure on :math:`\{(o + k)h\} \cup \{+\infty\}`, masses in units 2^-B.

    Attributes:
        h: Grid spacing (binary64, exact).
        bits: Fixed-point bits B.
        offset: Grid index o of the first coefficient.
        coeffs: Masses :math:`c_k` (FLINT integer polynomial, coefficient k at index o + k).
        inf: Mass at +infinity.
        count: Number of composed steps.
        direction: Pair order.
        points: Single-step grid size.
    """

    h: float
    bits: int
    offset: int
    coeffs: fmpz_poly
    inf: int
    count: int
    direction: str
    points: int
    products: int = 0

    @property
    def total(self) -> int:
        """Total mass (units 2^-B), >= 2^B."""
        return int(self.coeffs(1)) + self.inf

    def delta_upper(self, eps: arb) -> arb:
        r"""Enclosure of :math:`2^{-B}(c_\infty + \sum_{s_k > \varepsilon} c_k (1 - e^{\varepsilon
        - s_k}))` at the exact dyadic ``eps`` (current precision)."""
        lo, _ = endpoints(eps)
        e = Fraction(lo.man) * Fraction(2) ** lo.exp
        j0 = math.floor(e / Fraction(self.h)) - self.offset + 1  # first k with s_k > eps
        n = self.coeffs.length()
        j0 = min(max(j0, 0), n)
        tail = self.coeffs.right_shift(j0) if j0 > 0 else self.coeffs
        s0 = arb(fmpz(tail(1))) if j0 < n else arb(0)
        h = arb(self.h)
        if j0 < n:
            s1 = arb_poly(tail)((-h).exp()) * (eps - (self.offset + j0) * h).exp()
        else:
            s1 = arb(0)
        return (arb(fmpz(self.inf)) + s0 - s1) * arb(2) ** (-self.bits)

    def rounding_budget(self) -> float:
        r"""How much rounding can have raised the upper end, as an absolute delta (a float, a
        tightness diagnostic: the bound is valid whatever its size).

        Relative to the exact composition of the connect-the-dots pairs: the mass added by
        rounding products up, :math:`A = (|
u'| - 2^B)/2^B` (exact); single-step tails
        rounded up by at most :math:`2^{-B}` each, which raises each step's hockey-stick curve by
        at most :math:`2^{-B}` and so delta by at most :math:`m 2^{-B}(1 + A)` (Lemma 1's hybrid
        argument); mass moved up by truncation and lumping, :math:`2^{-63}` per product; and the
        Lemma 2 range errors, :math:`2 \cdot 2^{-72}` in all. The discretization error itself
        (second order in h) is not included: the lower end measures it.
        """
        excess = float(Fraction(self.total - (1 << self.bits), 1 << self.bits))
        return (excess + self.count * 2.0 ** (-self.bits) * (1.0 + excess)
                + self.products * 2.0**-63 + 2.0**-71)

    def float_profile(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(support points, masses, mass at infinity) as floats, for searching only."""
        c = np.array([float(v) for v in self.coeffs.coeffs()]) * 2.0 ** (-self.bits)
        s = (self.offset + np.arange(len(c))) * self.h
        return s, c, float(self.inf) * 2.0 ** (-self.bits)


def _single_step(step: LatticeStep, h: float, bits: int, count: int) -> LatticePLD:
    lo, hi = _range(step, count)
    i0, i1 = math.floor(lo / h), math.ceil(hi / h)
    n = i1 - i0 + 1
    scale = 1 << bits
    prec = DEFAULT_PRECISION + bits
    while True:
        with workprec(prec):
            hh = arb(h)
            eps = [arb(i0 + i) * hh for i in range(n)]
            t = [e.exp() for e in eps]
            H = [step.delta(e) for e in eps]
            tails = [1 << bits]  # T_{-1} = 2^B exactly
            worst = 0.0
            for k in range(n):
                if k < n - 1:
                    sig = (H[k + 1] - H[k]) / (t[k + 1] - t[k])
                    g = H[k] - t[k] * sig
                else:
                    g = H[k]
                worst = max(worst, float(g.rad()))
                up = endpoints(g * scale)[1]
                val = _ceil_dyadic(up)
                tails.append(max(0, min(tails[-1], val)))
        if worst <= 2.0 ** (-bits - 8) or prec >= 4 * (DEFAULT_PRECISION + bits):
            break
        prec *= 2
    masses = [tails[k] - tails[k + 1] for k in range(n)]
    return LatticePLD(h, bits, i0, fmpz_poly(masses), tails[-1], 1, "", n)


def _ceil_dyadic(e: Endpoint) -> int:
    if e.exp >= 0:
        return e.man << e.exp
    return -((-e.man) >> (-e.exp))


def _sum_above(p: fmpz_poly, k: int) -> int:
    """Sum of coefficients with index > k."""
    n = p.length()
    if k + 1 >= n:
        return 0
    return int(p.right_shift(k + 1)(1)) if k + 1 > 0 else int(p(1))


def _sum_below(p: fmpz_poly, k: int) -> int:
    """Sum of coefficients with index < k."""
    if k <= 0:
        return 0
    return int(p.truncate(k)(1))


def _multiply(a: LatticePLD, b: LatticePLD) -> LatticePLD:
    """Convolution of two lattice measures, rescaled and truncated safely (Lemma 3)."""
    bits = a.bits
    div = fmpz(1 << bits)
    prod = a.coeffs * b.coeffs
    fa, fb = int(a.coeffs(1)), int(b.coeffs(1))
    inf2 = a.inf * (fb + b.inf) + fa * b.inf  # everything with an infinite coordinate
    # ceil(c / 2^B) coefficient-wise: every mass rounded up
    r = -((-prod) // div)
    inf = -((-inf2) >> bits)
    tau = 1 << max(0, bits - _TRUNC_BITS)
    # top: smallest K with sum_{j > K} r_j <= tau; that mass moves to +infinity.
    # bottom: largest L <= top with sum_{j < L} r_j <= tau; lumped onto index L.
    low, top = _cut_points(r, tau)
    inf += _sum_above(r, top)
    lump = _sum_below(r, low)
    kept = r.truncate(top + 1)
    if low > 0:
        kept = kept.right_shift(low) + fmpz_poly([lump])
    return LatticePLD(a.h, bits, a.offset + b.offset + low, kept, inf, a.count + b.count,
                      a.direction, max(a.points, b.points), a.products + b.products + 1)


def _power(base: LatticePLD, m: int) -> LatticePLD:
    """base composed m times by binary powering (at most 2 log2(m) exact products)."""
    if m < 1:
        raise ValueError(f"count must be >= 1, got {m!r}")
    result = None
    sq = base
    for bit in range(m.bit_length()):
        if bit:
            sq = _multiply(sq, sq)
        if (m >> bit) & 1:
            result = sq if result is None else _multiply(result, sq)
    return result


@lru_cache(maxsize=16)
def _lattice_cached(step: LatticeStep, count: int, h: float, bits: int, direction: str,
                    total: int) -> LatticePLD:
    """One term composed ``count`` times (the range tolerance uses the ``total`` count)."""
    one = _single_step(step, h, bits, total)
    one = LatticePLD(h, bits, one.offset, one.coeffs, one.inf, 1, direction, one.points)
    return _power(one, count)


def _terms(comp: Composition, direction: str) -> tuple[list[tuple[LatticeStep, int]], int]:
    """The lattice steps of the composition's terms in one pair order, and the total count."""
    total = int(comp.total_count)
    if total > _MAX_COUNT:
        raise ValueError(f"lattice: does not apply to more than {_MAX_COUNT} steps")
    return [(lattice_step(mech, direction), int(c)) for mech, c in comp.terms], total


def _check_params(h: float | None, bits: int | None) -> tuple[float | None, int]:
    if h is not None:
        hf = float(h)
        if not (math.isfinite(hf) and 0.0 < hf <= 1.0):
            raise ValueError(f"grid spacing h must be in (0, 1], got {h!r}")
        h = hf
    b = DEFAULT_BITS if bits is None else bits
    if isinstance(b, bool) or not isinstance(b, int) or not 24 <= b <= 256:
        raise ValueError(f"bits must be an integer in [24, 256], got {bits!r}")
    return h, b


def _setup(composition: Any, direction: str, h: float | None, bits: int | None):
    """Validated (terms, total count, h, bits) shared by the upper and lower lattices."""
    comp = compose(composition)
    h, b = _check_params(h, bits)
    terms, total = _terms(comp, direction)
    if h is None:
        h = default_grid(comp, None, direction)
    for step, _ in terms:
        lo, hi = _range(step, total)
        if (hi - lo) / h > 4 * _N1_MAX:
            raise ValueError(f"lattice: grid spacing h = {h!r} needs more than {4 * _N1_MAX} "
                             "single-step points; use a larger h")
    return terms, total, h, b


def _fold(build, combine, composition: Any, direction: str, h: float | None,
          bits: int | None):
    """Each term composed by ``build`` (cached), then the terms combined pairwise."""
    terms, total, h, b = _setup(composition, direction, h, bits)
    out = None
    for step, count in terms:
        part = build(step, count, h, b, direction, total)
        out = part if out is None else combine(out, part)
    return out


def lattice_pld(
    composition: Any, direction: str = DIRECTION_PQ, *, h: float | None = None,
    bits: int | None = None,
) -> LatticePLD:
    r"""The composed dominating lattice measure of a composition in one pair order.

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts, every term with a
            registered lattice step (:mod:`certify.lattice_steps`).
        direction: ``"P||Q"`` or ``"Q||P"``.
        h: Grid spacing (default :func:`default_grid`).
        bits: Fixed-point bits B (default :data:`DEFAULT_BITS`).

    Returns:
        A :class:`LatticePLD` whose :meth:`~LatticePLD.delta_upper` is a certified upper bound on
        the composition's delta(eps) in that order.

    Raises:
        ValueError: if the method does not apply, or on bad h / bits.
    """
    return _fold(_lattice_cached, _multiply, composition, direction, h, bits)


# ---------------------------------------------------------------------------------------------
# public bounds


def _lattices(comp: Composition, h: float | None, bits: int | None) -> dict[str, LatticePLD]:
    return {d: lattice_pld(comp, d, h=h, bits=bits) for d in comp.directions}


def _assumptions(comp: Composition) -> tuple[str, ...]:
    out = [_A_METHOD]
    if not comp.symmetric:
        out.append("asymmetric pair: both orders bounded, the larger bound reported")
    for mech, _ in comp.terms:
        for d in comp.directions:
            for a in lattice_step(mech, d).assumptions:
                if a not in out:
                    out.append(a)
    return tuple(out)


def _inputs(lats: dict[str, LatticePLD]) -> dict[str, Any]:
    first = next(iter(lats.values()))
    return {
        "h": first.h,
        "bits": first.bits,
        "count": first.count,
        "single_step_points": {k: v.points for k, v in lats.items()},
        "composed_points": {k: v.coeffs.length() for k, v in lats.items()},
        "rounding_budget": {k: v.rounding_budget() for k, v in lats.items()},
    }


def lattice_delta_bound(
    composition: Any, eps: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified upper bound on delta(eps) (max over pair orders) from the lattice PLD.

    Args:
        composition: One-term Gaussian or Poisson-subsampled Gaussian composition.
        eps: eps >= 0 (float taken exactly, int, decimal string or Arb ball; a ball is evaluated
            at its lower end, the profile being non-increasing).
        h: Grid spacing (default :func:`default_grid`).
        bits: Fixed-point bits.

    Returns:
        A ``Bound`` with ``lower = 0`` (``"trivial"``) and upper end from ``"lattice[h=...]"``,
        clipped at 1.

    Raises:
        ValueError: on bad input, or (without "must") when the method does not apply.
    """
    comp = compose(composition)
    e = to_arb("eps", eps)
    if e < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    lats = _lattices(comp, h, bits)
    prec = DEFAULT_PRECISION
    with workprec(prec):
        e_lo = arb(e.lower()) if not e.is_exact() else e
        per = {d: lat.delta_upper(e_lo) for d, lat in lats.items()}
        win = max(per, key=lambda k: per[k].upper())
        _, hi = endpoints(arb(per[win].upper()))
    if hi.to_mpf() > 1:
        hi = Endpoint(1, 0)
    inputs = _inputs(lats)
    inputs.update({"eps": str(eps), "per_direction": {k: float(v.mid()) for k, v in per.items()}})
    method = f"lattice[h={lats[win].h!r}]"
    return Bound("delta", Endpoint(0, 0), hi, "trivial", method, prec, _assumptions(comp), win,
                 (), inputs)


def _float_delta(s: np.ndarray, c: np.ndarray, inf: float, eps: float) -> float:
    m = s > eps
    return inf + float(np.dot(c[m], -np.expm1(eps - s[m])))


def _eps_upper(lat: LatticePLD, target: arb) -> float | None:
    """A dyadic eps* >= 0 with certified delta_upper(eps*) <= target, or None (infinite)."""
    s, c, inf = lat.float_profile()
    tf = float(target.lower())
    with workprec(DEFAULT_PRECISION):
        if bool(lat.delta_upper(arb(0)).upper() <= target.lower()):
            return 0.0
    if inf >= tf:
        return None
    lo, hi = 0.0, float(s[-1]) + lat.h if len(s) else lat.h
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _float_delta(s, c, inf, mid) <= tf:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    cand = hi
    for k in range(8):
        cand = cand + (1e-11 * 10.0**k) * max(1.0, cand)
        q = math.ldexp(math.ceil(math.ldexp(cand, 44)), -44)
        with workprec(DEFAULT_PRECISION):
            if bool(lat.delta_upper(arb(q)).upper() <= target.lower()):
                return q
    raise ArithmeticError("lattice: could not certify the epsilon bound")


def lattice_epsilon_bound(
    composition: Any, delta: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified upper bound on eps(delta) (max over pair orders) from the lattice PLD.

    eps* is chosen by floating-point bisection on the lattice profile and then certified:
    :math:`2^{-B}(c_\infty + \sum c_k(1 - e^{\varepsilon^* - s_k})_+) \le \delta` in Arb. As the
    true delta(eps) is below this profile and non-increasing, :math:`\varepsilon(\delta) \le
    \varepsilon^*`.

    Args:
        composition: One-term Gaussian or Poisson-subsampled Gaussian composition.
        delta: Target delta in (0, 1).
        h: Grid spacing (default :func:`default_grid`).
        bits: Fixed-point bits.

    Returns:
        A ``Bound`` with ``quantity="epsilon"``, ``lower = 0`` (``"trivial"``) and upper end from
        ``"lattice[h=...]"`` (+inf, vacuous, when the mass at infinity alone exceeds delta).

    Raises:
        ValueError: on a delta outside (0, 1), or (without "must") when the method does not
            apply.
    """
    comp = compose(composition)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    lats = _lattices(comp, h, bits)
    per = {d: _eps_upper(lat, target) for d, lat in lats.items()}
    inputs = _inputs(lats)
    inputs.update({"delta": str(delta), "per_direction": per})
    if any(v is None for v in per.values()):
        win = next(d for d, v in per.items() if v is None)
        return Bound("epsilon", Endpoint(0, 0), Endpoint(inf=1), "trivial",
                     f"lattice[h={lats[win].h!r}]", DEFAULT_PRECISION, _assumptions(comp), win,
                     ("vacuous: the lattice mass at infinity exceeds delta",), inputs)
    win = max(per, key=lambda k: per[k])
    _, hi = endpoints(arb(per[win]))
    return Bound("epsilon", Endpoint(0, 0), hi, "trivial", f"lattice[h={lats[win].h!r}]",
                 DEFAULT_PRECISION, _assumptions(comp), win, (), inputs)


# ---------------------------------------------------------------------------------------------
# certified LOWER bound: an exactly evaluated binned threshold test (see _LOWER_DOC)

_LOWER_DOC = r"""
**Lower bound (a concrete test, evaluated with directed rounding).** Fix one pair order with
PLLR :math:`L = \log(dQ/dP)` (for the order (Q, P) of the subsampled Gaussian the roles of P and
Q are swapped and L is negated; the formulas below are written for "numerator" Q and
"denominator" P). Fix integers :math:`a < b` and bin one observation by the cell index

.. math::

    c(x) = a \text{ if } L(x) < (a+1)h, \quad c(x) = k \text{ if } kh \le L(x) < (k+1)h
    \ (a < k < b), \quad c(x) = b \text{ if } L(x) \ge bh.

c is a deterministic function of the output, so for the m-fold composition the statistic
:math:`S = \sum_i c(x_i)` is a post-processing and for every threshold K and every eps the
event :math:`\{S > K\}` gives :math:`\delta_{P^m, Q^m}(\varepsilon) \ge Q^m(S > K) -
e^\varepsilon P^m(S > K)` (the hockey-stick divergence is the supremum over events).

*Q side.* With :math:`q_k = Q(c = k)`, :math:`Q^m(S = j) = q^{*m}_j`. The single-step masses are
rounded **down** to fixed point, every product of the binary powering is rescaled by
:math:`\lfloor \cdot / 2^B \rfloor`, and tails are simply dropped: each operation only lowers
coefficients pointwise and convolution of non-negative sequences is monotone, so the computed
:math:`Q'_j \le 2^B Q^m(S = j)` for every j and :math:`2^{-B}\sum_{j > K} Q'_j \le Q^m(S > K)`.

*P side, exponentially tilted (exact identity).* Put :math:`r_k = e^{kh + \gamma} p_k`,
:math:`p_k = P(c = k)`, with a binary64 constant :math:`\gamma` (exact) chosen in floating point
so that :math:`\sum_k r_k \approx 1` (renormalisation; any :math:`\gamma` is valid). For any
cell sequence with :math:`\sum c_i = j`, :math:`\prod p_{c_i} = e^{-jh - m\gamma} \prod
r_{c_i}`, hence :math:`P^m(S = j) = e^{-jh - m\gamma} r^{*m}_j` exactly. The tilted masses are
O(1)-normalised (:math:`e^{kh} p_k \le q_k` on the interior cells, since there :math:`dP =
e^{-L} dQ \le e^{-kh} dQ`; without :math:`\gamma` the total would be about :math:`e^{-h/2}` per
step and :math:`e^{-mh/2}` after m steps, below the fixed-point unit at m = 1e5, h = 2^-8), so
the relevant tail :math:`P^m(S > K) \approx e^{-\varepsilon}\delta` is carried with full
*relative* precision even when it is ~1e-17
(m = 1e5, eps ~ 25.6). The :math:`r_k` are rounded **up**, products rescaled by
:math:`\lceil \cdot / 2^B \rceil`, and mass cut from either end of a product is not lost but
added to a scalar E ("mass at an unknown index"). Invariant:
:math:`2^B r^{*n} \le R' + e` pointwise for some non-negative e of total mass :math:`\le E`;
for a product, :math:`(R'_a + e_a) * (R'_b + e_b) = R'_a * R'_b + [e_a * (R'_b + e_b) + R'_a *
e_b]`, the bracket having total mass :math:`E_a(|R'_b| + E_b) + |R'_a| E_b`, which is rounded up
and added to E together with the cut mass. Then

.. math::

    P^m(S > K) \le 2^{-B} e^{-m\gamma}\Bigl(\sum_{j > K} e^{-jh} R'_j + e^{-(K+1)h} E\Bigr)

since :math:`e^{-jh} \le e^{-(K+1)h}` for j > K.

*Result.* :math:`\delta(\varepsilon) \ge \max_K \bigl[2^{-B}\sum_{j>K} Q'_j - e^\varepsilon
\cdot (\text{the P bound})\bigr]`, clipped at 0. K is chosen in floating point; the chosen K is
evaluated in Arb (exact integer sums, ``arb_poly`` Horner at :math:`e^{-h}`), so the choice
affects only tightness. The profile is non-increasing in eps; if it exceeds the target delta at
eps_lo then :math:`\delta(\varepsilon) > \delta` for all :math:`\varepsilon \le` eps_lo, so
:math:`\varepsilon(\delta) \ge` eps_lo. For a pair with both orders, delta and eps(delta) are the
max over orders, so the max of the per-order lower bounds is a lower bound.

*Cell masses* (closed forms in Arb, :mod:`certify.lattice_steps`): with tails :math:`T_Q(s) =
Q(L \ge s)`, :math:`T_P(s) = P(L \ge s)`, :math:`q_k = T_Q(kh) - T_Q((k+1)h)` (with
:math:`T(-\infty) = 1`, i.e. :math:`q_a = 1 - T_Q((a+1)h)`, and :math:`q_b = T_Q(bh) - Q(L =
+\infty)`). The binning window [a, b] is the upper bound's grid range; any choice is valid.

*The cell L = +infinity* (pairs that are not mutually continuous, e.g. ApproxDP): it gets its own
symbol, so the test is :math:`\{\text{some } c(x_i) = +\infty\} \cup \{\text{all finite}, S >
K\}`, still a post-processing. P never charges it, and its Q-mass after m steps is carried as a
scalar (the Q-mass of "some coordinate infinite", rounded down in every product like the rest of
the Q side) and added to the Q tail.

*Several terms* (heterogeneous compositions): each term has its own tilt :math:`\gamma_i`; the
identity becomes :math:`P(S = j) = e^{-jh - \sum_i m_i\gamma_i} r_j` for the convolution r of the
tilted laws, so :math:`m\gamma` above is replaced by :math:`\sum_i m_i \gamma_i` (computed
exactly in Arb).
"""

__doc__ = (__doc__ or "") + _LOWER_DOC

_A_LOWER = (
    "lattice lower end: exact evaluation (directed fixed-point rounding, exponential tilting of "
    "the P side) of the threshold test on the sum of PLLR cell indices, a post-processing "
    "(proof in certify.lattice)"
)


def _floor_dyadic(e: Endpoint) -> int:
    if e.exp >= 0:
        return e.man << e.exp
    return e.man >> (-e.exp)


@dataclass(frozen=True)
class _Seq:
    """Integer sequence at grid indices offset + k (units 2^-B), plus unlocated mass ``extra``
    (tilted P side) and mass ``inf`` of the cell L = +infinity (Q side)."""

    offset: int
    coeffs: fmpz_poly
    extra: int = 0
    inf: int = 0


def _cut_points(r: fmpz_poly, tau: int) -> tuple[int, int]:
    """(low, top): drop indices < low and > top, each side of mass <= tau."""
    n = r.length()
    lo_k, hi_k = -1, n - 1
    while hi_k - lo_k > 1:
        mid = (lo_k + hi_k) // 2
        if _sum_above(r, mid) <= tau:
            hi_k = mid
        else:
            lo_k = mid
    top = hi_k
    lo_l, hi_l = 0, top + 1
    while hi_l - lo_l > 1:
        mid = (lo_l + hi_l) // 2
        if _sum_below(r, mid) <= tau:
            lo_l = mid
        else:
            hi_l = mid
    return lo_l, top


def _mul_seq(a: _Seq, b: _Seq, bits: int, up: bool) -> _Seq:
    """Product, rescaled down (Q side: floor, cut mass dropped) or up (tilted P side: ceil,
    cut mass and the extra-mass cross terms added to ``extra``)."""
    div = fmpz(1 << bits)
    prod = a.coeffs * b.coeffs
    r = -((-prod) // div) if up else prod // div
    tau = 1 << max(0, bits - _TRUNC_BITS)
    low, top = _cut_points(r, tau)
    extra = inf = 0
    fa, fb = int(a.coeffs(1)), int(b.coeffs(1))
    if up:
        cross = a.extra * (fb + b.extra) + fa * b.extra
        extra = -((-cross) >> bits) + _sum_above(r, top) + _sum_below(r, low)
    else:  # some coordinate infinite: a.inf with anything of b, or a finite part with b.inf
        inf = (a.inf * (fb + b.inf) + fa * b.inf) >> bits
    kept = r.truncate(top + 1)
    if low > 0:
        kept = kept.right_shift(low)
    return _Seq(a.offset + b.offset + low, kept, extra, inf)


def _power_seq(base: _Seq, m: int, bits: int, up: bool) -> _Seq:
    result = None
    sq = base
    for bit in range(m.bit_length()):
        if bit:
            sq = _mul_seq(sq, sq, bits, up)
        if (m >> bit) & 1:
            result = sq if result is None else _mul_seq(result, sq, bits, up)
    return result


@dataclass(frozen=True)
class LowerLattice:
    r"""Composed binned test laws: Q' (rounded down) and tilted P' (rounded up, with extra mass).

    ``q`` and ``r`` hold integers (units 2^-B) at grid indices ``offset + k``; see the lower-bound
    section of the module docstring for the certified inequality.
    """

    h: float
    bits: int
    q: _Seq
    r: _Seq
    count: int
    direction: str
    points: int
    tilts: tuple[tuple[float, int], ...] = ()  # (gamma_i, m_i) per term (binary64, exact)

    def q_mass_lost(self) -> float:
        """Q-mass lost to rounding down and dropped tails (a tightness diagnostic: the test's Q
        term is low by at most this much)."""
        kept = int(self.q.coeffs(1)) + self.q.inf
        return float(Fraction((1 << self.bits) - kept, 1 << self.bits))

    def _shift(self) -> arb:
        """sum_i m_i gamma_i exactly (53-bit times <= 30-bit products, few terms)."""
        with workprec(max(ctx.prec, 128 + 64 * len(self.tilts))):
            return sum((arb(g) * c for g, c in self.tilts), arb(0))

    @property
    def shift(self) -> float:
        """sum_i m_i gamma_i in floating point (search only)."""
        return math.fsum(g * c for g, c in self.tilts)

    @cached_property
    def _float_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(indices j, Q' masses, R' masses, extra) as floats, for choosing K only."""
        lo = min(self.q.offset, self.r.offset)
        hi = max(self.q.offset + self.q.coeffs.length(), self.r.offset + self.r.coeffs.length())
        n = hi - lo
        qa = np.zeros(n)
        ra = np.zeros(n)
        sc = 2.0 ** (-self.bits)
        qc = [float(v) * sc for v in self.q.coeffs.coeffs()]
        rc = [float(v) * sc for v in self.r.coeffs.coeffs()]
        qa[self.q.offset - lo: self.q.offset - lo + len(qc)] = qc
        ra[self.r.offset - lo: self.r.offset - lo + len(rc)] = rc
        j = lo + np.arange(n)
        qt = np.cumsum(qa[::-1])[::-1]
        rw = np.cumsum((ra * np.exp(np.clip(-j * self.h, -745.0, 700.0)))[::-1])[::-1]
        return j, qt + float(self.q.inf) * sc, rw, float(self.r.extra) * sc

    def float_profile(self, eps: float) -> tuple[float, int]:
        """(approximate max_K test value, argmax K) in floating point (search only)."""
        j, qt, rw, extra = self._float_parts
        # tails above K = j[i] - 1, i.e. sums over indices >= j[i], in the tilted frame:
        # P-tail = e^eps * sum_{j' >= j} e^{-j' h} R'_{j'}
        shift = eps - self.shift
        w = np.exp(np.clip(shift - j * self.h, -745.0, 700.0))
        with np.errstate(over="ignore", invalid="ignore"):
            pt = math.exp(min(shift, 700.0)) * rw + extra * w
        val = np.nan_to_num(qt - pt, nan=-np.inf)
        i = int(np.argmax(val))
        return float(val[i]), int(j[i] - 1)

    def delta_lower_at(self, eps: arb, k: int) -> arb:
        r"""Enclosure of :math:`2^{-B}[\sum_{j>K} Q'_j - e^\varepsilon(\sum_{j>K} e^{-jh}R'_j +
        e^{-(K+1)h} E)]` at threshold K = ``k`` (current precision)."""
        h = arb(self.h)
        qs = _sum_above(self.q.coeffs, k - self.q.offset) if k - self.q.offset >= -1 else int(
            self.q.coeffs(1))
        qs += self.q.inf
        j0 = max(k + 1 - self.r.offset, 0)
        n = self.r.coeffs.length()
        if j0 < n:
            tail = self.r.coeffs.right_shift(j0) if j0 > 0 else self.r.coeffs
            ps = arb_poly(tail)((-h).exp()) * (eps - (self.r.offset + j0) * h).exp()
        else:
            ps = arb(0)
        ps = (ps + arb(fmpz(self.r.extra)) * (eps - (k + 1) * h).exp()) * (-self._shift()).exp()
        return (arb(fmpz(qs)) - ps) * arb(2) ** (-self.bits)

    def delta_lower(self, eps: arb) -> tuple[arb, int]:
        """Best certified test value at ``eps`` (an Arb ball; its upper end is used) and K."""
        e_hi = arb(eps.upper())
        _, k = self.float_profile(float(e_hi.mid()))
        best, kb = None, k
        for kk in (k - 1, k, k + 1):
            v = self.delta_lower_at(e_hi, kk)
            if best is None or v.lower() > best.lower():
                best, kb = v, kk
        return best, kb


def _lower_single(step: LatticeStep, h: float, bits: int, count: int
                  ) -> tuple[_Seq, _Seq, int, float]:
    lo, hi = _range(step, count)
    a, b = math.floor(lo / h), math.ceil(hi / h)
    n = b - a + 1
    scale = 1 << bits
    prec = DEFAULT_PRECISION + bits
    tilt = None
    while True:
        with workprec(prec):
            hh = arb(h)
            # tails at the interior edges (a+1)h .. bh; T(-inf) = 1 and T(+inf) = 0
            tq, tp = [arb(1)], [arb(1)]
            for k in range(a + 1, b + 1):
                x, y = step.tails(arb(k) * hh)
                tq.append(x)
                tp.append(y)
            q_inf = step.end_masses()[0]
            tq.append(q_inf)  # the cell L = +infinity has its own symbol in the test
            tp.append(arb(0))  # P(L = +infinity) = 0 always
            if tilt is None:  # renormalising constant gamma (any value is valid)
                z = sum(((arb(a + i) * hh).exp() * (tp[i] - tp[i + 1]) for i in range(n)),
                        arb(0))
                tilt = -math.log(float(z.mid()))
            qs, rs, worst = [], [], 0.0
            for i in range(n):
                qk = tq[i] - tq[i + 1]
                rk = (arb(a + i) * hh + arb(tilt)).exp() * (tp[i] - tp[i + 1])
                worst = max(worst, float(qk.rad()), float(rk.rad()))
                qs.append(max(0, _floor_dyadic(endpoints(qk * scale)[0])))
                rs.append(max(0, _ceil_dyadic(endpoints(rk * scale)[1])))
            q_inf_int = max(0, _floor_dyadic(endpoints(q_inf * scale)[0]))
        if worst <= 2.0 ** (-bits - 8) or prec >= 4 * (DEFAULT_PRECISION + bits):
            break
        prec *= 2
    return _Seq(a, fmpz_poly(qs), inf=q_inf_int), _Seq(a, fmpz_poly(rs)), n, tilt


@lru_cache(maxsize=16)
def _lower_cached(step: LatticeStep, count: int, h: float, bits: int, direction: str,
                  total: int) -> LowerLattice:
    """One term composed ``count`` times (the binning window uses the ``total`` count)."""
    q1, r1, n, tilt = _lower_single(step, h, bits, total)
    q = _power_seq(q1, count, bits, up=False)
    r = _power_seq(r1, count, bits, up=True)
    return LowerLattice(h, bits, q, r, count, direction, n, ((tilt, count),))


def _combine_lower(a: LowerLattice, b: LowerLattice) -> LowerLattice:
    """Two independent blocks of steps: the laws convolve and the tilts add."""
    return LowerLattice(a.h, a.bits, _mul_seq(a.q, b.q, a.bits, up=False),
                        _mul_seq(a.r, b.r, a.bits, up=True), a.count + b.count, a.direction,
                        max(a.points, b.points), a.tilts + b.tilts)


def lower_lattice(
    composition: Any, direction: str = DIRECTION_PQ, *, h: float | None = None,
    bits: int | None = None,
) -> LowerLattice:
    """The composed binned-test laws (lower-bound side) in one pair order; cf. :func:`lattice_pld`.

    Raises:
        ValueError: if the method does not apply, or on bad h / bits.
    """
    return _fold(_lower_cached, _combine_lower, composition, direction, h, bits)


def lattice_delta_interval(
    composition: Any, eps: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified enclosure of delta(eps): lower end from the binned test, upper end as
    :func:`lattice_delta_bound`. Lower end: the max over pair orders of the per-order test values
    (clipped at 0); a ball ``eps`` is evaluated at its upper end for the lower bound."""
    up = lattice_delta_bound(composition, eps, h=h, bits=bits)
    comp = compose(composition)
    e = to_arb("eps", eps)
    with workprec(DEFAULT_PRECISION):
        per = {d: lower_lattice(comp, d, h=h, bits=bits).delta_lower(e)[0]
               for d in comp.directions}
        win = max(per, key=lambda k: per[k].lower())
        lo_b = arb(per[win].lower())
    lo = endpoints(lo_b)[0] if lo_b > 0 else Endpoint(0, 0)
    inputs = dict(up.inputs)
    inputs["per_direction_lower"] = {k: float(v.mid()) for k, v in per.items()}
    inputs["lower_q_mass_lost"] = {d: lower_lattice(comp, d, h=h, bits=bits).q_mass_lost()
                                   for d in comp.directions}
    lm = f"lattice-test[h={up.inputs['h']!r}]" if lo_b > 0 else "trivial"
    return Bound("delta", lo, up.upper, lm, up.upper_method, up.precision,
                 (*up.assumptions, _A_LOWER), up.direction, up.warnings, inputs)


def _eps_lower(lat: LowerLattice, target: arb) -> float:
    """A dyadic eps_lo >= 0 with a certified test value > target at eps_lo (0 if none)."""
    tf = float(target.upper())
    if lat.float_profile(0.0)[0] <= tf:
        return 0.0
    lo, hi = 0.0, 1.0
    while lat.float_profile(hi)[0] > tf:
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            raise ArithmeticError("lattice: lower epsilon search did not terminate")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if lat.float_profile(mid)[0] > tf:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    cand = lo
    for k in range(10):
        q = math.ldexp(math.floor(math.ldexp(cand, 44)), -44)
        with workprec(DEFAULT_PRECISION):
            v, _ = lat.delta_lower(arb(q))
            if bool(v.lower() > target.upper()):
                return q
        cand = max(0.0, cand - (1e-11 * 10.0**k) * max(1.0, cand))
    return 0.0


def lattice_epsilon_interval(
    composition: Any, delta: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified enclosure of eps(delta): lower end from the binned test (max over pair
    orders: the certified test value exceeds delta at eps_lo, so eps(delta) >= eps_lo), upper end
    as :func:`lattice_epsilon_bound`."""
    up = lattice_epsilon_bound(composition, delta, h=h, bits=bits)
    comp = compose(composition)
    target = to_arb("delta", delta)
    per = {d: _eps_lower(lower_lattice(comp, d, h=h, bits=bits), target)
           for d in comp.directions}
    win = max(per, key=lambda k: per[k])
    lo = endpoints(arb(per[win]))[0]
    if up.upper.is_finite and lo.to_mpf() > up.upper_mpf:  # impossible unless a bug
        raise ArithmeticError("lattice: lower end above upper end")
    inputs = dict(up.inputs)
    inputs["per_direction_lower"] = per
    inputs["lower_q_mass_lost"] = {d: lower_lattice(comp, d, h=h, bits=bits).q_mass_lost()
                                   for d in comp.directions}
    lm = f"lattice-test[h={up.inputs['h']!r}]" if per[win] > 0 else "trivial"
    return Bound("epsilon", lo, up.upper, lm, up.upper_method, up.precision,
                 (*up.assumptions, _A_LOWER), up.direction, up.warnings, inputs)
