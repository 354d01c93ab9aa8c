r"""The closed-form bounds and approximations of the random-allocation papers.

Notation: sigma the noise multiplier, M rounds per epoch, E epochs,
:math:`v = \mathrm{Var}\,Y = e^{1/\sigma^2} - 1` (the chi-square divergence of one round).

**Reconstructed.** The Berry-Esseen bound and the impossibility threshold below follow the
reconstruction of van Dijk and Ertan (arXiv:2605.06259, Thm 4.1) and Ertan and van Dijk
(arXiv:2601.10237) in the project's mathematical reference, which reproduces the paper's worked
example (sigma = 1, delta = 0.01: M = 1.136e6 rounds, N ~ 1.14e7 at batch size 10); we could not
read the theorems themselves, so every output says ``"reconstructed"``. The chi-square closed form
and the GDP limit are standard (Ertan and van Dijk, arXiv:2610.09651).

* Thm 4.1 (regime sigma >= sqrt(3/ln M), i.e. e^{3/sigma^2} <= M): f(a) >= 1 - a - delta_1 with
  :math:`\delta_1 = (2 B R + \sqrt{v/(2\pi)})/\sqrt M`, B = 0.4748 (Shevtsova's Berry-Esseen
  constant), :math:`R = \sqrt{\text{kurtosis}}` bounding E|Y - 1|^3 / v^{3/2},
  kurtosis = e^{4/s^2} + 2e^{3/s^2} + 3e^{2/s^2} - 3 (s = sigma).
  E epochs: f^{(x)E}(a) >= (1 - delta_1)^E - a, i.e. TV <= 1 - (1 - delta_1)^E.
* chi-square: :math:`c_E = (1 + v/M)^E - 1` is the chi-square divergence of the E-epoch product
  (chi^2(H1||H0) = v/M for one epoch, and 1 + chi^2 multiplies over products);
  TV <= sqrt(c_E)/2 (Cauchy-Schwarz) -- a rigorous bound; for c_E > 1 the reconstruction reports
  c_E/(1 + c_E).
* GDP limit: :math:`\mu = \sqrt{E v / M}` (the epochs' product tends to G_mu as M -> inf with
  E v / M fixed); TV(G_mu) = 2 Phi(mu/2) - 1.
* impossibility: sigma < 1/sqrt(2 ln M) forces TV >= (1 - 1/sqrt(4 pi ln M))/2.
* Edgeworth: the two-term Edgeworth expansion of U = (S - M)/sqrt(M v) (Hall 1992, Sec. 2.2)
  with skewness :math:`\gamma_1 = (e^{s^{-2}} + 2)\sqrt v` and excess kurtosis
  :math:`\gamma_2 = e^{4/s^2} + 2e^{3/s^2} + 3e^{2/s^2} - 6`; integrating |u| against it gives
  :math:`TV \approx \sqrt{v/(2\pi M)}\,(1 + (\gamma_1^2 - \gamma_2)/(24 M))`. With E = c^2 M
  epochs the GDP parameter mu = c sqrt(v) stays fixed while each epoch's law approaches the
  normal at rate 1/sqrt(M): the composed TV tends to 2 Phi(c sqrt(v)/2) - 1
  (:func:`edgeworth_scaling`).
"""

from __future__ import annotations

import math

from scipy.special import ndtr

from .._validation import check_count, check_positive
from ..errors import NotApplicable


def check_pair(sigma: object, rounds: object) -> tuple[float, int]:
    """sigma finite and >= 0.05; rounds a whole number in [1, 1e15] (closed forms only)."""
    sigma = check_positive("sigma", sigma)
    if not (sigma >= 0.05):
        raise ValueError(f"sigma must be >= 0.05, got {sigma!r}")
    return sigma, check_count("rounds", rounds, maximum=10**15)

__all__ = [
    "BERRY_ESSEEN_B",
    "RECONSTRUCTED",
    "chi_square_tv",
    "edgeworth_cdf",
    "edgeworth_scaling",
    "edgeworth_tv",
    "gdp_mu",
    "gdp_tv",
    "impossibility",
    "theorem_4_1",
    "theorem_4_1_delta",
]

BERRY_ESSEEN_B = 0.4748
RECONSTRUCTED = ("reconstructed from the paper's worked example (van Dijk and Ertan, "
                 "arXiv:2605.06259, Thm 4.1); not checked against the theorem's text")


def _v(sigma: float) -> float:
    return math.expm1(1.0 / sigma**2)


def _kurtosis(sigma: float) -> float:
    a = 1.0 / sigma**2
    if 4 * a > 700.0:  # e^{4/sigma^2} overflows: the bound is vacuous (delta_1 = 1)
        return math.inf
    return math.exp(4 * a) + 2 * math.exp(3 * a) + 3 * math.exp(2 * a) - 3.0


def theorem_4_1_delta(sigma: float) -> float:
    r"""The constant K = 2 B R + sqrt(v/(2 pi)) with delta_1 = K / sqrt(M) (reconstructed)."""
    return 2.0 * BERRY_ESSEEN_B * math.sqrt(_kurtosis(sigma)) + math.sqrt(_v(sigma)
                                                                          / (2 * math.pi))


def theorem_4_1(sigma: float, rounds: int, epochs: int = 1) -> dict:
    r"""The Berry-Esseen TV bound of Thm 4.1 and its E-epoch composition (reconstructed).

    Returns:
        ``{"tv": 1 - (1 - delta_1)^E (capped at 1), "delta_1": ..., "in_regime": bool,
        "regime": "sigma >= sqrt(3/ln M)", "status": RECONSTRUCTED}``; outside the regime the
        number is still reported with ``in_regime`` False (the theorem does not cover it).
    """
    sigma, rounds = check_pair(sigma, rounds)
    epochs = check_count("epochs", epochs, maximum=10**9)
    d1 = min(theorem_4_1_delta(sigma) / math.sqrt(rounds), 1.0)
    tv = -math.expm1(epochs * math.log1p(-d1)) if d1 < 1.0 else 1.0
    in_regime = rounds > 1 and sigma >= math.sqrt(3.0 / math.log(rounds))
    return {"tv": tv, "delta_1": d1, "in_regime": bool(in_regime),
            "regime": "sigma >= sqrt(3/ln M)", "status": RECONSTRUCTED}


def chi_square_tv(sigma: float, rounds: int, epochs: int = 1) -> dict:
    r"""TV <= sqrt(c_E)/2, c_E = (1 + v/M)^E - 1 (rigorous for c_E <= 1; module docstring)."""
    sigma, rounds = check_pair(sigma, rounds)
    c = math.expm1(epochs * math.log1p(_v(sigma) / rounds))
    tv = min(0.5 * math.sqrt(c), 1.0) if c <= 1.0 else c / (1.0 + c)
    return {"tv": tv, "chi_square": c,
            "status": "Cauchy-Schwarz bound TV <= sqrt(chi^2)/2 (arXiv:2610.09651)"}


def gdp_mu(sigma: float, rounds: int, epochs: int = 1) -> float:
    r"""mu = sqrt(E v / M), the GDP limit (arXiv:2610.09651)."""
    sigma, rounds = check_pair(sigma, rounds)
    return math.sqrt(epochs * _v(sigma) / rounds)


def gdp_tv(sigma: float, rounds: int, epochs: int = 1) -> dict:
    """TV of G_mu at the GDP limit mu (an approximation for large M, not a bound)."""
    mu = gdp_mu(sigma, rounds, epochs)
    return {"tv": float(2.0 * ndtr(0.5 * mu) - 1.0), "mu": mu,
            "status": "GDP limit (approximation as M -> inf)"}


def impossibility(sigma: float, rounds: int) -> dict:
    r"""Whether sigma < 1/sqrt(2 ln M), and then the TV floor (1 - 1/sqrt(4 pi ln M))/2
    (Ertan and van Dijk, arXiv:2601.10237; reconstructed)."""
    sigma, rounds = check_pair(sigma, rounds)
    if rounds < 2:
        return {"applies": False, "threshold": math.inf, "status": RECONSTRUCTED}
    thr = 1.0 / math.sqrt(2.0 * math.log(rounds))
    out = {"applies": bool(sigma < thr), "threshold": thr, "status": RECONSTRUCTED}
    if sigma < thr:
        out["tv_lower"] = 0.5 * (1.0 - 1.0 / math.sqrt(4.0 * math.pi * math.log(rounds)))
    return out


def _gammas(sigma: float) -> tuple[float, float]:
    a = 1.0 / sigma**2
    if 4 * a > 700.0:
        raise NotApplicable(f"sigma={sigma!r} is too small for the Edgeworth approximation "
                            "(the lognormal's kurtosis overflows)")
    g1 = (math.exp(a) + 2.0) * math.sqrt(math.expm1(a))
    g2 = math.exp(4 * a) + 2 * math.exp(3 * a) + 3 * math.exp(2 * a) - 6.0
    return g1, g2


def edgeworth_cdf(sigma: float, rounds: int, kappa: float) -> float:
    r"""Two-term Edgeworth approximation of P(S/M <= kappa) (module docstring; an
    approximation, not a bound)."""
    sigma, rounds = check_pair(sigma, rounds)
    g1, g2 = _gammas(sigma)
    u = (kappa - 1.0) * math.sqrt(rounds / _v(sigma))
    phi = math.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)
    he2, he3, he5 = u * u - 1, u**3 - 3 * u, u**5 - 10 * u**3 + 15 * u
    corr = g1 / (6 * math.sqrt(rounds)) * he2 + (g2 / 24 * he3 + g1 * g1 / 72 * he5) / rounds
    return float(ndtr(u) - phi * corr)


def edgeworth_tv(sigma: float, rounds: int) -> float:
    r"""TV ~ sqrt(v/(2 pi M)) (1 + (gamma_1^2 - gamma_2)/(24 M)) (module docstring)."""
    sigma, rounds = check_pair(sigma, rounds)
    g1, g2 = _gammas(sigma)
    return math.sqrt(_v(sigma) / (2 * math.pi * rounds)) * (1 + (g1 * g1 - g2) / (24 * rounds))


def edgeworth_scaling(sigma: float, c: float) -> dict:
    r"""E = c^2 M epochs: the limit TV 2 Phi(c sqrt(v)/2) - 1 as M -> inf (GDP, mu = c sqrt v),
    and the first-order Edgeworth scale gamma_1/sqrt(M) of each epoch's departure from it."""
    if not (c > 0 and math.isfinite(c)):
        raise ValueError(f"c must be finite and > 0, got {c!r}")
    mu = c * math.sqrt(_v(sigma))
    g1, _ = _gammas(sigma)
    return {"mu": mu, "tv_limit": float(2 * ndtr(0.5 * mu) - 1), "skewness": g1,
            "note": "per-epoch correction ~ skewness/(6 sqrt(M)); limit as M -> inf"}
