"""derive -- the authoring layer of edgeworth-accountant (sympy).

Layer rules: derive may import sympy, ``numeric`` and ``certify``; it is the only layer that does
sympy at run time. Its job (issue: derive) is to turn a mechanism given by its densities into PLLR
cumulants, Edgeworth series of any order, and generated numeric and Arb code. This release holds
only the package frame and its version; no derivation API is exported yet.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("edgeworth-accountant")
except _metadata.PackageNotFoundError:  # source tree without installation
    __version__ = "0+unknown"

__all__ = ["__version__"]
