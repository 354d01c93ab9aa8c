r"""Certified knowledge of the Poisson-subsampled Gaussian (rate p, :math:`\mu = 1/\sigma`).

The dominating pair (Mironov, Talwar, Zhang, *Renyi Differential Privacy of the Sampled Gaussian
Mechanism*, arXiv:1908.10530; Zhu, Dong, Wang, AISTATS 2022) is P = N(0, 1),
Q = (1-p)N(0,1) + pN(mu,1), with likelihood ratio :math:`w = q/p = 1 - p + p e^{\mu x -
\mu^2/2}` and PLLR :math:`L(x) = \log w`, increasing with range :math:`(\log(1-p), \infty)`. The
pair is asymmetric, so both orders are handled. Rate 1 is the Gaussian mechanism with
:math:`\mu = 1/\sigma` (:mod:`certify.mechanisms.gaussian`). Everything below is an Arb
enclosure:

* **Moments** (:mod:`certify.moments`): no closed form. Rigorous quadrature
  (:func:`flint.acb.integral`, which verifies analyticity of the integrand on complex balls
  through ``log(..., analytic=True)``) on [A, B] = [-T, mu + T] of :math:`(L - c)^j w(x)`,
  j = 1..4, about an exact dyadic c near the mean, plus analytic tail enclosures (docs/math.md
  section 4):

  - for x <= mu/2, 1 - p < 1 - p + p e^{mu x - mu^2/2} <= 1, so log(1-p) < L <= 0 and
    :math:`|L - c| \le -\log(1-p) + |c|`; the tail mass is :math:`\Phi(A)` under P and
    :math:`(1-p)\Phi(A) + p\Phi(A - \mu)` under Q (erfc);
  - for x >= mu/2, :math:`0 \le L \le \mu x - \mu^2/2 \le \mu x`, so
    :math:`|L - c|^j \le (\mu x + |c|)^j`, integrated exactly against the Gaussian tails with
    :math:`J_i(b) = \int_b^\infty x^i\varphi = b^{i-1}\varphi(b) + (i-1) J_{i-2}(b)`,
    :math:`J_0 = \bar\Phi(b)`, :math:`J_1 = \varphi(b)` (integration by parts).

  The absolute moments need a split where L = c (|.| is not analytic): L is increasing, so the
  crossing is :math:`x_c = (\log((e^c - 1 + p)/p) + \mu^2/2)/\mu` (a ball). The pieces are
  integrated up to an exact dyadic s near x_c and the sliver between s and x_c is enclosed by
  the mean value theorem, :math:`\int_s^{x_c} g \in (x_c - s)\, g(\mathrm{hull}(s, x_c))`. The
  exact mean m = c + E(L - c) then gives the central moments by the binomial shift, and the
  absolute ones through :math:`\bigl||u - d| - |u|\bigr| \le |d|` and
  :math:`\bigl||u - d|^3 - |u|^3\bigr| \le 3|d|(|u| + |d|)^2` with d = m - c (tiny).
* **Continuous part** (:mod:`certify.eeai`): L is increasing, so the PLLR density at v = L(x)
  is w(x)/L'(x); it is bounded below on x-windows by Arb interval evaluation.
* **Lattice step** (:mod:`certify.lattice`), order (P, Q): for :math:`e^\varepsilon \le 1 - p`,
  :math:`\delta = 1 - e^\varepsilon`; otherwise with :math:`x_\varepsilon =
  (\log((e^\varepsilon - 1 + p)/p) + \mu^2/2)/\mu`, :math:`\delta = (1 - p -
  e^\varepsilon)\bar\Phi(x_\varepsilon) + p \bar\Phi(x_\varepsilon - \mu)`;
  :math:`T_P = \bar\Phi(x_s)`, :math:`T_Q = (1-p)\bar\Phi(x_s) + p\bar\Phi(x_s - \mu)`. Order
  (Q, P): :math:`\delta' = 0` for :math:`e^{-\varepsilon} \le 1 - p`, else with :math:`x =
  x_{-\varepsilon}`, :math:`\delta' = (1 - e^\varepsilon(1-p))\Phi(x) - e^\varepsilon
  p\,\Phi(x - \mu)`; :math:`L' = -L \ge s \iff x \le x_{-s}` (hockey-stick divergence of the
  mixture, as in Zhu, Dong, Wang 2022).
* **Chernoff** (:mod:`certify.chernoff`), order (P, Q): :math:`E_P[w^\alpha]`; at integer alpha
  = k >= 2 the binomial expansion and :math:`E e^{j(\mu x - \mu^2/2)} = e^{j(j-1)\mu^2/2}` give
  the exact finite sum :math:`\sum_j \binom kj (1-p)^{k-j} p^j e^{j(j-1)\mu^2/2}` (Mironov,
  Talwar, Zhang 2019, Sec. 3.3), evaluated in Arb; at other real alpha, certified quadrature.
  Order (Q, P): :math:`E_Q[(p/q)^\alpha] = E_P[w^{1-\alpha}]`, which has no finite closed form,
  by certified quadrature (:func:`sg_power_moment`).
* **Exact profile** and **normal PLLR**: at rate 1 only (mu^2-GDP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from flint import acb, arb, ctx, fmpz

from numeric.errors import NotApplicable
from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP
from numeric.mechanisms.subsampled_gaussian import (
    PoissonSubsampledGaussian,
    check_quadrature_budget,
    subsampled_gaussian_pllr,
)
from numeric.moments import gauss_legendre_panels

from ..budget import integral
from ..cgf import INT_ORDER_MAX, StepCGF, gaussian_cgf
from ..exact_model import ExactComposition
from ..pllr import ContinuousPart, LawMoments, PLLRMoments, central_to_cumulants, symmetric_pair
from ..registry import CertifiedMechanism, register_certified
from ..special import (
    exact_ball,
    exact_param,
    ipow,
    lower_end,
    nonneg,
    normal_cdf,
    normal_pdf,
    normal_sf,
    show,
    symmetric_ball,
)
from ..steps import LatticeStep
from .gaussian import GaussianStep, gaussian_law, normal_continuous_part

__all__ = ["SubsampledGaussianLaw", "SubsampledGaussianStep", "sg_power_moment"]


# --------------------------------------------------------------------------------------------
# moments


def _gauss_tail_moments(b: arb, imax: int) -> list[arb]:
    """[J_0(b), ..., J_imax(b)], J_i(b) = int_b^inf x^i phi(x) dx (exact recursion)."""
    out = [normal_sf(b), normal_pdf(b)]
    for i in range(2, imax + 1):
        out.append(ipow(b, i - 1) * normal_pdf(b) + (i - 1) * out[i - 2])
    return out[: imax + 1]


_MAX_QUAD_MU = 20.0
"""Largest mu = 1/sigma (sigma >= 0.05) of the certified Arb quadratures below: the integrands
change on a scale 1/mu over [-T, mu + T], and ``acb.integral`` does not check a time budget, so
beyond it (sigma 0.0226: the EEAI moments ran past 60 s under a 30 s budget; found by the fuzz)
they refuse up front."""


_QUAD_SECONDS = 2e-4
"""Low estimate of the seconds :func:`sg_power_moment` costs at 53 bits per unit of
max(1, s) mu^2 for s >= 0 (measured 1.3-4 ms per unit on a loaded 2-core machine for
max(1, s) mu^2 in 17..1250; beyond ~700..1600 acb.integral gave up with no finite enclosure
after 1.4-2.7 s); a time budget refuses the Chernoff evaluation up front above it (issue 12).
For s < 0 (the Q||P order) see :data:`_QUAD_SECONDS_NEG`."""

_QUAD_SECONDS_NEG = 1.5e-7
"""Low estimate of the seconds :func:`sg_power_moment` costs at s < 0 and 53 bits per unit of
|s| mu^2, up to :data:`_QUAD_SECONDS_NEG_CAP` (issue 12; the Chernoff scales it by prec/53). At
128 bits (the Chernoff's first evaluation) it measured 5.6e-7..2.8e-6 s per unit of |s| mu^2
for |s| mu^2 in 1e3..1e7 (sigma 0.05..1, rate 0.01..0.3, s -10..-1e5, CPU time on a loaded
2-core machine), i.e. >= 2.3e-7 per 53 bits; beyond, acb.integral gives up (no finite
enclosure) after 0.63-1.9 s. Below |s| mu^2 ~ 1e3 it costs a few ms (a fixed overhead, also
above this estimate)."""

_QUAD_SECONDS_NEG_CAP = 0.1
"""Cap of the s < 0 estimate at 53 bits: 0.24 s at 128 bits, below the least time measured for
a quadrature that gave up (0.63 s)."""


def _check_quadrature_mu(mu: arb, what: str) -> None:
    """Raise NotApplicable naming sigma where mu > :data:`_MAX_QUAD_MU`."""
    m = float(mu.mid())
    if not (m <= _MAX_QUAD_MU):
        raise NotApplicable(
            f"{what}: sigma = {1.0 / m:.6g} < {1.0 / _MAX_QUAD_MU:g}: the certified quadrature "
            f"of the subsampled Gaussian (integrands varying on the scale sigma over "
            f"[-T, 1/sigma + T]) has no bounded cost there")


class SubsampledGaussianLaw:
    """Quadrature of PLLR moments of the Poisson-subsampled Gaussian under P or Q."""

    def __init__(self, mu: arb, p: arb, under_q: bool) -> None:
        _check_quadrature_mu(mu, "subsampled-Gaussian PLLR moments")
        self.mu, self.p, self.q = mu, p, under_q
        self.half = mu * mu / 2
        self.inv_sqrt_2pi = 1 / (2 * arb.pi()).sqrt()
        # [A, B] with A <= mu/2 <= B; tails below 2^-prec times the moment scale.
        scale = max(1.0, -math.log(max(float(p.mid()), 1e-300)))
        t = math.ceil(math.sqrt(2.0 * (ctx.prec * math.log(2.0) + 4.0 * scale + 20.0)))
        self.a = arb(-t)
        self.b = arb(math.ceil(float(mu.mid())) + t)

    # integrand pieces ---------------------------------------------------------------------
    def lr(self, x):
        """The likelihood ratio 1 - p + p e^{mu x - mu^2/2} (= q/p, entire)."""
        return 1 - self.p + self.p * (self.mu * x - self.half).exp()

    def weight(self, x):
        """The density of x under P (N(0, 1)) or Q (the mixture)."""
        w = (-x * x / 2).exp() * self.inv_sqrt_2pi
        return w * self.lr(x) if self.q else w

    def _pllr(self, x, analytic: bool):
        return self.lr(x).log(analytic=analytic)

    def integral(self, j: int, c: arb, lo: arb, hi: arb) -> arb:
        """Enclosure of int_lo^hi (L - c)^j w(x) dx (acb.integral, analyticity checked).

        The deadline of a time budget is checked at every evaluation of the integrand
        (:func:`certify.budget.integral`): an over-budget moment computation stops within one
        evaluation instead of finishing its integrals (up to ~3 s at sigma 0.05); a finished
        one is unchanged."""
        def f(x, analytic):
            return ipow(self._pllr(x, analytic) - c, j) * self.weight(x)

        val = integral(f, lo, hi, "in the subsampled-Gaussian moment quadrature")
        if not val.is_finite():
            raise ArithmeticError("acb.integral returned a non-finite enclosure")
        if not val.imag.contains(0):
            raise ArithmeticError("the real integrand produced a non-real enclosure")
        return val.real

    def point(self, j: int, c: arb, x: arb) -> arb:
        """(L - c)^j w at a real ball x (Arb real arithmetic)."""
        return ipow(self.lr(x).log() - c, j) * self.weight(x)

    # tails --------------------------------------------------------------------------------
    def left_tail(self, j: int, c: arb) -> arb:
        """Upper bound of int_{-inf}^A |L - c|^j w: |L - c| <= -log(1-p) + |c| for x <= mu/2."""
        bound = -(-self.p).log1p() + abs(c)
        mass = normal_sf(-self.a) if not self.q else (  # Phi(A) = Phibar(-A), no cancellation
            (1 - self.p) * normal_sf(-self.a) + self.p * normal_sf(self.mu - self.a)
        )
        return ipow(bound, j) * mass

    def right_tail(self, j: int, c: arb) -> arb:
        """Upper bound of int_B^inf |L - c|^j w: |L - c| <= mu x + |c| for x >= mu/2."""
        jb = _gauss_tail_moments(self.b, j)
        if self.q:
            js = _gauss_tail_moments(self.b - self.mu, j)
            raw = [(1 - self.p) * jb[i]
                   + self.p * sum(math.comb(i, k) * ipow(self.mu, i - k) * js[k]
                                  for k in range(i + 1))
                   for i in range(j + 1)]
        else:
            raw = jb
        ac = abs(c)
        return sum(math.comb(j, i) * ipow(self.mu, i) * ipow(ac, j - i) * raw[i]
                   for i in range(j + 1))

    # moments ------------------------------------------------------------------------------
    def crossing(self, c: arb) -> arb:
        """x with L(x) = c (L is increasing); needs e^c > 1 - p."""
        return (((c.exp() - 1 + self.p) / self.p).log() + self.half) / self.mu

    def law(self) -> LawMoments:
        """Certified moments of L under P (or Q) (module docstring)."""
        # 1) a float-accurate centre c (exact dyadic) from a first quadrature of the mean
        m0 = self.integral(1, arb(0), self.a, self.b)
        c = arb(float(m0.mid()))
        if not (c.exp() > 1 - self.p):  # L > log(1-p) everywhere, so the mean is too
            c = arb(0)
        xc = self.crossing(c)
        s = arb(float(xc.mid()))
        if not (self.a < s < self.b):
            raise ArithmeticError("the split point of the absolute moments left [A, B]")
        hull = s.union(xc)
        raw, absolute = {}, {}
        for j in range(1, 5):
            lt, rt = self.left_tail(j, c), self.right_tail(j, c)
            left = self.integral(j, c, self.a, s)
            right = self.integral(j, c, s, self.b)
            raw[j] = left + right + symmetric_ball(lt) + symmetric_ball(rt)
            if j in (1, 3):
                sliver = (xc - s) * self.point(j, c, hull)
                absolute[j] = -left + right - 2 * sliver + symmetric_ball(lt) + symmetric_ball(rt)
        d = raw[1]  # m - c
        mean = c + d
        m2 = raw[2] - d * d
        m3 = raw[3] - 3 * d * raw[2] + 2 * ipow(d, 3)
        m4 = raw[4] - 4 * d * raw[3] + 6 * d * d * raw[2] - 3 * ipow(d, 4)
        ad = abs(d)
        a1 = absolute[1] + symmetric_ball(ad)
        a3 = absolute[3] + symmetric_ball(3 * ad * (raw[2] + 2 * ad * absolute[1] + ad * ad))
        # absolute moments are >= 0: drop the negative part of the balls
        return central_to_cumulants(mean, m2, m3, m4, nonneg(a1), nonneg(a3))


_SG_ASSUMPTIONS = (
    "subsampled Gaussian tails: for x <= mu/2, log(1-p) < L(x) <= 0, so |L - c| <= -log(1-p) "
    "+ |c| (tail mass Phi(A) under P, (1-p)Phi(A) + p Phi(A - mu) under Q, via erfc)",
    "subsampled Gaussian tails: for x >= mu/2, 0 <= L(x) <= mu x - mu^2/2 <= mu x, so "
    "|L - c|^j <= (mu x + |c|)^j, integrated exactly against the Gaussian tail moments",
    "quadrature: flint.acb.integral on [-T, mu + T] with the analyticity of log verified on "
    "complex balls; absolute moments split at the crossing L = c (mean-value enclosure of the "
    "sliver) and shifted to the exact mean by |(|u-d|^3 - |u|^3)| <= 3|d|(|u|+|d|)^2",
)


def _rate_one(mech: PoissonSubsampledGaussian) -> bool:
    """True when the exact rate (the typed decimal where recorded) is 1: the Gaussian mechanism."""
    return exact_param(mech, "rate") == 1


def _moments(mech: PoissonSubsampledGaussian) -> PLLRMoments:
    mu = 1 / exact_ball(exact_param(mech, "sigma"))
    if _rate_one(mech):
        return symmetric_pair(gaussian_law(mu), "closed form: rate 1 is the Gaussian mechanism")
    p = exact_ball(exact_param(mech, "rate"))
    x = SubsampledGaussianLaw(mu, p, under_q=False).law()
    y = SubsampledGaussianLaw(mu, p, under_q=True).law()
    return PLLRMoments(
        x, y,
        "rigorous quadrature (flint.acb.integral) of (L - c)^j against N(0,1) (P) and "
        "(1-p)N(0,1) + pN(mu,1) (Q) on a finite interval, plus analytic tail enclosures",
        _SG_ASSUMPTIONS,
    )


# --------------------------------------------------------------------------------------------
# absolutely continuous components


def _density_lower(law: SubsampledGaussianLaw, x1: float, x2: float, pieces: int) -> arb:
    """Lower bound of the PLLR density w(x)/L'(x) over x in [x1, x2] (Arb on subintervals)."""
    mu, p, half = law.mu, law.p, law.half
    best = None
    h = (x2 - x1) / pieces
    for i in range(pieces):
        xb = arb(x1 + i * h).union(arb(x1 + (i + 1) * h))
        e = (mu * xb - half).exp()
        lr = 1 - p + p * e
        g = law.weight(xb) * lr / (p * mu * e)  # w / L', L' = p mu e^u / lr
        lo = g.lower()
        if best is None or lo < best:
            best = lo
    return arb(best) if best > 0 else arb(0)


_SG_WINDOWS = tuple((a, a + w) for a in (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)
                    for w in (0.5, 1.0, 2.0, 3.0, 4.0))


def _continuous(mech: PoissonSubsampledGaussian) -> ContinuousPart | None:
    mu = 1 / exact_ball(exact_param(mech, "sigma"))
    if _rate_one(mech):
        return normal_continuous_part(mu, "rate 1: normal PLLR")
    p = exact_ball(exact_param(mech, "rate"))
    out = []
    for under_q in (False, True):
        law = SubsampledGaussianLaw(mu, p, under_q)
        cands = []
        for x1, x2 in _SG_WINDOWS:
            f0 = _density_lower(law, x1, x2, 32)
            length = law.lr(arb(x2)).log() - law.lr(arb(x1)).log()
            if f0 > 0 and length > 0:
                cands.append((f0, lower_end(length)))
        out.append(tuple(cands))
    return ContinuousPart(
        out[0], out[1],
        "subsampled Gaussian: L is increasing, so the PLLR density is w(x)/L'(x) at x = "
        "L^-1(v); lower bounds of w/L' on x-windows by Arb interval evaluation on 32 "
        "subintervals, lengths L(x2) - L(x1)",
    )


# --------------------------------------------------------------------------------------------
# lattice step


@lru_cache(maxsize=256)
def _step_constants(sigma: float | Fraction, rate: float | Fraction, prec: int
                    ) -> tuple[arb, arb, arb, arb]:
    """(p, 1 - p, mu = 1/sigma, mu^2/2) of a subsampled Gaussian step at working precision
    ``prec``: the balls :meth:`SubsampledGaussianStep.delta_tails` would compute on every call
    (the same operations at the same precision, so bit-identical; built afresh they cost as much
    as the two normal tails of the call, measured)."""
    p = exact_ball(rate)
    mu = arb(1) / exact_ball(sigma)
    return p, 1 - p, mu, mu * mu / 2


@dataclass(frozen=True)
class SubsampledGaussianStep(LatticeStep):
    """Poisson-subsampled Gaussian (mu = 1/sigma, rate p < 1) in order P||Q or Q||P."""

    sigma: float | Fraction
    rate: float | Fraction
    swapped: bool = False
    shared_tails = True  # class attribute, not a field: delta_tails shares x and the erfcs

    def _x(self, v: arb) -> arb:
        """x with L(x) = log v: (log((v - 1 + p)/p) + mu^2/2)/mu (needs v > 1 - p)."""
        p, keep, mu, half_mu2 = _step_constants(self.sigma, self.rate, ctx.prec)
        return (((v - keep) / p).log() + half_mu2) / mu

    def delta(self, eps: arb) -> arb:
        return self.delta_tails(eps)[0]

    def tails(self, s: arb) -> tuple[arb, arb]:
        return self.delta_tails(s)[1:]

    def delta_tails(self, s: arb) -> tuple[arb, arb, arb]:
        """``delta(s)`` and ``tails(s)`` sharing x and the two normal tails (:meth:`delta` and
        :meth:`tails` are its parts: the erfcs are the cost, the rest a few products)."""
        p, keep, mu, _ = _step_constants(self.sigma, self.rate, ctx.prec)
        if not self.swapped:
            t = s.exp()
            if t <= keep:
                return 1 - t, arb(1), arb(1)
            if not t > keep:
                raise ArithmeticError("cannot place e^s against 1 - p")
            x = self._x(t)
            a, b = normal_sf(x), normal_sf(x - mu)
            return (keep - t) * a + p * b, keep * a + p * b, a
        u = (-s).exp()
        if u <= keep:
            return arb(0), arb(0), arb(0)
        if not u > keep:
            raise ArithmeticError("cannot place e^-s against 1 - p")
        t = s.exp()
        x = self._x(u)
        a, b = normal_cdf(x), normal_cdf(x - mu)
        return (1 - t * keep) * a - t * p * b, a, keep * a + p * b

    def rough_std(self) -> float:
        mu = 1.0 / float(self.sigma)
        return math.sqrt(max(float(self.rate)**2 * math.expm1(min(mu * mu, 700.0)), 1e-300))

    def describe(self) -> str:
        order = "Q||P" if self.swapped else "P||Q"
        return (f"PoissonSubsampledGaussian(sigma={show(self.sigma)}, rate={show(self.rate)}) "
                f"{order}")


def _lattice_step(mech: PoissonSubsampledGaussian, direction: str) -> LatticeStep:
    if _rate_one(mech):
        return GaussianStep(exact_param(mech, "sigma"))
    return SubsampledGaussianStep(exact_param(mech, "sigma"), exact_param(mech, "rate"),
                                  direction == DIRECTION_QP)


# --------------------------------------------------------------------------------------------
# Chernoff


def _exact_sum(sigma: float | Fraction, rate: float | Fraction, k: int) -> arb:
    """E_P[(q/p)^k] = sum_j C(k,j)(1-p)^(k-j) p^j e^(j(j-1)mu^2/2), exactly in Arb."""
    mu = 1 / exact_ball(sigma)
    half = mu * mu / 2
    p = exact_ball(rate)
    q = 1 - p
    total = arb(0)
    binom = 1
    for j in range(k + 1):
        total += arb(fmpz(binom)) * q ** (k - j) * p ** j * (j * (j - 1) * half).exp()
        binom = binom * (k - j) // (j + 1)
    return total


@lru_cache(maxsize=256)  # one per (mu, rate): heterogeneous compositions reuse every grid
def _float_grid(mu: float, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Float rule for E_P[w^s]: log weights (Gauss-Legendre x phi) and log w at the nodes.

    Raises:
        BudgetExceeded: naming sigma, before allocating, where the rule needs more than the
            numeric quadrature's node budget (sigma below ~0.0027).
    """
    check_quadrature_budget(mu, rate, "the certified Chernoff bound's float guide and others")
    width = min(0.5, 1.0 / mu)
    a, b = -40.0, mu + 40.0
    x, w = gauss_legendre_panels(a, b, math.ceil((b - a) / width), 24)
    logw = np.log(w) - 0.5 * x * x - 0.5 * math.log(2 * math.pi)
    return logw, subsampled_gaussian_pllr(x, mu, rate)


_CHERNOFF_TOL_SLACK = 48
"""The Chernoff CGF asks :func:`sg_power_moment` for 2^-(prec - 48) relative accuracy, not
2^-prec: 80 bits at the bound's first precision, 128, of which the bound keeps 40 (its precision
loop stops at 40 relative bits of the composed value), and log E_P[w^s] keeps 80 - 24 bits even
where E_P[w^s] is 1 + 6e-8. The result is an enclosure at any tolerance. Measured 2026-12-03:
at 128 bits the quadrature takes ~40% fewer evaluations (sigma 1.1, rate 0.01, s = 2.41 and
1 - 2.41: 1249 -> 778; 1000 distinct noise levels make 2000 such quadratures), and where the
full tolerance made ``acb.integral`` give up (sigma 0.5, rate 0.5, one step, delta 1e-10:
ArithmeticError at every precision) it returns 13.96, above the lattice's [13.3625, 13.3633]."""


def sg_power_moment(sigma: float | Fraction, rate: float | Fraction, s: arb,
                    rel_tol_bits: int | None = None) -> arb:
    r"""Enclosure of :math:`E_P[w^s]`, w = q/p, for the Poisson-subsampled Gaussian, s real.

    :math:`w(x) = 1 - p + p e^{\mu x - \mu^2/2}`, P = N(0, 1), mu = 1/sigma, rate p < 1, at the
    current Arb precision: ``acb.integral`` (analyticity of log w checked on complex balls) on
    [-T, B] plus a tail enclosure :math:`[0, t]`. Since w is a convex combination of 1 and
    :math:`e^u`, :math:`u = \mu x - \mu^2/2`, we have :math:`1 - p \le w` and
    :math:`w \le \max(1, e^u)`. For s < 0 this gives :math:`w^s \le (1-p)^s` everywhere, so
    :math:`t = (1-p)^s(\bar\Phi(T) + \bar\Phi(B))`. For s > 0: left of -T <= mu/2 (u <= 0),
    :math:`w^s \le 1`; right of B >= mu/2, :math:`w^s \le e^{su}` and
    :math:`\int_B^\infty \varphi(x) e^{su}\,dx = e^{s(s-1)\mu^2/2}\bar\Phi(B - s\mu)`.
    E_Q[(p/q)^alpha] is the case s = 1 - alpha.

    ``rel_tol_bits``: the quadrature stops subdividing at :math:`2^{-rel\_tol\_bits}` relative
    accuracy (None: the precision's, as ``acb.integral``); the result is an enclosure either way
    (the Chernoff bound asks for :data:`_CHERNOFF_TOL_SLACK` bits less than its precision).

    Raises:
        ArithmeticError: if the quadrature does not return a finite real enclosure.
        NotApplicable: for sigma < 0.05 (:data:`_MAX_QUAD_MU`), before any work.
    """
    mu = 1 / exact_ball(sigma)
    _check_quadrature_mu(mu, "subsampled-Gaussian E_P[w^s]")
    half = mu * mu / 2
    p = exact_ball(rate)
    c = 1 / (2 * arb.pi()).sqrt()
    shift = -(-p).log1p()  # -log(1 - p) >= 0
    sf_, muf = float(s.mid()), 1.0 / float(sigma)
    grow = max(0.0, -sf_ * float(shift.upper()), sf_ * (sf_ - 1.0) * muf * muf / 2.0)
    t = math.ceil(math.sqrt(2.0 * (ctx.prec * math.log(2.0) + grow + 20.0)))
    lo, hi = arb(-t), arb(math.ceil(max(1.0, sf_) * muf) + t)

    def f(z: acb, analytic: bool) -> acb:
        w = 1 - p + p * (mu * z - half).exp()
        return (-z * z / 2).exp() * c * (s * w.log(analytic=analytic)).exp()

    val = integral(f, lo, hi, "in the subsampled-Gaussian Chernoff quadrature",
                   None if rel_tol_bits is None else 2.0 ** -rel_tol_bits)
    if not val.is_finite() or not val.imag.contains(0):
        raise ArithmeticError("acb.integral did not return a finite real enclosure")
    if s < 0:
        tail = (-s * shift).exp() * (normal_sf(-lo) + normal_sf(hi))
    elif s >= 0:
        tail = normal_sf(-lo) + (s * (s - 1) * half).exp() * normal_sf(hi - s * mu)
    else:
        raise ArithmeticError("the sign of the exponent s is undecided")
    return val.real + arb(0).union(arb(tail.upper()))


_QUAD_NOTE = (
    " (quadrature: flint.acb.integral on [-T, B], analyticity verified; tails bounded with "
    "1 - p <= w <= max(1, e^(mu x - mu^2/2)))"
)


def _log_exact_sum_float(mu: float, rate: float, k: int) -> float:
    """log E_P[(q/p)^k] in floats, log-sum-exp over the terms of :func:`_exact_sum` (a guide for
    choosing the order only; no overflow at any mu)."""
    half = 0.5 * mu * mu
    terms = [math.lgamma(k + 1) - math.lgamma(j + 1) - math.lgamma(k - j + 1)
             + (k - j) * math.log1p(-rate) + j * math.log(rate) + j * (j - 1) * half
             for j in range(k + 1)]
    top = max(terms)
    return top + math.log(math.fsum(math.exp(t - top) for t in terms))


def _sg_cgf_small_sigma(sigma: float | Fraction, rate: float | Fraction,
                        direction: str) -> StepCGF:
    r"""The Chernoff CGF where the certified quadrature refuses (mu > :data:`_MAX_QUAD_MU`).

    P||Q: integer orders only, by the exact finite sum :func:`_exact_sum` (no quadrature; Arb
    carries e^{j(j-1) mu^2/2} at any mu).

    Q||P: :math:`\Lambda(\alpha) = \log E_P[w^{1-\alpha}]` is enclosed in
    :math:`[0, (\alpha - 1)(-\log(1-p))]` for every real alpha > 1. Proof: w = q/p >= 1 - p
    pointwise (w is 1 - p plus a positive term) and 1 - alpha < 0, so
    :math:`w^{1-\alpha} \le (1-p)^{1-\alpha}`; and :math:`x \mapsto x^{1-\alpha}` is convex on
    (0, inf) with E_P[w] = 1, so Jensen gives :math:`E_P[w^{1-\alpha}] \ge 1`. (The PLLR of this
    order is -L <= -log(1 - p): a bounded loss; the upper end is what the Chernoff bound uses.)
    """
    mu_f, rate_f = 1.0 / float(sigma), float(rate)
    if direction == DIRECTION_PQ:
        def fl(a: float) -> float:
            k = round(a)
            if k != a or not 2 <= k <= INT_ORDER_MAX:
                return math.inf
            return _log_exact_sum_float(mu_f, rate_f, k)

        def cert(a: arb) -> arb:
            k = round(float(a.mid()))
            if not (a == k and 2 <= k <= INT_ORDER_MAX):
                raise NotApplicable(
                    f"subsampled Gaussian with sigma = {float(sigma):.6g} < "
                    f"{1.0 / _MAX_QUAD_MU:g}: only integer Renyi orders 2..{INT_ORDER_MAX} are "
                    f"certified (exact sums), got alpha = {a}")
            return _exact_sum(sigma, rate, k).log()

        note = ("subsampled Gaussian (P||Q), sigma below the certified quadrature's range: "
                "integer orders only, E_P[(q/p)^k] = sum_j C(k,j)(1-p)^(k-j) p^j "
                "e^(j(j-1)mu^2/2) (Mironov, Talwar, Zhang 2019, Sec. 3.3); mu = 1/sigma exactly")
        return StepCGF(fl, cert, True, note)
    shift_f = -math.log1p(-rate_f)

    def fl_back(a: float) -> float:
        return (a - 1.0) * shift_f

    def cert_back(a: arb) -> arb:
        shift = -(-exact_ball(rate)).log1p()  # -log(1 - p) >= 0
        return arb(0).union((a - 1) * shift)

    note = ("subsampled Gaussian (Q||P), sigma below the certified quadrature's range: "
            "log E_P[w^(1-alpha)] in [0, (alpha-1)(-log(1-p))] (w >= 1 - p; Jensen with "
            "E_P[w] = 1)")
    return StepCGF(fl_back, cert_back, False, note)


def _sg_cgf(sigma: float | Fraction, rate: float | Fraction, direction: str) -> StepCGF:
    """log E_P[w^alpha] (P||Q) or log E_Q[(p/q)^alpha] = log E_P[w^(1-alpha)] (Q||P)."""
    if not (1.0 / float(sigma) <= _MAX_QUAD_MU):  # the quadrature would refuse (as sg_power_moment)
        return _sg_cgf_small_sigma(sigma, rate, direction)
    forward = direction == DIRECTION_PQ

    def expo(a):
        return a if forward else 1 - a

    grid: list = []  # this step's float rule, kept for its whole search (the shared cache
    # holds 256 rules: 1000 distinct noise levels evicted every rule at every order tried, and
    # rebuilding them was 16 s of a 27 s Chernoff bound, measured 2026-12-03)

    def fl(a: float) -> float:
        if not grid:
            grid.append(_float_grid(1.0 / float(sigma), float(rate)))
        logw, L = grid[0]
        t = logw + expo(a) * L
        m = float(t.max())
        return m + math.log(float(np.exp(t - m).sum()))

    def cert(a: arb) -> arb:
        k = round(float(a.mid()))
        if forward and a == k and 2 <= k <= INT_ORDER_MAX:
            return _exact_sum(sigma, rate, k).log()
        return sg_power_moment(sigma, rate, expo(a), ctx.prec - _CHERNOFF_TOL_SLACK).log()

    if forward:
        note = ("subsampled Gaussian (P||Q): E_P[(q/p)^k] = sum_j C(k,j)(1-p)^(k-j) p^j "
                "e^(j(j-1)mu^2/2) at integer k (Mironov, Talwar, Zhang 2019), else certified "
                "quadrature of E_P[w^alpha]; mu = 1/sigma exactly")
    else:
        note = ("subsampled Gaussian (Q||P): E_Q[(p/q)^alpha] = E_P[w^(1-alpha)] by certified "
                "quadrature; mu = 1/sigma exactly")
    def cost(a: float) -> float:
        e = expo(a)
        if forward and a == round(a) and 2 <= a <= INT_ORDER_MAX:
            return 0.0  # the exact binomial sum
        if e < 0:
            return min(_QUAD_SECONDS_NEG * -e / float(sigma) ** 2, _QUAD_SECONDS_NEG_CAP)
        return _QUAD_SECONDS * max(1.0, e) / float(sigma) ** 2

    return StepCGF(fl, cert, False, note + _QUAD_NOTE, cost)


def _chernoff(mech: PoissonSubsampledGaussian, direction: str) -> StepCGF:
    if _rate_one(mech):
        sig = exact_param(mech, "sigma")
        return gaussian_cgf(lambda: 1 / exact_ball(sig) ** 2, mech.mu ** 2,
                            "subsampled Gaussian at rate 1 is the Gaussian mechanism")
    return _sg_cgf(exact_param(mech, "sigma"), exact_param(mech, "rate"), direction)


# --------------------------------------------------------------------------------------------
# exact profile (rate 1 only) and registration


def _exact_profile(mech: PoissonSubsampledGaussian, count: int) -> ExactComposition:
    if not _rate_one(mech):
        raise NotApplicable(
            f"exact: does not apply to PoissonSubsampledGaussian with rate {mech.rate!r} < 1 (no "
            "exact privacy profile; exact certified profiles exist for Gaussian and "
            "pure/approximate-DP compositions only; the other certified methods (lattice, EEAI, "
            "Chernoff) still apply)"
        )
    # rate 1 is the Gaussian mechanism with mu = 1/sigma, exactly (the typed decimal, else the
    # binary64 sigma): not the rounded float (1/sigma)^2, which would certify a nearby mechanism
    return ExactComposition(gaussian=((1 / Fraction(exact_param(mech, "sigma")), count),))


register_certified(PoissonSubsampledGaussian, CertifiedMechanism(
    "PoissonSubsampledGaussian",
    moments=_moments,
    continuous_parts=_continuous,
    lattice_step=_lattice_step,
    chernoff=_chernoff,
    exact_profile=_exact_profile,
    normal_pllr=lambda mech: _rate_one(mech),
))
