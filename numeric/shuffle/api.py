r"""(eps, delta) and TV of E epochs of random allocation as the toolkit's result objects.

E = 1 uses the exact one-epoch formulas (:mod:`.exact`); E > 1 the FFT composition of the
one-epoch loss grid (:mod:`.compose`). Both report the max over the two pair orders (add/remove
adjacency). The answers are accurate numerical values with an estimated accuracy in ``details``
(``estimate=True``: they are not certified bounds; ``--method certified`` is the proven one).
"""

from __future__ import annotations

import math

from .._validation import check_count, check_delta, check_finite
from ..results import DeltaResult, EpsilonResult
from .compose import composed_loss
from .exact import ORDERS, check_pair, delta_from_law, delta_one_epoch, tv_one_epoch
from .law import one_epoch_law

__all__ = ["METHOD_NAME", "METHOD_NAME_COMPOSED", "shuffle_delta", "shuffle_epsilon",
           "shuffle_tv"]

#: One epoch (or one round): the exact formula, evaluated in floats with a stated accuracy.
METHOD_NAME = "shuffle-exact"
#: E > 1 epochs: the FFT composition of a discretized one-epoch loss -- an estimate (its accuracy
#: is an error estimate, not a bound), and the name says so.
METHOD_NAME_COMPOSED = "shuffle-fft-estimate"
_NOTE_1 = "one epoch: exact Fourier-integral formula (estimated quadrature error in accuracy)"
_NOTE_E = ("E epochs: one-epoch loss grid (exact cell masses) composed by FFT; accuracy = "
           "2 |value(Delta) - value(2 Delta)| + tails (an error estimate, not a bound)")


def _check(sigma, rounds, epochs):
    sigma, rounds = check_pair(sigma, rounds)
    return sigma, rounds, check_count("epochs", epochs, maximum=10**6)


def shuffle_tv(sigma: float, rounds: int, epochs: int = 1, cells_per_sd: int = 200
               ) -> tuple[float, float, str]:
    r"""TV between the E-fold products of H0 and H1: (value, accuracy, derivation).

    E = 1: E|S - M|/(2M) exactly (:func:`.exact.tv_one_epoch`); E > 1: delta(0) of the composed
    loss grid (TV = delta(0), the same in both orders). rounds = 1 is the Gaussian with
    mu = sqrt(E)/sigma.
    """
    sigma, rounds, epochs = _check(sigma, rounds, epochs)
    if epochs == 1:
        r = tv_one_epoch(sigma, rounds)
        return r.value, r.accuracy, r.derivation
    if rounds == 1:
        from scipy.special import ndtr

        mu = math.sqrt(epochs) / sigma
        return float(2 * ndtr(mu / 2) - 1), 1e-15, "rounds = 1: Gaussian, mu = sqrt(E)/sigma"
    value, acc = composed_loss(sigma, rounds, epochs, cells_per_sd).delta(0.0, "P||Q")
    return value, acc, _NOTE_E


def shuffle_delta(sigma: float, rounds: int, epochs: int, eps: float,
                  cells_per_sd: int = 200) -> DeltaResult:
    """delta(eps) of E epochs, max over both pair orders (module docstring)."""
    sigma, rounds, epochs = _check(sigma, rounds, epochs)
    eps = check_finite("eps", eps)
    if not (eps >= 0.0):
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    per, acc = {}, {}
    if epochs == 1 or rounds == 1:
        if rounds == 1 and epochs > 1:  # the Gaussian: sigma / sqrt(E) for one round
            for o in ORDERS:
                r = delta_one_epoch(sigma / math.sqrt(epochs), 1, eps, o)
                per[o], acc[o] = r.value, r.accuracy
        else:
            for o in ORDERS:
                r = delta_one_epoch(sigma, rounds, eps, o)
                per[o], acc[o] = r.value, r.accuracy
        note, method = _NOTE_1, METHOD_NAME
    else:
        comp = composed_loss(sigma, rounds, epochs, cells_per_sd)
        for o in ORDERS:
            per[o], acc[o] = comp.delta(eps, o)
        note, method = _NOTE_E, METHOD_NAME_COMPOSED
    direction = max(per, key=per.get)
    return DeltaResult(
        delta=min(per[direction], 1.0), eps=eps, method=method, estimate=True,
        direction=direction, per_direction=per,
        details={"accuracy": acc[direction], "per_direction_accuracy": acc, "derivation": note,
                 "pair": "random allocation (H0 all rounds N(0,1); H1 one round N(1/sigma,1))"},
        inputs={"sigma": sigma, "rounds": rounds, "epochs": epochs, "eps": eps},
    )


def shuffle_epsilon(sigma: float, rounds: int, epochs: int, delta: float,
                    cells_per_sd: int = 200) -> EpsilonResult:
    """eps(delta) of E epochs, max over both pair orders (module docstring)."""
    sigma, rounds, epochs = _check(sigma, rounds, epochs)
    delta = check_delta("delta", delta)
    per, acc = {}, {}
    if rounds == 1:  # Gaussian with mu = sqrt(E)/sigma: exact
        from ..gdp import epsilon_mu

        eps = float(epsilon_mu(math.sqrt(epochs) / sigma, delta))
        per = {"P||Q": eps}
        acc = {"P||Q": 1e-12 * max(eps, 1.0)}
        note, method = "rounds = 1: the Gaussian mechanism, mu = sqrt(E)/sigma (exact)", METHOD_NAME
    elif epochs == 1:
        for o in ORDERS:
            per[o], acc[o] = _epsilon_one_epoch(sigma, rounds, delta, o)
        note, method = _NOTE_1 + "; eps by bisection on the exact delta(eps)", METHOD_NAME
    else:
        comp = composed_loss(sigma, rounds, epochs, cells_per_sd)
        for o in ORDERS:
            per[o], acc[o] = comp.epsilon(delta, o)
        note, method = _NOTE_E, METHOD_NAME_COMPOSED
    direction = max(per, key=per.get)
    return EpsilonResult(
        epsilon=per[direction], delta=delta, method=method, estimate=True,
        direction=direction, per_direction=per,
        details={"accuracy": acc[direction], "per_direction_accuracy": acc, "derivation": note,
                 "pair": "random allocation (H0 all rounds N(0,1); H1 one round N(1/sigma,1))"},
        inputs={"sigma": sigma, "rounds": rounds, "epochs": epochs, "delta": delta},
    )


def _epsilon_one_epoch(sigma: float, rounds: int, delta: float, order: str
                       ) -> tuple[float, float]:
    """eps(delta) of one epoch by bisection (80 steps at most) on the exact, non-increasing
    delta(eps); accuracy: the delta accuracy over the local slope, plus the bisection width."""
    def f(e: float):
        return delta_one_epoch(sigma, rounds, e, order)

    if f(0.0).value <= delta:
        return 0.0, 0.0
    from ..gdp import epsilon_mu

    lo = 0.0
    hi = 1.25 * float(epsilon_mu(math.sqrt(math.expm1(1.0 / sigma**2) / rounds), delta)) + 1e-9
    for _ in range(40):  # start from the GDP limit's eps (a close guess for large M)
        if f(hi).value <= delta:
            break
        lo, hi = hi, 2.0 * hi
    else:
        return math.inf, 0.0
    law = one_epoch_law(sigma, rounds, math.expm1(hi) if order == "P||Q" else -math.expm1(-hi))

    def f(e: float):  # the same function, on one rule covering [0, hi]
        return delta_from_law(law, e, order)

    for _ in range(80):
        if hi - lo <= 1e-9 * hi:
            break
        mid = 0.5 * (lo + hi)
        if f(mid).value <= delta:
            hi = mid
        else:
            lo = mid
    r = f(hi)
    h = 1e-4 * hi
    slope = (f(hi - h).value - r.value) / h
    return hi, (r.accuracy / slope if slope > 0 else math.inf) + (hi - lo)
