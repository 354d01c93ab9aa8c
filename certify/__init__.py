"""certify -- rigorous enclosures for edgeworth-accountant (python-flint Arb inside).

Layer rules: certify may import ``numeric``, python-flint and mpmath; never sympy or ``derive``.
It will provide certified EEAI intervals, exact binomial composition and audit certificates
(issue: certify), plugging into the ``edgeworth`` CLI and method registry through entry points.
This release holds only the package frame and its version; nothing here is certified yet.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("edgeworth-accountant")
except _metadata.PackageNotFoundError:  # source tree without installation
    __version__ = "0+unknown"

__all__ = ["__version__"]
