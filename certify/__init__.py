"""certify -- rigorous enclosures for edgeworth-accountant (python-flint Arb inside).

Layer rules: certify may import ``numeric``, python-flint and mpmath; never sympy or ``derive``.
Everything it returns is a :class:`~certify.bound.Bound`, a proven enclosure computed with
outward-rounded Arb arithmetic: exact answers (Gaussian / pure DP, :mod:`certify.exact`), the
Edgeworth interval EEAI (:mod:`certify.eeai`), the Renyi/Chernoff upper bound
(:mod:`certify.chernoff`), the lattice method (:mod:`certify.lattice`: a dominating connect-the-dots
discretization composed exactly, with single-step laws registered per mechanism in
:mod:`certify.lattice_steps`), their intersection (:mod:`certify.combine`), and audit
certificates that ``edgeworth verify`` recomputes (:mod:`certify.certificate`). It plugs into
numeric through the entry points in :mod:`certify.plugin` (method ``certified``, commands
``certify`` and ``verify``).
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
    "make_certificate": "certificate",
    "verify": "certificate",
}


def __getattr__(name: str):
    # lazy (PEP 562): the entry-point module certify.plugin must not import python-flint
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'certify' has no attribute {name!r}")


__all__ = ["__version__", *sorted(_EXPORTS)]
