"""Is the ``certify`` extra (python-flint) installed? A light check for the entry points.

:mod:`certify.plugin` and :mod:`certify.cli` must not import python-flint at import time (a base
install without the extra still loads them); they call :func:`require_flint` before a certified
computation.
"""

from __future__ import annotations

from numeric.errors import NotApplicable

__all__ = ["INSTALL_HINT", "require_flint"]

INSTALL_HINT = (
    "certified methods need the certify extra: pip install 'edgeworth-accountant[certify]'"
)


def require_flint() -> None:
    """Raise :class:`~numeric.errors.NotApplicable` with :data:`INSTALL_HINT` without
    python-flint.

    Raises:
        NotApplicable: if python-flint cannot be imported (the certified method does not apply
            in this installation).
    """
    try:
        import flint  # noqa: F401
    except ImportError:
        raise NotApplicable(INSTALL_HINT) from None
