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
"""

from __future__ import annotations

__all__ = ["BudgetExceeded", "NotApplicable"]


class NotApplicable(ValueError):  # noqa: N818 - the documented name of the contract
    """A method or mechanism capability does not apply to this input (not a bad input).

    Examples: the saddlepoint method for a mechanism without a CGF, certified moments for a
    mechanism that registered none, the exact method for a heterogeneous composition.
    """


class BudgetExceeded(NotApplicable):
    """A computation would exceed its time or memory budget; the message names the parameter
    that makes it expensive."""
