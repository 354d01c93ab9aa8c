"""numeric -- the base layer of edgeworth-accountant (numpy/scipy only).

Layer rules: numeric imports numpy, scipy and the standard library only. It never imports sympy,
mpmath, python-flint, ``derive`` or ``certify``; those plug into it through the entry-point groups
``edgeworth.methods`` and ``edgeworth.commands`` (see :mod:`numeric.methods`, :mod:`numeric.cli`).

Public API: mechanisms (dominating pairs) and their PLLR cumulants, composition, the approximate
Edgeworth accountant (AEA; an *estimate*), the saddlepoint (tilted-Edgeworth) accountant (an
*estimate*), GDP and CLT accounting (estimates, exact for Gaussian),
exact pure-DP composition in floats, f-DP trade-off functions, and :class:`EdgeworthAccountant`.
"""

from importlib import import_module as _import_module

# Public name -> defining submodule. Imported on first use (PEP 562), so ``import numeric`` costs
# almost nothing and a query imports only the modules its method uses.
_LAZY = {
    "EdgeworthAccountant": "accountant",
    "aea_delta": "aea", "aea_epsilon": "aea",
    "clt_delta": "clt", "clt_epsilon": "clt", "clt_mu": "clt",
    "gdp_delta": "clt", "gdp_epsilon": "clt", "gdp_mu": "clt",
    "Composition": "composition", "compose": "composition",
    "exact_delta": "exact", "exact_epsilon": "exact",
    "delta_mu": "gdp", "epsilon_mu": "gdp", "log_delta_mu": "gdp",
    "poisson_subsampling_clt_mu": "gdp",
    "MECHANISMS": "mechanisms", "ApproxDP": "mechanisms", "Gaussian": "mechanisms",
    "Laplace": "mechanisms", "Mechanism": "mechanisms", "PLLRCumulants": "mechanisms",
    "PoissonSubsampledGaussian": "mechanisms", "RandomizedResponse": "mechanisms",
    "register_mechanism": "mechanisms",
    "METHODS": "methods", "AccountingMethod": "methods", "delta": "methods",
    "epsilon": "methods", "register_method": "methods",
    "NotApplicable": "errors", "BudgetExceeded": "errors",
    "pure_dp_delta": "pure_dp", "pure_dp_epsilon": "pure_dp",
    "DeltaResult": "results", "EpsilonResult": "results", "Estimate": "results",
    "saddlepoint_delta": "saddlepoint", "saddlepoint_epsilon": "saddlepoint",
    "load_spec": "spec", "parse_spec": "spec",
    "eps_delta_tradeoff": "tradeoff", "gaussian_tradeoff": "tradeoff",
}


def __getattr__(name: str):
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("edgeworth-accountant")
        except metadata.PackageNotFoundError:  # a source tree without installation
            return "0+unknown"
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'numeric' has no attribute {name!r}")
    value = getattr(_import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


__all__ = [
    "MECHANISMS",
    "METHODS",
    "AccountingMethod",
    "ApproxDP",
    "BudgetExceeded",
    "Composition",
    "DeltaResult",
    "EdgeworthAccountant",
    "EpsilonResult",
    "Estimate",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "NotApplicable",
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
