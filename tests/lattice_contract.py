"""The contract every certify lattice step satisfies (shared by the built-in and derived steps).

For a step of a pair (P, Q) with PLLR L: delta_1 is a probability, non-increasing, convex in
e^eps, at least 1 - e^eps (the event "everything") and at least Q(L = +inf); the tails are
non-increasing probabilities; Lemma 2's range errors are >= 0; every ball is tight. Also the
exact oracles shared by the lattice tests (mpmath at 40 digits): the Laplace two-fold
(quadrature), the Gaussian (GDP closed form) and m-fold randomized response (binomial sum).
And :func:`dyadic_epsilon_bound`, an epsilon interval with given float ends (ladder tests).
"""

from __future__ import annotations

import itertools

import mpmath as mp
from flint import arb

from certify.bound import Bound, Endpoint
from certify.engine import workprec

GRID = [k / 16 for k in range(-48, 49)]


def dyadic_epsilon_bound(lower: float, upper: float) -> Bound:
    """An epsilon interval with exactly these float ends (dyadic, so exact Endpoints)."""
    def ep(x: float) -> Endpoint:
        man, den = x.as_integer_ratio()  # den is a power of two
        return Endpoint(man, -(den.bit_length() - 1))
    return Bound("epsilon", ep(lower), ep(upper), "test", "test", 64)


def _f(x: arb) -> float:
    return float(x.mid())


def assert_step_contract(step, grid=GRID) -> None:
    """Check the contract on an exact dyadic grid of eps values (raises AssertionError)."""
    with workprec(128):
        q_inf, _ = step.end_masses()
        prev = None
        hs, ts = [], []
        for e in grid:
            x = arb(e)
            d = step.delta(x)
            tq, tp = step.tails(x)
            for v in (d, tq, tp):
                assert v.rad() < 1e-30
            assert -1e-30 <= _f(d) <= 1 + 1e-30
            assert _f(d - (1 - x.exp())) >= -1e-30
            assert _f(d) >= _f(q_inf) - 1e-30
            assert _f(step.gap(x)) >= -1e-30 and _f(step.excess(x)) >= -1e-30
            for t in (tq, tp):
                assert -1e-30 <= _f(t) <= 1 + 1e-30
            if prev is not None:
                assert _f(d) <= _f(prev[0]) + 1e-30
                assert _f(tq) <= _f(prev[1]) + 1e-30 and _f(tp) <= _f(prev[2]) + 1e-30
            prev = (d, tq, tp)
            hs.append(d)
            ts.append(x.exp())
        # convexity of H(t) = delta(log t): chord slopes between grid points are non-decreasing
        slopes = [(hs[i + 1] - hs[i]) / (ts[i + 1] - ts[i]) for i in range(len(hs) - 1)]
        for a, b in itertools.pairwise(slopes):
            assert _f(b - a) >= -1e-25
    assert step.rough_std() > 0


def laplace_two_fold(mu: float, eps: float) -> mp.mpf:
    """delta(eps) of 2-fold Laplace(mu) by mpmath quadrature of the exact law of L under Q."""
    mu = mp.mpf(mu)
    atoms = ((-mu, mp.exp(-mu) / 2), (mu, mp.mpf(1) / 2))

    def g(s):
        return max(mp.mpf(0), 1 - mp.exp(eps - s))

    def f(x):
        return mp.exp((x - mu) / 2) / 4

    def inner(c):  # int g(c + l) f(l) dl over (-mu, mu), split at the kink l = eps - c
        k = eps - c
        pts = [-mu, k, mu] if -mu < k < mu else [-mu, mu]
        return mp.quad(lambda x: g(c + x) * f(x), pts)

    total = mp.mpf(0)
    for a, wa in atoms:
        for b, wb in atoms:
            total += wa * wb * g(a + b)
        total += 2 * wa * inner(a)
    pts = sorted({-mu, mu, *(p for p in (eps - mu, eps + mu) if -mu < p < mu)})
    total += mp.quad(lambda x: f(x) * inner(x), pts)
    return total


def gdp_delta(mu, eps) -> mp.mpf:
    r"""delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (GDP Cor. 2.13), at 40
    digits; mu a float or an mpf."""
    with mp.workdps(40):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def rr_delta(eps0, m: int, eps, dps: int = 40) -> mp.mpf:
    r"""m-fold randomized response at ``dps`` digits: L = (2k - m) eps0 with
    k ~ Bin(m, e^eps0 / (1 + e^eps0)) under Q; delta(eps) = E_Q[(1 - e^(eps - L))_+]."""
    with mp.workdps(dps):
        e0, e = mp.mpf(eps0), mp.mpf(eps)
        q = mp.exp(e0) / (1 + mp.exp(e0))
        out = mp.mpf(0)
        for k in range(m + 1):
            s = (2 * k - m) * e0
            if s > e:
                out += mp.binomial(m, k) * q**k * (1 - q) ** (m - k) * (1 - mp.exp(e - s))
        return out


def exact_lattice_composition(parts: list) -> tuple[dict[float, int], int]:
    """Exact composition of lattice measures ``[(LatticePLD, count), ...]`` by brute-force
    convolution of their atoms: (support point -> mass in units 2^-(B * count)), and count."""
    law, total = {0.0: 1}, 0
    for lat, c in parts:
        atoms = {(lat.offset + k) * lat.h: int(v) for k, v in enumerate(lat.coeffs.coeffs())}
        for _ in range(c):
            nxt: dict[float, int] = {}
            for s, a in law.items():
                for t, b in atoms.items():
                    if b:
                        nxt[s + t] = nxt.get(s + t, 0) + a * b
            law = nxt
            total += 1
    return law, total


def exact_hockey_stick(law: dict[float, int], total: int, eps: mp.mpf, bits: int) -> mp.mpf:
    """H_{e^eps} of the exact composition of :func:`exact_lattice_composition` (B = bits)."""
    scale = mp.mpf(2) ** (-bits * total)
    return scale * mp.fsum(a * (1 - mp.exp(eps - s)) for s, a in law.items() if s > eps)
