"""The toolkit's error types: the one "not applicable" error and the budget error.

Every method (``aea``, ``saddlepoint``, ``exact``, ``certified``, ...) and every per-mechanism
capability (a CGF, certified moments, a lattice step, an exact profile, ...) signals "this does
not apply to this mechanism or composition" by raising :class:`NotApplicable`, and only that.
``auto``, ``certified`` (which intersects every applicable certified method) and the CLI catch
exactly :class:`NotApplicable` and report it in ``warnings``; any other exception is a bug or bad
input. It subclasses ``ValueError`` so that callers who catch ``ValueError`` keep working.

:class:`BudgetExceeded` is raised by a computation that would exceed its time or memory budget
(it subclasses :class:`NotApplicable`: within a budget, the method does not apply).

Bad input is a plain ``ValueError`` naming the parameter and its value.

:func:`numeric_deadline`, :func:`require_time` and :func:`check_time` carry ``auto``'s time
budget into the numeric steps (docs/budgets.md); outside a deadline they never refuse.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = [
    "BudgetExceeded",
    "NotApplicable",
    "check_time",
    "numeric_deadline",
    "require_time",
]


class NotApplicable(ValueError):  # noqa: N818 - the documented name of the contract
    """A method or mechanism capability does not apply to this input (not a bad input).

    Examples: the saddlepoint method for a mechanism without a CGF, certified moments for a
    mechanism that registered none, the exact method for a heterogeneous composition.
    """


class BudgetExceeded(NotApplicable):
    """A computation would exceed its time or memory budget; the message names the parameter
    that makes it expensive."""


# --------------------------------------------------------------------------------------------
# The time budget of the numeric steps (set by ``auto``)
# --------------------------------------------------------------------------------------------

_NUMERIC_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar(
    "numeric_deadline", default=None)


@contextmanager
def numeric_deadline(at: float | None, seconds: float | None = None) -> Iterator[None]:
    """Run the block with the numeric steps bound by a deadline (``auto`` sets it).

    Inside the block, :func:`require_time` refuses a step whose (low) cost estimate exceeds the
    time left and :func:`check_time` refuses once the deadline has passed; outside it (or with
    ``at=None``) they never refuse. An enclosing, earlier deadline is kept. The deadline lives in
    a :class:`contextvars.ContextVar`, so it follows the computation into cached helpers without
    entering their cache keys. A budget never changes a number: a step finishes exactly as
    without it, or raises :class:`BudgetExceeded`.

    Args:
        at: ``time.monotonic()`` seconds at which the numeric steps stop (None: no deadline).
        seconds: The whole budget, for messages.
    """
    outer = _NUMERIC_DEADLINE.get()
    mine = outer if at is None else (at, math.inf if seconds is None else seconds)
    if outer is not None and mine is not None and outer[0] < mine[0]:
        mine = outer
    token = _NUMERIC_DEADLINE.set(mine)
    try:
        yield
    finally:
        _NUMERIC_DEADLINE.reset(token)


def check_time(what: str) -> None:
    """Raise :class:`BudgetExceeded` if the deadline of :func:`numeric_deadline` has passed.

    Args:
        what: Where it stopped, for the message.
    """
    d = _NUMERIC_DEADLINE.get()
    if d is not None and time.monotonic() > d[0]:
        raise BudgetExceeded(f"time budget of {d[1]:g} s exceeded ({what})")


def require_time(seconds: float, what: str) -> None:
    """Refuse up front when a step's estimated cost exceeds the time left of the deadline of
    :func:`numeric_deadline` (nothing happens outside one).

    The estimate must be a *low* one (measured on an idle machine, rounded down), so a refused
    step could not have finished in time.

    Args:
        seconds: Estimated cost of the step (NaN or inf count as too expensive).
        what: The step and the input that makes it expensive, for the message.

    Raises:
        BudgetExceeded: ``"time budget of 3.5 s: <what> needs about 9.1 s, 2.5 s left"``.
    """
    d = _NUMERIC_DEADLINE.get()
    if d is None:
        return
    left = d[0] - time.monotonic()
    if not (seconds <= left):
        raise BudgetExceeded(f"time budget of {d[1]:g} s: {what} needs about {seconds:.3g} s, "
                             f"{max(left, 0.0):.3g} s left")
