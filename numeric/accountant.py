"""A stateful accountant with the familiar surface (compose, get_epsilon, get_delta, ledger).

:class:`EdgeworthAccountant` returns **estimates**: the approximate Edgeworth accountant is not a
bound and can under-report epsilon. Every number it returns is an :class:`~numeric.results.Estimate`
(a float carrying its full provenance and warnings). Drop-in replacements for other libraries'
accountants, which callers use as guarantees, will be built on certified methods instead.
"""

from __future__ import annotations

from .composition import Composition, compose
from .mechanisms.base import Mechanism
from .methods import delta as _delta
from .methods import epsilon as _epsilon
from .results import Estimate

__all__ = ["EdgeworthAccountant"]


class EdgeworthAccountant:
    """Accumulates mechanisms and reports AEA **estimates** of eps(delta) and delta(eps).

    Args:
        order: Edgeworth order (0, 1, 2, or any registered order).
        method: ``"aea"`` (default), ``"aea-ea"``, ``"saddlepoint"``, ``"gdp"``, ``"clt"``,
            ``"exact"`` -- any registered method returning an estimate or exact value (the
            ``order`` is passed to methods that take one).

    Example:
        >>> from numeric import EdgeworthAccountant, PoissonSubsampledGaussian
        >>> acc = EdgeworthAccountant().compose(PoissonSubsampledGaussian(1.0, 0.01), 1000)
        >>> eps = acc.get_epsilon(1e-5)   # an Estimate: float(eps) ~ 1.78, eps.is_estimate True
    """

    def __init__(self, order: int = 2, method: str = "aea") -> None:
        self.order = order
        self.method = method
        self._terms: list[tuple[Mechanism, int]] = []
        # validate eagerly so a typo fails at construction
        from .methods import METHODS, load_plugins

        if method not in METHODS:
            load_plugins()
        if method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        if method in ("certified", "auto"):
            raise ValueError(
                f"method {method!r} can return a certified Bound, not an estimate: call "
                "numeric.epsilon(composition, delta, method=...) (or certify) directly"
            )
        if "order" in METHODS[method].options:
            from ._validation import check_order
            from .edgeworth import SERIES_ORDERS

            check_order("order", order, maximum=max(SERIES_ORDERS))

    def compose(self, mechanism: Mechanism, count: int = 1) -> EdgeworthAccountant:
        """Record ``count`` uses of ``mechanism``; returns self for chaining."""
        compose([(mechanism, count)])  # validates
        self._terms.append((mechanism, count))
        return self

    @property
    def ledger(self) -> tuple[tuple[Mechanism, int], ...]:
        """The recorded ``(mechanism, count)`` events in order."""
        return tuple(self._terms)

    def composition(self) -> Composition:
        """The recorded events as a :class:`Composition`."""
        if not self._terms:
            raise ValueError("the accountant is empty: call compose(mechanism, count) first")
        return compose(self._terms)

    def _opts(self) -> dict:
        from .methods import METHODS

        return {"order": self.order} if "order" in METHODS[self.method].options else {}

    def get_epsilon(self, delta: float) -> Estimate:
        """Estimated eps at ``delta`` (an :class:`Estimate`, not a bound)."""
        return Estimate(_epsilon(self.composition(), delta, self.method, **self._opts()))

    def get_delta(self, eps: float) -> Estimate:
        """Estimated delta at ``eps`` (an :class:`Estimate`, not a bound)."""
        return Estimate(_delta(self.composition(), eps, self.method, **self._opts()))
