"""Certified knowledge of the built-in mechanisms, one module per mechanism.

Each module holds everything certify knows about its mechanism -- PLLR moments, absolutely
continuous components, lattice step, Chernoff CGF, exact profile, normality of the PLLR -- with
the formulas and their sources in its docstring, and ends with its
:func:`certify.registry.register_certified` call(s). Importing this package registers them all;
the generic modules of certify import it, so any certified computation sees the built-ins.

* :mod:`certify.mechanisms.gaussian`: the Gaussian mechanism;
* :mod:`certify.mechanisms.laplace`: the Laplace mechanism;
* :mod:`certify.mechanisms.randomized_response`: randomized response and ApproxDP;
* :mod:`certify.mechanisms.subsampled_gaussian`: the Poisson-subsampled Gaussian;
* :mod:`certify.mechanisms.random_allocation`: random allocation (one shuffled epoch).
"""

from . import gaussian, laplace, random_allocation, randomized_response, subsampled_gaussian

__all__ = ["gaussian", "laplace", "random_allocation", "randomized_response",
           "subsampled_gaussian"]
