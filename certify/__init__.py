"""certify -- rigorous enclosures for edgeworth-accountant (python-flint Arb inside).

Layer rules: certify may import ``numeric``, python-flint and mpmath; never sympy or ``derive``.
Everything it returns is a :class:`~certify.bound.Bound`, a proven enclosure computed with
outward-rounded Arb arithmetic: exact answers (Gaussian / pure DP, :mod:`certify.exact`), the
Edgeworth interval EEAI (:mod:`certify.eeai`), the Renyi/Chernoff upper bound
(:mod:`certify.chernoff`), the lattice method (:mod:`certify.lattice`: a dominating
connect-the-dots discretization composed exactly), their intersection under an optional time
budget (:mod:`certify.combine`, :mod:`certify.budget`), and audit certificates that
``edgeworth verify`` recomputes (:mod:`certify.certificate`).

What certify knows about each mechanism (PLLR moments, continuous parts, lattice step, Chernoff
CGF, exact profile) lives in one module per mechanism in :mod:`certify.mechanisms` and is found
through :mod:`certify.registry` (:func:`~certify.registry.capability`); a method that does not
apply raises :class:`numeric.errors.NotApplicable`. It plugs into numeric through the entry
points in :mod:`certify.plugin` (method ``certified``, commands ``certify`` and ``verify``).
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("edgeworth-accountant")
except _metadata.PackageNotFoundError:  # source tree without installation
    __version__ = "0+unknown"

_EXPORTS = {
    "Bound": "bound",
    "certified_delta": "combine",
    "certified_epsilon": "combine",
    "delta_interval": "eeai",
    "epsilon_interval": "eeai",
    "exact_delta_bound": "exact",
    "exact_epsilon_bound": "exact",
    "chernoff_delta_bound": "chernoff",
    "chernoff_epsilon_bound": "chernoff",
    "lattice_delta_interval": "lattice",
    "lattice_epsilon_interval": "lattice",
    "lattice_step": "lattice_steps",
    "register_lattice_step": "lattice_steps",
    "CertifiedMechanism": "registry",
    "capability": "registry",
    "register_certified": "registry",
    "make_certificate": "certificate",
    "verify": "certificate",
}


def __getattr__(name: str):
    # lazy (PEP 562): the entry-point module certify.plugin must not import python-flint
    if name in _EXPORTS:
        from importlib import import_module

        if _EXPORTS[name] == "registry":  # the registry is only useful with the built-ins in it
            import_module(".mechanisms", __name__)
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'certify' has no attribute {name!r}")


__all__ = ["__version__", *sorted(_EXPORTS)]
