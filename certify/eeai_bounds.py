r"""The EEAI's certified uniform error D >= sup_s |F_Y(s) - G_1(s)| and its inputs.

For one pair order, S_Y is the composed PLLR under Q with summed cumulants K_1, K_2, K_3 and G_1
its first-order Edgeworth expansion (:mod:`certify.eeai`). :func:`summed_moments` sums the
certified per-step moments of :mod:`certify.moments`; :func:`uniform_bound` returns the smallest
*certified* candidate D among

* ``exact-normal``: D = 0 when every term has a normal PLLR (Gaussian mechanisms), since then
  S_Y is normal, K_3 = 0 and G_1 = F_Y;
* ``berry-esseen``: sup|F - Phi| <= C * sum E|Y_i - EY_i|^3 / K_2^{3/2} with C = 0.4748 for i.i.d.
  summands (Shevtsova, *On the absolute constants in the Berry-Esseen type inequalities for
  identically distributed summands*, arXiv:1111.6554, 2011), the structural i.i.d. form
  0.33554 (beta_3 + 0.415)/sqrt(m) of the same paper (smaller, as beta_3 >= 1), and
  C = 0.5600 for non-identically
  distributed summands (Shevtsova, *An improvement of convergence rate estimates in the
  Lyapunov theorem*, Doklady Math. 82, 2010); plus
  :math:`\sup|G_1 - \Phi| = \varphi(0)|K_3|/(6K_2^{3/2})` (the maximum of
  :math:`|He_2(z)\varphi(z)|` is at z = 0);
* ``dgg``: the moment-only bound of Derumigny, Girard, Guyonvarch, *Explicit non-asymptotic
  bounds for the distance to the first-order Edgeworth expansion*, Sankhya A 86 (2024) 261-336,
  arXiv:2101.05780, Theorem 2.1 with Appendix Theorems A.2 (non-i.i.d.) and A.3 (i.i.d.),
  skewed case, minimized over its free parameter eps in (0, 1/3) (each value gives a valid
  bound). It is implemented from the project's transcription (DGG's appendices (docs/math.md
  section 3)), which reproduces the authors' reference implementation (R package BoundEdgeworth) to
  10 digits but has not been checked line by line against the paper: every result that uses it says
  so.
* ``dgg-cf``: DGG Theorem 3.1 with Appendix Theorem A.5 (i.i.d., rate 1/n), valid given
  :math:`\kappa \ge \sup_{|t| \ge 2t_1^*\pi/\tilde K_3} |E e^{itY_1/\sigma}|`. kappa < 1 is
  certified (:func:`characteristic_kappa`) from an absolutely continuous component of the
  per-step PLLR law: a density >= f0 on an interval of length l makes the law
  alpha U + (1 - alpha) R with U uniform, alpha = f0 l, hence
  :math:`|\varphi(\omega)| \le 1 - \alpha(1 - \sup_{y \ge y_0}|\operatorname{sinc} y|)`
  (:func:`certify.moments.continuous_parts`: Laplace, Gaussian and the subsampled Gaussian).
  Lattice laws (randomized response, ApproxDP) have no such component and are skipped, and so
  is the non-i.i.d. variant (A.4), whose condition |f_{S_n}(u)| <= C0 u^{-p} is not certified.
  Same transcription caveat as ``dgg``.

All DGG/Berry-Esseen inputs are built from the certified moments of :mod:`certify.moments`:
with n steps (degenerate ones dropped), B_n^2 = K_2, K4 = n sum mu_4,i / K_2^2,
K3 = sqrt(n) sum E|Y_i - EY_i|^3 / K_2^{3/2}, lambda3 = sqrt(n) K_3 / K_2^{3/2} and
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from flint import arb, ctx

from numeric.composition import Composition
from numeric.mechanisms import Mechanism

from .budget import check_deadline
from .dgg import T1_STAR, ball_min, dgg_continuity_bound_iid, dgg_moment_bound
from .moments import continuous_parts, pllr_moments
from .registry import find_capability
from .special import upper_end

__all__ = [
    "METHODS",
    "SummedMoments",
    "UniformBound",
    "berry_esseen_bound",
    "characteristic_kappa",
    "summed_moments",
    "uniform_bound",
]

METHODS = ("exact-normal", "berry-esseen", "dgg", "dgg-cf")

_BE_IID = "0.4748"
_BE_NONIID = "0.5600"
_BE_STRUCT = (("0.33554", "0.415"),)
_DGG_EPS_GRID = tuple(f"{k / 100:.2f}" for k in range(1, 33))


# ------------------------------------------------------------------------------------------------
# summed moments of the Y-side terms


@dataclass(frozen=True)
class SummedMoments:
    """Certified sums over the composed Y-side terms of one pair order.

    Attributes:
        direction: ``"P||Q"`` or ``"Q||P"``.
        n: Number of non-degenerate steps (sum of their counts).
        iid: True when the non-degenerate steps are copies of one mechanism.
        normal: True when every step's PLLR is exactly normal.
        k1, k2, k3: Summed cumulants K_1, K_2, K_3 of S_Y.
        abs3: sum of m_i E|Y_i - EY_i|^3.
        abs1_var: sum of m_i E|Y_i - EY_i| Var(Y_i).
        mu4: sum of m_i E(Y_i - EY_i)^4.
        provenance: Moment provenance per mechanism.
        assumptions: Assumptions of the moment enclosures.
        single: The mechanism when ``iid`` (else None).
    """

    direction: str
    n: int
    iid: bool
    normal: bool
    k1: arb
    k2: arb
    k3: arb
    abs3: arb
    abs1_var: arb
    mu4: arb
    provenance: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    single: Mechanism | None = None

    @property
    def trivial(self) -> bool:
        """True when S_Y is a point mass (only eps0 = 0 ApproxDP steps)."""
        return self.n == 0

    @property
    def lambda3_sum(self) -> arb:
        """K_3 / K_2^{3/2} (the standardized third cumulant of the sum)."""
        return self.k3 / (self.k2 * self.k2.sqrt())

    @property
    def dgg_inputs(self) -> dict[str, arb]:
        """DGG's per-term averages: K4, K3, lambda3 and K3tilde (module docstring)."""
        n = arb(self.n)
        b3 = self.k2 * self.k2.sqrt()
        k3 = n.sqrt() * self.abs3 / b3
        return {
            "K4": n * self.mu4 / (self.k2 * self.k2),
            "K3": k3,
            "lambda3": n.sqrt() * self.k3 / b3,
            "K3tilde": k3 + n.sqrt() * self.abs1_var / b3,
        }


def _is_normal_law(mech) -> bool:
    """True when the mechanism's ``normal_pllr`` capability says its PLLR is exactly normal."""
    fn = find_capability(mech, "normal_pllr")
    return fn is not None and bool(fn(mech))


def summed_moments(composition: Composition, direction: str) -> SummedMoments:
    """Certified Y-side sums for ``direction`` at the current Arb precision.

    Args:
        composition: The composition.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        A :class:`SummedMoments`.

    Raises:
        NotApplicable: if a term's mechanism has no certified moments.
    """
    zero = arb(0)
    k1 = k2 = k3 = abs3 = abs1v = mu4 = zero
    n, kinds, normal, single = 0, 0, True, None
    prov: dict[str, None] = {}
    assum: dict[str, None] = {}
    for mech, count in composition.terms:
        check_deadline("in the EEAI per-step moments")
        mom = pllr_moments(mech, prec=ctx.prec).for_direction(direction)
        y = mom.y
        if y.degenerate:
            continue
        c = arb(count)
        n += count
        kinds += 1
        single = mech
        normal = normal and _is_normal_law(mech)
        k1 += c * y.kappa1
        k2 += c * y.kappa2
        k3 += c * y.kappa3
        abs3 += c * y.abs3
        abs1v += c * y.abs1 * y.kappa2
        mu4 += c * y.mu4
        prov[f"{type(mech).__name__}: {mom.provenance}"] = None
        assum.update(dict.fromkeys(mom.assumptions))
    return SummedMoments(direction, n, kinds == 1, normal, k1, k2, k3, abs3, abs1v, mu4,
                         tuple(prov), tuple(assum), single if kinds == 1 else None)


# ------------------------------------------------------------------------------------------------
# uniform bounds on sup |F_Y - G_1|


@dataclass(frozen=True)
class UniformBound:
    """A certified D >= sup_s |F_Y(s) - G_1(s)| and how it was obtained.

    Attributes:
        value: Exact (zero-radius) Arb upper bound D.
        method: One of :data:`METHODS` (or ``"none"``).
        assumptions: Theorem, constants and the i.i.d./non-i.i.d. assumption used.
        candidates: Every candidate considered (method -> float upper value), for the record.
    """

    value: arb
    method: str
    assumptions: tuple[str, ...]
    candidates: dict[str, float] = field(default_factory=dict)

def berry_esseen_bound(s: SummedMoments) -> tuple[arb, str]:
    r"""Berry-Esseen bound plus the first-order correction: a ball above sup|F_Y - G_1|.

    :math:`B + \varphi(0)|K_3|/(6K_2^{3/2})` where, with the Lyapunov ratio
    :math:`L_3 = \sum_i E|Y_i - EY_i|^3 / K_2^{3/2}` (= beta_3/sqrt(n) for i.i.d. terms),

    * i.i.d.: :math:`B = \min\{0.4748\,\beta_3,\ 0.33554(\beta_3 + 0.415)\}/\sqrt n`
      (Shevtsova 2011, arXiv:1111.6554; the structural form is the smaller since beta_3 >= 1);
    * non-i.i.d.: :math:`B = 0.5600\,L_3` (Shevtsova 2010, Doklady Math. 82).

    Args:
        s: Summed moments (non-trivial).

    Returns:
        ``(ball, description)``.
    """
    b3 = s.k2 * s.k2.sqrt()
    lyapunov = s.abs3 / b3
    first = abs(s.k3) / b3 / (6 * (2 * arb.pi()).sqrt())
    if not s.iid:
        return arb(_BE_NONIID) * lyapunov + first, (
            "Berry-Esseen, non-i.i.d. constant 0.5600 (Shevtsova 2010, Doklady Math. 82)"
        )
    n = arb(s.n)
    beta3 = lyapunov * n.sqrt()
    forms = [(arb(_BE_IID) * lyapunov, "i.i.d. constant 0.4748 (Shevtsova 2011)")]
    for c, a in _BE_STRUCT:
        forms.append((arb(c) * (beta3 + arb(a)) / n.sqrt(),
                      f"i.i.d. structural form {c} (beta3 + {a})/sqrt(m) "
                      "(Shevtsova 2011, arXiv:1111.6554)"))
    val, desc = min(forms, key=lambda f: f[0].upper())
    return val + first, f"Berry-Esseen, {desc}"



def _dgg_best(s: SummedMoments) -> tuple[arb, str]:
    """Minimum of the DGG moment-only bound over the eps grid (each value is valid)."""
    inp = s.dgg_inputs
    best, best_eps = None, None
    for e in _DGG_EPS_GRID:
        v = dgg_moment_bound(s.n, inp["K4"], inp["K3"], inp["K3tilde"], inp["lambda3"],
                             iid=s.iid, skewed=True, eps=e)
        if not v.is_finite():
            continue
        if best is None or v.upper() < best.upper():
            best, best_eps = v, e
    if best is None:
        return arb("inf"), "DGG moment-only bound not finite"
    thm = "A.3 (i.i.d.)" if s.iid else "A.2 (non-i.i.d.)"
    return best, (
        f"DGG moment-only bound (Derumigny-Girard-Guyonvarch 2024, arXiv:2101.05780, Thm 2.1 / "
        f"{thm}, skewed case, eps = {best_eps}; transcription of DGG's appendices checked against "
        "the BoundEdgeworth reference outputs, not line by line against the paper)"
    )


def _sinc_sup(y0: arb) -> arb:
    """Upper bound of sup_{y >= y0} |sin y / y| for y0 > 0 (sinc decreases on [0, pi], and
    |sinc y| <= 1/y <= 1/pi beyond pi)."""
    inv_pi = upper_end(1 / arb.pi())
    if y0 >= arb.pi():
        return inv_pi
    v = upper_end(y0.sinc())  # covers y in [y0, pi]; an undecided y0 ~ pi has sinc ~ 0 anyway
    return v if v > inv_pi else inv_pi


def characteristic_kappa(s: SummedMoments) -> tuple[arb, str] | None:
    r"""Certified kappa >= sup_{|t| >= t_min} |E exp(i t Y_1 / sigma)| for an i.i.d. composition.

    t_min = min(2 t1* pi / K3tilde, a_n / sqrt n) with DGG's a_n (never above DGG's threshold
    2 t1* pi / K3tilde, so the supremum covers the condition of Theorem 3.1). If the PLLR law
    has a density >= f0 on an interval of length l (:func:`certify.moments.continuous_parts`),
    it is alpha U + (1 - alpha) R with alpha = f0 l and U uniform, so
    :math:`|\varphi(\omega)| \le 1 - \alpha(1 - \sup_{y \ge y_0}|\operatorname{sinc} y|)` with
    :math:`y_0 = t_{min}\ell/(2\sigma)`. All inputs are rounded in the safe direction (t_min and
    l down, sigma up). Returns None when no continuous component is certified (lattice laws).
    """
    if not s.iid or s.single is None:
        return None
    parts = continuous_parts(s.single, prec=ctx.prec)
    if parts is None:
        return None
    cands = parts.for_direction(s.direction).y
    if not cands:
        return None
    n = arb(s.n)
    inp = s.dgg_inputs
    k3t = upper_end(inp["K3tilde"])
    pi = arb.pi()
    t1 = arb(T1_STAR)
    a_n = ball_min(2 * t1 * pi * n.sqrt() / k3t, 16 * pi**3 * n * n / (k3t * k3t * k3t * k3t))
    t_min = arb(ball_min(2 * t1 * pi / k3t, a_n / n.sqrt()).lower())
    sigma = upper_end((s.k2 / n).sqrt())
    best = None
    for f0, length in cands:
        alpha = arb((f0 * length).lower())
        if not (alpha > 0):
            continue
        y0 = arb((t_min * length / (2 * sigma)).lower())
        if not (y0 > 0):
            continue
        kap = upper_end(1 - alpha * (1 - _sinc_sup(y0)))
        if best is None or kap < best:
            best = kap
    if best is None or not best < 1:
        return None
    return best, (
        f"characteristic function bound kappa = {float(best.mid()):.12g} < 1 from an absolutely "
        f"continuous component of the PLLR law ({parts.provenance})"
    )


def _dgg_cf_best(s: SummedMoments) -> tuple[arb, str] | None:
    """Minimum over eps of the DGG Theorem 3.1 bound (i.i.d.), if kappa < 1 is certified."""
    cert = characteristic_kappa(s)
    if cert is None:
        return None
    kap, kdesc = cert
    inp = s.dgg_inputs
    best, best_eps = None, None
    for e in _DGG_EPS_GRID:
        v = dgg_continuity_bound_iid(s.n, inp["K4"], inp["K3"], inp["K3tilde"], inp["lambda3"],
                                     kap, skewed=True, eps=e)
        if v.is_finite() and (best is None or v.upper() < best.upper()):
            best, best_eps = v, e
    if best is None:
        return None
    return best, (
        "DGG bound under the characteristic-function condition (Derumigny-Girard-Guyonvarch "
        f"2024, arXiv:2101.05780, Thm 3.1 / A.5, i.i.d., skewed case, eps = {best_eps}; "
        "transcription of DGG's appendices checked against the BoundEdgeworth reference outputs, "
        f"not line by line against the paper); {kdesc}"
    )


def uniform_bound(s: SummedMoments, methods: tuple[str, ...] = METHODS) -> UniformBound:
    """The smallest certified D >= sup|F_Y - G_1| among ``methods``.

    Args:
        s: Summed moments at the current precision.
        methods: Subset of :data:`METHODS` to consider.

    Returns:
        A :class:`UniformBound` (D = +inf if no method applies).
    """
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown uniform-bound method(s) {sorted(unknown)}; use {METHODS}")
    independence = "the composed steps are independent (PLLR cumulants and moments add)"
    iid = ("i.i.d. summands: one mechanism repeated m times" if s.iid
           else "independent, non-identically distributed summands")
    cands: list[tuple[arb, str, tuple[str, ...]]] = []
    if "exact-normal" in methods and s.normal:
        cands.append((arb(0), "exact-normal", (
            independence,
            "every step has a normal PLLR, so S_Y is normal, K3 = 0 and G_1 = F_Y (D = 0)",
        )))
    if "berry-esseen" in methods:
        val, desc = berry_esseen_bound(s)
        cands.append((upper_end(val), "berry-esseen", (
            independence, iid,
            f"uniform bound: {desc}, plus sup|G_1 - Phi| = phi(0)|K3|/(6 K2^(3/2))",
        )))
    if "dgg" in methods:
        val, desc = _dgg_best(s)
        cands.append((upper_end(val), "dgg", (independence, iid, f"uniform bound: {desc}")))
    if "dgg-cf" in methods:
        got = _dgg_cf_best(s)
        if got is not None:
            cands.append((upper_end(got[0]), "dgg-cf",
                          (independence, iid, f"uniform bound: {got[1]}")))
    if not cands:
        return UniformBound(arb("inf"), "none", ("no uniform bound applies",), {})
    record = {m: float(v.mid()) if v.is_finite() else math.inf for v, m, _ in cands}
    value, method, assumptions = min(cands, key=lambda t: float(t[0].mid())
                                     if t[0].is_finite() else math.inf)
    return UniformBound(value, method, assumptions, record)

