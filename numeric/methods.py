"""Registry of accounting methods, extensible by plug-ins through entry points.

Built-in methods: ``aea`` (Q-only Edgeworth, estimate), ``aea-ea`` (EA paper's two-sided plug-in,
estimate), ``gdp`` (GDP Thm 3.5 centring, estimate unless Gaussian), ``clt`` (limit theorems,
estimate unless Gaussian), ``saddlepoint`` (tilted Edgeworth, estimate), ``auto`` (saddlepoint when
its diagnostics pass, else the ``certified`` plug-in if registered, else the saddlepoint estimate
with a warning; :mod:`numeric.auto`), ``exact`` (closed forms in floats, refuses otherwise).

Other layers add methods without numeric importing them: a distribution declares an entry point in
group ``edgeworth.methods`` whose object is a callable taking this module's
:func:`register_method` (certify registers ``certified`` this way). Plug-ins are loaded lazily by
:func:`load_plugins`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

from .aea import aea_delta, aea_epsilon
from .auto import auto_delta, auto_epsilon
from .clt import clt_delta, clt_epsilon, gdp_delta, gdp_epsilon
from .exact import exact_delta, exact_epsilon
from .results import DeltaResult, EpsilonResult
from .saddlepoint import saddlepoint_delta, saddlepoint_epsilon

__all__ = ["METHODS", "AccountingMethod", "delta", "epsilon", "load_plugins", "register_method"]


@dataclass(frozen=True)
class AccountingMethod:
    """A named way to compute delta(eps) and eps(delta) for a composition.

    ``delta_fn(composition, eps, **options)`` and ``epsilon_fn(composition, delta, **options)``;
    ``options`` lists the keyword options the method understands (e.g. ``order``).
    """

    name: str
    description: str
    delta_fn: Callable[..., DeltaResult]
    epsilon_fn: Callable[..., EpsilonResult]
    options: tuple[str, ...] = ()


METHODS: dict[str, AccountingMethod] = {}


def register_method(method: AccountingMethod, *, replace: bool = False) -> None:
    """Add ``method`` to the registry (``replace=True`` to override an existing name)."""
    if method.name in METHODS and not replace:
        raise ValueError(f"method {method.name!r} is already registered")
    METHODS[method.name] = method


register_method(AccountingMethod(
    "aea", "Q-only approximate Edgeworth accountant (estimate)",
    aea_delta, aea_epsilon, ("order",),
))
register_method(AccountingMethod(
    "aea-ea", "EA paper's two-sided Edgeworth plug-in (estimate; for paper checks)",
    lambda c, e, order=2: aea_delta(c, e, order=order, variant="aea-ea"),
    lambda c, d, order=2: aea_epsilon(c, d, order=order, variant="aea-ea"),
    ("order",),
))
register_method(AccountingMethod(
    "gdp", "GDP Berry-Esseen centring mu (estimate; exact for Gaussian)", gdp_delta, gdp_epsilon
))
register_method(AccountingMethod(
    "clt", "GDP limit theorems (estimate; exact for Gaussian)", clt_delta, clt_epsilon
))
register_method(AccountingMethod(
    "saddlepoint", "tilted-Edgeworth saddlepoint accountant (estimate; exact for Gaussian)",
    saddlepoint_delta, saddlepoint_epsilon, ("order",),
))
register_method(AccountingMethod(
    "auto", "saddlepoint if its diagnostics pass, else certified (if installed), else the "
    "saddlepoint estimate with a warning; never AEA", auto_delta, auto_epsilon, ("order",),
))
register_method(AccountingMethod(
    "exact", "closed forms in floating point (Gaussian: GDP; pure DP: binomial)",
    exact_delta, exact_epsilon,
))

_plugins_loaded = False
PLUGIN_ERRORS: list[str] = []


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


def _get(method: str) -> AccountingMethod:
    if method not in METHODS:
        load_plugins()
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    return METHODS[method]


def _options(m: AccountingMethod, options: dict) -> dict:
    unknown = set(options) - set(m.options)
    if unknown:
        raise ValueError(f"method {m.name!r} does not take option(s) {sorted(unknown)}")
    return options


def delta(composition, eps, method: str = "aea", **options) -> DeltaResult:
    """delta(eps) of a composition by the named method (see :data:`METHODS`)."""
    m = _get(method)
    return m.delta_fn(composition, eps, **_options(m, options))


def epsilon(composition, delta: float, method: str = "aea", **options) -> EpsilonResult:
    """eps(delta) of a composition by the named method (see :data:`METHODS`)."""
    m = _get(method)
    return m.epsilon_fn(composition, delta, **_options(m, options))
