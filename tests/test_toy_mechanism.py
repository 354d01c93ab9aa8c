r"""A new mechanism defined in this file alone gets every method: the mechanism contract.

The toy is an *asymmetric two-point pair* given by its two privacy-loss values u > 0 > -v:
P(L = u) = p1 = (1 - e^{-v}) / (e^u - e^{-v}), P(L = -v) = 1 - p1, and Q = e^L P, so
Q(L = u) = e^u p1, Q(L = -v) = e^{-v} (1 - p1). With u != v the pair is not symmetric, so both
pair orders count.

Two places define it, exactly what a user adding a mechanism writes (docs/adding-a-mechanism.md):

1. the numeric module part: a :class:`~numeric.mechanisms.base.Mechanism` subclass (cumulants,
   CGF, support) and one ``register_mechanism`` (CLI flags and spec keys);
2. the certify module part: a lattice step and a Chernoff CGF, and one ``register_certified``.

It has no certified moments, so the EEAI must report "not applicable" while the other certified
methods answer. The oracle is the exact m-fold law (binomial) in mpmath at 50 digits.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from numeric import compose, delta, epsilon
from numeric.cli import main
from numeric.mechanisms.base import MECHANISMS, Mechanism, PLLRCumulants, register_mechanism
from numeric.moments import cumulants_from_weights, tilted_cumulants

flint = pytest.importorskip("flint")

# ---------------------------------------------------------------------------------------------
# 1. numeric: the mechanism


def _masses(u: float, v: float) -> tuple[float, float, float, float]:
    p1 = -math.expm1(-v) / (math.exp(u) - math.exp(-v))
    return p1, 1.0 - p1, math.exp(u) * p1, math.exp(-v) * (1.0 - p1)


@dataclass(frozen=True)
class ToyTwoPoint(Mechanism):
    """Two-point privacy loss: L = u or -v (u, v > 0)."""

    u: float
    v: float
    symmetric = False
    lattice = True
    purely_atomic = True
    cgf_closed_form = True

    def __post_init__(self) -> None:
        for name in ("u", "v"):
            x = getattr(self, name)
            if not (isinstance(x, float | int) and 0.0 < x < 50.0):
                raise ValueError(f"{name} must lie in (0, 50), got {x!r}")

    def _values(self) -> np.ndarray:
        return np.array([self.u, -self.v])

    def _cumulants(self, order: int) -> PLLRCumulants:
        p1, p0, q1, q0 = _masses(self.u, self.v)
        x = cumulants_from_weights(self._values(), np.array([[p1, p0]]), order)[0]
        y = cumulants_from_weights(self._values(), np.array([[q1, q0]]), order)[0]
        return PLLRCumulants(tuple(x.tolist()), tuple(y.tolist()))

    def cgf_batch(self, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        _, _, q1, q0 = _masses(self.u, self.v)
        t = np.asarray(t, dtype=float)
        logw = np.stack([math.log(q1) + t * self.u, math.log(q0) - t * self.v], axis=1)
        return tilted_cumulants(self._values(), logw, n)

    def pllr_sup(self) -> float:
        return self.u

    def pllr_inf(self) -> float:
        return -self.v


# ---------------------------------------------------------------------------------------------
# 2. certify: the lattice step and the Chernoff CGF


def _certify_knowledge():
    from flint import arb

    from certify.cgf import StepCGF, logaddexp
    from certify.registry import CertifiedMechanism
    from certify.steps import LatticeStep, exact_value

    @dataclass(frozen=True)
    class ToyStep(LatticeStep):
        """The two atoms in pair order (P, Q) (``swap``: order (Q, P), L -> -L)."""

        u: float
        v: float
        swap: bool

        def _atoms(self) -> tuple[tuple[Fraction, arb, arb], ...]:
            """(value of L, Q-mass, P-mass) per atom, in this pair order."""
            eu, ev = arb(self.u).exp(), (-arb(self.v)).exp()
            p1 = (1 - ev) / (eu - ev)
            p0, q1, q0 = 1 - p1, eu * p1, ev * (1 - p1)
            if self.swap:  # P' = Q, Q' = P, L' = -L
                return ((-Fraction(self.u), p1, q1), (Fraction(self.v), p0, q0))
            return ((Fraction(self.u), q1, p1), (-Fraction(self.v), q0, p0))

        def _above(self, s: arb, strict: bool) -> tuple[arb, arb]:
            at = exact_value(s)
            q, p = arb(0), arb(0)
            for value, qm, pm in self._atoms():
                if (value > at) if strict else (value >= at):
                    q, p = q + qm, p + pm
            return q, p

        def delta(self, eps: arb) -> arb:
            q, p = self._above(eps, strict=True)
            return q - eps.exp() * p

        def tails(self, s: arb) -> tuple[arb, arb]:
            return self._above(s, strict=False)

        def rough_std(self) -> float:
            return max(self.u, self.v)

        def describe(self) -> str:
            return f"ToyTwoPoint(u={self.u!r}, v={self.v!r}){' swapped' if self.swap else ''}"

    def chernoff(mech: ToyTwoPoint, direction: str) -> StepCGF:
        # Lambda(a) = log E_{P'} (dQ'/dP')^a = log sum_j P'_j e^{a L'_j}
        p1, p0, q1, q0 = _masses(mech.u, mech.v)
        swap = direction == "Q||P"
        lp = ((q1, -mech.u), (q0, mech.v)) if swap else ((p1, mech.u), (p0, -mech.v))

        def floating(a: float) -> float:
            return logaddexp(math.log(lp[0][0]) + a * lp[0][1], math.log(lp[1][0]) + a * lp[1][1])

        def certified(a: arb) -> arb:
            atoms = ToyStep(mech.u, mech.v, swap)._atoms()  # (value, Q', P')
            # the atom values are binary64 numbers, so float() is exact
            return sum((pm * (a * arb(float(value))).exp() for value, _, pm in atoms),
                       arb(0)).log()

        return StepCGF(floating, certified, False, "toy two-point pair: Lambda in closed form")

    return CertifiedMechanism(
        "ToyTwoPoint",
        lattice_step=lambda mech, direction: ToyStep(mech.u, mech.v, direction == "Q||P"),
        chernoff=chernoff,
    )


# ---------------------------------------------------------------------------------------------
# the registrations (one each), undone after the tests


@pytest.fixture(scope="module", autouse=True)
def registered():
    from certify.registry import register_certified, unregister_certified

    register_mechanism("toy-two-point", {"u": "u", "v": "v"}, required=("u", "v"))(ToyTwoPoint)
    register_certified(ToyTwoPoint, _certify_knowledge())
    yield
    unregister_certified(ToyTwoPoint)
    MECHANISMS.pop("toy-two-point")


# ---------------------------------------------------------------------------------------------
# the oracle: the m-fold law is binomial


def _true_delta(u: float, v: float, m: int, eps, swap: bool = False) -> mp.mpf:
    with mp.workdps(50):
        eu, ev = mp.e ** mp.mpf(u), mp.e ** (-mp.mpf(v))
        p1 = (1 - ev) / (eu - ev)
        p0, q1, q0 = 1 - p1, eu * p1, ev * (1 - p1)
        if swap:
            p1, q1, p0, q0 = q1, p1, q0, p0
        total = mp.mpf(0)
        for k in range(m + 1):
            c = mp.binomial(m, k)
            term = c * (q1**k * q0 ** (m - k) - mp.e ** mp.mpf(eps) * p1**k * p0 ** (m - k))
            if term > 0:
                total += term
        return total


@functools.cache
def _true_epsilon(u: float, v: float, m: int, target: float) -> float:
    def worst(e):
        return max(_true_delta(u, v, m, e), _true_delta(u, v, m, e, swap=True))

    lo, hi = mp.mpf(0), mp.mpf(m * max(u, v))
    for _ in range(56):  # bisection on the non-increasing profile, to ~1e-17 relative
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if worst(mid) > target else (lo, mid)
    return float(hi)


def _log_delta_float(u: float, v: float, m: int, eps: float, swap: bool) -> float:
    """log delta(eps) of the m-fold pair in binary64 log-space (an estimate-grade oracle)."""
    p1, p0, q1, q0 = _masses(u, v)
    if swap:
        p1, q1, p0, q0 = q1, p1, q0, p0
    k = np.arange(m + 1)
    logc = np.array([math.lgamma(m + 1) - math.lgamma(j + 1) - math.lgamma(m - j + 1) for j in k])
    logq = logc + k * math.log(q1) + (m - k) * math.log(q0)
    loss = k * math.log(q1 / p1) + (m - k) * math.log(q0 / p0)  # the PLLR at k
    keep = loss > eps
    terms = logq[keep] + np.log(-np.expm1(eps - loss[keep]))
    return float(np.logaddexp.reduce(terms)) if terms.size else -math.inf


def _true_epsilon_float(u: float, v: float, m: int, target: float) -> float:
    lo, hi = 0.0, m * max(u, v)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        worst = max(_log_delta_float(u, v, m, mid, s) for s in (False, True))
        lo, hi = (mid, hi) if worst > math.log(target) else (lo, mid)
    return hi


_U, _V, _M = 0.3, 0.1, 200


def test_the_float_oracle_agrees_with_the_exact_one():
    assert _true_epsilon_float(_U, _V, _M, 1e-5) == pytest.approx(
        _true_epsilon(_U, _V, _M, 1e-5), rel=1e-10)


def test_contract_identities():
    mech = ToyTwoPoint(_U, _V)
    K, D = mech.cgf_batch(np.array([-1.0, 0.0]), 2)
    assert K == pytest.approx([0.0, 0.0], abs=1e-15)
    cum = mech.pllr_cumulants(2)
    assert D[1, 0] == pytest.approx(cum.y[0], rel=1e-12)  # K'(0) = kappa_1(Y)
    assert D[0, 0] == pytest.approx(cum.x[0], rel=1e-12)  # K'(-1) = kappa_1(X)
    assert cum.x[0] < 0.0 < cum.y[0]


@pytest.mark.parametrize("method", ["aea", "saddlepoint", "auto"])
def test_estimate_methods_answer(method):
    comp = compose([(ToyTwoPoint(_U, _V), 2000)])
    truth = _true_epsilon_float(_U, _V, 2000, 1e-5)
    res = epsilon(comp, 1e-5, method)
    assert res.epsilon == pytest.approx(truth, rel=2e-2)
    assert set(res.per_direction) <= {"P||Q", "Q||P"}


def test_certified_brackets_the_truth_and_reports_what_does_not_apply():
    comp = compose([(ToyTwoPoint(_U, _V), _M)])
    bound = epsilon(comp, 1e-5, "certified")
    truth = _true_epsilon(_U, _V, _M, 1e-5)
    assert bound.lower_mpf <= truth <= bound.upper_mpf
    assert bound.width() < 1e-2 * truth
    assert any("not applicable" in w and "eeai" in w for w in bound.warnings)
    d = delta(comp, 1.0, "certified")
    want = max(_true_delta(_U, _V, _M, 1.0), _true_delta(_U, _V, _M, 1.0, swap=True))
    assert d.lower_mpf <= want <= d.upper_mpf


def test_auto_returns_the_same_result_type():
    from numeric import EpsilonResult

    for m in (1, 3, 2000):
        res = epsilon(compose([(ToyTwoPoint(_U, _V), m)]), 1e-5)
        assert type(res) is EpsilonResult and res.epsilon >= 0.0


def test_cli_flags_and_spec_files(tmp_path, capsys):
    argv = ["epsilon", "--mechanism", "toy-two-point", "--u", "0.3", "--v", "0.1",
            "--steps", str(_M), "--delta", "1e-5", "--method", "certified", "--json"]
    assert main(argv) == 0
    flags = json.loads(capsys.readouterr().out)
    spec = tmp_path / "toy.toml"
    spec.write_text(f'[[mechanism]]\ntype = "toy-two-point"\nu = 0.3\nv = 0.1\ncount = {_M}\n')
    assert main(["epsilon", "--spec", str(spec), "--delta", "1e-5", "--method", "certified",
                 "--json"]) == 0
    from_spec = json.loads(capsys.readouterr().out)
    assert flags["lower"] == from_spec["lower"] and flags["upper"] == from_spec["upper"]
    truth = _true_epsilon(_U, _V, _M, 1e-5)
    assert float(flags["lower"]) <= truth <= float(flags["upper"])
