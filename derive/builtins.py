r"""The built-in mechanisms, defined in derive from their densities (docs/math.md section 4).

Each is a dominating pair in standardized form, so one parameter describes it:

* **Gaussian** (Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 2022, Thm 2.7):
  P = N(0, 1), Q = N(mu, 1), mu = sensitivity / sigma. L = mu x - mu^2/2, so
  X ~ N(-mu^2/2, mu^2), Y ~ N(mu^2/2, mu^2) and kappa_{>=3} = 0.
* **Laplace** (Wang, Gao, Zhang, Shen, Su, arXiv:2206.04236, Section 5):
  p = e^{-|x|}/2, q = e^{-|x - mu|}/2, mu = sensitivity / scale, with breakpoints 0 and mu where
  L(x) = |x| - |x - mu| is not smooth. L has atoms -mu (mass 1/2 under P) and +mu (mass e^{-mu}/2)
  and is 2x - mu in between; kappa_1 = 1 - mu - e^{-mu}, kappa_2 = 3 - 4 mu e^{-mu} - 2e^{-mu}
  - e^{-2mu}, ...
* **Randomized response** (Kairouz, Oh, Viswanath, arXiv:1311.0776):
  P = (e^{eps0}, 1)/(1 + e^{eps0}), Q = (1, e^{eps0})/(1 + e^{eps0}); X = +-eps0,
  kappa_1 = -eps0 tanh(eps0/2).

The derived cumulants equal docs/math.md's closed forms (tests: symbolically for Gaussian and
randomized response, to 1e-30 at 40 digits for Laplace). :data:`BUILTINS` maps the names used by
``numeric.mechanisms`` to the specs; :func:`builtin` returns one by name.
"""

from __future__ import annotations

import math

import sympy as sp

from .mechanism import DensityMechanism, DiscreteMechanism, MechanismSpec, Parameter

__all__ = ["BUILTINS", "GAUSSIAN", "LAPLACE", "RANDOMIZED_RESPONSE", "builtin"]

_x = sp.Symbol("x", real=True)
_mu = sp.Symbol("mu", positive=True)
_eps0 = sp.Symbol("eps0", positive=True)

GAUSSIAN = DensityMechanism(
    "gaussian",
    _x,
    sp.exp(-_x**2 / 2) / sp.sqrt(2 * sp.pi),
    sp.exp(-(_x - _mu) ** 2 / 2) / sp.sqrt(2 * sp.pi),
    params=(Parameter(_mu, default=1.0, domain=(0.0, math.inf), typical=(0.01, 10.0),
                      description="sensitivity / sigma (the GDP parameter)"),),
    description="Gaussian mechanism, P = N(0, 1), Q = N(mu, 1).",
)

LAPLACE = DensityMechanism(
    "laplace",
    _x,
    sp.exp(-sp.Abs(_x)) / 2,
    sp.exp(-sp.Abs(_x - _mu)) / 2,
    params=(Parameter(_mu, default=1.0, domain=(0.0, math.inf), typical=(0.01, 10.0),
                      description="sensitivity / scale (the pure-DP epsilon)"),),
    breakpoints=(0, _mu),
    description="Laplace mechanism, P = Lap(0, 1), Q = Lap(mu, 1).",
)

_E = sp.exp(_eps0)
RANDOMIZED_RESPONSE = DiscreteMechanism(
    "randomized-response",
    p=(_E / (1 + _E), 1 / (1 + _E)),
    q=(1 / (1 + _E), _E / (1 + _E)),
    params=(Parameter(_eps0, default=1.0, domain=(0.0, math.inf), typical=(0.01, 10.0),
                      description="privacy parameter eps0"),),
    outcomes=("truth", "lie"),
    description="Randomized response, the canonical (eps0, 0)-DP pair.",
)

BUILTINS: dict[str, MechanismSpec] = {
    "gaussian": GAUSSIAN,
    "laplace": LAPLACE,
    "randomized-response": RANDOMIZED_RESPONSE,
}


def builtin(name: str) -> MechanismSpec:
    """The built-in spec called ``name`` (``gaussian``, ``laplace``, ``randomized-response``).

    Raises:
        ValueError: for an unknown name.
    """
    try:
        return BUILTINS[name]
    except KeyError:
        raise ValueError(f"unknown built-in mechanism {name!r}; choose from {sorted(BUILTINS)}"
                         ) from None
