"""derive -- the authoring layer of edgeworth-accountant (sympy).

Layer rules: derive may import sympy, mpmath, ``numeric`` and ``certify``; it is the only layer that
imports sympy at run time. It turns a mechanism given by its densities (or pmfs) into its PLLR,
the moments and cumulants of X (under P) and Y (under Q) -- closed forms where sympy finds them,
flagged mpmath quadrature otherwise -- and compiles it into a mechanism object that
``numeric.compose``, the accountants and the CLI accept like a built-in. It also derives the
Edgeworth series of any order (:mod:`derive.series`) and generates the sympy-free kernels that
numeric imports (:mod:`derive.codegen`, ``python -m derive.codegen``).
"""

from importlib import metadata as _metadata

# Exports are resolved lazily (PEP 562) so that light entry points such as ``derive.cli`` (the
# ``edgeworth derive`` subcommand) do not import sympy until a derivation actually runs.
_EXPORTS = {
    **dict.fromkeys(("BUILTINS", "GAUSSIAN", "LAPLACE", "RANDOMIZED_RESPONSE", "builtin"),
                    "builtins"),
    **dict.fromkeys(("CompiledMechanism", "compile_mechanism", "is_symmetric", "mechanism_class",
                     "register_compiled"), "compile"),
    **dict.fromkeys(("STRATEGIES", "CumulantResult", "DensityMechanism", "Derivation",
                     "DiscreteMechanism", "IdentityCheck", "IdentityCheckError", "MechanismSpec",
                     "Parameter", "QuadratureFallbackWarning", "Segment",
                     "SymbolicIntegrationError", "clear_cache"), "mechanism"),
    **dict.fromkeys(("edgeworth_cdf_expr", "edgeworth_density_coefficients",
                     "edgeworth_density_expr"), "series"),
    # certified lattice steps of compiled mechanisms (needs python-flint, the certify extra)
    **dict.fromkeys(("DerivedLatticeStep", "derived_lattice_step"), "lattice"),
}


def __getattr__(name: str):
    if name == "Mechanism":  # the name used in the issue
        name = "DensityMechanism"
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'derive' has no attribute {name!r}")


try:
    __version__ = _metadata.version("edgeworth-accountant")
except _metadata.PackageNotFoundError:  # source tree without installation
    __version__ = "0+unknown"

__all__ = [
    "BUILTINS",
    "GAUSSIAN",
    "LAPLACE",
    "RANDOMIZED_RESPONSE",
    "STRATEGIES",
    "CompiledMechanism",
    "CumulantResult",
    "DensityMechanism",
    "Derivation",
    "DerivedLatticeStep",
    "DiscreteMechanism",
    "IdentityCheck",
    "IdentityCheckError",
    "Mechanism",
    "MechanismSpec",
    "Parameter",
    "QuadratureFallbackWarning",
    "Segment",
    "SymbolicIntegrationError",
    "__version__",
    "builtin",
    "clear_cache",
    "compile_mechanism",
    "derived_lattice_step",
    "edgeworth_cdf_expr",
    "edgeworth_density_coefficients",
    "edgeworth_density_expr",
    "is_symmetric",
    "mechanism_class",
    "register_compiled",
]
