"""Diagnostics of the saddlepoint estimate, and the notes added to its warnings.

Always computed (warnings and ``details``): |l_3| > 0.2 or |l_4| > 0.1 at the saddlepoint,
relative disagreement above 1e-3 between orders r and r - 1, a non-positive tilted-Edgeworth
factor (:func:`point_diagnostics`), the comparison with the next order (order 2 at orders 0
and 1, r + 1 above), the lattice error estimate and their effect on eps
(:func:`accuracy_diagnostics`), and -- by regime rather than
by value -- a composition of Poisson-subsampled mechanisms whose expected number of sampled
steps sum(rate * m) is below 10 (:func:`regime_diagnostics`; the bimodal "one big step"
regime, where the benchmark's certified references are too wide to establish the estimate's
accuracy). They fire where the tilted law is far from normal or the lattice is coarse. The
method does *not* fall back to another method itself: the ``auto`` method
(:mod:`numeric.auto`) reads them and falls back to a certified or exact answer.
"""

from __future__ import annotations

import math

import numpy as np

from ..cgf import CGFCache
from ..composition import Composition
from .points import CHECK_ORDER, Point, comparison_order, point_derivatives, points_batch

__all__ = [
    "CHECK_ORDER",
    "EPS_ERROR_MAX",
    "FEW_SAMPLED_STEPS",
    "FIRED_NOTE",
    "L3_MAX",
    "L4_MAX",
    "LATTICE_ERROR_MAX",
    "ORDER_DISAGREEMENT_MAX",
    "SERIES_BROKEN",
    "accuracy_diagnostics",
    "atomic_phase_error",
    "check_points",
    "comparison_order",
    "finish",
    "fired_note",
    "is_exact_gaussian",
    "lattice_note",
    "lattice_phase_error",
    "lattice_span",
    "point_details",
    "point_diagnostics",
    "regime_diagnostics",
    "sampled_steps",
]

L3_MAX = 0.2
L4_MAX = 0.1
ORDER_DISAGREEMENT_MAX = 1e-3
FEW_SAMPLED_STEPS = 10.0  # sum(rate * m) below this: the "one big step" regime
LATTICE_ERROR_MAX = 1e-3  # relative delta error estimated for the lattice (accuracy_diagnostics)
EPS_ERROR_MAX = 2e-3  # relative eps error estimated from a delta error (accuracy_diagnostics)
SERIES_BROKEN = 0.5  # an order comparison this far apart: the series itself is broken
FIRED_NOTE = ("diagnostics fired: the saddlepoint estimate may be inaccurate here; method "
              "'auto' falls back to a certified or exact answer")


def point_diagnostics(p: Point, direction: str) -> list[str]:
    """The diagnostics of the point ``p`` (module docstring) as warnings.

    Args:
        p: The saddlepoint point of the reported root (or eps).
        direction: Its pair order, prefixed to every warning.

    Returns:
        The warnings that fire (empty when none does).
    """
    warns = []
    l3, l4 = p.lam.get(3, 0.0), p.lam.get(4, 0.0)
    if abs(l3) > L3_MAX or abs(l4) > L4_MAX:
        warns.append(
            f"{direction}: large standardized tilted cumulants (l3={l3:.3g}, l4={l4:.3g}) at the "
            f"saddlepoint t={p.t:.4g}: the tilted law is far from normal (e.g. the 'one big "
            "step' regime); the saddlepoint estimate is unreliable here"
        )
    if p.disagreement > ORDER_DISAGREEMENT_MAX:
        warns.append(
            f"{direction}: orders r and r-1 disagree by {p.disagreement:.2e} (relative) at the "
            "saddlepoint"
        )
    if not (p.factor > 0.0):
        warns.append(f"{direction}: the tilted Edgeworth factor is not positive ({p.factor:.3g})")
    return warns


def lattice_span(comp: Composition) -> float:
    """The largest atom spacing of a term's PLLR: max of ess sup L - ess inf L over the terms,
    when every term has atoms (two-point laws, Laplace); 0 when some term has none (a Gaussian
    or subsampled-Gaussian term convolves the lattice with a smooth law; not checked: whether
    its spread is large against the span) or the spacing is unbounded.

    A conservative span of the composed PLLR's atoms: sums of several spans interleave and only
    make the composed atoms denser.

    Args:
        comp: A composition.

    Returns:
        The span h >= 0.
    """
    if not all(m.lattice for m, _ in comp.terms):
        return 0.0  # a term without atoms (Gaussian, subsampled Gaussian) smooths the lattice
    spans = [m.pllr_sup() - m.pllr_inf() for m, _ in comp.terms]
    return max((h for h in spans if math.isfinite(h)), default=0.0)


_PHASES = np.linspace(0.0, 1.0, 33)[1:]  # atom phases phi / h in (0, 1]


def lattice_phase_error(t: float, h: float) -> float:
    r"""The relative error of the tilted weight's expectation on a lattice of span h at an
    unknown phase, for a tilt t > 0 (0 otherwise).

    At t > 0 the weight :math:`w_t(z) = e^{-tz} - e^{-(t+1)z}` (z > 0) decays over 1/t; when
    th is not small it is sampled by only a few atoms above eps, and where they fall matters.
    With the tilted density taken as constant over the decay (ts large, the saddlepoint's far
    tail), atoms at :math:`\phi + kh` (:math:`0 < \phi \le h`, k >= 0) with mass h each give

    .. math::

        S(\phi) = h\Bigl[\frac{e^{-t\phi}}{1 - e^{-th}}
                  - \frac{e^{-(t+1)\phi}}{1 - e^{-(t+1)h}}\Bigr]
        \quad\text{against}\quad \int_0^\infty w_t = \frac{1}{t} - \frac{1}{t+1},

    and the estimate is :math:`\max_\phi |S(\phi)/\int w_t - 1|` over 32 phases (about th/2 for
    small th: the first-order term the Euler-Maclaurin estimate (h/s)^2/12, built for ts small,
    does not have). An error *estimate* for a lattice of span h, not a bound (applied at the
    composition's lattice spacing by :func:`atomic_phase_error`): found by a probe
    (2026-12-03), RR(3) x 3000 + RR(1.5) x 800 at delta ~1e-10 (g = 3, t = 0.096): the
    saddlepoint delta 6.3% off the certified value with every other diagnostic silent, and
    RR(1.867) x 5881 at eps = 9595 (g = 3.73, t = 0.22) 20% off.

    Args:
        t: The tilt.
        h: The lattice span (> 0).

    Returns:
        The estimated relative error of delta (>= 0).
    """
    if not (t > 0.0 and h > 0.0 and math.isfinite(t) and math.isfinite(h)):
        return 0.0
    phi = _PHASES * h
    a, b = t, t + 1.0
    s = h * (np.exp(-a * phi) / -math.expm1(-a * h) - np.exp(-b * phi) / -math.expm1(-b * h))
    exact = 1.0 / a - 1.0 / b
    return float(np.max(np.abs(s / exact - 1.0)))


_PHASE_HARMONICS = 8  # candidate lattice spacings: every span divided by 1 .. this
_PHASE_NEGLIGIBLE = 1e-6  # composed characteristic functions below this are not a lattice


def atomic_phase_error(comp: Composition, t: float, swap: bool) -> float:
    r"""The lattice phase error (:func:`lattice_phase_error`) of a purely atomic composition
    at tilt t, at its lattice spacing: 0 unless every term is a two-point law
    (``purely_atomic``) and t > 0.

    The composed law is a lattice of spacing g where its tilted characteristic function has
    modulus ~1 at :math:`\omega = 2\pi/g`; by Poisson summation that is where the atoms'
    phase enters the tilted expectation. A two-point term of span :math:`h_i` and tilted
    variance :math:`v_i = K_i''(t) = p(1 - p) h_i^2` has
    :math:`|\phi_i(\omega)|^2 = 1 - 4 (v_i/h_i^2) \sin^2(\omega h_i/2)`, so the composition's
    modulus is :math:`\prod_i |\phi_i(2\pi/g)|^{m_i}`: 1 when every span is a multiple of g
    (e.g. RR(1.867) and RR(0.9335): g = 1.867), tiny when the spans are incommensurate and
    the terms have many steps (RR(1.867) x 5000 + RR(1.5) x 800: the saddlepoint delta was
    0.07% off, no lattice left). The estimate is the largest
    :math:`\text{lattice\_phase\_error}(t, g)\,|\phi_S(2\pi/g)|` over the candidate spacings
    :math:`g = h_i / j`, j = 1 .. :data:`_PHASE_HARMONICS` (the fundamental's term of the
    Poisson sum; an *estimate*).

    Args:
        comp: The composition.
        t: The tilt (pair order given by ``swap``).
        swap: Whether the pair order is the swapped one.

    Returns:
        The estimated relative error of delta (>= 0).
    """
    if not (t > 0.0 and all(m.purely_atomic for m, _ in comp.terms)):
        return 0.0
    arg = np.array([-1.0 - t if swap else t])  # the swapped pair's K(t) is K(-1 - t); K'' even
    terms = []
    for m, count in comp.terms:
        span = m.pllr_sup() - m.pllr_inf()
        if not (span > 0.0 and math.isfinite(span)):
            continue
        pq = min(0.25, max(0.0, float(m.cgf_batch(arg, 2)[1][0, 1]) / (span * span)))  # p(1-p)
        terms.append((span, pq, count))
    best = 0.0
    log_floor = math.log(_PHASE_NEGLIGIBLE)
    for g in {span / j for span, _, _ in terms for j in range(1, _PHASE_HARMONICS + 1)}:
        log_mod = 0.0
        for span, pq, count in terms:
            damp = 4.0 * pq * math.sin(math.pi * span / g) ** 2
            log_mod += 0.5 * count * (math.log1p(-damp) if damp < 1.0 else -math.inf)
            if log_mod < log_floor:
                break
        if log_mod >= log_floor:
            best = max(best, lattice_phase_error(t, g) * math.exp(log_mod))
    return best


def accuracy_diagnostics(comp: Composition, p: Point, direction: str, order: int,
                         swap: bool, cache: CGFCache,
                         log_target: float | None = None,
                         check: Point | None = None) -> list[str]:
    r"""Two estimates of the error of the answer at the point ``p``, and their warnings.

    * **order check**: the factor F_r is compared with the factor F_c of the comparison order
      c (:func:`comparison_order`: 2 at orders 0 and 1, r + 1 above) at the same tilt; the
      relative difference |F_r - F_c|/|F_c|, the first omitted term, estimates the relative
      error of delta. The order r vs r - 1 disagreement (the last included term,
      :func:`point_diagnostics`) alone is fooled where the terms of every other order vanish:
      it is empty at order 0 and weak at order 1 (randomized-response mixtures at orders 0
      and 1 passed it while 12% low), and near the centre t = -1/2 of a symmetric pair the
      tilted law is symmetric, so every odd order adds nothing while the even ones need not
      converge (found by the fuzz: Laplace(29) x 3.9e7 at eps = 2.82, about 100 standard
      deviations below the mean, where delta = 1: orders 2 and 3 agree to 5e-5 at 0.954 and
      order 4 adds 5%).
    * **lattice**: where a term's PLLR has atoms of spacing up to h (:func:`lattice_span`), the
      tilted expectation :math:`E_t[w_t(Z)]` of the kinked weight
      :math:`w_t(z) = e^{-tz}(1 - e^{-z})_+` is a lattice sum, which the smooth Edgeworth
      density replaces by an integral. By Euler-Maclaurin (the periodic Bernoulli function
      :math:`|B_2|/2 \le 1/12`) the kink (slope jump 1 at z = 0, density
      :math:`\approx 1/(s\sqrt{2\pi})`) costs up to :math:`h^2/(12 s\sqrt{2\pi})`;
      relative to :math:`E_t[w_t] \approx s/\sqrt{2\pi}` (small ts) this is
      :math:`(h/s)^2/12`, fired above :data:`LATTICE_ERROR_MAX` for delta(eps). Only when every
      term has atoms (a smooth term convolves the lattice away). An error *estimate*, not a
      bound: far in the tail (ts large, where the kink term alone is no longer the error) it
      over-states the eps error, which stays within about one span h. Against certified
      intervals at eps = 1 and order 2: RR(0.1) x 100, estimate 3.4e-3, observed 9.3e-3 (hence
      the threshold well below 1%); Laplace(10) x 100, estimate 3.5e-3, observed 6e-6 (its
      continuous part smooths the atoms: conservative there).

    For eps(delta) (``log_target`` given), an order comparison that differs by more than
    :data:`SERIES_BROKEN` (relative) fires whatever its effect on eps: the series is then not in
    its asymptotic regime, and the difference no estimate of the error (found by a probe,
    2026-12-03: SG(3.03, 0.438) x 982357 at delta 4e-5, order 0; at the eps = 0 tilt
    t = -0.497, 71 tilted standard deviations from where the weight lives, the order-0 delta(0)
    was 1.9e-15 against a true ~1 and the order-2 factor 593 times the order-0 one, but the
    margin test below, |F_0 - F_2|/F_2 = 0.998 against a margin of e^{23.8}, let eps = 0 stand
    for P||Q: the answer, the other order's 10723.03, was 2.7% below the certified
    [11018.50, 11018.89]). Otherwise a relative delta error e moves the root by
    :math:`\log(1 + e)/|\partial_\varepsilon\log\delta_r|` with
    :math:`\partial_\varepsilon\log\delta_r = \text{slope}/K''(t)` (eps = K'(t)); relative
    to eps this is fired above :data:`EPS_ERROR_MAX` (near eps = 0 a small delta error moves eps
    by a large relative amount). An answer eps = 0 (the estimate of delta(0) is at or below the
    target) fires when the delta error estimate exceeds its margin below the target.

    Args:
        comp: The composition.
        p: The saddlepoint point of the answer (positive factor).
        direction: Its pair order, prefixed to every warning.
        order: The Edgeworth order r of ``p``.
        swap: Whether ``direction`` is the swapped pair order.
        cache: The per-mechanism cache (for the order-2 point).
        log_target: log of the target (pure) delta for eps(delta); None for delta(eps).
        check: The comparison-order point at ``p.t`` if already evaluated (a batch for many
            eps).

    Returns:
        The warnings that fire (empty when none does).
    """
    eps_query = log_target is not None
    if not (p.factor > 0.0 and p.var > 0.0):
        return []  # point_diagnostics fires on a non-positive factor
    errors: list[tuple[str, float]] = []
    other = comparison_order(order)
    if other is not None:
        q = check if check is not None else check_points(comp, swap, [p.t], cache, order)[0]
        errors.append((f"order {order} vs {other}",
                       abs(p.factor - q.factor) / q.factor if q.factor > 0.0 else math.inf))
    if eps_query and order >= CHECK_ORDER:
        errors.append((f"orders {order} vs {order - 1}", p.disagreement))
    h = lattice_span(comp)
    if h > 0.0:
        lat = max((h / p.s) ** 2 / 12.0, atomic_phase_error(comp, p.t, swap))
        errors.append(("lattice", lat))
        if not eps_query and lat > LATTICE_ERROR_MAX:
            return [f"{direction}: atoms of spacing up to {h:.3g} against the tilted standard "
                    f"deviation s={p.s:.3g}: the smooth tilted density misses the lattice by an "
                    f"estimated {lat:.2g} relative in delta"]
    out = []
    if not eps_query:
        e = next((v for k, v in errors if k.startswith("order ")), 0.0)
        if e > ORDER_DISAGREEMENT_MAX:
            out.append(f"{direction}: orders {order} and {other} disagree by {e:.2e} "
                       "(relative) at the saddlepoint")
        return out
    broken = next(((what, e) for what, e in errors
                   if what.startswith("order") and not e <= SERIES_BROKEN), None)
    if broken is not None:  # no asymptotic regime: the estimate of its error means nothing
        return [f"{direction}: the Edgeworth series does not converge at the saddlepoint "
                f"t={p.t:.4g} (s={p.s:.3g}; {broken[0]} differ by {broken[1]:.2g} relative)"]
    if log_target is not None and p.log_delta < log_target:  # the answer eps = 0
        margin = log_target - p.log_delta
        return [f"{direction}: eps = 0 rests on delta(0) below the target by a relative "
                f"{math.expm1(margin):.2g}, within the estimated error of delta ({what}: "
                f"{e:.2g})" for what, e in errors if math.log1p(e) > margin][:1]
    sens = abs(p.slope / p.var * p.eps)  # d log delta / d log eps
    for what, e in errors:
        rel = math.log1p(e) / sens if sens > 0.0 else (math.inf if e > 0.0 else 0.0)
        if rel > EPS_ERROR_MAX:
            out.append(f"{direction}: the estimated relative error of delta ({what}: {e:.2g}) "
                       f"moves eps={p.eps:.6g} by an estimated {rel:.2g} relative "
                       f"(d log delta / d log eps = {sens:.3g})")
    return out


def check_points(comp: Composition, swap: bool | list[bool], tilts: list[float],
                 cache: CGFCache, order: int) -> list[Point]:
    """The comparison-order points (:func:`~numeric.saddlepoint.points.comparison_order`) of
    order-``order`` answers at ``tilts``, in one batch, with the answers' CGF derivatives
    (cached rows).

    Args:
        comp: The composition.
        swap: Whether the pair order is the swapped one (one flag, or one per tilt).
        tilts: The tilts.
        cache: The per-mechanism cache.
        order: The Edgeworth order of the answers (one with a comparison order).

    Returns:
        One point per tilt (see :func:`~numeric.saddlepoint.points.points_batch`).
    """
    t = np.array(tilts, dtype=float)
    flags = np.broadcast_to(np.asarray(swap, dtype=bool), t.shape).copy()
    return points_batch(comp, comparison_order(order), flags, t, cache,
                        point_derivatives(order))


def sampled_steps(comp: Composition) -> float:
    """The expected number of sampled steps of a composition of Poisson-subsampled mechanisms.

    Args:
        comp: A composition.

    Returns:
        sum(rate * m) when every mechanism has a Poisson sampling rate < 1
        (:attr:`~numeric.mechanisms.Mechanism.poisson_rate`), else inf.
    """
    rates = [m.poisson_rate for m, _ in comp.terms]
    if any(r is None for r in rates):
        return math.inf
    return math.fsum(r * c for r, (_, c) in zip(rates, comp.terms, strict=True))


def regime_diagnostics(comp: Composition, direction: str) -> list[str]:
    """The "one big step" diagnostic: only Poisson-subsampled terms (rate < 1), and few sampled
    steps in expectation (:func:`sampled_steps`).

    Args:
        comp: A composition.
        direction: The pair order, prefixed to the warning.

    Returns:
        The warning, if it fires (else an empty list).
    """
    sampled = sampled_steps(comp)
    if sampled >= FEW_SAMPLED_STEPS:
        return []
    return [f"{direction}: few sampled steps (sum of rate * m = {sampled:.3g} < "
            f"{FEW_SAMPLED_STEPS:g}): the 'one big step' regime, where the tilted law can be "
            "bimodal and the saddlepoint estimate's accuracy is not established"]


def point_details(p: Point, roots: int | None = None) -> dict:
    """The ``details`` entry of a point: t, s, l3, l4, order disagreement, factor (and roots).

    Args:
        p: A saddlepoint point.
        roots: Down-crossings counted by the grid scan (eps(delta) only).

    Returns:
        A dict of plain floats (and the int ``roots``).
    """
    out = {
        "t": p.t,
        "s": p.s,
        "l3": p.lam.get(3, 0.0),
        "l4": p.lam.get(4, 0.0),
        "order_disagreement": p.disagreement,
        "factor": p.factor,
    }
    if roots is not None:
        out["roots"] = roots
    return out


def fired_note(warns: list[str]) -> None:
    """Append :data:`FIRED_NOTE` to a non-empty list of warnings.

    Args:
        warns: The query's warnings so far (modified in place).
    """
    if warns:
        warns.append(FIRED_NOTE)


def lattice_note(comp: Composition, warns: list[str]) -> None:
    """Append the lattice note when every mechanism's PLLR is purely atomic.

    Args:
        comp: A composition.
        warns: The query's warnings so far (modified in place).
    """
    if all(m.purely_atomic for m, _ in comp.terms):
        exact = all(m.has_exact_answer for m, _ in comp.terms)
        warns.append(
            "the PLLR is purely atomic (finitely many values per step): the tilted Edgeworth "
            "density smooths the lattice, an error of order the lattice span times the density "
            "(~1e-4 relative in eps for n ~ 1e3)"
            + ("; the 'exact' method is available for this composition" if exact else
               "; a certified method bounds it")
        )


def finish(comp: Composition, fired: list[str]) -> tuple[tuple[str, ...], list[str]]:
    r"""The query's warnings and ``details["diagnostics"]`` from one list: the single source of
    truth of the diagnostic state.

    Every warning of the query that says the estimate may be off (point diagnostics, the regime,
    the tilt resolution, saturation, clipping, the search's notes) is a *fired diagnostic*; the
    notes appended here are not. The warnings are ``fired`` (deduplicated, in order), then
    :data:`FIRED_NOTE` if and only if ``fired`` is non-empty, then the lattice note
    (:func:`lattice_note`), which alone never makes the diagnostics fire. ``auto``
    (:mod:`numeric.auto`) accepts the estimate only when the returned diagnostics are empty,
    so the note in the warnings and the diagnostics it reads cannot disagree.

    Args:
        comp: The composition.
        fired: The fired diagnostics of the query (not modified).

    Returns:
        ``(warnings, diagnostics)``: the result's warnings and its ``details["diagnostics"]``.
    """
    diagnostics = list(dict.fromkeys(fired))
    warns = list(diagnostics)
    fired_note(warns)
    lattice_note(comp, warns)
    return tuple(warns), diagnostics


def is_exact_gaussian(comp: Composition) -> bool:
    """True when every mechanism belongs to the Gaussian exact family (the tilted law is then
    Gaussian and the method exact at order 0).

    Args:
        comp: A composition.

    Returns:
        Whether the composition is Gaussian.
    """
    fams = [m.exact_family() for m, _ in comp.terms]
    return all(f is not None and f[0] == "gaussian" for f in fams)
