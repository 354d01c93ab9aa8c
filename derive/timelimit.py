r"""Time limits for sympy work, and the time-limited sympy operations derive uses.

Sympy's integrators, ``simplify`` and ``solve`` can run for minutes on hard input, so derive runs
them under a time limit and falls back (to quadrature, to the unsimplified expression, ...) when it
expires. The limit is a POSIX interval timer (``signal.setitimer``, ``SIGALRM``) whose handler
raises :class:`TimeLimitExceeded` inside the limited block. It is enforced only in the main thread
of a POSIX process and only when no other interval timer is running (a nested limit runs under
the enclosing one); elsewhere the block runs unbounded.

Robustness (a signal must never escape the guarded block, nor kill the process):

* the timer is clamped to at least :data:`MIN_SECONDS` (a microsecond timer used to fire before
  the block was entered);
* the handler is installed *before* the timer is armed and the previous handler is restored
  after it is disarmed, both in ``__exit__`` (always run once ``__enter__`` has returned);
* the handler does nothing while the interpreter is inside :class:`TimeLimit`'s own entry and exit
  code, or once the limit is inactive, so an alarm landing there cannot raise outside the block;
* after the first expiry the alarm repeats every :data:`RETRY_SECONDS`: an exception raised by a
  signal handler can be swallowed (e.g. when the signal lands inside a garbage-collection
  callback, which only prints "Exception ignored"), and a one-shot alarm would then leave a sympy
  call running forever.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Callable
from typing import Any

import sympy as sp

__all__ = [
    "MIN_SECONDS",
    "RETRY_SECONDS",
    "SIMPLIFY_TIMEOUT",
    "SYMPY_SECONDS",
    "TimeLimit",
    "TimeLimitExceeded",
    "attempt",
    "check_timeout",
    "limit_enforceable",
    "simplify_within",
    "tidy_within",
    "time_limit",
    "timer_running",
    "zero_within",
]

MIN_SECONDS = 1e-3
RETRY_SECONDS = 0.05
SIMPLIFY_TIMEOUT = 5.0
SYMPY_SECONDS = 10.0  # default limit of :func:`attempt` (one integrate, limit or simplify)


class TimeLimitExceeded(Exception):  # noqa: N818 - control flow, not an error for users
    """Raised inside a :func:`time_limit` block when its time is up.

    Internal control flow: every derive caller catches it and falls back; it never reaches users.
    """


def limit_enforceable() -> bool:
    """Whether time limits are enforced here (POSIX interval timers, main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def timer_running() -> bool:
    """Whether a real-time interval timer (e.g. an enclosing limit) is running."""
    return hasattr(signal, "getitimer") and signal.getitimer(signal.ITIMER_REAL)[0] > 0


def check_timeout(name: str, seconds: object) -> float | None:
    """Validate a time limit in seconds: None (unlimited) or a number > 0 (``inf``: unlimited).

    Args:
        name: Parameter name for the error message.
        seconds: The value.

    Returns:
        None or the value as a float.

    Raises:
        ValueError: for a bool, a non-number, NaN, zero or a negative value.
    """
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError(f"{name} must be > 0 seconds or None, got {seconds!r}")
    value = float(seconds)
    if not value > 0:  # also NaN
        raise ValueError(f"{name} must be > 0 seconds or None, got {seconds!r}")
    return value


class TimeLimit:
    """Context manager raising :class:`TimeLimitExceeded` in its block after ``seconds``.

    Use :func:`time_limit`. See the module docstring for when the limit is enforced and why a
    signal cannot escape the block.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = check_timeout("seconds", seconds)
        self._installed = False
        self._active = False
        self._previous: Any = None

    def _handler(self, signum, frame) -> None:
        if not self._active or (frame is not None and frame.f_code in _GUARD_CODES):
            return
        raise TimeLimitExceeded

    def __enter__(self) -> TimeLimit:
        s = self.seconds
        if s is None or math.isinf(s) or not limit_enforceable() or timer_running():
            return self
        self._previous = signal.signal(signal.SIGALRM, self._handler)
        self._installed = True
        self._active = True
        try:
            signal.setitimer(signal.ITIMER_REAL, max(s, MIN_SECONDS), RETRY_SECONDS)
        except BaseException:
            self._disarm()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._installed:
            self._disarm()
        return False

    def _disarm(self) -> None:
        self._active = False
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        previous = self._previous if self._previous is not None else signal.SIG_DFL
        signal.signal(signal.SIGALRM, previous)
        self._installed = False


_GUARD_CODES = frozenset({TimeLimit.__enter__.__code__, TimeLimit.__exit__.__code__,
                          TimeLimit._disarm.__code__})


def time_limit(seconds: float | None) -> TimeLimit:
    """A context manager raising :class:`TimeLimitExceeded` inside its block after ``seconds``.

    Args:
        seconds: The limit (clamped to at least :data:`MIN_SECONDS`); None or ``inf``: none.

    Returns:
        A :class:`TimeLimit`.

    Raises:
        ValueError: if ``seconds`` is not None and not a number > 0.
    """
    return TimeLimit(seconds)


def attempt(fn: Callable[[], Any], seconds: float = SYMPY_SECONDS) -> Any:
    """``fn()`` under a time limit; None on timeout or on any error ``fn`` raises.

    Nested calls run under the enclosing limit (limits do not stack timers), and a timeout that
    belongs to an enclosing call is re-raised, not swallowed.
    """
    nested = timer_running()
    try:
        with time_limit(seconds):
            return fn()
    except TimeLimitExceeded:
        if nested:
            raise
        return None
    except Exception:  # sympy raises assorted error types on hard input
        return None


def simplify_within(expr: sp.Expr, seconds: float = SIMPLIFY_TIMEOUT) -> sp.Expr:
    """``sympy.simplify`` under a time limit; the input unchanged if it takes too long."""
    try:
        with time_limit(seconds):
            return sp.simplify(expr)
    except TimeLimitExceeded:
        return expr
    except Exception:  # sympy raises assorted errors on odd input; keep the original
        return expr


def tidy_within(expr: sp.Expr, seconds: float = SIMPLIFY_TIMEOUT) -> sp.Expr:
    """A compact equivalent form: ``factor(cancel(expand(expr)))``, falling back to
    ``simplify`` when that does not shrink the expression; time-limited."""
    try:
        with time_limit(seconds):
            out = sp.factor(sp.cancel(sp.expand(expr)))
    except TimeLimitExceeded:
        return expr
    except Exception:  # polys may refuse exotic generators; keep the expression
        out = expr
    if sp.count_ops(out) > 40:
        alt = simplify_within(out, seconds)
        if sp.count_ops(alt) < sp.count_ops(out):
            out = alt
    return out


def zero_within(expr: sp.Expr, seconds: float = SIMPLIFY_TIMEOUT) -> bool:
    """True when ``expr`` is 0 or ``simplify`` (time-limited) makes it 0."""
    if expr == 0:
        return True
    return simplify_within(expr, seconds) == 0
