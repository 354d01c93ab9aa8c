"""numeric -- the base layer of edgeworth-accountant (numpy/scipy only).

Layer rules: numeric imports numpy, scipy and the standard library only. It never imports sympy,
mpmath, python-flint, ``derive`` or ``certify``; those plug into it through the entry-point groups
``edgeworth.methods`` and ``edgeworth.commands`` (see :mod:`numeric.methods`, :mod:`numeric.cli`).

Public API: mechanisms (dominating pairs) and their PLLR cumulants, composition, the approximate
Edgeworth accountant (AEA; an *estimate*), the saddlepoint (tilted-Edgeworth) accountant (an
*estimate*), GDP and CLT accounting (estimates, exact for Gaussian),
exact pure-DP composition in floats, f-DP trade-off functions, and :class:`EdgeworthAccountant`.
"""

from importlib import metadata as _metadata

from .accountant import EdgeworthAccountant
from .aea import aea_delta, aea_epsilon
from .clt import clt_delta, clt_epsilon, clt_mu, gdp_delta, gdp_epsilon, gdp_mu
from .composition import Composition, compose
from .exact import exact_delta, exact_epsilon
from .gdp import delta_mu, epsilon_mu, log_delta_mu, poisson_subsampling_clt_mu
from .mechanisms import (
    MECHANISMS,
    ApproxDP,
    Gaussian,
    Laplace,
    Mechanism,
    PLLRCumulants,
    PoissonSubsampledGaussian,
    RandomizedResponse,
    register_mechanism,
)
from .methods import METHODS, AccountingMethod, delta, epsilon, register_method
from .pure_dp import pure_dp_delta, pure_dp_epsilon
from .results import DeltaResult, EpsilonResult, Estimate
from .saddlepoint import saddlepoint_delta, saddlepoint_epsilon
from .spec import load_spec, parse_spec
from .tradeoff import eps_delta_tradeoff, gaussian_tradeoff

try:
    __version__ = _metadata.version("edgeworth-accountant")
except _metadata.PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0+unknown"

__all__ = [
    "MECHANISMS",
    "METHODS",
    "AccountingMethod",
    "ApproxDP",
    "Composition",
    "DeltaResult",
    "EdgeworthAccountant",
    "EpsilonResult",
    "Estimate",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "PLLRCumulants",
    "PoissonSubsampledGaussian",
    "RandomizedResponse",
    "__version__",
    "aea_delta",
    "aea_epsilon",
    "clt_delta",
    "clt_epsilon",
    "clt_mu",
    "compose",
    "delta",
    "delta_mu",
    "eps_delta_tradeoff",
    "epsilon",
    "epsilon_mu",
    "exact_delta",
    "exact_epsilon",
    "gaussian_tradeoff",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "load_spec",
    "log_delta_mu",
    "parse_spec",
    "poisson_subsampling_clt_mu",
    "pure_dp_delta",
    "pure_dp_epsilon",
    "register_mechanism",
    "register_method",
    "saddlepoint_delta",
    "saddlepoint_epsilon",
]
