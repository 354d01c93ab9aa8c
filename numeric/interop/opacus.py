"""Opacus's ``IAccountant`` surface on this toolkit (estimate variant).

Switch with one line (after ``PrivacyEngine(...)`` is built)::

    privacy_engine.accountant = EstimateAccountant()     # or certify's CertifiedAccountant()

:class:`HistoryAccountant` holds what Opacus's accountants hold: ``history``, a list of
``(noise_multiplier, sample_rate, num_steps)`` where consecutive steps with equal parameters are
merged exactly as Opacus's RDP accountant merges them; ``step(noise_multiplier=,
sample_rate=)``, ``__len__`` (the number of history entries, as Opacus), ``state_dict()`` /
``load_state_dict()`` and ``get_optimizer_hook_fn``. Each entry is ``num_steps`` DP-SGD steps,
:class:`~numeric.PoissonSubsampledGaussian` ``(sigma=noise_multiplier, rate=sample_rate)``
(Poisson sampling, add/remove neighbours, as Opacus); a zero noise multiplier is non-private
(eps = inf), a zero sample rate costs nothing.

:class:`EstimateAccountant` answers with method ``auto`` and is labelled an estimate (it warns
once per instance; the returned :class:`~numeric.results.Estimate` carries the warning). The
guarantee is :class:`certify.interop.opacus.CertifiedAccountant`. Neither torch nor Opacus is
needed; when Opacus is installed the accountants subclass ``opacus.accountants.IAccountant``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections import OrderedDict
from typing import Any

from .._validation import check_count, check_delta
from ..registry import estimate_method
from .dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, Translation, translate_event

try:  # optional peer (imports torch)
    from opacus.accountants.accountant import IAccountant
except ImportError:  # pragma: no cover - depends on the environment
    IAccountant = None

__all__ = ["HAVE_OPACUS", "PEER_OPTIONS", "EstimateAccountant", "HistoryAccountant"]

HAVE_OPACUS = IAccountant is not None
"""True when Opacus is importable (then the accountants subclass its ``IAccountant``)."""

_BASES: tuple[type, ...] = (IAccountant,) if HAVE_OPACUS else ()

PEER_OPTIONS = frozenset({"alphas", "eps_error", "delta_error"})
"""Accuracy options of Opacus's own accountants' ``get_epsilon``: accepted and ignored (the
toolkit's methods set their own accuracy)."""


def _check_step(noise_multiplier: object, sample_rate: object) -> tuple[float, float]:
    values = []
    for name, value, hi in (("noise_multiplier", noise_multiplier, math.inf),
                            ("sample_rate", sample_rate, 1.0)):
        try:
            x = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number, got {value!r}") from None
        if isinstance(value, bool) or not (0.0 <= x <= hi) or math.isinf(x):
            raise ValueError(f"{name} must lie in [0, {hi:g}] and be finite, got {value!r}")
        values.append(x)
    return values[0], values[1]


class HistoryAccountant(*_BASES):
    """The shared part of the Opacus drop-ins (history, step, state dict; module docstring).

    Subclasses implement ``get_epsilon`` and :meth:`mechanism`.
    """

    def __init__(self) -> None:
        self.history: list[tuple[float, float, int]] = []

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimization step (merged into the last entry when both parameters are
        equal, as Opacus).

        Raises:
            ValueError: naming the parameter, for a negative or non-finite noise multiplier or
                a sample rate outside [0, 1].
        """
        nm, q = _check_step(noise_multiplier, sample_rate)
        if self.history and self.history[-1][:2] == (nm, q):
            last = self.history.pop()
            self.history.append((last[0], last[1], last[2] + 1))
        else:
            self.history.append((nm, q, 1))

    def __len__(self) -> int:
        """The number of history entries (as Opacus's accountants; steps: :attr:`num_steps`)."""
        return len(self.history)

    @property
    def num_steps(self) -> int:
        """The total number of recorded steps."""
        return sum(n for _, _, n in self.history)

    @classmethod
    def mechanism(cls) -> str:  # pragma: no cover - overridden
        """The accounting mechanism's name (stored in the state dict)."""
        raise NotImplementedError

    def translation(self) -> Translation:
        """The history as toolkit mechanisms (Poisson-subsampled Gaussians)."""
        out = Translation()
        for nm, q, n in self.history:
            event = PoissonSampledDpEvent(q, GaussianDpEvent(nm))
            out = out.plus(translate_event(event, n, "ADD_OR_REMOVE_ONE"))
        return out

    def check_query(self, delta: float, kwargs: dict[str, Any]) -> float:
        """Validate a ``get_epsilon`` query: ``delta`` in (0, 1); only Opacus's accuracy
        options (:data:`PEER_OPTIONS`) as keywords."""
        unknown = set(kwargs) - PEER_OPTIONS
        if unknown:
            raise ValueError(f"get_epsilon takes delta and Opacus's accuracy options "
                             f"{sorted(PEER_OPTIONS)} (ignored), got {sorted(unknown)}")
        return check_delta("delta", delta)

    def state_dict(self, destination: Any = None) -> Any:
        """``{"history": [...], "mechanism": name}`` (into ``destination`` if given)."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = list(self.history)
        destination["mechanism"] = self.mechanism()
        return destination

    def load_state_dict(self, state_dict: Any) -> None:
        """Restore the history from :meth:`state_dict`'s output.

        Raises:
            ValueError: if it is empty, lacks ``history`` or ``mechanism``, names another
                mechanism, or holds a malformed history entry.
        """
        if not state_dict:
            raise ValueError("state_dict is None or empty: nothing to load")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError(f"state_dict has no key {key!r}")
        mech = state_dict["mechanism"]
        mech = mech() if callable(mech) else mech
        if mech != self.mechanism():
            raise ValueError(f"a state_dict of mechanism {mech!r} cannot be loaded into an "
                             f"accountant of mechanism {self.mechanism()!r}")
        history = []
        for i, entry in enumerate(state_dict["history"]):
            try:
                nm, q, n = entry
            except (TypeError, ValueError):
                raise ValueError(f"state_dict['history'][{i}] must be (noise_multiplier, "
                                 f"sample_rate, num_steps), got {entry!r}") from None
            nm, q = _check_step(nm, q)
            history.append((nm, q, check_count(f"state_dict['history'][{i}] num_steps", n)))
        self.history = history
        self.reset_cache()

    def reset_cache(self) -> None:
        """Forget cached answers (subclasses that cache override it)."""

    def get_optimizer_hook_fn(self, sample_rate: float):
        """A callback for Opacus's ``DPOptimizer`` (as ``IAccountant``'s): one step per call
        with the optimizer's noise multiplier and ``sample_rate`` times its accumulated
        iterations."""

        def hook_fn(optim) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)

        return hook_fn


ESTIMATE_WARNING = (
    "EstimateAccountant returns estimates (method {method!r}), not guarantees; use "
    "certify.interop.opacus.CertifiedAccountant for a certified upper bound"
)


class EstimateAccountant(HistoryAccountant):
    """Opacus's accountant surface answered by an **estimate** (method ``auto`` by default).

    Args:
        method: A registered numeric method other than ``certified`` (default ``auto``).
        **options: The method's options (e.g. ``order``, ``time_budget``).

    Raises:
        ValueError: for an unknown method, ``certified`` or an option the method lacks.
    """

    def __init__(self, method: str = "auto", **options: Any) -> None:
        super().__init__()
        import numeric.methods  # noqa: F401 (registers the built-in methods)

        estimate_method(method, options, "CertifiedAccountant")
        self.method = method
        self.options = dict(options)
        self.warning = ESTIMATE_WARNING.format(method=method)
        self._warned = False
        self.last_result = None

    @classmethod
    def mechanism(cls) -> str:
        """``"edgeworth-estimate"``."""
        return "edgeworth-estimate"

    def get_epsilon(self, delta: float, **kwargs: Any):
        """Estimated eps at ``delta`` (an :class:`~numeric.results.Estimate`; Opacus's
        accuracy keywords are accepted and ignored)."""
        from ..methods import epsilon
        from ..results import Estimate
        from .dp_accounting import trivial_epsilon

        delta = self.check_query(delta, kwargs)
        t = self.translation()
        res = trivial_epsilon(t, delta, self.method)
        if res is None:
            res = epsilon(t.composition(), delta, self.method, **self.options)
        if not self._warned:
            warnings.warn(self.warning, UserWarning, stacklevel=2)
            self._warned = True
        self.last_result = dataclasses.replace(res, warnings=(self.warning, *res.warnings))
        return Estimate(self.last_result)
