r"""Certified moments of the privacy-loss log-likelihood ratio (PLLR), in Arb ball arithmetic.

For a dominating pair (P, Q) with PLLR ``L = log q/p`` (MATH.md section 1; Wang, Gao, Zhang,
Shen, Su, *Analytical Composition of Differential Privacy via the Edgeworth Accountant*,
arXiv:2206.04236), X = L under P and Y = L under Q. This module encloses, per mechanism and for
both laws,

* the cumulants :math:`\kappa_1, \dots, \kappa_4`,
* the absolute central moments :math:`E|L - EL|` and :math:`E|L - EL|^3`,

from which the uniform Edgeworth error bounds of :mod:`certify.eeai` are built (the fourth
central moment is :math:`\mu_4 = \kappa_4 + 3\kappa_2^2`). Every number is an Arb ball that
contains the exact value (python-flint; Johansson, IEEE Trans. Computers 2017).

Per mechanism (dispatched with :func:`functools.singledispatch` on the :mod:`numeric` class):

* **Gaussian** (mu = sensitivity/sigma): X ~ N(-mu^2/2, mu^2), Y ~ N(mu^2/2, mu^2); closed forms
  :math:`E|Z| = \sigma\sqrt{2/\pi}`, :math:`E|Z|^3 = 2\sigma^3\sqrt{2/\pi}` for Z ~ N(0, sigma^2).
* **Laplace** (mu = sensitivity/scale): under P = Lap(0, 1), L = |x| - |x - mu| has an atom
  -mu of mass 1/2, an atom +mu of mass e^{-mu}/2 and L = 2x - mu with density e^{-x}/2 on
  (0, mu). With m = EX = 1 - mu - e^{-mu} and c = mu + m = 1 - e^{-mu}, the continuous part of
  every central moment is :math:`\tfrac12 I_k(0, \mu)` with

  .. math::

      I_k(\alpha, \beta) = \int_\alpha^\beta (2x - c)^k e^{-x}\,dx
        = (2\alpha - c)^k e^{-\alpha} - (2\beta - c)^k e^{-\beta} + 2k\, I_{k-1}(\alpha, \beta),
      \qquad I_0 = e^{-\alpha} - e^{-\beta}

  (integration by parts, exact). The absolute moments split at x = c/2, where 2x - c changes
  sign: :math:`E|L - m|^k = \tfrac12|{-\mu} - m|^k + \tfrac{e^{-\mu}}{2}(\mu - m)^k
  + \tfrac12[(-1)^k I_k(0, c/2) + I_k(c/2, \mu)]`. The pair is symmetric, Y =d -X.
* **Randomized response / ApproxDP** (eps0 > 0): X = +eps0 with probability
  a = 1/(1 + e^{eps0}), else -eps0; the central values are 2 eps0 (1 - a) and -2 eps0 a, so
  :math:`E|X - m|^k = a(2\varepsilon_0(1-a))^k + (1-a)(2\varepsilon_0 a)^k` exactly. ApproxDP
  with eps0 = 0 has the degenerate PLLR 0 (only its delta part matters).
* **Poisson-subsampled Gaussian** (rate p, mu = 1/sigma): L(x) = log(1 - p + p e^{mu x -
  mu^2/2}) with x ~ N(0, 1) under P and x ~ (1-p)N(0,1) + pN(mu,1) under Q; no closed form.
  Rigorous quadrature (:func:`flint.acb.integral`, which verifies analyticity of the integrand
  on complex balls through ``log(..., analytic=True)``) on [A, B] = [-T, mu + T] of
  :math:`(L - c)^j w(x)`, j = 1..4, about an exact dyadic c near the mean, plus analytic tail
  enclosures (MATH.md section 4):

  - for x <= mu/2, 1 - p < 1 - p + p e^{mu x - mu^2/2} <= 1, so log(1-p) < L <= 0 and
    :math:`|L - c| \le -\log(1-p) + |c|`; the tail mass is :math:`\Phi(A)` under P and
    :math:`(1-p)\Phi(A) + p\Phi(A - \mu)` under Q (erfc);
  - for x >= mu/2, :math:`0 \le L \le \mu x - \mu^2/2 \le \mu x`, so
    :math:`|L - c|^j \le (\mu x + |c|)^j`, integrated exactly against the Gaussian tails with
    :math:`J_i(b) = \int_b^\infty x^i\varphi = b^{i-1}\varphi(b) + (i-1) J_{i-2}(b)`,
    :math:`J_0 = \bar\Phi(b)`, :math:`J_1 = \varphi(b)`.

  The absolute moments need a split where L = c (|.| is not analytic): L is increasing, so the
  crossing is :math:`x_c = (\log((e^c - 1 + p)/p) + \mu^2/2)/\mu` (a ball). The pieces are
  integrated up to an exact dyadic s near x_c and the sliver between s and x_c is enclosed by
  the mean value theorem, :math:`\int_s^{x_c} g \in (x_c - s)\, g(\mathrm{hull}(s, x_c))`. The
  exact mean m = c + E(L - c) then gives the central moments by the binomial shift, and the
  absolute ones through :math:`\bigl||u - d| - |u|\bigr| \le |d|` and
  :math:`\bigl||u - d|^3 - |u|^3\bigr| \le 3|d|(|u| + |d|)^2` with d = m - c (tiny).

**Absolutely continuous components** (:func:`continuous_parts`, for the characteristic-function
condition of DGG's Theorem 3.1 used by :mod:`certify.eeai`): certified pairs (f0, l) such that
the PLLR law has a density >= f0 on an interval of length l -- Gaussian: phi(1)/mu on
[m - mu, m + mu]; Laplace: e^{-mu}/4 on (-mu, mu); subsampled Gaussian: the density of L(x) is
w(x)/L'(x) (L increasing), bounded below on x-windows by Arb interval evaluation. Lattice laws
(randomized response, ApproxDP) have none.

Results are cached per (mechanism, precision).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

from flint import acb, arb, ctx

from numeric.mechanisms import (
    DIRECTION_PQ,
    DIRECTION_QP,
    ApproxDP,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)

from ._generated.builtin_cumulants_arb import (
    laplace_cumulants_x,
    randomized_response_cumulants_x,
)
from .engine import DEFAULT_PRECISION, workprec

__all__ = [
    "ContinuousPart",
    "LawMoments",
    "PLLRMoments",
    "continuous_parts",
    "pllr_moments",
    "register_continuous_parts",
    "register_moments",
]


@dataclass(frozen=True)
class LawMoments:
    """Certified moments of one PLLR law (X under P, or Y under Q).

    Attributes:
        kappa1: Mean.
        kappa2: Variance.
        kappa3: Third cumulant (= third central moment).
        kappa4: Fourth cumulant.
        abs1: First absolute central moment E|L - EL|.
        abs3: Third absolute central moment E|L - EL|^3.
    """

    kappa1: arb
    kappa2: arb
    kappa3: arb
    kappa4: arb
    abs1: arb
    abs3: arb

    @property
    def mu4(self) -> arb:
        """Fourth central moment kappa4 + 3 kappa2^2."""
        return self.kappa4 + 3 * self.kappa2**2

    @property
    def beta3(self) -> arb:
        """Standardized absolute third moment E|L - EL|^3 / kappa2^{3/2} (needs kappa2 > 0)."""
        return self.abs3 / self.kappa2 ** arb(1.5)

    @property
    def kurtosis(self) -> arb:
        """Standardized fourth moment mu4 / kappa2^2 (not the excess; needs kappa2 > 0)."""
        return self.mu4 / self.kappa2**2

    @property
    def degenerate(self) -> bool:
        """True when the law is a point mass (kappa2 exactly 0)."""
        return self.kappa2.is_zero()

    def negated(self) -> LawMoments:
        """Moments of -L: odd cumulants change sign, absolute central moments do not."""
        return LawMoments(-self.kappa1, self.kappa2, -self.kappa3, self.kappa4, self.abs1,
                          self.abs3)

    def as_floats(self) -> dict[str, float]:
        """Midpoints as floats (for display and tests)."""
        return {k: float(getattr(self, k).mid()) for k in
                ("kappa1", "kappa2", "kappa3", "kappa4", "abs1", "abs3")}


@dataclass(frozen=True)
class PLLRMoments:
    """Certified moments of the PLLR of one mechanism under P (``x``) and Q (``y``).

    Attributes:
        x: Moments of X = L under P.
        y: Moments of Y = L under Q.
        provenance: How they were obtained (closed form, quadrature, ...).
        assumptions: Analytic facts the enclosure relies on (e.g. tail bounds).
        precision: Arb working precision (bits).
    """

    x: LawMoments
    y: LawMoments
    provenance: str
    assumptions: tuple[str, ...] = ()
    precision: int = 0

    def for_direction(self, direction: str) -> PLLRMoments:
        """Moments of the pair taken in ``direction``; the swap (Q, P) has X' = -Y, Y' = -X."""
        if direction == DIRECTION_PQ:
            return self
        if direction == DIRECTION_QP:
            return PLLRMoments(self.y.negated(), self.x.negated(), self.provenance,
                               self.assumptions, self.precision)
        raise ValueError(
            f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}, got {direction!r}"
        )


# --------------------------------------------------------------------------------------------
# dispatch


@functools.singledispatch
def _moments(mechanism: Mechanism) -> PLLRMoments:
    raise TypeError(
        f"no certified PLLR moments for {type(mechanism).__name__}; register an implementation "
        "with certify.moments.register_moments"
    )


register_moments = _moments.register
"""Register a certified-moments implementation for a mechanism class (singledispatch)."""


def pllr_moments(mechanism: Mechanism, *, prec: int | None = None) -> PLLRMoments:
    """Certified PLLR moments of ``mechanism`` under P and Q.

    Args:
        mechanism: A :mod:`numeric` mechanism (Gaussian, Laplace, RandomizedResponse, ApproxDP,
            PoissonSubsampledGaussian, or any class registered with :data:`register_moments`).
        prec: Arb working precision in bits (default ``engine.DEFAULT_PRECISION``).

    Returns:
        A :class:`PLLRMoments` of Arb balls.

    Raises:
        TypeError: if no implementation is registered for the mechanism's class.
    """
    bits = int(DEFAULT_PRECISION if prec is None else prec)
    return _cached(mechanism, bits)


@functools.lru_cache(maxsize=1024)
def _cached(mechanism: Mechanism, bits: int) -> PLLRMoments:
    with workprec(bits):
        out = _moments(mechanism)
    return PLLRMoments(out.x, out.y, out.provenance, out.assumptions, bits)


def _symmetric(x: LawMoments, provenance: str, assumptions: tuple[str, ...] = ()) -> PLLRMoments:
    """A symmetric pair (Y =d -X)."""
    return PLLRMoments(x, x.negated(), provenance, assumptions)


def _ipow(x, k: int):
    """x**k by repeated multiplication (python-flint's ``**`` is NaN on balls containing 0)."""
    out = x * 0 + 1
    for _ in range(k):
        out = out * x
    return out


def _central_to_cumulants(mean: arb, m2: arb, m3: arb, m4: arb, a1: arb, a3: arb) -> LawMoments:
    return LawMoments(mean, m2, m3, m4 - 3 * m2 * m2, a1, a3)


# --------------------------------------------------------------------------------------------
# Gaussian


def _gaussian_law(mu: arb) -> LawMoments:
    """X ~ N(-mu^2/2, mu^2): kappa_{>=3} = 0, E|Z| = mu sqrt(2/pi), E|Z|^3 = 2 mu^3 sqrt(2/pi)."""
    s2p = (2 / arb.pi()).sqrt()
    return LawMoments(-mu * mu / 2, mu * mu, arb(0), arb(0), mu * s2p, 2 * _ipow(mu, 3) * s2p)


@_moments.register
def _(mech: Gaussian) -> PLLRMoments:
    mu = arb(mech.sensitivity) / arb(mech.sigma)
    return _symmetric(
        _gaussian_law(mu),
        "closed form: X ~ N(-mu^2/2, mu^2), Y ~ N(mu^2/2, mu^2), mu = sensitivity/sigma; "
        "absolute normal moments E|Z| = s sqrt(2/pi), E|Z|^3 = 2 s^3 sqrt(2/pi)",
    )


# --------------------------------------------------------------------------------------------
# Laplace


def _laplace_pieces(c: arb, alpha: arb, beta: arb, kmax: int) -> list[arb]:
    """[I_0, ..., I_kmax] with I_k = int_alpha^beta (2x - c)^k e^{-x} dx (exact recursion)."""
    ea, eb = (-alpha).exp(), (-beta).exp()
    ua, ub = 2 * alpha - c, 2 * beta - c
    out = [ea - eb]
    for k in range(1, kmax + 1):
        out.append(_ipow(ua, k) * ea - _ipow(ub, k) * eb + 2 * k * out[-1])
    return out


def _laplace_law(mu: arb) -> LawMoments:
    emu = (-mu).exp()
    c = -(-mu).expm1()  # 1 - e^{-mu} = mu + m
    mean = c - mu  # 1 - mu - e^{-mu}
    lo, hi = -mu - mean, mu - mean  # atoms after centring: lo < 0 < hi
    w_lo, w_hi = arb(0.5), emu / 2
    full = _laplace_pieces(c, arb(0), mu, 4)
    left = _laplace_pieces(c, arb(0), c / 2, 3)
    right = _laplace_pieces(c, c / 2, mu, 3)
    central = [w_lo * _ipow(lo, k) + w_hi * _ipow(hi, k) + full[k] / 2 for k in range(5)]
    absk = {k: w_lo * _ipow(abs(lo), k) + w_hi * _ipow(abs(hi), k)
            + ((-1) ** k * left[k] + right[k]) / 2
            for k in (1, 3)}
    return _central_to_cumulants(mean, central[2], central[3], central[4], absk[1], absk[3])


def _tighten(law: LawMoments, generated: tuple[arb, arb, arb, arb]) -> LawMoments:
    """Intersect kappa_1..4 with the derive-generated closed-form Arb kernels.

    Both are rigorous enclosures of the same numbers (central moments here, the MATH.md closed
    forms printed by derive's strict Arb printer there), so their intersection is too; an empty
    intersection would mean a bug and raises.
    """
    names = ("kappa1", "kappa2", "kappa3", "kappa4")
    tight = {}
    for name, ball in zip(names, generated, strict=True):
        try:
            tight[name] = getattr(law, name).intersection(ball)
        except ValueError:
            raise ArithmeticError(f"certified {name} enclosures disagree: a bug") from None
    return dataclasses.replace(law, **tight)


@_moments.register
def _(mech: Laplace) -> PLLRMoments:
    mu = arb(mech.sensitivity) / arb(mech.scale)
    return _symmetric(
        _tighten(_laplace_law(mu), laplace_cumulants_x(mu)),
        "closed form: atoms -mu (1/2), +mu (e^-mu/2) and L = 2x - mu on (0, mu) with density "
        "e^-x/2; polynomial-times-exponential integrals by exact integration by parts, the "
        "absolute moments split at x = (1 - e^-mu)/2 where L = EL",
    )


# --------------------------------------------------------------------------------------------
# randomized response / ApproxDP


def _two_point_law(eps0: arb) -> LawMoments:
    if eps0.is_zero():
        zero = arb(0)
        return LawMoments(zero, zero, zero, zero, zero, zero)
    a = 1 / (1 + eps0.exp())  # P(X = +eps0)
    b = 1 / (1 + (-eps0).exp())  # 1 - a
    mean = -eps0 * (eps0 / 2).tanh()
    up, down = 2 * eps0 * b, 2 * eps0 * a  # X - m in {+up (prob a), -down (prob b)}

    def central(k: int) -> arb:
        return a * _ipow(up, k) + b * _ipow(-down, k)

    def absolute(k: int) -> arb:
        return a * _ipow(up, k) + b * _ipow(down, k)

    return _central_to_cumulants(mean, central(2), central(3), central(4), absolute(1),
                                 absolute(3))


_TWO_POINT = ("exact two-point law: X = +eps0 w.p. 1/(1+e^eps0), else -eps0; Y =d -X")


@_moments.register
def _(mech: RandomizedResponse) -> PLLRMoments:
    eps0 = arb(mech.eps)
    return _symmetric(_tighten(_two_point_law(eps0), randomized_response_cumulants_x(eps0)),
                      _TWO_POINT)


@_moments.register
def _(mech: ApproxDP) -> PLLRMoments:
    return _symmetric(_two_point_law(arb(mech.eps)),
                      _TWO_POINT + " (pure part only; the delta part composes by GDP Eq. 12-13)")


# --------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian


def _phi(x: arb) -> arb:
    return (-x * x / 2).exp() / (2 * arb.pi()).sqrt()


def _sf(x: arb) -> arb:
    """Standard normal survival function Phibar(x) = erfc(x / sqrt 2) / 2."""
    return (x / arb(2).sqrt()).erfc() / 2


def _gauss_tail_moments(b: arb, imax: int) -> list[arb]:
    """[J_0(b), ..., J_imax(b)], J_i(b) = int_b^inf x^i phi(x) dx (exact recursion)."""
    out = [_sf(b), _phi(b)]
    for i in range(2, imax + 1):
        out.append(_ipow(b, i - 1) * _phi(b) + (i - 1) * out[i - 2])
    return out[: imax + 1]


def _pm(t: arb) -> arb:
    """The ball [-|t|, |t|] (an enclosure of any number of modulus at most t)."""
    u = arb(abs(t).upper())
    return u.union(-u)


class _SubsampledGaussianLaw:
    """Quadrature of PLLR moments of the Poisson-subsampled Gaussian under P or Q."""

    def __init__(self, mu: arb, p: arb, under_q: bool) -> None:
        self.mu, self.p, self.q = mu, p, under_q
        self.half = mu * mu / 2
        self.inv_sqrt_2pi = 1 / (2 * arb.pi()).sqrt()
        # [A, B] with A <= mu/2 <= B; tails below 2^-prec times the moment scale.
        scale = max(1.0, -math.log(max(float(p.mid()), 1e-300)))
        t = math.ceil(math.sqrt(2.0 * (ctx.prec * math.log(2.0) + 4.0 * scale + 20.0)))
        self.a = arb(-t)
        self.b = arb(math.ceil(float(mu.mid())) + t)

    # integrand pieces ---------------------------------------------------------------------
    def _lr(self, x):  # 1 - p + p e^{mu x - mu^2/2}  (= q/p, entire)
        return 1 - self.p + self.p * (self.mu * x - self.half).exp()

    def _weight(self, x):
        w = (-x * x / 2).exp() * self.inv_sqrt_2pi
        return w * self._lr(x) if self.q else w

    def _pllr(self, x, analytic: bool):
        return self._lr(x).log(analytic=analytic)

    def integral(self, j: int, c: arb, lo: arb, hi: arb) -> arb:
        """Enclosure of int_lo^hi (L - c)^j w(x) dx (acb.integral, analyticity checked)."""

        def f(x, analytic):
            return _ipow(self._pllr(x, analytic) - c, j) * self._weight(x)

        val = acb.integral(f, lo, hi)
        if not val.is_finite():
            raise ArithmeticError("acb.integral returned a non-finite enclosure")
        if not val.imag.contains(0):
            raise ArithmeticError("the real integrand produced a non-real enclosure")
        return val.real

    def point(self, j: int, c: arb, x: arb) -> arb:
        """(L - c)^j w at a real ball x (Arb real arithmetic)."""
        return _ipow(self._lr(x).log() - c, j) * self._weight(x)

    # tails --------------------------------------------------------------------------------
    def left_tail(self, j: int, c: arb) -> arb:
        """Upper bound of int_{-inf}^A |L - c|^j w: |L - c| <= -log(1-p) + |c| for x <= mu/2."""
        bound = -(-self.p).log1p() + abs(c)
        mass = _sf(-self.a) if not self.q else (  # Phi(A) = Phibar(-A), no cancellation
            (1 - self.p) * _sf(-self.a) + self.p * _sf(self.mu - self.a)
        )
        return _ipow(bound, j) * mass

    def right_tail(self, j: int, c: arb) -> arb:
        """Upper bound of int_B^inf |L - c|^j w: |L - c| <= mu x + |c| for x >= mu/2."""
        jb = _gauss_tail_moments(self.b, j)
        if self.q:
            js = _gauss_tail_moments(self.b - self.mu, j)
            raw = [(1 - self.p) * jb[i]
                   + self.p * sum(math.comb(i, k) * _ipow(self.mu, i - k) * js[k]
                                  for k in range(i + 1))
                   for i in range(j + 1)]
        else:
            raw = jb
        ac = abs(c)
        return sum(math.comb(j, i) * _ipow(self.mu, i) * _ipow(ac, j - i) * raw[i]
                   for i in range(j + 1))

    # moments ------------------------------------------------------------------------------
    def crossing(self, c: arb) -> arb:
        """x with L(x) = c (L is increasing); needs e^c > 1 - p."""
        return (((c.exp() - 1 + self.p) / self.p).log() + self.half) / self.mu

    def law(self) -> LawMoments:
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
            raw[j] = left + right + _pm(lt) + _pm(rt)
            if j in (1, 3):
                sliver = (xc - s) * self.point(j, c, hull)
                absolute[j] = -left + right - 2 * sliver + _pm(lt) + _pm(rt)
        d = raw[1]  # m - c
        mean = c + d
        m2 = raw[2] - d * d
        m3 = raw[3] - 3 * d * raw[2] + 2 * _ipow(d, 3)
        m4 = raw[4] - 4 * d * raw[3] + 6 * d * d * raw[2] - 3 * _ipow(d, 4)
        ad = abs(d)
        a1 = absolute[1] + _pm(ad)
        a3 = absolute[3] + _pm(3 * ad * (raw[2] + 2 * ad * absolute[1] + ad * ad))
        # absolute moments are >= 0: drop the negative part of the balls
        return _central_to_cumulants(mean, m2, m3, m4, _nonneg(a1), _nonneg(a3))


def _nonneg(x: arb) -> arb:
    """Intersect an enclosure of a non-negative quantity with [0, inf)."""
    if x >= 0:
        return x
    return arb(0).union(arb(x.upper())) if x.upper() > 0 else arb(0)


_SG_ASSUMPTIONS = (
    "subsampled Gaussian tails: for x <= mu/2, log(1-p) < L(x) <= 0, so |L - c| <= -log(1-p) "
    "+ |c| (tail mass Phi(A) under P, (1-p)Phi(A) + p Phi(A - mu) under Q, via erfc)",
    "subsampled Gaussian tails: for x >= mu/2, 0 <= L(x) <= mu x - mu^2/2 <= mu x, so "
    "|L - c|^j <= (mu x + |c|)^j, integrated exactly against the Gaussian tail moments",
    "quadrature: flint.acb.integral on [-T, mu + T] with the analyticity of log verified on "
    "complex balls; absolute moments split at the crossing L = c (mean-value enclosure of the "
    "sliver) and shifted to the exact mean by |(|u-d|^3 - |u|^3)| <= 3|d|(|u|+|d|)^2",
)


@_moments.register
def _(mech: PoissonSubsampledGaussian) -> PLLRMoments:
    mu = 1 / arb(mech.sigma)
    if mech.rate == 1.0:
        return _symmetric(_gaussian_law(mu), "closed form: rate 1 is the Gaussian mechanism")
    p = arb(mech.rate)
    x = _SubsampledGaussianLaw(mu, p, under_q=False).law()
    y = _SubsampledGaussianLaw(mu, p, under_q=True).law()
    return PLLRMoments(
        x, y,
        "rigorous quadrature (flint.acb.integral) of (L - c)^j against N(0,1) (P) and "
        "(1-p)N(0,1) + pN(mu,1) (Q) on a finite interval, plus analytic tail enclosures",
        _SG_ASSUMPTIONS,
    )


# --------------------------------------------------------------------------------------------
# absolutely continuous components (for characteristic-function bounds)


@dataclass(frozen=True)
class ContinuousPart:
    r"""Certified absolutely continuous components of the PLLR laws.

    Each candidate ``(f0, length)`` states: the law has a density >= f0 on some interval of
    length ``length`` (PLLR units), i.e. it is :math:`\alpha U + (1 - \alpha) R` with U uniform on
    that interval and :math:`\alpha = f_0 \ell`. Then :math:`|E e^{i\omega L}| \le 1 - \alpha
    (1 - |\operatorname{sinc}(\omega\ell/2)|)`, which bounds the characteristic function away
    from 1 (used by :mod:`certify.eeai` for DGG's Cramer-type condition). Both ends are exact
    lower bounds (zero-radius balls).

    Attributes:
        x: Candidates for X = L under P.
        y: Candidates for Y = L under Q.
        provenance: How they were certified.
    """

    x: tuple[tuple[arb, arb], ...]
    y: tuple[tuple[arb, arb], ...]
    provenance: str

    def for_direction(self, direction: str) -> ContinuousPart:
        """Candidates for the pair in ``direction`` (negation keeps densities and lengths)."""
        if direction == DIRECTION_PQ:
            return self
        if direction == DIRECTION_QP:
            return ContinuousPart(self.y, self.x, self.provenance)
        raise ValueError(
            f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}, got {direction!r}"
        )


@functools.singledispatch
def _continuous(mechanism: Mechanism) -> ContinuousPart | None:
    return None  # no certificate (e.g. lattice laws such as randomized response)


register_continuous_parts = _continuous.register
"""Register an absolutely-continuous-component certificate for a mechanism class."""


def continuous_parts(mechanism: Mechanism, *, prec: int | None = None) -> ContinuousPart | None:
    """Certified absolutely continuous components of the PLLR laws, or None if unavailable.

    Args:
        mechanism: A :mod:`numeric` mechanism.
        prec: Arb precision in bits (default ``engine.DEFAULT_PRECISION``).

    Returns:
        A :class:`ContinuousPart` or None (lattice laws have no continuous component).
    """
    bits = int(DEFAULT_PRECISION if prec is None else prec)
    return _cached_continuous(mechanism, bits)


@functools.lru_cache(maxsize=256)
def _cached_continuous(mechanism: Mechanism, bits: int) -> ContinuousPart | None:
    with workprec(bits):
        return _continuous(mechanism)


def _lower(x: arb) -> arb:
    return arb(x.lower())


@_continuous.register
def _(mech: Gaussian) -> ContinuousPart:
    # N(m, mu^2) has density >= phi(1)/mu on [m - mu, m + mu].
    mu = arb(mech.sensitivity) / arb(mech.sigma)
    cand = ((_lower(_phi(arb(1)) / mu), _lower(2 * mu)),)
    return ContinuousPart(cand, cand, "normal PLLR: density >= phi(1)/mu on [m - mu, m + mu]")


@_continuous.register
def _(mech: Laplace) -> ContinuousPart:
    # L = 2x - mu on (0, mu) with density e^{-x}/2: the PLLR density is e^{-x}/4 >= e^{-mu}/4
    # on (-mu, mu); Y =d -X.
    mu = arb(mech.sensitivity) / arb(mech.scale)
    cand = ((_lower((-mu).exp() / 4), _lower(2 * mu)),)
    return ContinuousPart(cand, cand, "Laplace PLLR: density >= e^-mu/4 on (-mu, mu)")


def _sg_density_lower(law: _SubsampledGaussianLaw, x1: float, x2: float, pieces: int) -> arb:
    """Lower bound of the PLLR density w(x)/L'(x) over x in [x1, x2] (Arb on subintervals)."""
    mu, p, half = law.mu, law.p, law.half
    best = None
    h = (x2 - x1) / pieces
    for i in range(pieces):
        xb = arb(x1 + i * h).union(arb(x1 + (i + 1) * h))
        e = (mu * xb - half).exp()
        lr = 1 - p + p * e
        g = law._weight(xb) * lr / (p * mu * e)  # w / L', L' = p mu e^u / lr
        lo = g.lower()
        if best is None or lo < best:
            best = lo
    return arb(best) if best > 0 else arb(0)


_SG_WINDOWS = tuple((a, a + w) for a in (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)
                    for w in (0.5, 1.0, 2.0, 3.0, 4.0))


@_continuous.register
def _(mech: PoissonSubsampledGaussian) -> ContinuousPart | None:
    mu = 1 / arb(mech.sigma)
    if mech.rate == 1.0:
        cand = ((_lower(_phi(arb(1)) / mu), _lower(2 * mu)),)
        return ContinuousPart(cand, cand, "rate 1: normal PLLR")
    p = arb(mech.rate)
    out = []
    for under_q in (False, True):
        law = _SubsampledGaussianLaw(mu, p, under_q)
        cands = []
        for x1, x2 in _SG_WINDOWS:
            f0 = _sg_density_lower(law, x1, x2, 32)
            length = law._lr(arb(x2)).log() - law._lr(arb(x1)).log()
            if f0 > 0 and length > 0:
                cands.append((f0, _lower(length)))
        out.append(tuple(cands))
    return ContinuousPart(
        out[0], out[1],
        "subsampled Gaussian: L is increasing, so the PLLR density is w(x)/L'(x) at x = "
        "L^-1(v); lower bounds of w/L' on x-windows by Arb interval evaluation on 32 "
        "subintervals, lengths L(x2) - L(x1)",
    )
