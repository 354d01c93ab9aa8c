r"""Certified knowledge of random allocation (one epoch of M rounds; "shuffled" DP-SGD).

The pair (van Dijk and Ertan, *Trade-off Functions for DP-SGD with Subsampling based on Random
Shuffling*, arXiv:2605.06259, Sec. 3): P = H0, all M rounds N(0, 1); Q = H1, one uniformly
random round N(1/sigma, 1). Its PLLR is log(S/M), S a sum of M i.i.d. lognormals; the pair is
not symmetric (both orders are accounted for).

* **Lattice step** (:mod:`certify.lattice`, and the one-step method for a single epoch):
  :class:`certify.shuffle.step.RandomAllocationStep`, the certified one-epoch hockey-stick
  curve of :mod:`certify.shuffle.one_epoch` (the law of S enclosed in convex order,
  :mod:`certify.shuffle.law`) and tails from the same bracket.
* **Exact profile** (:mod:`certify.exact`) at M = 1 only: one round is the Gaussian mechanism
  with mu = 1/sigma (GDP Cor. 3.3 composes E of them into mu sqrt(E)); M > 1 is not applicable.
* **The certified method ``shuffle``** (:data:`certify.combine.CERTIFIED_METHODS`):
  :func:`certified_delta` / :func:`certified_epsilon` for a composition of one term (E epochs of
  one RandomAllocation): one epoch by :mod:`certify.shuffle.one_epoch`, E epochs by the
  dominating / dominated lattice measures of :mod:`certify.shuffle.multi_epoch`.
* **No lattice step is registered**: :class:`certify.shuffle.step.RandomAllocationStep` is a
  valid step for :mod:`certify.lattice`'s upper end, but its chords amplify the one-epoch
  bracket width by about 2/h (loose, and slow), and the binned lower test needs tails it does
  not enclose; the ``shuffle`` method is tighter at both ends.
"""

from __future__ import annotations

from fractions import Fraction

from numeric.errors import NotApplicable
from numeric.mechanisms.random_allocation import RandomAllocation

from ..bound import Bound
from ..engine import Endpoint
from ..exact_model import ExactComposition
from ..registry import CertifiedMechanism, register_certified
from ..special import exact_param

__all__ = ["applies", "certified_delta", "certified_epsilon"]


def applies(comp) -> bool:
    """True for a composition of one term of RandomAllocation (the ``shuffle`` method's scope;
    other compositions skip it without a warning)."""
    terms = getattr(comp, "terms", ())
    return len(terms) == 1 and isinstance(terms[0][0], RandomAllocation)


def _term(comp) -> tuple[float | Fraction, int, int]:
    """(sigma, rounds, epochs) of a one-term random-allocation composition.

    Raises:
        NotApplicable: for anything else.
    """
    terms = getattr(comp, "terms", ())
    if len(terms) != 1 or not isinstance(terms[0][0], RandomAllocation):
        names = ", ".join(sorted({type(m).__name__ for m, _ in terms}))
        raise NotApplicable(f"shuffle: does not apply to {names} (E epochs of one "
                            "RandomAllocation only)")
    mech, count = terms[0]
    return exact_param(mech, "sigma"), int(mech.rounds), int(count)


def certified_delta(comp, eps) -> Bound:
    """Certified delta(eps) of E epochs (max over the pair orders: lower = max of the lower
    ends, upper = max of the upper ends).

    Raises:
        NotApplicable: unless the composition is E epochs of one RandomAllocation.
    """
    sigma, rounds, epochs = _term(comp)
    from ..shuffle.multi_epoch import delta_bound

    bs = [delta_bound(sigma, rounds, epochs, eps, d) for d in ("P||Q", "Q||P")]
    lo = max(bs, key=lambda b: b.lower_mpf)
    hi = max(bs, key=lambda b: b.upper_mpf)
    return Bound("delta", lo.lower, hi.upper, lo.lower_method, hi.upper_method, hi.precision,
                 hi.assumptions, hi.direction, (), dict(hi.inputs))


def certified_epsilon(comp, delta) -> Bound:
    """Certified eps(delta) of E epochs (max over the pair orders).

    Raises:
        NotApplicable: unless the composition is E epochs of one RandomAllocation.
    """
    sigma, rounds, epochs = _term(comp)
    from ..shuffle.multi_epoch import epsilon_bound

    b = epsilon_bound(sigma, rounds, epochs, delta)
    if not b.upper.is_finite:
        return Bound("epsilon", b.lower, Endpoint(inf=1), b.lower_method, b.upper_method,
                     b.precision, b.assumptions, b.direction,
                     ("vacuous: no finite certified upper end",), dict(b.inputs))
    return b


def _exact_profile(mech: RandomAllocation, count: int) -> ExactComposition:
    if mech.rounds != 1:
        raise NotApplicable("exact: random allocation has a closed form only at rounds = 1")
    return ExactComposition(
        gaussian=((Fraction(1) / mech.exact_value("sigma"), count),),
        notes=("random allocation with one round is the Gaussian mechanism, mu = 1/sigma",),
    )


register_certified(RandomAllocation, CertifiedMechanism(
    "RandomAllocation",
    exact_profile=_exact_profile,
))
