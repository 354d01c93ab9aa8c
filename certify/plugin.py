"""Entry points through which certify plugs into numeric without numeric importing it.

``edgeworth.methods``: :func:`register_methods` adds the ``certified`` method to
``numeric.methods``. ``edgeworth.commands``: :func:`register_commands` adds ``edgeworth certify``
and ``edgeworth verify``. This module imports nothing heavy: python-flint is loaded only when a
certified computation runs, so a base install without the ``certify`` extra gets a clear message.
"""

from __future__ import annotations

__all__ = ["register_commands", "register_methods"]

_INSTALL_HINT = (
    "certified methods need the certify extra: pip install 'edgeworth-accountant[certify]'"
)


def _require_flint() -> None:
    try:
        import flint  # noqa: F401
    except ImportError:
        raise ValueError(_INSTALL_HINT) from None


def _delta(composition, eps):
    _require_flint()
    from .combine import certified_delta

    return certified_delta(composition, eps)


def _epsilon(composition, delta):
    _require_flint()
    from .combine import certified_epsilon

    return certified_epsilon(composition, delta)


def register_methods(register) -> None:
    """Register ``certified`` with numeric's method registry (entry point ``edgeworth.methods``)."""
    from numeric.methods import AccountingMethod

    register(AccountingMethod(
        "certified", "certified enclosure: intersection of exact and EEAI (a proven bound)",
        _delta, _epsilon,
    ))


def register_commands(subparsers) -> None:
    """Add ``certify`` and ``verify`` subcommands (entry point ``edgeworth.commands``)."""
    from .cli import add_commands

    add_commands(subparsers)
