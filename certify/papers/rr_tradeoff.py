r"""Certified distances between the n-fold randomized-response trade-off curve and G_mu.

The n-fold composition of randomized response with parameter eps0 (t = e^{eps0}) is the
trade-off function of K ~ Bin(n, 1/(1+t)) (null P) against K ~ Bin(n, t/(1+t)) (alternative Q),
K the number of "+" outcomes (Kairouz, Oh, Viswanath 2015, Thm 3.3; Dong, Roth, Su 2022 = GDP,
Section 3.3). The Neyman-Pearson tests reject for K >= j, so f_n is the piecewise-linear convex
curve through the vertices

.. math:: \alpha_j = P(K \ge j),\quad \beta_j = Q(K < j),\qquad j = 0, \dots, n + 1,

whose segment j (between vertices j+1 and j) is the line
:math:`\ell_j(a) = \beta_j + s_j (a - \alpha_j)` of slope :math:`s_j = -e^{L_j}`,
:math:`L_j = (2j - n)\varepsilon_0`. Being convex, :math:`f_n = \max_j \ell_j` on [0, 1].

G_mu (GDP Def. 2.7) is parametrised by z: :math:`(b, G_\mu(b)) = (\bar\Phi(z), \Phi(z - \mu))`,
with slope :math:`G_\mu'(b) = -e^{\mu z - \mu^2/2}`.

**Vertical distance** :math:`\sup_a |f_n(a) - G_\mu(a)|` (GDP Section 3.3, Figure 5).
Proof of the formulas used: (i) :math:`\sup_a (f_n - G_\mu) = \max_j \sup_a (\ell_j - G_\mu)`
because :math:`f_n = \max_j \ell_j`; :math:`\ell_j - G_\mu` is concave (G convex), so its sup is
at the tangency :math:`G_\mu'(b) = s_j`, i.e. :math:`z_j^* = (L_j + \mu^2/2)/\mu` -- exact, with no
test of whether the tangency lies inside segment j. (ii) :math:`G_\mu - f_n` is convex on each
segment, so its sup is at a vertex.

**Diagonal (Levy-type) distance** c: the smallest c with
:math:`G_\mu(a + c) - c \le f_n(a) \le G_\mu(a - c) + c` (GDP Thm 3.4 / 3.7 form). Each point of
f_n lies on exactly one diagonal translate :math:`\{(b + d, G_\mu(b) + d)\}` of G (the map
:math:`d \mapsto G(a - d) + d` increases), and the inequalities say :math:`-c \le d \le c`, so
:math:`c = \sup |d|`. In the rotated coordinates u = a - y, v = a + y a convex decreasing curve
is a convex function v(u), and d = (v_f - v_G)/2. As in the vertical case: sup d is attained at
the same tangencies, :math:`d_j = (\ell_j(b^*) - G(b^*))/(1 - s_j)` (the diagonal step from the
tangency point to line j), and sup(-d) at a vertex. At a vertex (a, y) = (alpha_j, beta_j) the
translate's parameter z solves :math:`\bar\Phi(z) - \Phi(z - \mu) = a - y` (decreasing in z): a
float bracket [z_lo, z_hi] is verified in Arb, then :math:`d \in [a - \bar\Phi(z_lo),
a - \bar\Phi(z_hi)]`. Where the bracket cannot be verified (vertex masses beyond binary64) the
a-priori bound :math:`-d \le \min(1 - \alpha_j, 1 - \beta_j)` (and the same for
:math:`G - f_n` at the vertex) is used: from :math:`G \le 1` and :math:`b \le 1` (resp.
:math:`G(a) \le 1 - a`). It enters as the ball [0, T], an enclosure of max(value, 0); that is
harmless because both sups are >= 0 (f_n and G_mu both equal 1 at a = 0).

Everything is an Arb ball (python-flint, outward rounding); eps0 and mu may be balls (e.g.
1/sqrt(n)), so the results enclose the exact values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import arb
from scipy import optimize, special

from ..special import normal_cdf, normal_sf

__all__ = [
    "Distances", "RRCurve", "ball_max", "diagonal_shift", "distances", "rr_curve",
    "vertical_distance",
]

_TINY = 1e-290  # vertex tails below this: a-priori bound instead of a float bracket


def ball_max(balls: list[arb]) -> arb:
    """An enclosure of max(x_i) for x_i in the balls: [max of lowers, max of uppers]."""
    lo = max(arb(b.lower()) for b in balls)
    hi = max(arb(b.upper()) for b in balls)
    return arb(lo).union(arb(hi))


@dataclass(frozen=True)
class RRCurve:
    """Vertices of the n-fold randomized-response trade-off (balls), tails kept separately."""

    n: int
    eps0: arb
    alpha: list[arb]   # P(K >= j), j = 0..n+1
    alpha_c: list[arb]  # P(K < j) = 1 - alpha_j, summed without cancellation
    beta: list[arb]    # Q(K < j)
    beta_c: list[arb]  # Q(K >= j)

    def slope_log(self, j: int) -> arb:
        """L_j = (2j - n) eps0: segment j has slope -e^{L_j}."""
        return (2 * j - self.n) * self.eps0


def rr_curve(n: int, eps0: arb) -> RRCurve:
    r"""The vertices of :math:`f_{\varepsilon_0,0}^{\otimes n}` (KOV Thm 3.3), as Arb balls.

    Args:
        n: Number of steps (1 <= n <= 10^5).
        eps0: Per-step epsilon as a ball (> 0).
    """
    if not (isinstance(n, int) and 1 <= n <= 10**5):
        raise ValueError(f"n must be an integer in [1, 1e5], got {n!r}")
    t = eps0.exp()
    log_p = -(1 + t).log()          # log P(+) = log 1/(1+t)
    log_q = eps0 + log_p            # log Q(+) = log t/(1+t)
    lp = [arb(0)] * (n + 1)
    lq = [arb(0)] * (n + 1)
    logc = arb(0)  # log C(n, k), built incrementally
    for k in range(n + 1):
        if k > 0:
            logc = logc + arb(n - k + 1).log() - arb(k).log()
        lp[k] = (logc + k * log_p + (n - k) * log_q).exp()  # P(K = k)
        lq[k] = (logc + k * log_q + (n - k) * log_p).exp()  # Q(K = k)
    zero = arb(0)
    alpha = [zero] * (n + 2)
    beta_c = [zero] * (n + 2)
    acc_p, acc_q = zero, zero
    for j in range(n, -1, -1):
        acc_p, acc_q = acc_p + lp[j], acc_q + lq[j]
        alpha[j], beta_c[j] = acc_p, acc_q
    alpha_c = [zero] * (n + 2)
    beta = [zero] * (n + 2)
    acc_p, acc_q = zero, zero
    for j in range(1, n + 2):
        acc_p, acc_q = acc_p + lp[j - 1], acc_q + lq[j - 1]
        alpha_c[j], beta[j] = acc_p, acc_q
    return RRCurve(n, eps0, alpha, alpha_c, beta, beta_c)


def _tangency(curve: RRCurve, mu: arb, j: int) -> tuple[arb, arb, arb]:
    """(b*, G(b*), line_j(b*)) at the tangency of G_mu with slope s_j."""
    L = curve.slope_log(j)
    z = (L + mu * mu / 2) / mu
    b = normal_sf(z)
    g = normal_cdf(z - mu)
    line = curve.beta[j] - L.exp() * (b - curve.alpha[j])
    return b, g, line


def _float(x: arb) -> float:
    return float(x.mid())


def _u_float(z: float, mu: float) -> float:
    return float(special.ndtr(-z) - special.ndtr(z - mu))


def _bracket(target_lo: arb, target_hi: arb, u, z0: float) -> tuple[arb, arb] | None:
    """Verified [z_lo, z_hi] with u(z_lo) > target and u(z_hi) < target (u decreasing)."""
    for h in (1e-14, 1e-12, 1e-10, 1e-7, 1e-4, 1e-1):
        w = h * (1 + abs(z0))
        zl, zh = arb(z0 - w), arb(z0 + w)
        if u(zl) > target_hi and u(zh) < target_lo:
            return zl, zh
    return None


def _vertex_terms(curve: RRCurve, mu: arb, j: int, muf: float) -> tuple[arb, arb]:
    """Enclosures of (G - f)(alpha_j) and -d at vertex j (both may be negative)."""
    a, y = curve.alpha[j], curve.beta[j]
    # a-priori: G - f <= min(1 - alpha_j, 1 - beta_j) and -d <= the same (module docstring);
    # [0, T] encloses max(value, 0), which leaves both sups unchanged (both are >= 0: the curves
    # meet at a = 0)
    t1, t2 = arb(curve.alpha_c[j].upper()), arb(curve.beta_c[j].upper())
    trivial = arb(0).union(t1 if t1 < t2 else t2)
    small = min(_float(curve.alpha[j]), _float(curve.alpha_c[j]),
                _float(curve.beta[j]), _float(curve.beta_c[j]))
    if small < _TINY:
        return trivial, trivial
    # vertical: G(alpha_j) = Phi(z - mu) with sf(z) = alpha_j
    if _float(a) <= 0.5:
        z0 = -float(special.ndtri(_float(a)))
    else:
        z0 = float(special.ndtri(_float(curve.alpha_c[j])))
    br = _bracket(a, a, normal_sf, z0)
    if br is None:
        vert = trivial
    else:
        zl, zh = br  # sf(zl) > a > sf(zh): z(a) in (zl, zh), G increasing in z
        vert = (normal_cdf(zl - mu) - y).union(normal_cdf(zh - mu) - y)
    # diagonal: sf(z) - cdf(z - mu) = a - y
    target = a - y
    tf = _float(target)
    try:
        z1 = optimize.brentq(lambda z: _u_float(z, muf) - tf, -40.0, 40.0 + muf, xtol=1e-14)
    except ValueError:
        return vert, trivial
    br = _bracket(target, target, lambda z: normal_sf(z) - normal_cdf(z - mu), z1)
    if br is None:
        return vert, trivial
    zl, zh = br  # b = sf(z) in (sf(zh), sf(zl)); -d = b - a
    negd = (normal_sf(zh) - a).union(normal_sf(zl) - a)
    return vert, negd


@dataclass(frozen=True)
class Distances:
    """Certified sup distances of f_n from G_mu (Arb balls) and where they are attained."""

    sup_f_minus_g: arb
    sup_g_minus_f: arb
    shift_plus: arb    # sup d  (f above/right of G)
    shift_minus: arb   # sup -d (f below/left of G)
    argmax_alpha: float

    @property
    def vertical(self) -> arb:
        """sup_a |f_n(a) - G_mu(a)|."""
        return ball_max([self.sup_f_minus_g, self.sup_g_minus_f])

    @property
    def diagonal(self) -> arb:
        """The smallest c with G(a + c) - c <= f_n(a) <= G(a - c) + c."""
        return ball_max([self.shift_plus, self.shift_minus, arb(0)])


def distances(curve: RRCurve, mu: arb) -> Distances:
    """Both sup distances (vertical and diagonal) of the curve from G_mu, certified.

    Args:
        curve: From :func:`rr_curve`.
        mu: The GDP parameter (a ball, > 0).
    """
    muf = _float(mu)
    if not muf > 0:
        raise ValueError(f"mu must be > 0, got {muf!r}")
    n = curve.n
    fmg, diag, where = [], [], []
    for j in range(n + 1):
        L = curve.slope_log(j)
        b, g, line = _tangency(curve, mu, j)
        fmg.append(line - g)
        diag.append((line - g) / (1 + L.exp()))
        where.append(_float(b))
    gmf, negd = [], []
    for j in range(n + 2):
        v, nd = _vertex_terms(curve, mu, j, muf)
        gmf.append(v)
        negd.append(nd)
    k = int(np.argmax([_float(x) for x in fmg]))
    return Distances(ball_max(fmg), ball_max(gmf), ball_max(diag), ball_max(negd), where[k])


def vertical_distance(n: int, eps0: arb, mu: arb) -> arb:
    """sup_a |f_{eps0,0}^{(x)n}(a) - G_mu(a)| (certified ball)."""
    return distances(rr_curve(n, eps0), mu).vertical


def diagonal_shift(n: int, eps0: arb, mu: arb) -> arb:
    """The smallest c with G_mu(a + c) - c <= f_n(a) <= G_mu(a - c) + c (certified ball)."""
    return distances(rr_curve(n, eps0), mu).diagonal
