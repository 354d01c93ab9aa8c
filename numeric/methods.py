"""The accounting methods and the two entry points :func:`epsilon` and :func:`delta`.

Built-in methods: ``auto`` (the default: exact where a closed form exists, else the saddlepoint
where its diagnostics pass, else a certified answer within a time budget, else the best estimate
with a warning; :mod:`numeric.auto`), ``aea`` (Q-only Edgeworth, estimate), ``aea-ea`` (the EA
paper's two-sided plug-in, estimate), ``saddlepoint`` (tilted Edgeworth, estimate), ``gdp`` (GDP
Thm 3.5 centring, estimate unless Gaussian), ``clt`` (limit theorems, estimate unless Gaussian),
``exact`` (closed forms in floats; :class:`~numeric.errors.NotApplicable` otherwise). The
``certified`` method comes from certify through the ``edgeworth.methods`` entry point
(:mod:`numeric.registry`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from importlib import import_module

from .composition import compose
from .registry import (
    METHODS,
    PLUGIN_ERRORS,
    AccountingMethod,
    get_method,
    load_plugins,
    register_method,
)
from .results import DeltaResult, EpsilonResult

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "PLUGIN_ERRORS",
    "AccountingMethod",
    "delta",
    "epsilon",
    "load_plugins",
    "register_method",
]

DEFAULT_METHOD = "auto"
"""The method used when none is named: the safe one."""


def _lazy(target: str, **fixed) -> Callable:
    """``"module:function"`` of numeric, imported on the first call (a query imports only the
    modules its method uses); ``fixed`` keyword arguments are passed on every call."""
    module, name = target.split(":")
    fn: list[Callable] = []

    def call(*args, **kwargs):
        if not fn:
            fn.append(getattr(import_module(f".{module}", __package__), name))
        return fn[0](*args, **fixed, **kwargs)

    call.__name__ = name
    call.__qualname__ = name
    return call


register_method(AccountingMethod(
    "auto", "exact if a closed form exists, else the saddlepoint if its diagnostics pass, else "
    "certified within a time budget (if installed), else the best estimate with a warning",
    _lazy("auto:auto_delta"), _lazy("auto:auto_epsilon"), ("order", "time_budget"),
    estimate=False,
))
register_method(AccountingMethod(
    "aea", "Q-only approximate Edgeworth accountant (estimate)",
    _lazy("aea:aea_delta"), _lazy("aea:aea_epsilon"), ("order",),
))
register_method(AccountingMethod(
    "aea-ea", "EA paper's two-sided Edgeworth plug-in (estimate; for paper checks)",
    _lazy("aea:aea_delta", variant="aea-ea"), _lazy("aea:aea_epsilon", variant="aea-ea"),
    ("order",),
))
register_method(AccountingMethod(
    "gdp", "GDP Berry-Esseen centring mu (estimate; exact for Gaussian)",
    _lazy("clt:gdp_delta"), _lazy("clt:gdp_epsilon"),
))
register_method(AccountingMethod(
    "clt", "GDP limit theorems (estimate; exact for Gaussian)",
    _lazy("clt:clt_delta"), _lazy("clt:clt_epsilon"),
))
register_method(AccountingMethod(
    "saddlepoint", "tilted-Edgeworth saddlepoint accountant (estimate; exact for Gaussian)",
    _lazy("saddlepoint:saddlepoint_delta"), _lazy("saddlepoint:saddlepoint_epsilon"), ("order",),
))
register_method(AccountingMethod(
    "exact", "closed forms in floating point (Gaussian: GDP; pure DP: binomial)",
    _lazy("exact:exact_delta"), _lazy("exact:exact_epsilon"), estimate=False,
))


def _options(m: AccountingMethod, options: dict) -> dict:
    unknown = set(options) - set(m.options)
    if unknown:
        raise ValueError(f"method {m.name!r} does not take option(s) {sorted(unknown)}")
    return options


def _with_inputs(res, comp, query: dict, method: str, options: dict):
    """``res`` with the question recorded in ``inputs`` (results of every method)."""
    inputs = {"composition": comp.describe(), **query, "method": method,
              **({"options": dict(options)} if options else {})}
    try:
        return dataclasses.replace(res, inputs={**inputs, **dict(getattr(res, "inputs", {}))})
    except (TypeError, ValueError):  # a plug-in result of another shape keeps its own inputs
        return res


def delta(composition, eps, method: str = DEFAULT_METHOD, **options) -> DeltaResult:
    """delta(eps) of a composition by the named method (see :data:`METHODS`).

    Args:
        composition: A :class:`~numeric.composition.Composition` or what ``compose`` accepts.
        eps: A number >= 0 or an array of them.
        method: A registered method name; ``auto`` (the default) is the safe choice.
        **options: Options the method takes (e.g. ``order``).

    Returns:
        The method's result (``DeltaResult``; certify's ``Bound`` for ``certified``).

    Raises:
        ValueError: on bad input or an unknown method; NotApplicable if the method does not apply.
    """
    m = get_method(method)
    comp = compose(composition)
    res = m.delta_fn(comp, eps, **_options(m, options))
    return _with_inputs(res, comp, {"eps": eps}, method, options)


def epsilon(composition, delta: float, method: str = DEFAULT_METHOD, **options) -> EpsilonResult:
    """eps(delta) of a composition by the named method (see :data:`METHODS`).

    Args:
        composition: A :class:`~numeric.composition.Composition` or what ``compose`` accepts.
        delta: Target delta in (0, 1).
        method: A registered method name; ``auto`` (the default) is the safe choice.
        **options: Options the method takes (e.g. ``order``).

    Returns:
        The method's result (``EpsilonResult``; certify's ``Bound`` for ``certified``).

    Raises:
        ValueError: on bad input or an unknown method; NotApplicable if the method does not apply.
    """
    m = get_method(method)
    comp = compose(composition)
    res = m.epsilon_fn(comp, delta, **_options(m, options))
    return _with_inputs(res, comp, {"delta": delta}, method, options)
