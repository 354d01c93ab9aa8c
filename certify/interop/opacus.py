"""A certified drop-in for Opacus's accountants.

Switch with one line (after ``PrivacyEngine(...)`` is built)::

    privacy_engine.accountant = CertifiedAccountant()

:class:`CertifiedAccountant` has Opacus's ``IAccountant`` surface (``step(noise_multiplier=,
sample_rate=)``, ``get_epsilon(delta)``, ``history``, ``state_dict()`` / ``load_state_dict()``,
``__len__``, ``mechanism()``; :class:`numeric.interop.opacus.HistoryAccountant`) and answers with
the certified method: ``get_epsilon`` returns the **upper end** of the certified enclosure of eps
rounded up to a float (a guarantee for Poisson-sampled DP-SGD under add/remove neighbours); the
whole interval is ``last_bound``. Neither torch nor Opacus is needed; when Opacus is installed
this is an ``opacus.accountants.IAccountant``.
"""

from __future__ import annotations

from typing import Any

from numeric.interop.opacus import HistoryAccountant

from ..bound import Bound
from ..budget import check_budget_seconds
from ..lattice_target import check_rel_width
from .dp_accounting import bound_upper_float, certified_translation_epsilon

__all__ = ["CertifiedAccountant"]


class CertifiedAccountant(HistoryAccountant):
    """Opacus's accountant surface with **certified** answers.

    Args:
        time_budget: Seconds for each certified query (None, the default: no limit; with a
            budget the lattice runs coarser grids, so answers are looser and depend on timing).
        rel_width: Requested relative width of the enclosure (None, the default: the
            ``certified`` method's default 1e-4; as
            :class:`certify.interop.dp_accounting.CertifiedPrivacyAccountant`).

    Raises:
        ValueError: for a bad ``time_budget`` or ``rel_width``.

    Example:
        >>> acc = CertifiedAccountant()
        >>> for _ in range(1000):
        ...     acc.step(noise_multiplier=1.0, sample_rate=0.01)
        >>> acc.history                    # [(1.0, 0.01, 1000)]
        >>> acc.get_epsilon(1e-5)          # 1.8282857 (certified upper end; seconds)
    """

    def __init__(self, *, time_budget: float | None = None,
                 rel_width: float | None = None) -> None:
        super().__init__()
        self.time_budget = check_budget_seconds(time_budget)
        self.rel_width = None if rel_width is None else check_rel_width(rel_width)
        self.last_bound: Bound | None = None
        self._cache: dict[tuple, Bound] = {}

    @classmethod
    def mechanism(cls) -> str:
        """``"edgeworth-certified"``."""
        return "edgeworth-certified"

    def reset_cache(self) -> None:
        """Forget cached bounds (called when the history is replaced)."""
        self._cache.clear()

    def get_epsilon_interval(self, delta: float, **kwargs: Any) -> Bound:
        """The certified enclosure of eps at ``delta`` (exact ends, the method behind each).

        Raises:
            ValueError: on a bad ``delta`` or an unknown keyword.
            NotApplicable: if no certified method applies within the budget.
        """
        delta = self.check_query(delta, kwargs)
        key = (tuple(self.history), delta)
        if key not in self._cache:
            self._cache[key] = certified_translation_epsilon(self.translation(), delta,
                                                             self.time_budget, self.rel_width)
        self.last_bound = self._cache[key]
        return self.last_bound

    def get_epsilon(self, delta: float, **kwargs: Any) -> float:
        """Certified upper bound on eps at ``delta`` (Opacus's accuracy keywords ``alphas``,
        ``eps_error``, ``delta_error`` are accepted and ignored); the interval is
        ``last_bound``."""
        return bound_upper_float(self.get_epsilon_interval(delta, **kwargs))
