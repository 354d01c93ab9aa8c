"""The ``auto`` method: the most accurate available answer given the saddlepoint diagnostics.

Policy (issue 5):

1. Compute the saddlepoint (tilted-Edgeworth) estimate (:mod:`numeric.saddlepoint`).
2. If its diagnostics pass (standardized tilted cumulants small, orders r and r - 1 agree, a
   single root, positive tilted-Edgeworth factor), return it -- labelled ``method
   "saddlepoint"``, an estimate, with ``details["auto"]`` saying why it was chosen.
3. If they fire (e.g. the bimodal "one big step" regime of DP-SGD, rate * m <= 10) and a method
   named ``certified`` is registered (the certify plug-in, found through
   :func:`numeric.methods.load_plugins`; numeric never imports certify), return the certified
   enclosure (a certify ``Bound``), with warnings saying that the saddlepoint diagnostics fired.
   Because the diagnostics only fire for few expected sampled steps, the certified lattice
   bound is cheap there (seconds).
4. Otherwise (no certify, or it cannot handle the composition) return the saddlepoint estimate
   with its diagnostic warnings and a warning that no certified answer was available.

It never falls back to AEA: a mechanism without a saddlepoint CGF raises the saddlepoint
method's ``ValueError`` ("use aea"), so the choice of an AEA estimate stays explicit.
"""

from __future__ import annotations

import dataclasses

from .results import DeltaResult, EpsilonResult
from .saddlepoint import saddlepoint_delta, saddlepoint_epsilon

__all__ = ["auto_delta", "auto_epsilon"]

_FIRED = "auto: the saddlepoint diagnostics fired"


def _certified():
    from . import methods  # lazy: methods imports this module

    try:
        methods.load_plugins()
    except Exception:  # pragma: no cover - a broken plug-in must not break the estimate
        return None
    return methods.METHODS.get("certified")


def _with_warnings(res, warnings: list[str], note: str, estimate_value) -> object:
    """``res`` (a certified result) with ``warnings`` prepended, when it supports it."""
    try:
        inputs = dict(getattr(res, "inputs", {}) or {})
        inputs["auto"] = {"chosen": "certified", "reason": note,
                          "saddlepoint_estimate": estimate_value}
        return dataclasses.replace(
            res, warnings=tuple(dict.fromkeys([*warnings, *tuple(res.warnings)])), inputs=inputs
        )
    except (TypeError, AttributeError, ValueError):  # not a dataclass of that shape
        return res


def _choose(sp, certified_call, estimate_value):
    fired = list(sp.details.get("diagnostics", []))
    if not fired:
        details = {**sp.details, "auto": "saddlepoint: its diagnostics passed"}
        return dataclasses.replace(sp, details=details)
    cert = _certified()
    head = f"{_FIRED} ({len(fired)} diagnostic(s)); "
    if cert is not None:
        try:
            bound = certified_call(cert)
        except (ValueError, TypeError, ArithmeticError, MemoryError) as exc:
            reason = f"the certified method failed ({exc})"
        else:
            note = head + "returning the certified enclosure instead of the estimate"
            return _with_warnings(bound, [note, *(f"saddlepoint: {w}" for w in fired)], note,
                                  estimate_value)
    else:
        reason = "no certified method is registered (install the certify extra)"
    note = head + f"{reason}; the saddlepoint estimate is reported as is (not AEA)"
    details = {**sp.details, "auto": note}
    return dataclasses.replace(sp, warnings=(note, *sp.warnings), details=details)


def auto_epsilon(composition, delta: float, order: int = 2) -> EpsilonResult:
    """eps(delta) by the ``auto`` policy (module docstring).

    Returns:
        The saddlepoint :class:`EpsilonResult` when its diagnostics pass or no certified method
        is available (then with a warning), else the certified method's result (a certify
        ``Bound`` with ``to_dict()``/``render_text()``), its warnings saying why.
    """
    sp = saddlepoint_epsilon(composition, delta, order=order)
    return _choose(sp, lambda m: m.epsilon_fn(composition, delta), sp.epsilon)


def auto_delta(composition, eps, order: int = 2) -> DeltaResult:
    """delta(eps) by the ``auto`` policy (see :func:`auto_epsilon`)."""
    sp = saddlepoint_delta(composition, eps, order=order)
    value = sp.delta if isinstance(sp.delta, float) else None
    return _choose(sp, lambda m: m.delta_fn(composition, eps), value)
