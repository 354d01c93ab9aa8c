"""Entry points through which certify plugs into numeric without numeric importing it.

``edgeworth.methods``: :func:`register_methods` adds the ``certified`` method to
``numeric.methods`` (option ``time_budget``, seconds: see :mod:`certify.combine`).
``edgeworth.commands``: :func:`register_commands` adds ``edgeworth certify`` and
``edgeworth verify``. This module imports nothing heavy: python-flint is loaded only when a
certified computation runs, so a base install without the ``certify`` extra gets a clear message
(:mod:`certify.install`).
"""

from __future__ import annotations

from .install import require_flint

__all__ = ["register_commands", "register_methods"]


def _delta(composition, eps, time_budget=None):
    require_flint()
    from .combine import certified_delta

    return certified_delta(composition, eps, time_budget=time_budget)


def _epsilon(composition, delta, time_budget=None):
    require_flint()
    from .combine import certified_epsilon

    return certified_epsilon(composition, delta, time_budget=time_budget)


def register_methods(register) -> None:
    """Register ``certified`` with numeric's method registry (entry point ``edgeworth.methods``)."""
    from numeric.methods import AccountingMethod

    register(AccountingMethod(
        "certified", "certified enclosure: intersection of every applicable certified method "
        "(exact, Chernoff, EEAI, lattice; a proven bound)",
        _delta, _epsilon, ("time_budget",), estimate=False,
    ))
    _register_shuffle()


def _register_shuffle() -> None:
    """Fill numeric's certified-shuffle hook (random allocation; :mod:`certify.shuffle.hook`)."""
    try:
        from numeric.shuffle.hooks import register_certified_shuffle
    except ImportError:  # a numeric without the shuffle module
        return

    def provider(name):
        def call(*args):
            require_flint()
            from .shuffle import hook

            return getattr(hook, name)(*args)
        return call

    register_certified_shuffle(provider("tv"), provider("delta"), provider("epsilon"))


def register_commands(subparsers) -> None:
    """Add ``certify`` and ``verify`` subcommands (entry point ``edgeworth.commands``)."""
    from .cli import add_commands

    add_commands(subparsers)
    from .papers.cli import add_commands as add_check  # edgeworth check PAPER

    add_check(subparsers)
