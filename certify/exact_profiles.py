r"""The exact privacy-profile engines: Gaussian (GDP), pure DP (binomial/enumeration), delta parts.

Every number here is an Arb ball (outward rounded, python-flint) or an exact rational; results
are :class:`~certify.bound.Bound` enclosures of the *exact* answer, never of a float
approximation of it.

Families (docs/math.md sections 1-2):

* **Gaussian** (``exact-gdp``). Gaussian steps compose exactly,
  :math:`G_{\mu_1}\otimes G_{\mu_2} = G_{\sqrt{\mu_1^2+\mu_2^2}}`, so m_i copies of
  :math:`\mu_i`-GDP give :math:`\mu^2 = \sum_i m_i \mu_i^2` (Dong, Roth, Su, *Gaussian
  Differential Privacy*, JRSS-B 2022, arXiv:1905.02383 = GDP, Cor. 3.3), and the privacy profile of
  :math:`G_\mu` is (GDP Cor. 2.13)

  .. math::

      \delta_\mu(\varepsilon) = \Phi\Bigl(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\Bigr)
          - e^{\varepsilon}\,\Phi\Bigl(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\Bigr),
      \qquad \Phi(x) = \tfrac12 \operatorname{erfc}(-x/\sqrt2),

  evaluated with Arb's rigorous ``erfc``. The difference cancels for large eps, but only by
  :math:`\log_2((a+\mu)/\mu)` bits (:math:`a = \varepsilon/\mu - \mu/2`); in Arb cancellation
  widens the ball, never falsifies it, and the precision is raised until the requested relative
  width is met.

* **Homogeneous pure DP** (``exact-binomial``). n steps that are (eps0, 0)-DP are dominated by
  randomized response, whose composed PLLR is :math:`S = (2j - n)\varepsilon_0` with
  :math:`j \sim \mathrm{Bin}(n, q)` under Q, :math:`q = t/(1+t)`, :math:`t = e^{\varepsilon_0}`
  (Kairouz, Oh, Viswanath, *The Composition Theorem for Differential Privacy*, ICML 2015,
  arXiv:1311.0776 = KOV, Thm 3.3):

  .. math::

      \delta(\varepsilon) = \sum_{j:\,(2j-n)\varepsilon_0 > \varepsilon}
          \binom{n}{j}\frac{t^j}{(1+t)^n}\bigl(1 - e^{\varepsilon - (2j-n)\varepsilon_0}\bigr).

  When :math:`t` is rational (``eps0 = RationalExp(t)``) the masses are exact rationals and so
  is :math:`\delta` at any eps with rational :math:`e^\varepsilon` (KOV's integer polynomial
  :math:`(1+t)^n\delta(k\varepsilon_0) = \sum_{2j-n>k}\binom{n}{j}(t^j - t^{n-j+k})`); otherwise
  the masses are Arb balls (n up to :data:`MAX_BINOMIAL_STEPS`; larger n use the windowed sum of
  :mod:`certify.exact_binomial`).

* **Heterogeneous pure DP** (``exact-enumeration``). Exact composition of distinct eps_i is
  #P-hard in general (Murtagh, Vadhan, *The Complexity of Computing the Optimal Composition of
  Differential Privacy*, TCC 2016), but small cases are exact by enumerating the outcome classes
  :math:`(j_1, \dots, j_r)` (j_i '+' outcomes among the m_i steps with parameter eps_i), i.e. the
  convolution of the r binomial lattices: :math:`S = \sum_i (2j_i - m_i)\varepsilon_i`,
  :math:`Q = \prod_i \mathrm{Bin}(j_i; m_i, q_i)`, at most :data:`MAX_OUTCOME_CLASSES` classes.

* **Delta parts** of (eps, delta)-DP steps, modelled by their worst case
  :math:`f_{\varepsilon,\delta} = f_{\varepsilon,0}\otimes f_{0,\delta}` (GDP Eq. 11), compose
  exactly: :math:`d = 1 - \prod_i (1-\delta_i)^{m_i}` (Eq. 12) and
  :math:`\delta'(\varepsilon) = d + (1-d)\,\delta(\varepsilon)` (Eq. 13); ``d`` is an exact
  rational when the inputs are rational and small, else an Arb ball
  :math:`-\operatorname{expm1}(\sum_i m_i \log1p(-\delta_i))`.

Pure profiles are evaluated in the Q-only form on the sorted support :math:`s_0 < s_1 < \dots` of
S: with ``k`` the first index with :math:`s_k > \varepsilon` (decided by a certified comparison;
an undecidable comparison raises :class:`~certify.engine.UndecidableError`, which makes
:func:`~certify.engine.adaptive` retry at a higher precision and is re-raised at the cap),

.. math::

    \delta(\varepsilon) = Q_k\,\bigl(-\operatorname{expm1}(\varepsilon - s_k)\bigr)
        + A_{k+1} - e^{\varepsilon} B_{k+1},
    \qquad A_i = \sum_{c \ge i} Q_c, \quad B_i = \sum_{c \ge i} Q_c e^{-s_c} = P(S \ge s_i).

Inversion :math:`\varepsilon(\delta) = \inf\{\varepsilon \ge 0 : \delta(\varepsilon) \le
\delta\}`: on the segment :math:`(s_{k-1}, s_k]` found by a certified search over the support,
:math:`\delta(\varepsilon) = A_k - e^\varepsilon B_k` exactly, so
:math:`\varepsilon = \log((A_k - \delta)/B_k)` is enclosed in one Arb evaluation. For the
Gaussian family a certified bracket :math:`[a, b]` with :math:`\delta(a) > \delta \ge \delta(b)`
(each end proven by a ball comparison) is shrunk by bisection accelerated by log-space Newton
proposals. Since :math:`\delta(\varepsilon)` is non-increasing (strictly where positive), every
returned ``lo`` has :math:`\delta(lo) > \delta` and every ``hi`` has :math:`\delta(hi) \le \delta`.

The public entry points are in :mod:`certify.exact`; the exact inputs in :mod:`certify.exact_model`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from flint import arb, ctx, fmpz

from numeric.errors import BudgetExceeded

from .engine import DEFAULT_PRECISION, MAX_PRECISION, UndecidableError, workprec
from .exact_model import ArbReal, ExactReal, arb_q, as_ball, certainly_lt, is_short

__all__ = [
    "MAX_BINOMIAL_STEPS",
    "MAX_OUTCOME_CLASSES",
    "DeltaPart",
    "GaussianProfile",
    "PureProfile",
    "combine_delta",
]

MAX_BINOMIAL_STEPS = 10**5
"""Largest n for the full-sum homogeneous (binomial) pure-DP profile (O(n) Arb operations);
larger n go to :class:`certify.exact_binomial.WindowedBinomialProfile`."""

MAX_OUTCOME_CLASSES = 1 << 18
"""Largest number of outcome classes prod_i (m_i + 1) enumerated for heterogeneous pure DP."""

_EXACT_BIT_BUDGET = 1 << 27  # classes x bits per exact integer mass (~16 MB per array)
_DELTA_PART_BIT_BUDGET = 1 << 16  # bits of the exact rational 1 - prod (1 - delta_i)^m_i


def _arb_ratio(num: int, den: int) -> arb:
    return arb(fmpz(num)) / arb(fmpz(den))


# ---------------------------------------------------------------------------------------------
# Delta parts (GDP Eq. 12-13)
# ---------------------------------------------------------------------------------------------


class DeltaPart:
    r"""d = 1 - prod_i (1 - delta_i)^{m_i}: exact rational when small, else an Arb ball."""

    def __init__(self, terms: tuple[tuple[ExactReal, int], ...]) -> None:
        self.terms = terms
        self.zero = not terms
        self.exact: Fraction | None = Fraction(0) if not terms else None
        bits = sum(
            c * (v.rational.numerator.bit_length() + v.rational.denominator.bit_length())
            for v, c in terms
        )
        if terms and bits <= _DELTA_PART_BIT_BUDGET:
            prod = Fraction(1)
            for v, c in terms:
                prod *= (1 - v.rational) ** c
            self.exact = 1 - prod

    def value(self) -> Fraction | arb:
        if self.exact is not None:
            return self.exact
        s = arb(0)
        for v, c in self.terms:
            s += arb(fmpz(c)) * (-arb_q(v.rational)).log1p()
        return -s.expm1()

    def label(self) -> str:
        """Short description: the exact rational if short, else ~25 significant digits."""
        if self.exact is not None and is_short(self.exact, 60):
            return str(self.exact)
        with workprec(DEFAULT_PRECISION):
            return as_ball(self.value()).str(25, radius=False)


def combine_delta(d: Fraction | arb, v: Fraction | arb) -> Fraction | arb:
    """delta' = d + (1 - d) delta (GDP Eq. 13)."""
    if isinstance(d, Fraction) and isinstance(v, Fraction):
        return d + (1 - d) * v
    if isinstance(d, Fraction) and d == 0:
        return v
    db = as_ball(d)
    return db + (1 - db) * as_ball(v)


# ---------------------------------------------------------------------------------------------
# Gaussian profile (GDP Cor. 2.13, Cor. 3.3)


class GaussianProfile:
    r"""The exact profile of the composed mu-GDP, :math:`\mu^2 = \sum_i m_i\mu_i^2` (GDP Cor.
    3.3), :math:`\delta_\mu(\varepsilon)` of GDP Cor. 2.13, and its certified inversion."""

    method = "exact-gdp"

    def __init__(self, terms: tuple[tuple[ExactReal, int], ...]) -> None:
        self.terms = terms
        sq = [(v.square(), c) for v, c in terms]
        if all(s.rational is not None for s, _ in sq):
            total = sum((s.rational * c for s, c in sq), Fraction(0))
            self.mu2: ExactReal = ExactReal(total, "mu^2")
        else:
            self.mu2 = ExactReal(
                ArbReal(lambda: sum((s.ball() * c for s, c in sq), arb(0)), "mu^2"), "mu^2"
            )

    def mu(self) -> arb:
        return self.mu2.ball().sqrt()

    def delta(self, eps: arb) -> arb:
        r"""delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
        mu = self.mu()
        r2 = arb(2).sqrt()
        a = eps / mu
        h = mu / 2
        # Phi(x) = erfc(-x / sqrt 2) / 2
        return ((a - h) / r2).erfc() / 2 - eps.exp() * ((a + h) / r2).erfc() / 2

    def slope(self, eps: arb) -> arb:
        r"""d delta_mu / d eps = -e^eps Phi(-eps/mu - mu/2)."""
        mu = self.mu()
        return -eps.exp() * ((eps / mu + mu / 2) / arb(2).sqrt()).erfc() / 2

    def delta_at(self, eps: ExactReal) -> Fraction | arb:
        return self.delta(eps.ball())

    def smax(self) -> None:
        return None  # delta_mu(eps) > 0 for every eps

    def invert(self, tau: Fraction | arb, rel_width: float) -> arb:
        """Certified bracket [a, b] of eps* with delta(a) > tau >= delta(b), as a ball."""
        tb = as_ball(tau)

        def classify(x: arb) -> int:
            v = self.delta(x)
            if v > tb:
                return 1
            if v <= tb:
                return -1
            return 0

        a = arb(0)  # delta(0) > tau was established by the caller
        b = arb(1)
        for _ in range(4 * MAX_PRECISION):
            c = classify(b)
            if c < 0:
                break
            if c == 0:
                raise UndecidableError(f"cannot place eps = {b} against delta = {tb}")
            a, b = b, b * 2
        else:  # pragma: no cover - delta_mu decays, the loop always ends
            raise UndecidableError("no upper bracket for eps found")

        x = ((a + b) / 2).mid()
        log_tau = tb.log()
        widths: list[arb] = []
        for _ in range(2000):
            target = arb(rel_width) * (a if a > 0 else x)
            if b - a <= target:
                break
            h = (target / 4).mid()
            v = self.delta(x)
            c = 1 if v > tb else -1 if v <= tb else 0
            if c > 0:
                a = x
            elif c < 0:
                b = x
            # log-space Newton proposal: g = log delta - log tau, g' = delta'/delta
            xn = None
            if v > 0:
                step = -(v.log() - log_tau) * v / self.slope(x)
                if step.is_finite():
                    xn = (x + step).mid()
            if c == 0 or (xn is not None and abs(xn - x) <= h):
                centre = x if c == 0 or xn is None else xn
                lo, hi = (centre - h).mid(), (centre + h).mid()
                done = True
                for p in (lo, hi):
                    if a < p < b:
                        cp = classify(p)
                        if cp > 0:
                            a = p
                        elif cp < 0:
                            b = p
                        else:
                            done = False
                if not done:
                    return a.union(b)  # precision too low to separate: caller raises it
                if b - a <= target:
                    break
            widths.append(b - a)
            stalled = len(widths) >= 3 and not widths[-1] < widths[-3] / 2
            if xn is None or not (a < xn < b) or stalled:
                xn = ((a + b) / 2).mid()
                widths.clear()
            x = xn
        return a.union(b)


# ---------------------------------------------------------------------------------------------
# Pure-DP lattice (KOV Thm 3.3; enumeration after Murtagh-Vadhan)
# ---------------------------------------------------------------------------------------------

class PureProfile:
    r"""Sorted support s_0 < ... < s_{N-1} of the composed PLLR with Q and P masses.

    Outcome classes are the count vectors (j_1, ..., j_r), enumerated in mixed-radix order
    (``raw`` index) by iterated convolution of the per-step-type binomials; classes with exactly
    equal support value are merged into one support point (a *group*).
    """

    max_binomial_steps = MAX_BINOMIAL_STEPS
    """Largest n of a single (eps0, n) term (the full sum has O(n) balls)."""

    def __init__(self, terms: tuple[tuple[ExactReal, int], ...]) -> None:
        self.terms = terms
        self.eps = [v for v, _ in terms]
        self.m = [c for _, c in terms]
        self.r = len(terms)
        self.method = "exact-binomial" if self.r <= 1 else "exact-enumeration"
        if self.r == 1 and self.m[0] > self.max_binomial_steps:
            raise BudgetExceeded(
                f"exact binomial composition supports up to {self.max_binomial_steps} steps in "
                f"certify, got {self.m[0]}"
            )
        n_classes = math.prod(c + 1 for c in self.m)
        if self.r > 1 and n_classes > MAX_OUTCOME_CLASSES:
            raise BudgetExceeded(
                f"exact heterogeneous pure-DP composition enumerates prod(m_i + 1) = {n_classes} "
                f"outcome classes, above the limit {MAX_OUTCOME_CLASSES} (the problem is #P-hard "
                "in general, Murtagh-Vadhan 2016); use the other certified "
                "methods (lattice, EEAI, Chernoff) instead"
            )
        if all(v.exp_rational is not None for v in self.eps):
            self.order = "exp"  # keys e^{s_c}: exact rationals
        elif all(v.rational is not None for v in self.eps):
            self.order = "rat"  # keys s_c: exact rationals
        else:
            self.order = "ball"  # support ordered by certified ball comparisons
        self._exact_masses: tuple | None = None
        self._cache: dict[int, dict[str, Any]] = {}
        self.groups: list[list[int]] | None = None  # r <= 1: implicit, class c <-> j = c
        self.keys: list[Fraction] | None = None
        self.N = self.m[0] + 1 if self.r == 1 else 1
        if self.r > 1:
            self.N = n_classes  # ball mode: reset per precision after merging exact ties
            if self.order != "ball":
                self._group_exact()
        self.exact_ok = self.order == "exp" and self._exact_budget_ok()

    # -- classes -------------------------------------------------------------------------------
    def _kvec(self, jvec: Sequence[int]) -> tuple[int, ...]:
        return tuple(2 * j - m for j, m in zip(jvec, self.m, strict=True))

    def _decode(self, raw: int) -> tuple[int, ...]:
        """Count vector of a raw (mixed-radix, first type outermost) class index."""
        out = []
        for m in reversed(self.m):
            raw, j = divmod(raw, m + 1)
            out.append(j)
        return tuple(reversed(out))

    def _enum(self, per_type: list[list[Any]], combine: Callable[[Any, Any], Any], init: Any):
        """Values of every class in raw order: combine over types of per_type[i][j_i]."""
        cur = [init]
        for vals in per_type:
            cur = [combine(c, v) for c in cur for v in vals]
        return cur

    def _exp_key_parts(self) -> list[list[tuple[int, int]]]:
        parts = []
        for v, m in zip(self.eps, self.m, strict=True):
            p, q = v.exp_rational.numerator, v.exp_rational.denominator
            row = []
            for j in range(m + 1):
                k = 2 * j - m
                row.append((p**k, q**k) if k >= 0 else (q ** (-k), p ** (-k)))
            parts.append(row)
        return parts

    def _group_exact(self) -> None:
        """Exact support keys (s_c, or e^{s_c}), sorted, with exactly equal keys merged."""
        if self.order == "rat":
            scale = math.lcm(*(v.rational.denominator for v in self.eps))
            per = [
                [(2 * j - m) * (v.rational.numerator * (scale // v.rational.denominator))
                 for j in range(m + 1)]
                for v, m in zip(self.eps, self.m, strict=True)
            ]
            ikeys = self._enum(per, lambda a, b: a + b, 0)
            order = sorted(range(len(ikeys)), key=ikeys.__getitem__)
            keys = [Fraction(ikeys[i], scale) for i in order]
        else:
            pairs = self._enum(
                self._exp_key_parts(), lambda a, b: (a[0] * b[0], a[1] * b[1]), (1, 1)
            )
            approx = [math.log(n) - math.log(d) for n, d in pairs]
            order = sorted(range(len(pairs)), key=approx.__getitem__)
            keys = [Fraction(*pairs[i]) for i in order]
            if any(k1 > k2 for k1, k2 in itertools.pairwise(keys)):  # float order was off
                order = sorted(range(len(pairs)), key=lambda i: Fraction(*pairs[i]))
                keys = [Fraction(*pairs[i]) for i in order]
        self.groups, self.keys = [[order[0]]], [keys[0]]
        for i in range(1, len(order)):
            if keys[i] == self.keys[-1]:
                self.groups[-1].append(order[i])
            else:
                self.groups.append([order[i]])
                self.keys.append(keys[i])
        self.N = len(self.keys)

    def _group_ball(self, st: dict[str, Any]) -> list[list[int]]:
        """Sort classes by their support balls; adjacent order must be certain (else raise)."""
        per = [
            [arb(2 * j - m) * e for j in range(m + 1)]
            for e, m in zip(st["eps"], self.m, strict=True)
        ]
        balls = self._enum(per, lambda a, b: a + b, arb(0))
        order = sorted(range(len(balls)), key=lambda i: float(balls[i].mid()))
        groups = [[order[0]]]
        for i0, i1 in itertools.pairwise(order):
            s0, s1 = balls[i0], balls[i1]
            if s0.is_exact() and s1.is_exact() and s0 == s1:
                groups[-1].append(i1)  # an exactly known tie: one support point
            elif s0 < s1:
                groups.append([i1])
            else:
                raise UndecidableError(
                    f"cannot order the support points of classes {self._decode(i0)} and "
                    f"{self._decode(i1)} ({s0.str(10)}, {s1.str(10)}); equal eps_i given as "
                    "separate ArbReal values are not detected as equal (pass one object, or "
                    "RationalExp)"
                )
        return groups

    def _exact_budget_ok(self) -> bool:
        den_bits = sum(
            m * (v.exp_rational.numerator + v.exp_rational.denominator).bit_length()
            for v, m in zip(self.eps, self.m, strict=True)
        )
        return self.N * max(den_bits, 1) <= _EXACT_BIT_BUDGET

    def _groups(self, st: dict[str, Any]) -> list[list[int]] | None:
        return self.groups if self.groups is not None else st.get("groups")

    def _jvec(self, c: int, st: dict[str, Any]) -> tuple[int, ...]:
        if self.r <= 1:
            return (c,) if self.r == 1 else ()
        return self._decode(self._groups(st)[c][0])

    # -- per-precision state ------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        prec = ctx.prec
        st = self._cache.get(prec)
        if st is None:
            st = {"eps": [v.ball() for v in self.eps]}
            if self.order == "ball" and self.r > 1:
                st["groups"] = self._group_ball(st)
                self.N = len(st["groups"])  # exactly known ties merged (same at every precision)
            self._cache = {prec: st}
        return st

    def _masses_exact(self) -> tuple[int, list[int], list[int], list[int]]:
        """Integer masses over the common denominator prod (p_i + q_i)^{m_i} (t_i = p_i/q_i)."""
        if self._exact_masses is None:
            per = []
            den = 1
            for v, m in zip(self.eps, self.m, strict=True):
                p, q = v.exp_rational.numerator, v.exp_rational.denominator
                qn = [q**m]  # C(m, j) p^j q^(m-j), exact integer recurrence
                for j in range(m):
                    qn.append(qn[-1] * (m - j) * p // ((j + 1) * q))
                per.append(qn)
                den *= (p + q) ** m
            qs, ps = self._group_masses(per, lambda a, b: a * b, 0, 1, self.groups)
            self._exact_masses = (den, qs, *self._suffix(qs, ps, 0))
        return self._exact_masses

    def _masses_ball(self, st: dict[str, Any]) -> tuple[list[arb], list[arb], list[arb]]:
        if "masses" not in st:
            per = []
            for e, m in zip(st["eps"], self.m, strict=True):
                t = e.exp()
                pmf = [(1 / (1 + t)) ** m]  # Bin(j; m, t/(1+t)) by the ratio recurrence
                for j in range(m):
                    pmf.append(pmf[-1] * t * (m - j) / (j + 1))
                per.append(pmf)
            qs, ps = self._group_masses(per, lambda a, b: a * b, arb(0), arb(1), self._groups(st))
            st["masses"] = (qs, *self._suffix(qs, ps, arb(0)))
        return st["masses"]

    def _group_masses(self, per, mul, zero, one, groups):
        """Per support point: Q mass sum prod_i Q_i(j_i) and P mass sum prod_i Q_i(m_i - j_i).

        Under P the '+' probability of a step is 1 - q_i, so P_i(j) = Q_i(m_i - j).
        """
        if self.r == 0:
            return [one], [one]
        if self.r == 1:
            return list(per[0]), list(reversed(per[0]))
        q_raw = self._enum(per, mul, one)
        p_raw = self._enum([list(reversed(v)) for v in per], mul, one)
        qs, ps = [], []
        for grp in groups:
            qsum, psum = zero, zero
            for i in grp:
                qsum, psum = qsum + q_raw[i], psum + p_raw[i]
            qs.append(qsum)
            ps.append(psum)
        return qs, ps

    @staticmethod
    def _suffix(qs: list, ps: list, zero: Any) -> tuple[list, list]:
        n = len(qs)
        sa, sb = [zero] * (n + 1), [zero] * (n + 1)
        for c in range(n - 1, -1, -1):
            sa[c] = sa[c + 1] + qs[c]
            sb[c] = sb[c + 1] + ps[c]
        return sa, sb

    def _tails(self, c: int, st: dict[str, Any]) -> tuple[Fraction | arb, Fraction | arb]:
        """A_c = Q(S >= s_c), B_c = P(S >= s_c) (exact rationals when available)."""
        if self.exact_ok:
            den, _, sa, sb = self._masses_exact()
            return Fraction(sa[c], den), Fraction(sb[c], den)
        _, sa, sb = self._masses_ball(st)
        return sa[c], sb[c]

    def _qmass(self, c: int, st: dict[str, Any]) -> arb:
        if self.exact_ok:
            den, qs, _, _ = self._masses_exact()
            return _arb_ratio(qs[c], den)
        return self._masses_ball(st)[0][c]

    # -- support values and comparisons ---------------------------------------------------------
    def s_ball(self, c: int, st: dict[str, Any]) -> arb:
        kvec = self._kvec(self._jvec(c, st))
        return sum((k * e for k, e in zip(kvec, st["eps"], strict=True)), arb(0))

    def s_key(self, c: int) -> Fraction | None:
        """Exact support key of point c: s_c ("rat") or e^{s_c} ("exp"); None in ball mode."""
        if self.keys is not None:
            return self.keys[c]
        if self.order == "ball":
            return None
        if self.r == 0:
            return Fraction(0) if self.order == "rat" else Fraction(1)
        k = 2 * c - self.m[0]
        v = self.eps[0]
        return k * v.rational if self.order == "rat" else v.exp_rational**k

    def _cmp(self, c: int, eps: ExactReal, st: dict[str, Any]) -> int:
        """+1 if s_c > eps certainly, -1 if s_c <= eps certainly, 0 if undecided (balls overlap).

        Exact where both sides are exact of the same kind (rationals, or rational exponentials).
        """
        key = self.s_key(c)
        if key is not None:
            if self.order == "rat" and eps.rational is not None:
                return 1 if key > eps.rational else -1
            if self.order == "exp" and eps.exp_rational is not None:
                return 1 if key > eps.exp_rational else -1
        s, e = self.s_ball(c, st), st["eps_ball"]
        if e < s:
            return 1
        if e >= s:
            return -1
        return 0

    def split(self, eps: ExactReal, st: dict[str, Any]) -> tuple[int, int]:
        """``(k1, k2)``: s_c <= eps certainly for c < k1, undecided for k1 <= c < k2, s_c > eps
        certainly for c >= k2 (binary searches; the three groups are contiguous because the
        support is certainly sorted)."""
        st["eps_ball"] = eps.ball()
        lo, hi = 0, self.N
        while lo < hi:
            mid = (lo + hi) // 2
            if self._cmp(mid, eps, st) < 0:
                lo = mid + 1
            else:
                hi = mid
        k1, hi = lo, self.N
        while lo < hi:
            mid = (lo + hi) // 2
            if self._cmp(mid, eps, st) > 0:
                hi = mid
            else:
                lo = mid + 1
        return k1, lo

    def first_above(self, eps: ExactReal, st: dict[str, Any]) -> int:
        """Smallest class index c with s_c > eps (N if none); UndecidableError if undecided."""
        k1, k2 = self.split(eps, st)
        if k1 != k2:
            raise UndecidableError(
                f"cannot decide whether the support point {self.s_ball(k1, st).str(10)} exceeds "
                f"{eps.label} at {ctx.prec} bits"
            )
        return k2

    # -- profile -----------------------------------------------------------------------------
    def smax(self) -> arb | Fraction:
        """Largest support value sum_i m_i eps_i (delta = 0 from there on)."""
        st = self._state()
        if self.order == "rat":
            return sum((m * v.rational for v, m in zip(self.eps, self.m, strict=True)), Fraction(0))
        return self.s_ball(self.N - 1, st)

    def delta_at(self, eps: ExactReal) -> Fraction | arb:
        r"""delta(eps) = Q_k (-expm1(eps - s_k)) + A_{k+1} - e^eps B_{k+1} (exact when possible).

        ``k`` is the first support point certainly above eps. A support point that cannot be
        placed against eps at this precision (a tie such as eps = 20 * sqrt(1/100)) contributes
        its term Q_c (1 - e^{eps - s_c})_+ with the positive part taken on the ball: valid on
        either side of the tie, so no side is guessed, and the ball shrinks as precision rises.
        """
        st = self._state()
        k1, k = self.split(eps, st)
        if k1 == self.N:
            return Fraction(0)
        if self.exact_ok and eps.exp_rational is not None and k1 == k:
            a, b = self._tails(k, st)
            return a - eps.exp_rational * b
        e = st["eps_ball"]
        total = arb(0)
        for c in range(k1, k):  # undecided support points (usually none)
            total += self._qmass(c, st) * (-(e - self.s_ball(c, st)).expm1()).nonnegative_part()
        if k < self.N:
            a1, b1 = self._tails(k + 1, st)
            head = self._qmass(k, st) * (-(e - self.s_ball(k, st)).expm1())
            total += head + as_ball(a1) - e.exp() * as_ball(b1)
        return total

    def delta_at_support(self, c: int, st: dict[str, Any]) -> Fraction | arb:
        """delta(s_c) = A_{c+1} - e^{s_c} B_{c+1}."""
        a1, b1 = self._tails(c + 1, st)
        if self.exact_ok:
            return a1 - self.s_key(c) * b1
        return as_ball(a1) - self.s_ball(c, st).exp() * as_ball(b1)

    def invert(self, tau: Fraction | arb, rel_width: float) -> arb:
        r"""eps* = log((A_c - tau)/B_c) on the certified segment (s_{c-1}, s_c]."""
        st = self._state()
        c0 = self.first_above(ExactReal(0, "0"), st)
        # smallest c in [c0, N-1] with delta(s_c) <= tau; delta(s_{N-1}) = 0 < tau
        lo, hi = c0, self.N - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if not certainly_lt(tau, self.delta_at_support(mid, st)):  # delta(s_mid) <= tau
                hi = mid
            else:
                lo = mid + 1
        c = lo
        a, b = self._tails(c, st)
        if isinstance(a, Fraction) and isinstance(b, Fraction) and isinstance(tau, Fraction):
            ball = arb_q((a - tau) / b).log()
        else:
            ball = ((as_ball(a) - as_ball(tau)) / as_ball(b)).log()
        seg_lo = arb(0) if c == c0 else self.s_ball(c - 1, st)
        seg = seg_lo.union(self.s_ball(c, st))
        return ball.intersection(seg) if ball.overlaps(seg) else ball


# ---------------------------------------------------------------------------------------------
