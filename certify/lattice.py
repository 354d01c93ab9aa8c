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
\delta(\varepsilon) = E_Q[(1 - e^{\varepsilon - L})_+]` (docs/math.md section 1), convex and
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
(scale :math:`2^{2B}`) rescaled upward per kept coefficient, by :math:`\lfloor c/2^B\rfloor +
1 \ge \lceil c/2^B\rceil` (:func:`certify.lattice_grid.cut_rescale`), and truncated as in
Lemma 3. Finally :math:`\delta(\varepsilon) \le 2^{-B}\bigl(c_\infty + \sum_{s_k >
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
:mod:`certify.mechanisms`, found by :func:`certify.lattice_steps.lattice_step` (each also
records the masses at +-infinity used by the range tests: below the grid the error is at most
:math:`H_0 - (1 - t_0(1 - P(L = -\infty)))`, above it :math:`H_n - Q(L = +\infty)`, both by the
same chord arguments with the line :math:`1 - t(1 - P(L = -\infty)) \le H(t)`, from the event
:math:`\{L > -\infty\}`, and the constant :math:`Q(L = +\infty) \le H`).

The grid (range search, default spacing, fixed-point helpers, caches and the up-front cost
estimate under a time budget) is in :mod:`certify.lattice_grid`; the lower end below in
:mod:`certify.lattice_lower`.
"""
from __future__ import annotations

import math
from typing import Any

from flint import arb, fmpz_poly

from numeric.composition import Composition, compose
from numeric.mechanisms.base import DIRECTION_PQ

from .bound import Bound
from .budget import check_deadline
from .engine import DEFAULT_PRECISION, Endpoint, endpoints, to_arb, workprec
from .lattice_grid import (
    DEFAULT_BITS,
    bounded_cache,
    ceil_dyadic,
    check_lattice_budget,
    coarse_to_fine,
    default_grid,
    fold,
    grid_range,
    single_step_delta,
)
from .lattice_lower import (
    A_LOWER,
    LOWER_DOC,
    LowerLattice,
    epsilon_lower,
    lower_lattice,
    lower_term,
)
from .lattice_measure import LatticePLD, epsilon_upper, multiply_lattices
from .lattice_steps import step_assumptions
from .steps import LatticeStep

__doc__ = (__doc__ or "") + LOWER_DOC

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

_A_METHOD = (
    "lattice: connect-the-dots dominating discretization of the single-step hockey-stick curve "
    "(Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022), composed exactly with FLINT "
    "integer polynomials; fixed-point rounding, truncation and lumping only in the safe "
    "direction (proof in certify.lattice)"
)


# ---------------------------------------------------------------------------------------------
# the lattice measure



def _single_step(step: LatticeStep, h: float, bits: int, count: int) -> LatticePLD:
    lo, hi = grid_range(step, count)
    i0, i1 = math.floor(lo / h), math.ceil(hi / h)
    n = i1 - i0 + 1
    scale = 1 << bits
    prec = DEFAULT_PRECISION + bits
    while True:
        with workprec(prec):
            hh = arb(h)
            eps = [arb(i0 + i) * hh for i in range(n)]
            t = [e.exp() for e in eps]
            H = []
            for i, e in enumerate(eps):
                if i % 256 == 0:
                    check_deadline("in the lattice single-step grid")
                H.append(step.delta(e))
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
                val = ceil_dyadic(up)
                tails.append(max(0, min(tails[-1], val)))
        if worst <= 2.0 ** (-bits - 8) or prec >= 4 * (DEFAULT_PRECISION + bits):
            break
        prec *= 2
    masses = [tails[k] - tails[k + 1] for k in range(n)]
    return LatticePLD(h, bits, i0, fmpz_poly(masses), tails[-1], 1, "", n)



def _power(base: LatticePLD, m: int) -> LatticePLD:
    """base composed m times by binary powering (at most 2 log2(m) exact products)."""
    if m < 1:
        raise ValueError(f"count must be >= 1, got {m!r}")
    result = None
    sq = base
    for bit in range(m.bit_length()):
        check_deadline("in the lattice squarings")
        if bit:
            sq = multiply_lattices(sq, sq)
        if (m >> bit) & 1:
            result = sq if result is None else multiply_lattices(result, sq)
    return result


@bounded_cache(16)
def _lattice_cached(step: LatticeStep, count: int, h: float, bits: int, direction: str,
                    total: int) -> LatticePLD:
    """One term composed ``count`` times (the range tolerance uses the ``total`` count)."""
    one = _single_step(step, h, bits, total)
    one = LatticePLD(h, bits, one.offset, one.coeffs, one.inf, 1, direction, one.points)
    return _power(one, count)


_UPPER = ((_lattice_cached, False),)  # what check_lattice_budget estimates, per entry point
_BOTH = ((_lattice_cached, False), (lower_term, True))


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
        NotApplicable: if the method does not apply.
        ValueError: on bad h / bits.
        BudgetExceeded: past the deadline of an active time budget.
    """
    return fold(_lattice_cached, multiply_lattices, composition, direction, h, bits)


# ---------------------------------------------------------------------------------------------
# public bounds


def _lattices(comp: Composition, h: float | None, bits: int | None) -> dict[str, LatticePLD]:
    return {d: lattice_pld(comp, d, h=h, bits=bits) for d in comp.directions}


def _assumptions(comp: Composition) -> tuple[str, ...]:
    return (_A_METHOD, *step_assumptions(comp))


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
        NotApplicable: when the method does not apply (BudgetExceeded when it cannot finish
            within an active time budget).
        ValueError: on bad input.
    """
    comp = compose(composition)
    e = to_arb("eps", eps)
    if e < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    check_lattice_budget(comp, h, bits, _UPPER)
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
        NotApplicable: when the method does not apply (BudgetExceeded when it cannot finish
            within an active time budget).
        ValueError: on a delta outside (0, 1).
    """
    comp = compose(composition)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    check_lattice_budget(comp, h, bits, _UPPER)
    lats = _lattices(comp, h, bits)
    per = {d: epsilon_upper(lat, target) for d, lat in lats.items()}
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
# intervals: the upper end above, the lower end of certify.lattice_lower


def lattice_delta_interval(
    composition: Any, eps: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified enclosure of delta(eps) (see :func:`_delta_interval`), under an active time
    budget on the coarsest-first grids of :func:`certify.lattice_grid.coarse_to_fine`."""
    return coarse_to_fine(composition, h, bits, _BOTH,
                          lambda hh: _delta_interval(composition, eps, h=hh, bits=bits))


def _delta_interval(
    composition: Any, eps: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified enclosure of delta(eps): lower end from the binned test, upper end as
    :func:`lattice_delta_bound`. Lower end: the max over pair orders of the per-order test values
    (clipped at 0); a ball ``eps`` is evaluated at its upper end for the lower bound.

    Raises:
        NotApplicable: when the method does not apply (BudgetExceeded when it cannot finish
            within an active time budget).
        ValueError: on bad input.
    """
    up = lattice_delta_bound(composition, eps, h=h, bits=bits)
    comp = compose(composition)
    e = to_arb("eps", eps)
    with workprec(DEFAULT_PRECISION):
        lows = {d: lower_lattice(comp, d, h=h, bits=bits) for d in comp.directions}
        per = {d: lows[d].delta_lower(e)[0] for d in comp.directions}
        win = max(per, key=lambda k: per[k].lower())
        lo_b = arb(per[win].lower())
    lo = endpoints(lo_b)[0] if lo_b > 0 else Endpoint(0, 0)
    inputs = dict(up.inputs)
    inputs["per_direction_lower"] = {k: float(v.mid()) for k, v in per.items()}
    inputs["lower_q_mass_lost"] = {d: lows[d].q_mass_lost() for d in comp.directions}
    lm = f"lattice-test[h={up.inputs['h']!r}]" if lo_b > 0 else "trivial"
    return Bound("delta", lo, up.upper, lm, up.upper_method, up.precision,
                 (*up.assumptions, A_LOWER), up.direction, up.warnings, inputs)


def lattice_epsilon_interval(
    composition: Any, delta: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified enclosure of eps(delta) (see :func:`_epsilon_interval`), under an active time
    budget on the coarsest-first grids of :func:`certify.lattice_grid.coarse_to_fine`."""
    return coarse_to_fine(composition, h, bits, _BOTH,
                          lambda hh: _epsilon_interval(composition, delta, h=hh, bits=bits))


def _epsilon_interval(
    composition: Any, delta: Any, *, h: float | None = None, bits: int | None = None
) -> Bound:
    r"""Certified enclosure of eps(delta): lower end from the binned test (max over pair
    orders: the certified test value exceeds delta at eps_lo, so eps(delta) >= eps_lo), upper end
    as :func:`lattice_epsilon_bound`.

    Raises:
        NotApplicable: when the method does not apply (BudgetExceeded when it cannot finish
            within an active time budget).
        ValueError: on a delta outside (0, 1).
    """
    up = lattice_epsilon_bound(composition, delta, h=h, bits=bits)
    comp = compose(composition)
    target = to_arb("delta", delta)
    lows = {d: lower_lattice(comp, d, h=h, bits=bits) for d in comp.directions}
    per = {d: epsilon_lower(lows[d], target) for d in comp.directions}
    win = max(per, key=lambda k: per[k])
    lo = endpoints(arb(per[win]))[0]
    if up.upper.is_finite and lo.to_mpf() > up.upper_mpf:  # impossible unless a bug
        raise ArithmeticError("lattice: lower end above upper end")
    inputs = dict(up.inputs)
    inputs["per_direction_lower"] = per
    inputs["lower_q_mass_lost"] = {d: lows[d].q_mass_lost() for d in comp.directions}
    lm = f"lattice-test[h={up.inputs['h']!r}]" if per[win] > 0 else "trivial"
    return Bound("epsilon", lo, up.upper, lm, up.upper_method, up.precision,
                 (*up.assumptions, A_LOWER), up.direction, up.warnings, inputs)
