r"""The exact Edgeworth accountant interval (EEAI): certified delta(eps) and eps(delta) enclosures.

**Centre.** For one pair order, let S_Y be the composed PLLR under Q with summed cumulants
K_1, K_2, K_3, sigma = sqrt(K_2), lambda_3 = K_3 / K_2^{3/2}, z_0 = (eps - K_1)/sigma and
a = z_0 + sigma. The first-order Edgeworth expansion of its CDF is
:math:`G_1(s) = \Phi(z) - \varphi(z)\,\tfrac{\lambda_3}{6} He_2(z)` (Hall 1992, Section 2.2;
Wang, Gao, Zhang, Shen, Su, *Analytical Composition of Differential Privacy via the Edgeworth
Accountant*, arXiv:2206.04236). Its **Q-only** delta (MATH.md section 3),
:math:`\delta_{G_1}(\varepsilon) = \int_\varepsilon^\infty e^{\varepsilon - s}(1 - G_1(s))\,ds`,
has the closed form of :mod:`numeric.edgeworth` with c_3 = lambda_3/6, where the k = 3 term
simplifies (Appell identity for He_3(w - sigma), then a^2 = z_0^2 + 2 sigma z_0 + sigma^2) to

.. math::

    \delta_{G_1} = \bar\Phi(z_0) - W
        + \frac{\lambda_3}{6}\,\sigma\Bigl[\varphi(z_0)(z_0 - \sigma) + \sigma^2 W\Bigr],
    \qquad W = e^{\sigma z_0 + \sigma^2/2}\,\bar\Phi(a),

evaluated in Arb with :math:`\bar\Phi(x) = \operatorname{erfc}(x/\sqrt2)/2` (no overflow: Arb
exponents are unbounded).

**Radius.** The true delta is :math:`E_Q[(1 - e^{\varepsilon - S_Y})_+] = \int_\varepsilon^\infty
e^{\varepsilon - s}(1 - F_Y(s))\,ds` (change of measure dP = e^{-S} dQ), so
:math:`\sup_s |F_Y(s) - G_1(s)| \le D` gives :math:`|\delta - \delta_{G_1}| \le
D\int_\varepsilon^\infty e^{\varepsilon - s}\,ds = D` -- the Y-side bound alone, without EA's
:math:`D_Y + e^\varepsilon D_X`. D is the smallest *certified* candidate among

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
  bound). It is implemented from the project's transcription (``DGG.md``), which reproduces the
  authors' reference implementation (R package BoundEdgeworth) to 10 digits but has not been
  checked line by line against the paper: every result that uses it says so.
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
K3tilde = K3 + sqrt(n) sum E|Y_i - EY_i| Var(Y_i) / K_2^{3/2}.

**Interval.** delta in [max(0, delta_G1 - D), min(1, delta_G1 + D)] for each pair order; an
asymmetric pair takes the max over both orders (the interval of a max is [max of lowers, max of
uppers]); ApproxDP delta parts d compose exactly, 1 - prod(1 - delta_i)^{m_i} (GDP Eq. 12), and
enter as d + (1 - d) delta_pure (GDP Eq. 13), increasing in both, so the ends map to ends.

**Inversion.** eps(delta) = inf{eps >= 0 : delta(eps) <= delta}. Neither delta_G1 + D nor
delta_G1 - D need be monotone, but the true delta(eps) is non-increasing, so

* any eps_u with certified upper(eps_u) <= delta has delta(eps_u) <= delta, hence
  eps(delta) <= eps_u; we bisect for a small such point (the smallest if upper is monotone);
* any eps_l with certified lower(eps_l) > delta has delta(eps') >= delta(eps_l) > delta for every
  eps' <= eps_l, hence eps(delta) >= eps_l; we bisect for a large such point.

Both ends are exact dyadic numbers at which the comparison was decided in outward-rounded
arithmetic, so [eps_l, eps_u] is valid whatever the shape of the envelopes. If no finite eps_u
exists (e.g. D is not below delta, as for DP-SGD at delta = 1e-5), the upper end is +inf and the
result is ``vacuous`` with an explicit warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from flint import arb, ctx

from numeric.composition import Composition, compose
from numeric.mechanisms import Gaussian, Mechanism, PoissonSubsampledGaussian

from .bound import Bound
from .engine import (
    DEFAULT_PRECISION,
    MAX_PRECISION,
    Endpoint,
    UndecidableError,
    adaptive,
    certainly_less,
    endpoints,
    to_arb,
    workprec,
)
from .moments import continuous_parts, pllr_moments

__all__ = [
    "METHODS",
    "SummedMoments",
    "UniformBound",
    "berry_esseen_bound",
    "characteristic_kappa",
    "delta_interval",
    "dgg_continuity_bound_iid",
    "dgg_moment_bound",
    "epsilon_interval",
    "first_order_q_delta",
    "summed_moments",
    "uniform_bound",
]

METHODS = ("exact-normal", "berry-esseen", "dgg", "dgg-cf")

_BE_IID = "0.4748"
_BE_NONIID = "0.5600"
_BE_STRUCT = (("0.33554", "0.415"),)
_DGG_EPS_GRID = tuple(f"{k / 100:.2f}" for k in range(1, 33))
_EPS_CAP = 2.0**20
_LARGE_D = 0.05
_INVERSION = (
    "eps(delta) = inf{eps >= 0: delta(eps) <= delta}; delta(eps) is non-increasing, so a "
    "certified lower delta(eps_l) > delta gives eps >= eps_l and a certified upper "
    "delta(eps_u) <= delta gives eps <= eps_u"
)


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
    if isinstance(mech, Gaussian):
        return True
    return isinstance(mech, PoissonSubsampledGaussian) and mech.rate == 1.0


def summed_moments(composition: Composition, direction: str) -> SummedMoments:
    """Certified Y-side sums for ``direction`` at the current Arb precision.

    Args:
        composition: The composition.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        A :class:`SummedMoments`.
    """
    zero = arb(0)
    k1 = k2 = k3 = abs3 = abs1v = mu4 = zero
    n, kinds, normal, single = 0, 0, True, None
    prov: dict[str, None] = {}
    assum: dict[str, None] = {}
    for mech, count in composition.terms:
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


def _upper(x: arb) -> arb:
    if not x.is_finite():
        return arb("inf")
    return arb(x.upper())


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


# --- DGG ----------------------------------------------------------------------------------------

_CPSI = "1.0253"
_CHI1 = "0.09916191"
_T1 = "0.6359658"


def _a(x) -> arb:
    return x if isinstance(x, arb) else arb(x)


_GAMMA_ASYMPTOTIC = 512


def _gamma_upper(s, x: arb) -> arb:
    r"""Upper incomplete gamma Gamma(s, x), for real s <= 2.

    For large x (where Arb's evaluation is slow and the value negligible) the enclosure is
    :math:`[0, x^{s-1}e^{-x}/(1 - (s-1)/x)]` (s > 1) or :math:`[0, x^{s-1}e^{-x}]` (s <= 1),
    from :math:`\Gamma(s, x) = x^{s-1}e^{-x}\int_0^\infty (1 + u/x)^{s-1}e^{-u}du` and
    :math:`(1 + u/x)^{s-1} \le e^{(s-1)u/x}`.
    """
    s, x = _a(s), _a(x)
    if x > _GAMMA_ASYMPTOTIC:
        head = (-x).exp() * (x.log() * (s - 1)).exp()
        if s > 1:
            head = head / (1 - (s - 1) / x)
        return arb(0).union(_upper(head))
    return x.gamma_upper(s)


def _gamma_star(s: arb, x: arb, kind: int) -> arb:
    r"""gamma*(s, x) = int_0^x |v|^{s-1} e^{-v} dv (DGG, Appendix C), s in {3/2, 2}.

    For x < 0 it is :math:`-\int_0^{|x|} u^{s-1} e^u du`: with y = |x|, -((y - 1)e^y + 1) for
    s = 2 and :math:`-(\sqrt y e^y - (\sqrt\pi/2)\operatorname{erfi}(\sqrt y))` for s = 3/2.
    """
    if x > 0:
        return x.gamma_lower(s)
    if x.is_zero():
        return arb(0)
    if not x < 0:
        raise UndecidableError(f"sign of {x} undecided in gamma*")
    y = -x
    if kind == 4:
        return -((y - 1) * y.exp() + 1)
    return -(y.sqrt() * y.exp() - arb.pi().sqrt() / 2 * y.sqrt().erfi())


def _min(a: arb, b: arb) -> arb:
    """min of two balls; undecided overlaps give a ball containing both candidates' min."""
    if a < b:
        return a
    if a >= b:
        return b
    return arb(min(a.lower(), b.lower())).union(arb(min(a.upper(), b.upper())))


def _dgg_common(n: arb, K4: arb, lam: arb, eps: arb, skew: int) -> dict[str, arb]:
    """The auxiliary quantities P1, e1, P2, e2, e3, Rbar_inid, Rbar_iid of DGG.md."""
    pi = arb.pi()
    cpsi = arb(_CPSI)
    al = abs(lam)
    sq2 = arb(2).sqrt()
    D = (1 - 3 * eps) ** 2
    P1 = (144 + 48 * eps + 4 * eps**2) / 576 + skew * (
        96 * (2 * eps).sqrt() + 32 * eps + 16 * sq2 * eps * eps.sqrt()) / 576
    e1 = (eps**2 * (arb(1) / 6 + 2 * P1 / D)).exp()
    kn = K4 / n
    P2 = 48 * eps * kn.sqrt() + 4 * eps**2 * kn + skew * (
        96 * (2 * eps).sqrt() * al / (K4 * n).root(4)
        + 32 * eps * lam * lam / (K4 * n).sqrt()
        + 16 * sq2 * K4.root(4) * al * eps * eps.sqrt() / (n * n.sqrt()).sqrt())
    e2 = (eps**2 * (arb(1) / 6 + 1 / (2 * D) + 2 * P2 / (576 * D))).exp()
    e3 = (eps**2 / 6 + eps**2 / (4 * D)).exp()
    g72 = (arb(7) / 2).gamma()
    g92 = (arb(9) / 2).gamma()
    p52 = 4 * sq2  # 2^{5/2}
    p72 = 8 * sq2  # 2^{7/2}
    r_inid = (cpsi / (48 * pi * D) * kn * kn.sqrt() * 48
              + cpsi / (1152 * pi * D) * kn**2 * 384
              + cpsi * e1 / (2 * pi) * kn**2 * (arb(1) / 24 + P1 / (2 * D)) ** 2 * 384
              + skew * (cpsi / (12 * pi * D) * kn * kn.root(4) * p52 * g72
                        + cpsi / (72 * pi * D) * kn * kn.sqrt() * 48
                        + cpsi / (144 * pi * D) * kn * kn.root(4) ** 3 * p72 * g92
                        + cpsi * e1 / (6 * pi) * al * K4 / (n * n.sqrt())
                        * (arb(1) / 24 + P1 / (2 * D)) * 384))
    B = K4 / 12 + 1 / (4 * D) + P2 / (576 * D)
    r_iid = (cpsi / (2 * pi * D) * K4 / (24 * n**2) * 48
             + cpsi / (2 * pi * D) * K4**2 / (576 * n**3) * 384
             + cpsi / pi * e2 / (8 * n**2) * B * 384
             + skew * (cpsi / (2 * pi * D) * al / (6 * n * n.sqrt()) * sq2
                       * (arb(3) / 2).gamma()
                       + cpsi / (2 * pi * D) * lam * lam / (36 * n**2) * 48
                       + cpsi / (2 * pi * D) * K4 * al / (72 * n**2 * n.sqrt()) * p72 * g92
                       + cpsi / pi * e2 * al / (12 * n * n.sqrt()) * B * p72 * g92))
    return {"D": D, "P1": P1, "e1": e1, "P2": P2, "e2": e2, "e3": e3, "r_inid": r_inid,
            "r_iid": r_iid}


def dgg_moment_bound(
    n: int,
    K4,
    K3,
    K3tilde,
    lambda3,
    *,
    iid: bool,
    skewed: bool = True,
    eps="0.1",
) -> arb:
    r"""DGG moment-only bound on sup_x |P(S_n <= x) - Phi(x) - lambda3/(6 sqrt n)(1-x^2)phi(x)|.

    Derumigny, Girard, Guyonvarch (Sankhya A 2024, arXiv:2101.05780), Theorem 2.1 with Appendix
    Theorems A.2 (non-i.i.d.) and A.3 (i.i.d.); rate n^{-1/2}, moment conditions only:

    .. math::

        \delta_n = \frac{0.1995\tilde K_3}{\sqrt n}
          + \frac{0.031\tilde K_3^2 + 0.327 K_4 (\frac1{12} + \frac1{4(1-3\epsilon)^2})}{n}
          + \frac{0.054|\lambda_3|\tilde K_3 + 0.037\, e_{3|1}\lambda_3^2}{n} + r_{1,n},

    with the remainder r_{1,n} and auxiliary functions transcribed in the project's DGG.md.
    The bound is **not monotone in every argument** (e.g. it can decrease as K3tilde grows, see
    certify/DGG_VERIFICATION.md): pass Arb balls that *contain* the true moments (as the EEAI
    does), not mere upper bounds; the upper end of the resulting ball is then a valid D.

    Args:
        n: Number of summands.
        K4: Ball containing (1/n) sum E X_i^4 / Bbar_n^4.
        K3: Ball containing (1/n) sum E|X_i|^3 / Bbar_n^3.
        K3tilde: Ball containing K3 + (1/n) sum E|X_i| sigma_i^2 / Bbar_n^3.
        lambda3: (1/n) sum E X_i^3 / Bbar_n^3 (its modulus enters).
        iid: Identically distributed summands (Theorem A.3) or not (Theorem A.2).
        skewed: False only if every summand has zero skewness.
        eps: Free parameter in (0, 1/3).

    Returns:
        An Arb ball containing the bound's value (use its upper end).
    """
    n_a, K4, K3, K3t, lam, eps = (_a(n), _a(K4), _a(K3), _a(K3tilde), _a(lambda3), _a(eps))
    if not (eps > 0 and eps < arb(1) / 3):
        raise ValueError("the DGG parameter eps must lie in (0, 1/3)")
    skew = 1 if skewed else 0
    if not skewed:
        lam = arb(0)
    al = abs(lam)
    pi = arb.pi()
    cpsi = arb(_CPSI)
    c = _dgg_common(n_a, K4, lam, eps, skew)
    D = c["D"]
    sn = n_a.sqrt()
    c0 = (arb("14.1961") + arb("67.0415")) * K3t**4 / (16 * pi**4 * n_a**2)
    g = _min((2 * eps).sqrt() * (n_a / K4).root(4), 2 * sn / K3t)
    h = arb(3) / 2
    hi = 2 * sn / K3t
    if iid:
        if skewed:
            r1 = (c0 + arb("4.3394") * al * K3t**3 / (8 * pi**3 * n_a**2) + c["r_iid"]
                  + arb("1.306") * (c["e2"] - c["e3"]) * lam * lam / (36 * n_a)
                  + al * (_gamma_upper(h, g) - _gamma_upper(h, hi)) / sn
                  + cpsi * 4 * arb(2).sqrt() * K3 / (3 * pi * sn)
                  * (_gamma_upper(h, g**2 / 8) - _gamma_upper(h, n_a / (2 * K3t**2))))
        else:
            r1 = (c0 + c["r_iid"] + 16 * cpsi * K4 / (3 * pi * n_a)
                  * (_gamma_upper(2, g**2 / 8) - _gamma_upper(2, n_a / (2 * K3t**2))))
    else:
        delta = (1 - 4 * arb(_CHI1) - (K4 / n_a).sqrt()) / 2
        m = _min(eps * (n_a / K4).sqrt(), 2 * n_a / K3t**2)

        def brace(p: int) -> arb:
            s = arb(p) / 2
            return (abs(delta) ** (-s) / 2
                    * abs(_gamma_star(s, 4 * delta * n_a / K3t**2, p)
                          - _gamma_star(s, 2 * delta * m, p)))

        if skewed:
            r1 = (c0 + arb("4.3394") * al * K3t**3 / (8 * pi**3 * n_a**2) + c["r_inid"]
                  + al * (_gamma_upper(h, g) - _gamma_upper(h, hi)) / sn
                  + cpsi * K3 * brace(3) / (6 * pi * sn))
        else:
            r1 = c0 + c["r_inid"] + cpsi * K4 * brace(4) / (6 * pi * n_a)
    return (arb("0.1995") * K3t / sn
            + (arb("0.031") * K3t**2 + arb("0.327") * K4 * (arb(1) / 12 + 1 / (4 * D))) / n_a
            + skew * (arb("0.054") * al * K3t
                      + arb("0.037") * (c["e3"] if iid else c["e1"]) * lam * lam) / n_a
            + r1)


def dgg_continuity_bound_iid(
    n: int,
    K4,
    K3,
    K3tilde,
    lambda3,
    kappa,
    *,
    skewed: bool = True,
    eps="0.1",
) -> arb:
    r"""DGG bound under the characteristic-function condition, i.i.d. case (rate n^{-1}).

    Derumigny, Girard, Guyonvarch (arXiv:2101.05780), Theorem 3.1 with Appendix Theorem A.5
    (transcribed in DGG.md): valid when
    :math:`\kappa \ge \sup_{|t| \ge 2 t_1^* \pi / \tilde K_3} |E e^{i t X_1/\sigma}|`.
    Not used by the EEAI (no mechanism certifies kappa < 1 yet); kept for the record and tested
    against the reference values.

    Args:
        n, K4, K3, K3tilde, lambda3: As in :func:`dgg_moment_bound`.
        kappa: Certified bound kappa < 1 on the characteristic function (see above).
        skewed: False only if every summand is unskewed.
        eps: Free parameter in (0, 1/3).

    Returns:
        An Arb ball containing the bound's value.
    """
    n_a, K4, K3, K3t, lam, kap, eps = (_a(n), _a(K4), _a(K3), _a(K3tilde), _a(lambda3),
                                       _a(kappa), _a(eps))
    skew = 1 if skewed else 0
    if not skewed:
        lam = arb(0)
    al = abs(lam)
    pi = arb.pi()
    cpsi = arb(_CPSI)
    t1 = arb(_T1)
    c = _dgg_common(n_a, K4, lam, eps, skew)
    D = c["D"]
    sn = n_a.sqrt()
    c1 = arb("1.2533") * K3t**4 / (16 * pi**4 * n_a**2)
    c2 = arb("0.3334") * K3t**4 * al / (16 * pi**4 * n_a**2 * sn)
    c3 = arb("14.1961") * K3t**16 / ((2 * pi) ** 16 * n_a**8)
    c4 = arb("4.3394") * K3t**12 * al / ((2 * pi) ** 12 * n_a**6 * sn)
    T = 16 * pi**4 * n_a**2 / K3t**4
    sc = 1 - 4 * pi * arb(_CHI1) * t1

    def e1(x: arb) -> arb:
        return _gamma_upper(0, x)

    J = (cpsi / pi * abs(e1(_min(T.sqrt(), T**2) * sc / (2 * pi**2))
                         - e1(_min(t1**2 * T.sqrt(), T**2 / pi**2) * sc / 2))
         + cpsi / pi * abs(e1(_min(T.sqrt(), T**2) / (2 * pi**2)) - e1(T**2 / (2 * pi**2))))
    h = arb(3) / 2
    u1 = 16 * pi**3 * n_a**2 / K3t**4
    l1 = _min((2 * eps).sqrt() * (n_a / K4).root(4), u1)
    u2 = 32 * pi**6 * n_a**4 / K3t**8
    l2 = _min(eps * (n_a / (16 * K4)).sqrt(), u2)
    if skewed:
        r2 = (c1 + c2 + c3 + c4 + al * (_gamma_upper(h, l1) - _gamma_upper(h, u1)) / sn
              + c["r_iid"]
              + cpsi * 4 * arb(2).sqrt() * K3 / (3 * pi * sn)
              * (_gamma_upper(h, l2) - _gamma_upper(h, u2))
              + arb("1.306") * (c["e2"] - c["e3"]) * lam * lam / (36 * n_a) + J)
    else:
        u = 32 * pi**6 * n_a**4 / K3**8
        lo = _min(eps * (n_a / (16 * K4)).sqrt(), u)
        r2 = (c1 + c3 + c["r_iid"]
              + 16 * cpsi * K3 * abs(_gamma_upper(2, u) - _gamma_upper(2, lo)) / (3 * pi * n_a)
              + J)
    a_n = _min(2 * t1 * pi * sn / K3t, 16 * pi**3 * n_a**2 / K3t**4)
    b_n = 16 * pi**4 * n_a**2 / K3t**4
    s_n = cpsi / pi * kap ** n_a * (b_n / a_n).log()
    return (arb("0.327") * K4 * (arb(1) / 12 + 1 / (4 * D)) / n_a
            + skew * arb("0.037") * c["e3"] * lam * lam / n_a + r2 + s_n)


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
        f"{thm}, skewed case, eps = {best_eps}; transcription DGG.md checked against the "
        "BoundEdgeworth reference outputs, not line by line against the paper)"
    )


def _sinc_sup(y0: arb) -> arb:
    """Upper bound of sup_{y >= y0} |sin y / y| for y0 > 0 (sinc decreases on [0, pi], and
    |sinc y| <= 1/y <= 1/pi beyond pi)."""
    inv_pi = _upper(1 / arb.pi())
    if y0 >= arb.pi():
        return inv_pi
    v = _upper(y0.sinc())  # covers y in [y0, pi]; an undecided y0 ~ pi has sinc ~ 0 anyway
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
    k3t = _upper(inp["K3tilde"])
    pi = arb.pi()
    t1 = arb(_T1)
    a_n = _min(2 * t1 * pi * n.sqrt() / k3t, 16 * pi**3 * n * n / (k3t * k3t * k3t * k3t))
    t_min = arb(_min(2 * t1 * pi / k3t, a_n / n.sqrt()).lower())
    sigma = _upper((s.k2 / n).sqrt())
    best = None
    for f0, length in cands:
        alpha = arb((f0 * length).lower())
        if not (alpha > 0):
            continue
        y0 = arb((t_min * length / (2 * sigma)).lower())
        if not (y0 > 0):
            continue
        kap = _upper(1 - alpha * (1 - _sinc_sup(y0)))
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
        "transcription DGG.md checked against the BoundEdgeworth reference outputs, not line "
        f"by line against the paper); {kdesc}"
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
        cands.append((_upper(val), "berry-esseen", (
            independence, iid,
            f"uniform bound: {desc}, plus sup|G_1 - Phi| = phi(0)|K3|/(6 K2^(3/2))",
        )))
    if "dgg" in methods:
        val, desc = _dgg_best(s)
        cands.append((_upper(val), "dgg", (independence, iid, f"uniform bound: {desc}")))
    if "dgg-cf" in methods:
        got = _dgg_cf_best(s)
        if got is not None:
            cands.append((_upper(got[0]), "dgg-cf",
                          (independence, iid, f"uniform bound: {got[1]}")))
    if not cands:
        return UniformBound(arb("inf"), "none", ("no uniform bound applies",), {})
    record = {m: float(v.mid()) if v.is_finite() else math.inf for v, m, _ in cands}
    value, method, assumptions = min(cands, key=lambda t: float(t[0].mid())
                                     if t[0].is_finite() else math.inf)
    return UniformBound(value, method, assumptions, record)


# ------------------------------------------------------------------------------------------------
# the first-order Q-only Edgeworth delta


def _erfc(x: arb) -> arb:
    """erfc on a ball via its exact endpoints (erfc is decreasing).

    Arb's erfc of an inexact ball far in the tail loses all relative accuracy (e.g. near
    x = 2e7 it returns a ball around 0); evaluating at the exact ends and taking the hull is
    rigorous by monotonicity and keeps full relative accuracy.
    """
    if x.is_exact() or not x.is_finite():
        return x.erfc()
    return arb(x.upper()).erfc().union(arb(x.lower()).erfc())


def first_order_q_delta(k1: arb, k2: arb, k3: arb, eps: arb) -> arb:
    r"""Enclosure of the Q-only delta of the first-order Edgeworth expansion (module docstring).

    Args:
        k1, k2, k3: Summed cumulants of S_Y (k2 > 0).
        eps: The eps at which delta is evaluated.

    Returns:
        :math:`\bar\Phi(z_0) - W + (\lambda_3/6)\sigma[\varphi(z_0)(z_0 - \sigma) + \sigma^2 W]`.
    """
    sigma = k2.sqrt()
    z0 = (eps - k1) / sigma
    a = z0 + sigma
    r2 = arb(2).sqrt()
    sf = _erfc(z0 / r2) / 2
    phi = (-z0 * z0 / 2).exp() / (2 * arb.pi()).sqrt()
    w = (sigma * z0 + sigma * sigma / 2).exp() * _erfc(a / r2) / 2
    lam = k3 / (k2 * sigma)
    return sf - w + lam / 6 * sigma * (phi * (z0 - sigma) + sigma * sigma * w)


# ------------------------------------------------------------------------------------------------
# per-direction profile


@dataclass(frozen=True)
class _Profile:
    direction: str
    sums: SummedMoments
    bound: UniformBound

    def centre(self, eps: arb) -> arb:
        s = self.sums
        return first_order_q_delta(s.k1, s.k2, s.k3, eps)

    def pure(self, eps: arb) -> tuple[arb, arb]:
        """Exact ends [lo, hi] of the pure-part enclosure, clipped to [0, 1]."""
        if self.sums.trivial:
            return arb(0), arb(0)
        c = self.centre(eps)
        d = self.bound.value
        lo = (c - d).lower() if c.is_finite() else arb(0)
        hi = (c + d).upper() if c.is_finite() else arb(1)
        lo = lo if lo > 0 else arb(0)
        hi = hi if hi < 1 else arb(1)
        if not lo <= hi:  # cannot happen for a valid enclosure of a number in [0, 1]
            raise ArithmeticError(f"empty delta enclosure [{lo}, {hi}]")
        return lo, hi


def _delta_part(comp: Composition) -> arb:
    """1 - prod (1 - delta_i)^{m_i} (GDP Eq. 12) in Arb."""
    s = arb(0)
    for mech, count in comp.terms:
        if mech.delta_part > 0:
            s += arb(count) * (-arb(mech.delta_part)).log1p()
    return -s.expm1()


def _total(d: arb, lo: arb, hi: arb) -> tuple[arb, arb]:
    """Ends of d + (1 - d) [lo, hi] (GDP Eq. 13), increasing in d and in the pure delta."""
    if d.is_zero():
        return lo, hi
    lo_t = (d + (1 - d) * lo).lower()
    hi_t = (d + (1 - d) * hi).upper()
    return (lo_t if lo_t > 0 else arb(0)), (hi_t if hi_t < 1 else arb(1))


def _profiles(comp: Composition, methods: tuple[str, ...]) -> list[_Profile]:
    out = []
    for direction in comp.directions:
        s = summed_moments(comp, direction)
        if s.trivial:
            b = UniformBound(arb(0), "exact-normal", ("the PLLR sum is the point mass 0",), {})
        else:
            b = uniform_bound(s, methods)
        out.append(_Profile(direction, s, b))
    return out


def _accurate(profiles: list[_Profile]) -> bool:
    """The moment balls are tight enough that rounding is negligible next to D."""
    for p in profiles:
        s = p.sums
        if s.trivial:
            continue
        for x in (s.k1, s.k2, s.k3, s.abs3, s.mu4):
            if not x.is_finite():
                return False
        if not s.k2 > 0:
            return False
        if s.k2.rel_accuracy_bits() < 40 or s.k1.rad() > s.k2.sqrt().mid() * arb(2) ** -40:
            return False
    return True


def _setup(comp: Composition, methods: tuple[str, ...], prec: int | None):
    """Profiles and delta part at the first precision where the moments are accurate."""
    holder: dict[str, object] = {}

    def compute() -> arb:
        profiles = _profiles(comp, methods)
        holder["profiles"] = profiles
        holder["ok"] = _accurate(profiles)
        return _delta_part(comp)

    d, bits = adaptive(compute, start=prec or DEFAULT_PRECISION, cap=MAX_PRECISION,
                       accept=lambda x: bool(holder.get("ok")) and x.is_finite())
    return holder["profiles"], d, bits


def _methods(methods) -> tuple[str, ...]:
    if methods is None:
        return METHODS
    out = tuple(methods)
    unknown = set(out) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown uniform-bound method(s) {sorted(unknown)}; use {METHODS}")
    return out


def _common_assumptions(profiles: list[_Profile]) -> tuple[str, ...]:
    out: dict[str, None] = {
        "EEAI: delta = E_Q[(1 - e^(eps - S_Y))_+] = int_eps^inf e^(eps-s)(1 - F_Y(s)) ds "
        "(change of measure), so sup|F_Y - G_1| <= D gives |delta - delta_G1| <= D around the "
        "Q-only first-order Edgeworth delta (MATH.md section 3)": None,
    }
    for p in profiles:
        for a in p.bound.assumptions:
            out[f"{p.direction}: {a}" if len(profiles) > 1 else a] = None
        for a in p.sums.provenance + p.sums.assumptions:
            out[f"moments: {a}"] = None
    return tuple(out)


def _warnings(comp: Composition, profiles: list[_Profile]) -> list[str]:
    w = []
    for p in profiles:
        d = float(p.bound.value.mid()) if p.bound.value.is_finite() else math.inf
        if d >= _LARGE_D:
            w.append(
                f"{p.direction}: the certified uniform error D = {d:.3g} ({p.bound.method}) is "
                "large; the Berry-Esseen/DGG rate is m^-1/2, so the interval is wide or vacuous"
            )
    if comp.lattice:
        w.append("the PLLR has atoms (lattice law): the Edgeworth centre is crude, but the "
                 "moment-only bounds stay valid")
    return w


def _pick_direction(per: dict[str, tuple[arb, arb]]) -> str:
    best = None
    for k, (_, hi) in per.items():
        if best is None or hi > per[best][1]:
            best = k
    return best


# ------------------------------------------------------------------------------------------------
# public API


def delta_interval(composition, eps, *, methods=None, prec: int | None = None) -> Bound:
    """Certified EEAI enclosure of delta(eps) for a composition (max over pair orders).

    Args:
        composition: A :class:`~numeric.composition.Composition` or anything ``compose`` takes.
        eps: eps >= 0 (float, int, decimal string or Arb ball).
        methods: Uniform-bound methods to consider (default: all of :data:`METHODS`).
        prec: Starting Arb precision in bits (raised automatically).

    Returns:
        A :class:`~certify.bound.Bound` with quantity ``"delta"``; ``vacuous`` when its upper end
        is 1. ``assumptions`` record the bound, its constants and the i.i.d. assumption.
    """
    comp = compose(composition)
    methods = _methods(methods)
    e = to_arb("eps", eps)
    if e < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    profiles, d, bits = _setup(comp, methods, prec)
    with workprec(bits):
        per = {p.direction: _total(d, *p.pure(e)) for p in profiles}
    lo, hi = next(iter(per.values()))
    for v in per.values():  # exact comparisons of exact endpoints
        lo = v[0] if v[0] > lo else lo
        hi = v[1] if v[1] > hi else hi
    direction = _pick_direction(per)
    prof = {p.direction: p for p in profiles}[direction]
    warns = _warnings(comp, profiles)
    if hi >= 1:
        warns.append("vacuous: the certified upper end of delta is 1")
    elif lo.is_zero() and not hi.is_zero():
        warns.append("the lower end is 0: the uniform error D exceeds the Edgeworth delta here")
    with workprec(bits):  # Arb rounds endpoints to the working precision: keep every bit
        (lo_e, _), (_, hi_e) = endpoints(lo), endpoints(hi)
        eps_text = endpoints(e)[0].decimal() if e.is_exact() else str(e)
    method = f"eeai[{prof.bound.method}]"
    return Bound(
        "delta", lo_e, hi_e, method, method, bits, _common_assumptions(profiles), direction,
        tuple(warns),
        {
            "eps": eps_text,
            "uniform_error": {p.direction: float(p.bound.value.mid()) for p in profiles},
            "uniform_error_candidates": {p.direction: p.bound.candidates for p in profiles},
            "delta_part": float(d.mid()),
            "per_direction": {k: [float(a.mid()), float(b.mid())] for k, (a, b) in per.items()},
        },
    )


def _search(pred, lo: float, hi: float, rel_tol: float, abs_tol: float) -> tuple[float, float]:
    """Bisection keeping pred(hi) True (certified) and pred(lo) not certified."""
    for _ in range(200):
        if hi - lo <= max(abs_tol, rel_tol * hi):
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


def _certified(fn) -> bool:
    try:
        return fn()
    except UndecidableError:
        return False


def _eps_ends(p: _Profile, d: arb, target: arb, rel_tol: float,
              abs_tol: float) -> tuple[float, float]:
    """(eps_lower, eps_upper) for one pair order (floats; eps_upper may be inf)."""

    def upper_ok(x: float) -> bool:  # certified: upper delta(x) <= target
        hi = _total(d, *p.pure(arb(x)))[1]
        return _certified(lambda: not certainly_less(target, hi))

    def lower_ok(x: float) -> bool:  # certified: lower delta(x) > target
        lo = _total(d, *p.pure(arb(x)))[0]
        return _certified(lambda: certainly_less(target, lo))

    s = p.sums
    scale = 1.0 if s.trivial else max(
        1.0, abs(float(s.k1.mid())) + 10.0 * math.sqrt(float(s.k2.mid())))
    cap = _EPS_CAP * scale  # far beyond K1 + 40 sigma, where delta_G1 is below 1e-300
    # upper end
    if upper_ok(0.0):
        eps_u = 0.0
    else:
        hi = scale
        while hi <= cap and not upper_ok(hi):
            hi *= 2.0
        eps_u = math.inf if hi > cap else _search(upper_ok, 0.0, hi, rel_tol, abs_tol)[1]
    # lower end
    if not lower_ok(0.0):
        eps_l = 0.0
    else:
        if math.isfinite(eps_u):
            hi = eps_u
        else:
            hi = scale
            while hi <= cap and lower_ok(hi):
                hi *= 2.0
        if hi > cap:
            eps_l = hi / 2.0
        else:
            eps_l = _search(lambda x: not lower_ok(x), 0.0, hi, rel_tol, abs_tol)[0]
    return eps_l, eps_u


def epsilon_interval(
    composition,
    delta,
    *,
    methods=None,
    prec: int | None = None,
    rel_tol: float = 1e-10,
    abs_tol: float = 1e-12,
) -> Bound:
    """Certified EEAI enclosure of eps(delta) = inf{eps >= 0 : delta(eps) <= delta}.

    Certified bisection on the delta envelopes (module docstring): the upper end is a point where
    the certified upper delta is <= ``delta``; the lower end a point where the certified lower
    delta exceeds ``delta`` (valid because the true delta(eps) is non-increasing).

    Args:
        composition: A composition or anything ``compose`` accepts.
        delta: Target delta in (0, 1) (float or decimal string).
        methods: Uniform-bound methods to consider (default: all).
        prec: Starting Arb precision in bits.
        rel_tol: Relative bisection tolerance on each end (a looser end is still valid).
        abs_tol: Absolute bisection tolerance.

    Returns:
        A :class:`~certify.bound.Bound` with quantity ``"epsilon"``; the upper end is +inf (and
        ``vacuous`` True) when no finite eps can be certified.
    """
    comp = compose(composition)
    methods = _methods(methods)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    profiles, d, bits = _setup(comp, methods, prec)
    warns = _warnings(comp, profiles)
    per: dict[str, tuple[float, float]] = {}
    with workprec(bits):
        if target < d:
            warns.append(f"delta = {delta} is below the composed delta part {float(d.mid()):.6g}:"
                         " no finite epsilon exists")
            per = {p.direction: (math.inf, math.inf) for p in profiles}
        else:
            for p in profiles:
                per[p.direction] = _eps_ends(p, d, target, rel_tol, abs_tol)
    lo = max(v[0] for v in per.values())
    hi = max(v[1] for v in per.values())
    direction = max(per, key=lambda k: (per[k][1], per[k][0]))
    prof = {p.direction: p for p in profiles}[direction]
    if math.isinf(hi) and not math.isinf(lo):
        dd = float(prof.bound.value.mid())
        warns.append(
            f"vacuous: the EEAI cannot certify any finite epsilon at delta = {delta} "
            f"(uniform error D = {dd:.3g} from {prof.bound.method}, plus the delta part, does "
            "not fall below delta); this is expected for small delta"
        )

    elif math.isfinite(hi):
        total_d = float((d + (1 - d) * prof.bound.value).mid())
        if total_d >= 0.5 * float(target.mid()):
            warns.append(
                f"the uniform error D = {float(prof.bound.value.mid()):.3g} "
                f"({prof.bound.method}) is comparable to delta = {delta}: the interval is wide"
            )

    def end(x: float) -> Endpoint:
        if math.isinf(x):
            return Endpoint(inf=1)
        with workprec(bits):
            return endpoints(arb(x))[0]

    method = f"eeai[{prof.bound.method}]"
    return Bound(
        "epsilon", end(lo), end(hi), method, method, bits,
        (*_common_assumptions(profiles), _INVERSION),
        direction, tuple(warns),
        {
            "delta": str(delta),
            "uniform_error": {p.direction: float(p.bound.value.mid()) for p in profiles},
            "uniform_error_candidates": {p.direction: p.bound.candidates for p in profiles},
            "delta_part": float(d.mid()),
            "per_direction": {k: [v[0], v[1]] for k, v in per.items()},
        },
    )
