"""The ``auto`` method: the safest answer available within an interactive time budget.

Policy (the default method everywhere):

1. **exact** -- where the composition has a closed form (Gaussian steps: GDP; randomized response
   and (eps0, delta)-DP steps sharing one eps0: the binomial formula), return it
   (``estimate=False``).
2. **saddlepoint** -- the tilted-Edgeworth estimate when its diagnostics pass (standardized tilted
   cumulants small, orders r and r - 1 and r and 2 agree, the lattice error estimate small, one
   root, positive factor). Where they pass, the estimate was within 1% of the certified
   interval in every check made (``tests/test_saddlepoint_reliability.py``,
   ``docs/saddlepoint-reliability.md``); often far closer (``benchmarks/bench_saddlepoint.py``),
   but no 1e-5 accuracy is claimed.
3. **certified** -- when the diagnostics fire or the saddlepoint does not apply, the ``certified``
   plug-in (certify, found through the method registry; numeric never imports it) with what is
   left of the time budget (:data:`AUTO_TIME_BUDGET` seconds for the whole ``auto`` call,
   counted from its start, so the time the exact method and the saddlepoint took is spent):
   every certified method that finishes in time is intersected, the slow ones are reported as
   not applicable; with less than :data:`MIN_CERTIFIED_SECONDS` left it is not started (when
   the saddlepoint does not apply, the AEA estimate of step 4 is computed before this step, so
   its time is counted too). The answer carries the exact interval (``lower``/``upper``) and
   ``certified=True``; its value is the upper end.
4. **best estimate** -- if nothing above answers (no certify extra, or no certified method
   finished, or only a vacuous enclosure), the saddlepoint estimate, else the AEA estimate,
   each with a warning saying why nothing safer was available; but never an eps below a
   proven lower end: when the only certified enclosure has an infinite upper end and a lower
   end above the estimate, that enclosure is returned (eps = inf, ``certified=True``).

The budget binds the numeric steps too: steps 1, 2 and the early AEA run under the call's
deadline (:func:`numeric.errors.numeric_deadline`), and the quadratures that grow with 1/sigma
(the subsampled-Gaussian CGF batches and cumulants) refuse up front when a low estimate of their
cost exceeds the time left, or once the deadline has passed (``BudgetExceeded``, listed in
``details["tried"]``); a step that runs returns the same numbers as without a budget
(docs/budgets.md). With nothing answered in time, ``auto`` raises that ``BudgetExceeded``.

Whatever it picks, ``auto`` returns an :class:`~numeric.results.EpsilonResult` (or
:class:`~numeric.results.DeltaResult`) whose ``method`` names the method that answered and whose
``details["auto"]`` says why; the refusals of the methods it tried are in ``details["tried"]``.
Only :class:`~numeric.errors.NotApplicable` makes it move to the next step; bad input raises.
"""

from __future__ import annotations

import dataclasses
import math
import time
from decimal import Decimal
from typing import Any

from ._validation import as_float_array, check_delta, check_order
from .aea import aea_delta, aea_epsilon
from .composition import Composition, compose
from .errors import BudgetExceeded, NotApplicable, numeric_deadline
from .exact import exact_delta, exact_epsilon
from .registry import get_method
from .results import DeltaResult, EpsilonResult, float_up
from .saddlepoint import saddlepoint_delta, saddlepoint_epsilon

__all__ = ["AUTO_TIME_BUDGET", "MIN_CERTIFIED_SECONDS", "RESERVE_FRACTION", "auto_delta",
           "auto_epsilon"]

AUTO_TIME_BUDGET = 3.5
"""Seconds that an ``auto`` call may take (from its start) before it settles for what finished;
the certified methods get what the exact method and the saddlepoint left of it."""

MIN_CERTIFIED_SECONDS = 0.05
"""The certified step is not started with less time than this left of the budget."""

RESERVE_FRACTION = 0.15
"""Part of the budget kept back from the certified step (0.525 s of the default 3.5 s): the
certified plug-in stops its refinements at its own deadline, at most one uninterruptible step
(a FLINT product, estimated before it starts) late, and assembles its enclosure after it; the
reserve absorbs both, so that the whole ``auto`` call ends within its budget."""

_FIRED = "auto: the saddlepoint diagnostics fired"


def _labelled(res, reason: str, tried: list[str], extra_warnings: tuple[str, ...] = ()):
    details = {**res.details, "auto": reason, "tried": list(tried)}
    warnings = tuple(dict.fromkeys([*extra_warnings, *res.warnings]))
    return dataclasses.replace(res, details=details, warnings=warnings)


def _end(d: dict, which: str) -> Decimal:
    value = d.get(which)
    if value is None:
        return Decimal("-Infinity") if which == "lower" else Decimal("Infinity")
    return Decimal(str(value))


def _check_budget(time_budget: object) -> float | None:
    """None or a finite number of seconds > 0 (ValueError naming ``time_budget`` otherwise)."""
    if time_budget is None:
        return None
    bad = ValueError(f"time_budget must be a positive number of seconds, got {time_budget!r}")
    if isinstance(time_budget, bool):
        raise bad
    try:
        s = float(time_budget)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise bad from None
    if not (math.isfinite(s) and s > 0):
        raise bad
    return s


def _deadline(budget: float | None) -> float | None:
    """The monotonic time at which an ``auto`` call started now with ``budget`` must end."""
    return None if budget is None else time.monotonic() + budget


def _certified(kind: str, comp: Composition, x, deadline: float | None, tried: list[str],
               budget: float | None = None, partial: list[dict] | None = None):
    """The certified plug-in's bound, or None (the reason appended to ``tried``).

    ``deadline`` (monotonic seconds) ends the whole ``auto`` call: the plug-in gets the time
    left (``budget`` is the call's budget, for the message). A vacuous enclosure is appended to
    ``partial`` (its lower end may still prove an estimate too low)."""
    method = get_method("certified", required=False)
    if method is None:
        tried.append("certified: not installed (pip install 'edgeworth-accountant[certify]')")
        return None
    options: dict[str, Any] = {}
    if deadline is not None and "time_budget" in method.options:
        left = deadline - time.monotonic() - RESERVE_FRACTION * budget
        if not (left >= MIN_CERTIFIED_SECONDS):
            tried.append(f"certified: not run: the steps before it (exact, saddlepoint, the AEA "
                         f"fallback) used the time budget of {budget:g} s")
            return None
        options["time_budget"] = left
    fn = method.delta_fn if kind == "delta" else method.epsilon_fn
    try:
        bound = fn(comp, x, **options)
    except NotApplicable as exc:
        tried.append(f"certified: {exc}")
        return None
    d = bound.to_dict()
    informative = d.get("quantity") == "delta" and d.get("lower") not in (None, "0") and \
        float(d["lower"]) > 0.0  # a delta enclosure [0.99.., 1] says much, though upper >= 1
    if d.get("upper") is None or (d.get("vacuous") and not informative):
        tried.append(f"certified: only a vacuous enclosure [{d.get('lower')}, {d.get('upper')}]")
        if partial is not None:
            partial.append(d)
        return None
    return d


def _not_below_proven(res: EpsilonResult, partial: list[dict], sp,
                      tried: list[str]) -> EpsilonResult:
    """The fallback estimate ``res``, unless a certified enclosure with no finite upper end
    proved eps above it (its lower end exceeds the estimate: the estimate under-reports for
    sure). Then the certified enclosure ``[lower, inf)`` itself, eps = inf, with a warning
    naming the estimate: an infinite eps is a valid answer, a number below a proven lower bound
    is not (fuzz seed 4711: an AEA estimate 1.36 where eps >= 21.1 was proven)."""
    lows = [_end(d, "lower") for d in partial]
    lower = max(lows, default=Decimal("-Infinity"))
    if not (lower.is_finite() and lower > 0 and Decimal(repr(res.epsilon)) < lower):
        return res
    d = next(d for d, low in zip(partial, lows, strict=True) if low == lower)
    fields = _cert_fields(d, sp, tried)
    note = (f"auto: the {res.method} estimate {res.epsilon:.6g} lies below the certified lower "
            f"end {float(lower):.6g}, so it under-reports epsilon; returning the certified "
            "enclosure, whose upper end is infinite (no finite certified upper bound was found "
            "within the budget)")
    fields["warnings"] = (note, *fields["warnings"])
    fields["details"] = {**fields["details"], "auto": note,
                         "rejected_estimate": {"method": res.method, "epsilon": res.epsilon}}
    return EpsilonResult(epsilon=math.inf, delta=res.delta,
                         per_direction={fields["direction"]: math.inf}, **fields)


def _cert_fields(d: dict, sp, tried: list[str]) -> dict[str, Any]:
    """The result fields of a certified answer (its ``to_dict`` ``d``), but the value."""
    reason = _cert_reason(d, sp)
    return {
        "lower": _end(d, "lower"),
        "upper": _end(d, "upper"),
        "certified": True,
        "estimate": False,
        "method": "certified",
        "direction": d.get("direction", "P||Q"),
        "warnings": tuple(dict.fromkeys([reason, *d.get("warnings", [])])),
        "details": _cert_details(d, reason, tried, sp),
    }


def _cert_reason(d: dict, sp) -> str:
    why = _FIRED if sp is not None else "auto: the saddlepoint does not apply"
    ends = f"lower end: {d.get('lower_method')}, upper end: {d.get('upper_method')}"
    skipped = [w for w in d.get("warnings", []) if "budget" in w]
    budget = "; some certified methods did not fit the time budget" if skipped else ""
    return f"{why}; returning the certified enclosure ({ends}){budget}"


def _cert_details(d: dict, reason: str, tried: list[str], sp) -> dict[str, Any]:
    out = {"auto": reason, "tried": list(tried), "bound": d,
           "lower_method": d.get("lower_method"), "upper_method": d.get("upper_method")}
    if sp is not None:
        out["saddlepoint_estimate"] = sp.value
    return out


def _exact_or_saddlepoint(exact_call, saddlepoint_call, tried: list[str]):
    """Steps 1 and 2 of the policy: ``(answer, sp)``, the labelled exact answer or the
    saddlepoint estimate whose diagnostics passed (else None), and the saddlepoint result (None
    when it does not apply); refusals are appended to ``tried``."""
    try:
        res = exact_call()
    except NotApplicable as exc:
        tried.append(f"exact: {exc}")
    else:
        return _labelled(res, "exact: this composition has a closed form", tried), None
    try:
        sp = saddlepoint_call()
    except NotApplicable as exc:
        tried.append(f"saddlepoint: {exc}")
        return None, None
    fired = list(sp.details.get("diagnostics", []))
    if not fired:
        return _labelled(sp, "saddlepoint: its diagnostics passed", tried), sp
    tried.append(f"saddlepoint: {len(fired)} diagnostic(s) fired")
    return None, sp


class _Early:
    """The AEA fallback, computed before the certified step when the saddlepoint does not apply
    and a deadline is set: its time (the numeric cumulants can take seconds) is then counted in
    the budget instead of running after the deadline. Its result, or the exception it raised,
    is kept and used (or re-raised) only if the fallback is reached: the same number, the same
    behaviour as calling it late. It runs under the call's deadline (``numeric_deadline``): a
    cumulant quadrature that cannot finish in the time left is refused (``BudgetExceeded``,
    recorded in ``tried``) instead of overrunning the budget."""

    def __init__(self, call, deadline: float, budget: float | None, tried: list[str]) -> None:
        self.result, self.error = None, None
        try:
            with numeric_deadline(deadline, budget):
                self.result = call()
        except Exception as exc:  # re-raised unchanged by __call__
            self.error = exc
            if isinstance(exc, BudgetExceeded):
                tried.append(f"aea (fallback): {exc}")

    def __call__(self):
        if self.error is not None:
            raise self.error
        return self.result


def _fallback_estimate(sp, aea_call, tried: list[str]):
    if sp is not None:
        note = (f"{_FIRED}; no certified answer was available ({'; '.join(tried[-1:])}); the "
                "saddlepoint estimate is reported as is")
        return _labelled(sp, note, tried, (note,))
    res = aea_call()
    note = ("auto: neither the exact method, the saddlepoint nor a certified method answered; "
            "reporting the AEA estimate, which can under-report epsilon")
    return _labelled(res, note, tried, (note,))


def auto_epsilon(composition, delta: float, order: int = 2, *,
                 time_budget: float | None = AUTO_TIME_BUDGET) -> EpsilonResult:
    """eps(delta) by the ``auto`` policy (module docstring).

    Args:
        composition: A :class:`~numeric.composition.Composition` or what ``compose`` accepts.
        delta: Target delta in (0, 1).
        order: Edgeworth order of the saddlepoint (and AEA) estimate.
        time_budget: Seconds for the whole call, counted from its start; the certified step gets
            what is left after the exact method and the saddlepoint (None: no limit).

    Returns:
        An :class:`EpsilonResult`; ``method`` names the method that answered, ``certified`` is
        True (with exact ``lower``/``upper``) when the answer is a certified enclosure.

    Raises:
        ValueError: on bad input.
    """
    budget = _check_budget(time_budget)
    deadline = _deadline(budget)
    comp = compose(composition)
    delta = check_delta("delta", delta)
    order = check_order("order", order, maximum=8)
    tried: list[str] = []
    with numeric_deadline(deadline, budget):
        answer, sp = _exact_or_saddlepoint(
            lambda: exact_epsilon(comp, delta),
            lambda: saddlepoint_epsilon(comp, delta, order=order), tried)
    if answer is not None:
        return answer
    aea_call = lambda: aea_epsilon(comp, delta, order=order)  # noqa: E731
    if sp is None and deadline is not None:
        aea_call = _Early(aea_call, deadline, budget, tried)
    partial: list[dict] = []
    d = _certified("epsilon", comp, delta, deadline, tried, budget, partial)
    if d is None:
        return _not_below_proven(_fallback_estimate(sp, aea_call, tried), partial, sp, tried)
    fields = _cert_fields(d, sp, tried)
    upper = fields["upper"]
    value = float_up(upper) if upper.is_finite() else math.inf
    return EpsilonResult(epsilon=value, delta=delta,
                         per_direction={fields["direction"]: value}, **fields)


def auto_delta(composition, eps, order: int = 2, *,
               time_budget: float | None = AUTO_TIME_BUDGET) -> DeltaResult:
    """delta(eps) by the ``auto`` policy (see :func:`auto_epsilon`).

    A vector of eps is answered by the exact method or the saddlepoint (whose diagnostics must
    pass at every point); otherwise each point is answered on its own. ``time_budget`` is the
    call's budget, as there.
    """
    budget = _check_budget(time_budget)
    deadline = _deadline(budget)
    comp = compose(composition)
    order = check_order("order", order, maximum=8)
    e = as_float_array("eps", eps, nonnegative=True)
    tried: list[str] = []
    with numeric_deadline(deadline, budget):
        answer, sp = _exact_or_saddlepoint(lambda: exact_delta(comp, eps),
                                           lambda: saddlepoint_delta(comp, eps, order=order),
                                           tried)
    if answer is not None:
        return answer
    if e.ndim > 0:
        note = ("auto: a vector of eps is answered by the exact method or the saddlepoint only; "
                "query points one at a time for certified answers")
        if sp is not None:
            return _labelled(sp, note, tried, (note,))
        with numeric_deadline(deadline, budget):
            res = aea_delta(comp, eps, order=order)
        return _labelled(res, note, tried, (note,))
    x = float(e)
    aea_call = lambda: aea_delta(comp, x, order=order)  # noqa: E731
    if sp is None and deadline is not None:
        aea_call = _Early(aea_call, deadline, budget, tried)
    d = _certified("delta", comp, x, deadline, tried, budget)
    if d is None:
        return _fallback_estimate(sp, aea_call, tried)
    fields = _cert_fields(d, sp, tried)
    upper = fields["upper"]
    value = min(1.0, float_up(upper)) if upper.is_finite() else 1.0
    return DeltaResult(delta=value, eps=x, per_direction={fields["direction"]: value}, **fields)
