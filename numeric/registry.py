"""The registry of accounting methods, extensible by plug-ins through entry points.

Other layers add methods without numeric importing them: a distribution declares an entry point
in the group ``edgeworth.methods`` whose object is a callable taking :func:`register_method`
(certify registers ``certified`` this way). Plug-ins are loaded lazily by :func:`load_plugins`.
This module imports nothing from the rest of numeric, so every method module (and ``auto``) can
use it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

__all__ = [
    "METHODS",
    "PLUGIN_ERRORS",
    "AccountingMethod",
    "estimate_method",
    "get_method",
    "load_plugins",
    "register_method",
]


@dataclass(frozen=True)
class AccountingMethod:
    """A named way to compute delta(eps) and eps(delta) for a composition.

    Attributes:
        name: Registry key (``--method`` on the command line).
        description: One line for help texts.
        delta_fn: ``delta_fn(composition, eps, **options)``.
        epsilon_fn: ``epsilon_fn(composition, delta, **options)``.
        options: Keyword options the method understands (e.g. ``order``).
        estimate: True for methods whose answers are estimates (may under-report eps).
    """

    name: str
    description: str
    delta_fn: Callable[..., Any]
    epsilon_fn: Callable[..., Any]
    options: tuple[str, ...] = ()
    estimate: bool = True

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and self.name):
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")


METHODS: dict[str, AccountingMethod] = {}
PLUGIN_ERRORS: list[str] = []
_plugins_loaded = False


def register_method(method: AccountingMethod, *, replace: bool = False) -> None:
    """Add ``method`` to the registry (``replace=True`` to override an existing name).

    Raises:
        ValueError: if the name is taken and ``replace`` is False.
    """
    if method.name in METHODS and not replace:
        raise ValueError(f"method {method.name!r} is already registered")
    METHODS[method.name] = method


def load_plugins() -> None:
    """Load methods contributed through the ``edgeworth.methods`` entry-point group (once)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in metadata.entry_points(group="edgeworth.methods"):
        try:
            ep.load()(register_method)
        except Exception as exc:  # a broken plug-in must not break the base layer
            PLUGIN_ERRORS.append(f"plug-in {ep.name!r} failed to load: {exc}")


def estimate_method(name: str, options: dict[str, Any], instead: str) -> AccountingMethod:
    """A registered method other than ``certified``, with ``options`` it takes (for the estimate
    variants of the drop-in accountants).

    Args:
        name: Method name.
        options: Keyword options meant for it.
        instead: What to use for certified answers (named in the error).

    Raises:
        ValueError: for an unknown method, ``certified``, or an option the method lacks.
    """
    method = get_method(name, required=False)
    if method is None or name == "certified":
        raise ValueError(f"method must be a registered estimate method other than "
                         f"'certified' (use {instead}), got {name!r}")
    unknown = set(options) - set(method.options)
    if unknown:
        raise ValueError(f"method {name!r} does not take option(s) {sorted(unknown)}")
    return method


def get_method(name: str, *, required: bool = True) -> AccountingMethod | None:
    """The registered method ``name`` (plug-ins loaded on demand).

    Args:
        name: Method name.
        required: If False, return None instead of raising for an unknown name.

    Raises:
        ValueError: naming the method and the registered ones, if unknown and ``required``.
    """
    if name not in METHODS:
        load_plugins()
    if name not in METHODS:
        if not required:
            return None
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {name!r}")
    return METHODS[name]
