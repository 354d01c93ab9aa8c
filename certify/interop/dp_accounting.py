r"""A certified drop-in for Google dp_accounting's accountants.

Switch with one line::

    from certify.interop.dp_accounting import CertifiedPrivacyAccountant as PLDAccountant

:class:`CertifiedPrivacyAccountant` has dp_accounting's ``PrivacyAccountant`` surface
(``compose(event, count=1)`` returning self, ``get_epsilon(target_delta)``,
``get_delta(target_epsilon)``, ``supports(event)``, ``ledger``, ``neighboring_relation``) and
answers with the certified method (:func:`certify.combine.certified_epsilon`: every applicable
proven method, intersected). ``get_epsilon`` returns the **upper end** of the certified enclosure
rounded up to a float, so it is a guarantee (up to the assumptions listed in the bound); the
whole interval is ``last_bound`` (or :meth:`~CertifiedPrivacyAccountant.get_epsilon_interval`).
``get_delta`` returns the certified upper end of delta.

The events, neighbouring relations and refusals are those of
:mod:`numeric.interop.dp_accounting` (shared translation). The one place where floating point
would enter is randomized response's eps0 = log((k(1 - p) + p)/p): here it is evaluated in Arb
and rounded *up* to a float (:func:`certified_rr_eps0`), so the accounted (eps0, 0)-DP step
dominates the event. dp_accounting need not be installed; when it is, the accountant is a
``dp_accounting.PrivacyAccountant``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from numeric.interop.dp_accounting import (
    EventAccountant,
    NeighboringRelation,
    Translation,
)

from ..bound import Bound
from ..budget import check_budget_seconds
from ..engine import Endpoint, to_arb
from ..lattice_target import check_rel_width

__all__ = ["CertifiedPrivacyAccountant", "bound_upper_float", "certified_rr_eps0",
           "certified_translation_delta", "certified_translation_epsilon", "float_up_fraction"]


def bound_upper_float(bound: Bound) -> float:
    """The upper end of a certified enclosure as a float rounded **up** (inf if unbounded):
    :attr:`certify.bound.Bound.value`, the number the drop-ins' ``get_epsilon`` returns.

    Args:
        bound: A :class:`~certify.bound.Bound`.

    Returns:
        The smallest binary64 number >= the exact upper end.
    """
    return bound.value


def certified_rr_eps0(noise_parameter: float, num_buckets: int) -> float:
    r"""eps0 = log((k(1 - p) + p)/p) of k-ary randomized response, rounded **up** to a float.

    Evaluated in Arb ball arithmetic at 128 bits from the exact binary64 value of p (Warner,
    JASA 1965; dp_accounting's ``RandomizedResponseDpEvent``); the float returned is >= the
    real eps0, so the (eps0, 0)-DP step accounted dominates the event.

    Args:
        noise_parameter: p in (0, 1).
        num_buckets: k >= 2.

    Returns:
        A float >= eps0.
    """
    from flint import arb

    from ..engine import endpoints, workprec

    with workprec(128):
        p = arb(float(noise_parameter))
        eps0 = ((num_buckets * (1 - p) + p) / p).log()
        hi = endpoints(eps0)[1]
    return float_up_fraction(Fraction(hi.man) * (Fraction(2) ** hi.exp))


def float_up_fraction(value: Fraction) -> float:
    """The smallest binary64 number >= ``value``."""
    x = float(value)  # correctly rounded to nearest
    if math.isfinite(x) and Fraction(x) < value:
        x = math.nextafter(x, math.inf)
    return x


def _point(quantity: str, value: int | None, method: str, why: str) -> Bound:
    """The exact enclosure [v, v] (None: +inf) of a ledger that needs no computation."""
    end = Endpoint(inf=1) if value is None else Endpoint(value, 0)
    return Bound(quantity, end, end, method, method, 53, warnings=(why,))


def certified_translation_epsilon(translation: Translation, target_delta,
                                  time_budget: float | None = None,
                                  rel_width: float | None = None) -> Bound:
    """Certified eps(target_delta) of translated events (a non-private ledger: [inf, inf]; an
    empty one: [0, 0]), by :func:`certify.combine.certified_epsilon` with the same settings as
    ``edgeworth epsilon --method certified`` (``rel_width`` None: its default,
    :data:`certify.lattice_target.DEFAULT_REL_WIDTH`).

    Raises:
        ValueError: on a bad ``target_delta``.
        NotApplicable: if no certified method applies (or finishes within the budget).
    """
    from ..combine import certified_epsilon

    t = to_arb("target_delta", target_delta)
    if not (t > 0 and t < 1):
        raise ValueError(f"target_delta must lie in (0, 1), got {target_delta!r}")
    if translation.non_private or not translation.terms:
        if translation.non_private:
            return _point("epsilon", None, "non-private", "a non-private event was composed")
        return _point("epsilon", 0, "no-events", "no private event was composed: eps = 0")
    return certified_epsilon(translation.composition(), target_delta, time_budget=time_budget,
                             rel_width=rel_width)


def certified_translation_delta(translation: Translation, target_epsilon,
                                time_budget: float | None = None,
                                rel_width: float | None = None) -> Bound:
    """Certified delta(target_epsilon) of translated events (non-private: [1, 1]; empty:
    [0, 0]), by :func:`certify.combine.certified_delta` (``rel_width`` as in
    :func:`certified_translation_epsilon`).

    Raises:
        ValueError: on a bad ``target_epsilon``.
        NotApplicable: if no certified method applies (or finishes within the budget).
    """
    from ..combine import certified_delta

    if not to_arb("target_epsilon", target_epsilon) >= 0:
        raise ValueError(f"target_epsilon must be >= 0, got {target_epsilon!r}")
    if translation.non_private or not translation.terms:
        if translation.non_private:
            return _point("delta", 1, "non-private", "a non-private event was composed")
        return _point("delta", 0, "no-events", "no private event was composed: delta = 0")
    return certified_delta(translation.composition(), target_epsilon, time_budget=time_budget,
                           rel_width=rel_width)


class CertifiedPrivacyAccountant(EventAccountant):
    """dp_accounting's ``PrivacyAccountant`` surface with **certified** answers.

    Args:
        neighboring_relation: As dp_accounting's accountants (default ADD_OR_REMOVE_ONE); see
            :mod:`numeric.interop.dp_accounting` for its meaning per event.
        time_budget: Seconds for each certified query (None, the default: no limit; with a
            budget the lattice runs coarser grids, so answers are looser and depend on timing).
        rel_width: Requested relative width (hi - lo)/lo of the discretized methods' enclosure
            (None, the default: the ``certified`` method's default 1e-4,
            :data:`certify.lattice_target.DEFAULT_REL_WIDTH`, so answers agree with ``edgeworth
            epsilon --method certified``). ``get_epsilon`` returns the upper end, which lies
            within this relative width of the truth wherever the lattice reaches the target;
            ``last_bound`` shows the width reached.

    Raises:
        ValueError: for an unknown relation, a bad ``time_budget`` or ``rel_width``.

    Example:
        >>> acc = CertifiedPrivacyAccountant()
        >>> acc.compose(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0)), 1000)
        >>> acc.get_epsilon(1e-5)          # 1.8282857 (certified upper end; seconds)
        >>> acc.last_bound                 # [1.8281991, 1.8282857], lattice both ends
    """

    rr_eps0 = staticmethod(certified_rr_eps0)

    def __init__(self, neighboring_relation: object = NeighboringRelation.ADD_OR_REMOVE_ONE,
                 *, time_budget: float | None = None, rel_width: float | None = None) -> None:
        super().__init__(neighboring_relation)
        self.time_budget = check_budget_seconds(time_budget)
        self.rel_width = None if rel_width is None else check_rel_width(rel_width)
        self.last_bound: Bound | None = None

    def _bound(self, kind: str, x: Any) -> Bound:
        key = (kind, repr(x))
        if key not in self._cache:
            fn = certified_translation_epsilon if kind == "epsilon" else certified_translation_delta
            self._cache[key] = fn(self.translation(), x, self.time_budget, self.rel_width)
        self.last_bound = self._cache[key]
        return self.last_bound

    def get_epsilon_interval(self, target_delta) -> Bound:
        """The certified enclosure of eps at ``target_delta`` (a :class:`~certify.bound.Bound`
        with exact ends and the method behind each).

        Raises:
            ValueError: on a bad ``target_delta``.
            NotApplicable: if no certified method applies within the budget.
        """
        return self._bound("epsilon", target_delta)

    def get_epsilon(self, target_delta: float) -> float:
        """Certified upper bound on eps at ``target_delta`` (the enclosure's upper end rounded
        up; inf if nothing finite is proven). The interval is in ``last_bound``."""
        return bound_upper_float(self.get_epsilon_interval(target_delta))

    def get_delta_interval(self, target_epsilon) -> Bound:
        """The certified enclosure of delta at ``target_epsilon``."""
        return self._bound("delta", target_epsilon)

    def get_delta(self, target_epsilon: float) -> float:
        """Certified upper bound on delta at ``target_epsilon`` (at most 1)."""
        return min(1.0, bound_upper_float(self.get_delta_interval(target_epsilon)))
