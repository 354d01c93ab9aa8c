r"""Google dp_accounting's ``PrivacyAccountant`` surface on this toolkit (estimate variant).

Switch with one line::

    from numeric.interop.dp_accounting import EstimatePrivacyAccountant as PLDAccountant

:class:`EstimatePrivacyAccountant` answers with method ``auto`` (exact where a closed form
exists, else the saddlepoint, else a time-budgeted certified enclosure, else the best estimate)
and is named and labelled as an estimate: it warns once per instance and every number it returns
is an :class:`~numeric.results.Estimate` whose result carries the warning. The guarantee is
:class:`certify.interop.dp_accounting.CertifiedPrivacyAccountant`, built on the same event
translation (:func:`translate_event`, :class:`EventAccountant`).

**Events** (duck-typed: by class name and attributes, so dp_accounting need not be installed;
when it is, the accountants subclass ``dp_accounting.PrivacyAccountant`` and the ledger holds its
event classes). ``C`` is the clipping norm, ``s = noise_multiplier``:

* ``GaussianDpEvent(s)`` -> :class:`~numeric.Gaussian` ``(sigma=s, sensitivity=Delta)``;
* ``LaplaceDpEvent(s)`` -> :class:`~numeric.Laplace` ``(scale=s, sensitivity=Delta)``;
* ``PoissonSampledDpEvent(q, GaussianDpEvent(s))`` ->
  :class:`~numeric.PoissonSubsampledGaussian` ``(sigma=s, rate=q)`` (ADD_OR_REMOVE_ONE only);
* ``RandomizedResponseDpEvent(p, k)`` -> :class:`~numeric.RandomizedResponse` ``(eps0)``, an
  (eps0, 0)-DP step with

  .. math:: \varepsilon_0 = \log\frac{k(1-p) + p}{p}

  (keep the true bucket w.p. 1 - p, else a uniform one of k: the likelihood ratio of an output
  under two inputs is at most (1 - p + p/k)/(p/k); Warner, JASA 1965; dp_accounting's
  ``RandomizedResponseDpEvent``). For k = 2 the pair is exact; for k > 2 it dominates the
  k-ary mechanism (whose loss also takes the value 0), so intervals enclose an upper bound;
* ``EpsilonDeltaDpEvent(epsilon, delta)`` (this module's event; dp_accounting has none) ->
  :class:`~numeric.ApproxDP`;
* ``NoOpDpEvent`` (nothing), ``NonPrivateDpEvent`` (eps = inf, delta = 1, as dp_accounting),
  ``SelfComposedDpEvent``, ``ComposedDpEvent`` (recursively).

**Neighbouring relations**, with dp_accounting's meaning: under ``REPLACE_ONE`` a record's
contribution ``v_i`` (``||v_i|| <= C``) is replaced by another, so the sum moves by up to 2C:
Gaussian and Laplace events get sensitivity Delta = 2 (in units of C); under
``ADD_OR_REMOVE_ONE`` and ``REPLACE_SPECIAL`` (replace by a zero record) Delta = 1 (dp_accounting
computes these two alike). Poisson subsampling is accounted under ``ADD_OR_REMOVE_ONE`` only (the
toolkit's subsampled pair is the add/remove pair). Randomized response and (eps, delta) steps are
per-record guarantees, valid under every relation.

**Refusals**: any other event (e.g. ``DiscreteLaplaceDpEvent``, ``SampledWithReplacementDpEvent``,
a Poisson-sampled Laplace: the toolkit has no pair for it) and Poisson sampling under another
relation raise :class:`UnsupportedEventError` (a :class:`~numeric.errors.NotApplicable`, hence a
``ValueError``, and dp_accounting's ``UnsupportedEventError`` when installed) naming the event
and the relation; ``supports`` returns False for them. Bad parameter values raise ``ValueError``
naming the parameter.

Unlike dp_accounting's PLD accountant (0.6.0), which composes a ``RandomizedResponseDpEvent``
once whatever its count, a count of n here means n steps.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._validation import check_count, check_delta, check_nonnegative
from ..composition import Composition, compose
from ..errors import NotApplicable
from ..mechanisms import ApproxDP, Gaussian, Laplace, PoissonSubsampledGaussian, RandomizedResponse
from ..mechanisms.base import Mechanism
from ..registry import estimate_method
from ..results import DeltaResult, EpsilonResult, Estimate

try:  # the peer library is optional: duck-typed events work without it
    from dp_accounting import dp_event as dpa_events
    from dp_accounting import privacy_accountant as dpa_accountant
except ImportError:  # pragma: no cover - depends on the environment
    dpa_events = None
    dpa_accountant = None

__all__ = [
    "HAVE_DP_ACCOUNTING",
    "ComposedDpEvent",
    "EpsilonDeltaDpEvent",
    "EstimatePrivacyAccountant",
    "EventAccountant",
    "EventBuilder",
    "GaussianDpEvent",
    "LaplaceDpEvent",
    "NeighboringRelation",
    "NoOpDpEvent",
    "NonPrivateDpEvent",
    "PoissonSampledDpEvent",
    "RandomizedResponseDpEvent",
    "SelfComposedDpEvent",
    "Translation",
    "UnsupportedEventError",
    "randomized_response_eps0",
    "relation_name",
    "translate_event",
]

HAVE_DP_ACCOUNTING = dpa_events is not None
"""True when dp_accounting is importable (then its classes are used and subclassed)."""

RELATIONS = ("ADD_OR_REMOVE_ONE", "REPLACE_ONE", "REPLACE_SPECIAL")

if HAVE_DP_ACCOUNTING:
    import attr

    NeighboringRelation = dpa_accountant.NeighboringRelation
    NoOpDpEvent = dpa_events.NoOpDpEvent
    NonPrivateDpEvent = dpa_events.NonPrivateDpEvent
    GaussianDpEvent = dpa_events.GaussianDpEvent
    LaplaceDpEvent = dpa_events.LaplaceDpEvent
    RandomizedResponseDpEvent = dpa_events.RandomizedResponseDpEvent
    PoissonSampledDpEvent = dpa_events.PoissonSampledDpEvent
    SelfComposedDpEvent = dpa_events.SelfComposedDpEvent
    ComposedDpEvent = dpa_events.ComposedDpEvent
    _ACCOUNTANT_BASES: tuple[type, ...] = (dpa_accountant.PrivacyAccountant,)
    _ERROR_BASES: tuple[type, ...] = (NotApplicable, dpa_accountant.UnsupportedEventError)

    @attr.s(frozen=True, slots=True, auto_attribs=True)
    class EpsilonDeltaDpEvent(dpa_events.DpEvent):
        """An (epsilon, delta)-DP step (this toolkit's event; accounted as ``ApproxDP``)."""

        epsilon: float
        delta: float
else:  # pragma: no cover - exercised when dp_accounting is absent

    class NeighboringRelation(enum.Enum):
        """dp_accounting's neighbouring relations (same names and values)."""

        ADD_OR_REMOVE_ONE = 1
        REPLACE_ONE = 2
        REPLACE_SPECIAL = 3

    @dataclass(frozen=True)
    class NoOpDpEvent:
        """An operation without privacy cost."""

    @dataclass(frozen=True)
    class NonPrivateDpEvent:
        """A non-private operation (eps = inf)."""

    @dataclass(frozen=True)
    class GaussianDpEvent:
        """Gaussian noise of std ``noise_multiplier`` times the clipping norm."""

        noise_multiplier: float

    @dataclass(frozen=True)
    class LaplaceDpEvent:
        """Laplace noise of scale ``noise_multiplier`` times the L1 clipping norm."""

        noise_multiplier: float

    @dataclass(frozen=True)
    class RandomizedResponseDpEvent:
        """k-ary randomized response: keep the bucket w.p. 1 - p, else a uniform one."""

        noise_parameter: float
        num_buckets: int

    @dataclass(frozen=True)
    class PoissonSampledDpEvent:
        """Poisson sampling with probability ``sampling_probability``, then ``event``."""

        sampling_probability: float
        event: Any

    @dataclass(frozen=True)
    class SelfComposedDpEvent:
        """``event`` applied ``count`` times."""

        event: Any
        count: int

    @dataclass(frozen=True)
    class ComposedDpEvent:
        """The events applied in sequence."""

        events: list

    @dataclass(frozen=True)
    class EpsilonDeltaDpEvent:
        """An (epsilon, delta)-DP step (accounted as ``ApproxDP``)."""

        epsilon: float
        delta: float

    _ACCOUNTANT_BASES = ()
    _ERROR_BASES = (NotApplicable,)


class UnsupportedEventError(*_ERROR_BASES):
    """An event (or an event under this neighbouring relation) has no pair in the toolkit.

    A :class:`~numeric.errors.NotApplicable` (so a ``ValueError``) and, when dp_accounting is
    installed, its ``UnsupportedEventError`` too.
    """


def relation_name(relation: object) -> str:
    """The name of a neighbouring relation (an enum member of dp_accounting's or this module's
    ``NeighboringRelation``, or its name as a string).

    Raises:
        ValueError: naming the value, for anything else.
    """
    name = relation if isinstance(relation, str) else getattr(relation, "name", None)
    if name not in RELATIONS:
        raise ValueError(f"neighboring_relation must be one of {', '.join(RELATIONS)}, "
                         f"got {relation!r}")
    return name


def randomized_response_eps0(noise_parameter: float, num_buckets: int) -> float:
    r"""eps0 = log((k(1 - p) + p)/p) of k-ary randomized response, in floating point (module
    docstring; certify rounds it up rigorously instead).

    Args:
        noise_parameter: p in (0, 1).
        num_buckets: k >= 2.

    Returns:
        log1p(k (1 - p)/p) (a few ulps from the real number).
    """
    return math.log1p(num_buckets * (1.0 - noise_parameter) / noise_parameter)


def _real(name: str, value: object, lo: float, hi: float) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not (lo <= x <= hi):
        raise ValueError(f"{name} must lie in [{lo:g}, {hi:g}], got {value!r}")
    return x


@dataclass(frozen=True)
class Translation:
    """Mechanism terms of one or more events.

    Attributes:
        terms: ``(mechanism, count)`` pairs, in order (equal mechanisms merged).
        non_private: True if a ``NonPrivateDpEvent`` (or a noiseless step) occurred.
    """

    terms: tuple[tuple[Mechanism, int], ...] = ()
    non_private: bool = False

    def plus(self, other: Translation) -> Translation:
        """Both translations composed."""
        merged: dict[Mechanism, int] = dict(self.terms)
        for mech, n in other.terms:
            merged[mech] = merged.get(mech, 0) + n
        return Translation(tuple(merged.items()), self.non_private or other.non_private)

    def composition(self) -> Composition | None:
        """The terms as a :class:`~numeric.composition.Composition` (None when empty)."""
        return compose(list(self.terms)) if self.terms else None


class _Translator:
    """Walks an event tree, appending terms (see :func:`translate_event`)."""

    def __init__(self, relation: str, rr_eps0: Callable[[float, int], float]) -> None:
        self.relation = relation
        self.rr_eps0 = rr_eps0
        self.terms: dict[Mechanism, int] = {}
        self.non_private = False

    def refuse(self, event: object, why: str) -> UnsupportedEventError:
        return UnsupportedEventError(
            f"unsupported event {event!r} under neighboring relation {self.relation}: {why}")

    def add(self, mech: Mechanism, count: int) -> None:
        if count:
            self.terms[mech] = self.terms.get(mech, 0) + count

    def sensitivity(self) -> float:
        return 2.0 if self.relation == "REPLACE_ONE" else 1.0

    def walk(self, event: object, count: int) -> None:
        handler = getattr(self, f"on_{type(event).__name__}", None)
        if handler is None:
            raise self.refuse(event, "no privacy-loss pair for this event in the toolkit "
                              "(supported: Gaussian, Laplace, Poisson-sampled Gaussian, "
                              "randomized response, EpsilonDelta, NoOp, NonPrivate, composed)")
        handler(event, count)

    def on_NoOpDpEvent(self, event, count):  # handlers are named on_<event class name>
        pass

    def on_NonPrivateDpEvent(self, event, count):
        self.non_private = self.non_private or count > 0

    def on_SelfComposedDpEvent(self, event, count):
        inner = check_count("SelfComposedDpEvent.count", event.count, minimum=0)
        self.walk(event.event, count * inner)

    def on_ComposedDpEvent(self, event, count):
        for e in event.events:
            self.walk(e, count)

    def on_GaussianDpEvent(self, event, count):
        s = _real("GaussianDpEvent.noise_multiplier", event.noise_multiplier, 0.0, math.inf)
        if s == 0.0:
            self.non_private = self.non_private or count > 0
        else:
            self.add(Gaussian(s, sensitivity=self.sensitivity()), count)

    def on_LaplaceDpEvent(self, event, count):
        s = _real("LaplaceDpEvent.noise_multiplier", event.noise_multiplier, 0.0, math.inf)
        if s == 0.0:
            self.non_private = self.non_private or count > 0
        else:
            self.add(Laplace(s, sensitivity=self.sensitivity()), count)

    def on_RandomizedResponseDpEvent(self, event, count):
        p = _real("RandomizedResponseDpEvent.noise_parameter", event.noise_parameter, 0.0, 1.0)
        k = check_count("RandomizedResponseDpEvent.num_buckets", event.num_buckets)
        if k == 1 or p == 1.0:  # one bucket, or a uniform output: no privacy loss
            return
        if p == 0.0:  # the true bucket, always
            self.non_private = self.non_private or count > 0
            return
        self.add(RandomizedResponse(self.rr_eps0(p, k)), count)

    def on_EpsilonDeltaDpEvent(self, event, count):
        eps = _real("EpsilonDeltaDpEvent.epsilon", event.epsilon, 0.0, math.inf)
        delta = _real("EpsilonDeltaDpEvent.delta", event.delta, 0.0, 1.0)
        if math.isinf(eps) or delta == 1.0:
            self.non_private = self.non_private or count > 0
        elif eps > 0.0 or delta > 0.0:
            self.add(ApproxDP(eps, delta), count)

    def on_PoissonSampledDpEvent(self, event, count):
        inner = event.event
        if type(inner).__name__ != "GaussianDpEvent":
            raise self.refuse(event, f"Poisson sampling of {type(inner).__name__} has no pair in "
                              "the toolkit (only a Poisson-sampled GaussianDpEvent)")
        if self.relation != "ADD_OR_REMOVE_ONE":
            raise self.refuse(event, "Poisson subsampling is accounted under ADD_OR_REMOVE_ONE "
                              "only (the toolkit's subsampled Gaussian is the add/remove pair)")
        q = _real("PoissonSampledDpEvent.sampling_probability", event.sampling_probability,
                  0.0, 1.0)
        s = _real("GaussianDpEvent.noise_multiplier", inner.noise_multiplier, 0.0, math.inf)
        if q == 0.0:
            return
        if s == 0.0:
            self.non_private = self.non_private or count > 0
        else:
            self.add(PoissonSubsampledGaussian(sigma=s, rate=q), count)


def translate_event(event: object, count: int = 1, neighboring_relation: object =
                    "ADD_OR_REMOVE_ONE", *, rr_eps0: Callable[[float, int], float] =
                    randomized_response_eps0) -> Translation:
    """The toolkit's mechanisms for ``count`` applications of a dp_accounting event.

    Args:
        event: A dp_accounting ``DpEvent`` or any object with the same class name and
            attributes (module docstring lists the supported ones).
        count: Applications, a whole number >= 0.
        neighboring_relation: A ``NeighboringRelation`` member or its name.
        rr_eps0: eps0 of randomized response from ``(noise_parameter, num_buckets)`` (certify
            passes a rigorous upward rounding).

    Returns:
        A :class:`Translation`.

    Raises:
        UnsupportedEventError: if an event (or an event under this relation) has no pair.
        ValueError: on bad parameter values, naming them.
    """
    t = _Translator(relation_name(neighboring_relation), rr_eps0)
    t.walk(event, check_count("count", count, minimum=0))
    return Translation(tuple(t.terms.items()), t.non_private)


class EventBuilder:
    """The ledger: dp_accounting's ``DpEventBuilder`` behaviour on duck-typed events.

    A ``NoOpDpEvent`` is dropped, a ``SelfComposedDpEvent`` is unrolled into its event with the
    multiplied count, a repeat of the last event adds to its count; :meth:`build` gives the
    event, a ``SelfComposedDpEvent`` for counts > 1 and a ``ComposedDpEvent`` of several.
    """

    def __init__(self) -> None:
        self._event_counts: list[tuple[Any, int]] = []

    def compose(self, event: object, count: int = 1) -> None:
        """Append ``count`` applications of ``event`` (count a whole number >= 1)."""
        count = check_count("count", count)
        name = type(event).__name__
        if name == "NoOpDpEvent":
            return
        if name == "SelfComposedDpEvent":
            self.compose(event.event, count * event.count)
        elif self._event_counts and self._event_counts[-1][0] == event:
            self._event_counts[-1] = (event, self._event_counts[-1][1] + count)
        else:
            self._event_counts.append((event, count))

    def build(self) -> object:
        """The composed event."""
        events = [e if n == 1 else SelfComposedDpEvent(e, n) for e, n in self._event_counts]
        if not events:
            return NoOpDpEvent()
        return events[0] if len(events) == 1 else ComposedDpEvent(events)


class EventAccountant(*_ACCOUNTANT_BASES):
    """The shared part of the dp_accounting drop-ins: relation, ledger, compose, supports.

    Subclasses implement ``get_epsilon`` and ``get_delta`` from :meth:`translation`. When
    dp_accounting is installed this is a ``dp_accounting.PrivacyAccountant``.

    Args:
        neighboring_relation: ``NeighboringRelation`` member (dp_accounting's or this module's)
            or its name; default ADD_OR_REMOVE_ONE (as dp_accounting's accountants).

    Raises:
        ValueError: for an unknown relation.
    """

    rr_eps0: Callable[[float, int], float] = staticmethod(randomized_response_eps0)

    def __init__(self, neighboring_relation: object = NeighboringRelation.ADD_OR_REMOVE_ONE
                 ) -> None:
        self._relation_name = relation_name(neighboring_relation)
        self._neighboring_relation = neighboring_relation
        self._ledger = EventBuilder()
        self._accounted = Translation()
        self._cache: dict[tuple, Any] = {}

    @property
    def neighboring_relation(self) -> object:
        """The neighbouring relation given at construction."""
        return self._neighboring_relation

    def _translate(self, event: object, count: int) -> Translation:
        return translate_event(event, count, self._relation_name, rr_eps0=type(self).rr_eps0)

    def _maybe_compose(self, event, count, do_compose):
        """dp_accounting's hook: None if ``event`` can be composed (and composes it when
        ``do_compose``), else its ``CompositionErrorDetails``."""
        try:
            t = self._translate(event, count)
        except ValueError as exc:
            details = getattr(type(self), "CompositionErrorDetails", None)
            return details(event, str(exc)) if details else str(exc)
        if do_compose:
            self._accounted = self._accounted.plus(t)
            self._cache.clear()
        return None

    def supports(self, event: object) -> bool:
        """True iff :meth:`compose` accepts ``event`` (False for unsupported events, relations
        and bad parameter values)."""
        try:
            self._translate(event, 0)
            self._translate(event, 1)
        except ValueError:
            return False
        return True

    def compose(self, event: object, count: int = 1):
        """Account ``count`` applications of ``event``; returns self (chainable).

        Raises:
            UnsupportedEventError: if the event has no pair (nothing is recorded).
            ValueError: on a bad count or parameter value.
        """
        count = check_count("count", count)
        t = self._translate(event, count)
        self._ledger.compose(event, count)
        self._accounted = self._accounted.plus(t)
        self._cache.clear()
        return self

    @property
    def ledger(self) -> object:
        """The composed event processed so far (as dp_accounting's ``ledger``)."""
        return self._ledger.build()

    def translation(self) -> Translation:
        """Everything composed so far, as toolkit mechanisms."""
        return self._accounted


ESTIMATE_WARNING = (
    "EstimatePrivacyAccountant returns estimates (method {method!r}), not guarantees; use "
    "certify.interop.dp_accounting.CertifiedPrivacyAccountant for a certified upper bound"
)


def trivial_epsilon(translation: Translation, target_delta: float, method: str
                    ) -> EpsilonResult | None:
    """The answer without a computation: inf for a non-private ledger, 0 for an empty one."""
    target_delta = check_delta("target_delta", target_delta)
    if translation.non_private:
        return EpsilonResult(math.inf, target_delta, method, False, "P||Q",
                             warnings=("a non-private event was composed: eps = inf",))
    if not translation.terms:
        return EpsilonResult(0.0, target_delta, method, False, "P||Q",
                             warnings=("no private event was composed: eps = 0",))
    return None


def trivial_delta(translation: Translation, target_epsilon: float, method: str
                  ) -> DeltaResult | None:
    """delta without a computation: 1 for a non-private ledger, 0 for an empty one."""
    target_epsilon = check_nonnegative("target_epsilon", target_epsilon)
    if translation.non_private:
        return DeltaResult(1.0, target_epsilon, method, False, "P||Q",
                           warnings=("a non-private event was composed: delta = 1",))
    if not translation.terms:
        return DeltaResult(0.0, target_epsilon, method, False, "P||Q",
                           warnings=("no private event was composed: delta = 0",))
    return None


class EstimatePrivacyAccountant(EventAccountant):
    """dp_accounting's ``PrivacyAccountant`` surface answered by an **estimate** method.

    Args:
        neighboring_relation: As dp_accounting's (default ADD_OR_REMOVE_ONE).
        method: A registered numeric method other than ``certified`` (default ``auto``).
        **options: The method's options (e.g. ``order``, ``time_budget`` for ``auto``).

    Raises:
        ValueError: for an unknown relation or method, or ``certified`` (use
            ``certify.interop.dp_accounting.CertifiedPrivacyAccountant``).
    """

    def __init__(self, neighboring_relation: object = NeighboringRelation.ADD_OR_REMOVE_ONE,
                 method: str = "auto", **options: Any) -> None:
        super().__init__(neighboring_relation)
        import numeric.methods  # noqa: F401 (registers the built-in methods)

        estimate_method(method, options, "CertifiedPrivacyAccountant")
        self.method = method
        self.options = dict(options)
        self.warning = ESTIMATE_WARNING.format(method=method)
        self._warned = False

    def _label(self, res):
        if not self._warned:
            warnings.warn(self.warning, UserWarning, stacklevel=3)
            self._warned = True
        return Estimate(dataclasses.replace(res, warnings=(self.warning, *res.warnings)))

    def get_epsilon(self, target_delta: float) -> Estimate:
        """eps at ``target_delta``: an :class:`~numeric.results.Estimate` (a float; its
        ``result`` has the provenance and the estimate warning)."""
        key = ("epsilon", check_delta("target_delta", target_delta))
        if key not in self._cache:
            from ..methods import epsilon

            t = self.translation()
            res = trivial_epsilon(t, target_delta, self.method)
            if res is None:
                res = epsilon(t.composition(), target_delta, self.method, **self.options)
            self._cache[key] = self._label(res)
        return self._cache[key]

    def get_delta(self, target_epsilon: float) -> Estimate:
        """delta at ``target_epsilon``: an :class:`~numeric.results.Estimate`."""
        key = ("delta", check_nonnegative("target_epsilon", target_epsilon))
        if key not in self._cache:
            from ..methods import delta

            t = self.translation()
            res = trivial_delta(t, target_epsilon, self.method)
            if res is None:
                res = delta(t.composition(), target_epsilon, self.method, **self.options)
            self._cache[key] = self._label(res)
        return self._cache[key]
