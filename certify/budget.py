"""Cooperative time budgets for certified computations.

:func:`certify.combine.certified_epsilon` and :func:`~certify.combine.certified_delta` accept a
``time_budget`` in seconds. They open a :func:`time_budget` block; inside it, the long loops of
certify (the lattice's squarings, convolutions and single-step grids, the EEAI's per-term
moments and inversion, the Chernoff order search and its certified evaluation, the precision
loops of :func:`certify.engine.adaptive`) call :func:`check_deadline` between steps, which raises
:class:`numeric.errors.BudgetExceeded` once the deadline has passed. A method may also refuse up
front when an estimate of its cost says it cannot finish (:func:`require`,
:func:`remaining`). Outside a ``time_budget`` block (or with ``None``) nothing is ever refused:
today's unbounded behaviour.

The deadline lives in a :class:`contextvars.ContextVar`, so it follows the computation through
cached helpers without entering their cache keys, and concurrent callers do not share it. A
budget never changes a number: a computation either finishes exactly as without a budget or
raises.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from flint import acb

from numeric.errors import BudgetExceeded

__all__ = [
    "PRECISION_DOUBLING_FACTOR",
    "Deadline",
    "check_budget_seconds",
    "check_deadline",
    "current_deadline",
    "integral",
    "remaining",
    "require",
    "time_budget",
]


@dataclass(frozen=True)
class Deadline:
    """A point in time (``time.monotonic()`` seconds) and the budget it came from.

    Attributes:
        at: Monotonic time after which computations stop.
        seconds: The budget in seconds (for messages).
    """

    at: float
    seconds: float

    def describe(self) -> str:
        """``"time budget of 3 s"`` (the number as given, compactly)."""
        return f"time budget of {self.seconds:g} s"


_DEADLINE: ContextVar[Deadline | None] = ContextVar("certify_deadline", default=None)

PRECISION_DOUBLING_FACTOR = 4.0
"""Typical factor by which an Arb quadrature's time grows when its precision doubles: the
subsampled Gaussian's certified Chernoff moment took 0.010, 0.034, 0.116, 0.918 and 5.97 s at
128, 256, 512, 1024 and 2048 bits (factors 3.4-7.9; issue 12's fuzz). A precision loop under a
budget refuses the next doubling when this factor times the last pass exceeds the time left (it
was 2, a low estimate, and the 2048-bit pass ran 6 s under a 3.5 s budget; the pass itself is
now interruptible, but Arb's Gauss-Legendre nodes at a new precision, computed inside
``acb.integral`` before any evaluation, are not: up to ~2 s at 2048 bits)."""


def check_budget_seconds(seconds: object) -> float | None:
    """Validate a ``time_budget`` argument: None or a finite number of seconds > 0.

    Raises:
        ValueError: naming ``time_budget`` and the value otherwise.
    """
    if seconds is None:
        return None
    if isinstance(seconds, bool):
        raise ValueError(f"time_budget must be a positive number of seconds, got {seconds!r}")
    try:
        s = float(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(
            f"time_budget must be a positive number of seconds, got {seconds!r}"
        ) from None
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"time_budget must be a positive number of seconds, got {seconds!r}")
    return s


@contextmanager
def time_budget(seconds: float | None) -> Iterator[Deadline | None]:
    """Run the block under a deadline ``seconds`` from now (None: no deadline).

    An enclosing, earlier deadline is kept (a nested block can only shorten the budget).

    Args:
        seconds: Budget in seconds (finite, > 0) or None.

    Yields:
        The active :class:`Deadline` (or None).

    Raises:
        ValueError: on a bad ``seconds``.
    """
    s = check_budget_seconds(seconds)
    outer = _DEADLINE.get()
    if s is None:
        token = _DEADLINE.set(outer)
    else:
        mine = Deadline(time.monotonic() + s, s)
        token = _DEADLINE.set(mine if outer is None or mine.at < outer.at else outer)
    try:
        yield _DEADLINE.get()
    finally:
        _DEADLINE.reset(token)


def current_deadline() -> Deadline | None:
    """The active deadline, or None outside a budgeted block."""
    return _DEADLINE.get()


def remaining() -> float:
    """Seconds left before the deadline (``math.inf`` without one; may be negative)."""
    d = _DEADLINE.get()
    return math.inf if d is None else d.at - time.monotonic()


def check_deadline(what: str) -> None:
    """Raise :class:`~numeric.errors.BudgetExceeded` if the deadline has passed.

    Args:
        what: Where it stopped, for the message (``"in the lattice squarings"``).

    Raises:
        BudgetExceeded: ``"time budget of 3 s exceeded (in the lattice squarings)"``.
    """
    d = _DEADLINE.get()
    if d is not None and time.monotonic() > d.at:
        raise BudgetExceeded(f"{d.describe()} exceeded ({what})")


def require(seconds: float, what: str) -> None:
    """Refuse up front: raise :class:`~numeric.errors.BudgetExceeded` when a step's estimated
    cost exceeds the time left (nothing happens outside a budgeted block).

    Call it before a step that cannot check the deadline while it runs (a FLINT product, a
    loop over a size fixed by the inputs). Two kinds of estimate are in use: a *low* one
    (measured on an idle machine, rounded down) for steps whose refusal removes a whole method
    (a step refused by it could not have finished in time), and a *typical* one for the steps
    of a refinement that keeps its last finished level (the lattice products,
    :data:`certify.lattice_grid.PRODUCT_SECONDS`), so that the budget is kept within the
    estimate's error. It never changes a number.

    Args:
        seconds: Estimated cost of the step (seconds; NaN or inf count as too expensive).
        what: The step and the input that makes it expensive, for the message (``"the lattice
            re-discretization by a factor r = 4194304"``).

    Raises:
        BudgetExceeded: ``"time budget of 3 s: <what> needs about 42 s, 2.5 s left"``.
    """
    d = _DEADLINE.get()
    if d is None:
        return
    left = d.at - time.monotonic()
    if not (seconds <= left):
        raise BudgetExceeded(f"{d.describe()}: {what} needs about {seconds:.3g} s, "
                             f"{max(left, 0.0):.3g} s left")


def integral(f, lo, hi, what: str, rel_tol: float | None = None):
    r""":func:`flint.acb.integral` of ``f`` on [lo, hi] that stops at the deadline.

    One ``acb.integral`` runs in C and calls back into Python for every evaluation of ``f``,
    so the deadline is checked in the callback: once it has passed, every further evaluation
    returns the exact zero instead of calling ``f`` (the integrator then converges on every
    subinterval left, in a few cheap calls), and the call raises instead of returning that
    value. A finished integral is the same ball as ``acb.integral(f, lo, hi)``: the wrapper
    only adds a clock read per evaluation. (Raising from the callback is not an option:
    python-flint 0.9 goes on integrating after a callback error and reports a
    ``SystemError``.) Outside a budgeted block it is ``acb.integral`` itself.

    Args:
        f: ``f(z: acb, analytic: bool) -> acb``, as for ``acb.integral``.
        lo: Lower limit (arb).
        hi: Upper limit (arb).
        what: Where it stopped, for the message (``"in the Chernoff quadrature"``).
        rel_tol: ``acb.integral``'s relative tolerance (None: its default, 2^-prec). It only
            decides when the integrator stops subdividing: the result is an enclosure either
            way, narrower with a smaller tolerance.

    Returns:
        The enclosure ``acb.integral`` returns.

    Raises:
        BudgetExceeded: ``"time budget of 3 s exceeded (<what>)"`` once the deadline passed
            during (or before) the quadrature.
    """
    d = _DEADLINE.get()
    if d is None:
        return acb.integral(f, lo, hi, rel_tol=rel_tol)
    check_deadline(what)
    at, stopped, zero = d.at, [False], acb(0)

    def guarded(z, analytic):
        if stopped[0]:
            return zero
        if time.monotonic() > at:
            stopped[0] = True
            return zero
        return f(z, analytic)

    val = acb.integral(guarded, lo, hi, rel_tol=rel_tol)
    if stopped[0]:
        raise BudgetExceeded(f"{d.describe()} exceeded ({what})")
    return val
