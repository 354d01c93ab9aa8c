r"""Central-limit (GDP) accounting of a composition -- estimates except for Gaussian compositions.

Two methods (Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 2022 = GDP):

* ``gdp`` -- the Berry-Esseen centring of GDP Thm 3.4/3.5:
  mu = 2 ||kl||_1 / sqrt(||kappa_2||_1 - ||kl||_2^2), where per step kl = KL(P||Q) = -kappa_1(X)
  and kappa_2 - kl^2 = Var_P(X); so mu = 2 sum m_i KL_i / sqrt(sum m_i Var_i). For Gaussian steps
  this is exactly sqrt(sum m_i mu_i^2) (GDP Cor. 3.3).
* ``clt`` -- the limit theorems: mu^2 = sum m_i mu_i^2 with mu_i^2 from each mechanism
  (:meth:`~numeric.mechanisms.base.Mechanism.clt_mu_squared`: eps^2 for (eps, delta)-DP steps, GDP
  Thm 3.6; p^2 (e^{1/sigma^2} - 1) for Poisson-subsampled Gaussian steps, Bu, Dong, Long, Su 2020,
  Thm 5; Var_P(X) otherwise), and the delta part of (eps, delta) steps as
  f_{0, 1 - e^{-sum delta_i}} (GDP Thm 3.6).

Both combine the GDP profile with the delta part through GDP Eq. 13:
delta(eps) = d + (1 - d) delta_mu(eps). Asymmetric pairs: ``gdp`` takes the larger mu over the two
pair orders.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_float_array, check_delta
from .composition import Composition, compose
from .errors import NotApplicable
from .gdp import MAX_MU, delta_mu, epsilon_mu
from .mechanisms.base import DIRECTION_PQ
from .results import DeltaResult, EpsilonResult

__all__ = ["clt_delta", "clt_epsilon", "clt_mu", "gdp_delta", "gdp_epsilon", "gdp_mu"]


def gdp_mu(composition) -> tuple[float, str, dict[str, float]]:
    """GDP Thm 3.5 centring mu of a composition: ``(mu, direction, per_direction)``."""
    comp = compose(composition)
    per = {}
    for direction in comp.directions:
        kx, _ = comp.cumulants(2, direction)
        var = kx[1]
        if not (var > 0.0) and kx[0] != 0.0:
            raise NotApplicable(
                f"the GDP centring mu is undefined: the privacy loss has KL {-kx[0]:.6g} but no "
                "variance (a point mass, e.g. randomized response with eps0 >~ 40); use the exact "
                "method"
            )
        per[direction] = 2.0 * (-kx[0]) / math.sqrt(var) if var > 0.0 else 0.0
    direction = max(per, key=per.get)
    return per[direction], direction, per


def _check_mu(method: str, mu: float) -> float:
    if not (mu <= MAX_MU):
        raise NotApplicable(
            f"the {method} approximation gives mu = {mu:.6g} > {MAX_MU:g}: the per-step privacy "
            "loss is far outside the central-limit regime; use the exact, saddlepoint or "
            "certified method"
        )
    return mu


def clt_mu(composition) -> float:
    """Limit-theorem mu = sqrt(sum m_i mu_i^2) (GDP Thm 3.6; Bu et al. 2020 Thm 5)."""
    comp = compose(composition)
    return math.sqrt(sum(c * m.clt_mu_squared() for m, c in comp.terms))


def _clt_delta_part(comp: Composition) -> float:
    """1 - exp(-sum m_i delta_i), the delta part of GDP Thm 3.6."""
    return -math.expm1(-sum(c * m.delta_part for m, c in comp.terms))


def _all_gaussian(comp: Composition) -> bool:
    return all((f := m.exact_family()) is not None and f[0] == "gaussian" for m, _ in comp.terms)


def _clt_exact(comp: Composition) -> bool:
    """The limit-theorem mu is exact only where each step's limit mu^2 is its GDP mu^2 (not, e.g.,
    Bu et al.'s p^2 (e^{mu^2} - 1) for a subsampled Gaussian at rate 1)."""
    return _all_gaussian(comp) and all(
        math.isclose(m.clt_mu_squared(), m.exact_family()[1], rel_tol=1e-12)
        for m, _ in comp.terms)


def _profile_delta(mu: float, d: float, e: np.ndarray) -> np.ndarray:
    pure = delta_mu(mu, e) if mu > 0.0 else np.zeros_like(e)
    return d + (1.0 - d) * np.asarray(pure)


def _profile_epsilon(mu: float, d: float, delta: float) -> float:
    if delta <= d:
        return math.inf
    if mu == 0.0:
        return 0.0
    return epsilon_mu(mu, (delta - d) / (1.0 - d))


_NOTE = "central-limit approximation: an estimate, not a bound; it can under-report epsilon"


def _result_delta(method, mu, d, direction, per, comp, eps) -> DeltaResult:
    e = as_float_array("eps", eps, nonnegative=True)
    vals = _profile_delta(mu, d, e)
    exact = _all_gaussian(comp) if method == "gdp" else _clt_exact(comp)
    scalar = np.ndim(eps) == 0
    return DeltaResult(
        delta=float(vals.reshape(-1)[0]) if scalar else vals,
        eps=float(e) if scalar else e,
        method=method,
        estimate=not exact,
        direction=direction,
        per_direction={k: float(v) for k, v in per.items()},
        warnings=() if exact else (_NOTE,),
        details={"mu": mu, "delta_part": d},
    )


def _result_eps(method, mu, d, direction, per, comp, delta) -> EpsilonResult:
    delta = check_delta("delta", delta)
    eps = _profile_epsilon(mu, d, delta)
    exact = _all_gaussian(comp) if method == "gdp" else _clt_exact(comp)
    warns = [] if exact else [_NOTE]
    if math.isinf(eps):
        warns.append(f"delta={delta!r} is not above the delta part {d!r}: no finite epsilon")
    return EpsilonResult(
        eps, delta, method, not exact, direction,
        {k: _profile_epsilon(v, d, delta) for k, v in per.items()},
        tuple(warns), {"mu": mu, "delta_part": d},
    )


def gdp_delta(composition, eps) -> DeltaResult:
    """delta(eps) from the GDP Thm 3.5 mu and the exact delta part (Eq. 12-13)."""
    comp = compose(composition)
    mu, direction, per = gdp_mu(comp)
    _check_mu("gdp", mu)
    return _result_delta("gdp", mu, comp.delta_part, direction, per, comp, eps)


def gdp_epsilon(composition, delta: float) -> EpsilonResult:
    """eps(delta) from the GDP Thm 3.5 mu and the exact delta part (Eq. 12-13)."""
    comp = compose(composition)
    mu, direction, per = gdp_mu(comp)
    _check_mu("gdp", mu)
    return _result_eps("gdp", mu, comp.delta_part, direction, per, comp, delta)


def clt_delta(composition, eps) -> DeltaResult:
    """delta(eps) from the limit theorems (GDP Thm 3.6; Bu et al. 2020 Thm 5)."""
    comp = compose(composition)
    mu = _check_mu("clt", clt_mu(comp))
    return _result_delta("clt", mu, _clt_delta_part(comp), DIRECTION_PQ, {}, comp, eps)


def clt_epsilon(composition, delta: float) -> EpsilonResult:
    """eps(delta) from the limit theorems (GDP Thm 3.6; Bu et al. 2020 Thm 5)."""
    comp = compose(composition)
    mu = _check_mu("clt", clt_mu(comp))
    return _result_eps("clt", mu, _clt_delta_part(comp), DIRECTION_PQ, {}, comp, delta)
