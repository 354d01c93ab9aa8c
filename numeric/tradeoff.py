r"""f-DP trade-off functions: Gaussian and (eps, delta) curves, delta parts, profile conversions.

Source: Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 84 (2022), arXiv:1905.02383
(cited as GDP). For distributions P, Q the trade-off function is
T(P, Q)(a) = inf{beta_phi : alpha_phi <= a} (GDP Def. 2.1); f: [0, 1] -> [0, 1] is a trade-off
function iff it is convex, continuous, non-increasing and f(a) <= 1 - a (GDP Prop. 2.2).

.. math::

    G_\mu(\alpha) = \Phi\bigl(\Phi^{-1}(1-\alpha) - \mu\bigr)
                  = \Phi\bigl(-\Phi^{-1}(\alpha) - \mu\bigr)              \quad\text{(GDP Def. 2.6)}

    f_{\varepsilon,\delta}(\alpha) = \max\{0,\ 1-\delta-e^{\varepsilon}\alpha,\
                                     e^{-\varepsilon}(1-\delta-\alpha)\}  \quad\text{(GDP Sec. 2.2)}

Composition with a pure delta part (GDP Eqs. (11)-(13)):
f_{eps,delta} = f_{eps,0} (x) f_{0,delta}; f_{0,d1} (x) f_{0,d2} = f_{0, 1-(1-d1)(1-d2)};
(f (x) f_{0,d})(a) = (1-d) f(a/(1-d)) for a <= 1-d and 0 otherwise, i.e. in (eps, delta) terms
delta'(eps) = d + (1-d) delta_f(eps). Gaussian composition: G_mu1 (x) G_mu2 = G_sqrt(mu1^2+mu2^2)
(GDP Cor. 3.3).

Primal-dual conversion for a symmetric f (GDP Prop. 2.12; Cor. 2.13 for G_mu): a mechanism is
f-DP iff it is (eps, delta(eps))-DP for every eps >= 0 with

.. math::

    \delta(\varepsilon) = 1 + f^{*}(-e^{\varepsilon})
        = 1 - \inf_{0 \le \alpha \le 1}\bigl(f(\alpha) + e^{\varepsilon}\alpha\bigr),

and conversely f = sup_{eps >= 0} f_{eps, delta(eps)}. :func:`delta_from_tradeoff` evaluates the
infimum numerically; :func:`tradeoff_from_delta_curve` takes the supremum over a finite eps grid,
which is the f-DP guarantee implied by those (eps, delta) pairs and a lower envelope of the true f.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special

from ._validation import (
    as_float_array,
    check_count,
    check_finite,
    check_nonnegative,
    check_positive,
)

__all__ = [
    "compose_delta_parts",
    "delta_from_tradeoff",
    "delta_profile_with_delta_part",
    "eps_delta_tradeoff",
    "gaussian_tradeoff",
    "sup_distance",
    "tensor_with_delta",
    "tradeoff_from_delta_curve",
]

TradeOff = Callable[[np.ndarray], np.ndarray]

_GOLDEN = 0.5 * (math.sqrt(5.0) - 1.0)  # 1/phi, the golden-section shrink factor
_LOG_DECADES = 300  # the alpha grid of delta_from_tradeoff reaches down to 1e-300 ...
_PER_DECADE = 16  # ... with this many log-spaced points per decade
_CHUNK = 1 << 20  # max elements of a (rows x alpha) work matrix


def _check_alpha(alpha: object) -> np.ndarray:
    """Return ``alpha`` as a float array with every entry in [0, 1], else raise ``ValueError``."""
    a = as_float_array("alpha", alpha)
    bad = ~((a >= 0.0) & (a <= 1.0))
    if bad.any():
        raise ValueError(f"alpha must lie in [0, 1], got {a[bad].flat[0]!r}")
    return a


def _check_delta_part(name: str, value: object) -> float:
    """Return a delta in [0, 1) (the delta of f_{eps,delta} or a pure delta part), else raise."""
    x = check_finite(name, value)
    if not (0.0 <= x < 1.0):
        raise ValueError(f"{name} must lie in [0, 1), got {x!r}")
    return x


def _check_unit_array(name: str, value: object, *, upper_open: bool) -> np.ndarray:
    """Return an array of probabilities in [0, 1] (or [0, 1) if ``upper_open``), else raise."""
    arr = as_float_array(name, value)
    ok = (arr >= 0.0) & ((arr < 1.0) if upper_open else (arr <= 1.0))
    if not ok.all():
        interval = "[0, 1)" if upper_open else "[0, 1]"
        raise ValueError(f"{name} must lie in {interval}, got {arr[~ok].flat[0]!r}")
    return arr


def _check_callable(name: str, f: object) -> None:
    if not callable(f):
        raise ValueError(f"{name} must be a callable trade-off function, got {f!r}")


def _scalar_or_array(out: np.ndarray, like: np.ndarray) -> float | np.ndarray:
    return float(out.reshape(-1)[0]) if like.ndim == 0 else out.reshape(like.shape)


def _times_exp(eps: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Broadcast ``e^eps * a`` with ``0`` wherever ``a == 0`` (even if ``e^eps`` overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        prod = np.exp(eps) * a
    return np.where(a > 0.0, prod, 0.0)


def gaussian_tradeoff(mu: float, alpha: float | np.ndarray) -> float | np.ndarray:
    r"""Gaussian trade-off function :math:`G_\mu(\alpha) = \Phi(-\Phi^{-1}(\alpha) - \mu)`.

    G_mu = T(N(0, 1), N(mu, 1)) (GDP Def. 2.6). The form Phi(-Phi^{-1}(a) - mu) keeps full
    relative precision for tiny a (``ndtri`` of a small a is accurate, whereas 1 - a would round
    to 1); the endpoints are exact: G_mu(0) = 1 and G_mu(1) = 0. G_mu is symmetric,
    G_mu(G_mu(a)) = a.

    Args:
        mu: GDP parameter, finite and > 0.
        alpha: Type I error(s) in [0, 1] (scalar or array).

    Returns:
        G_mu(alpha), a float for scalar input else an array of alpha's shape.

    Raises:
        ValueError: if ``mu`` is not finite and > 0 or any ``alpha`` lies outside [0, 1].
    """
    mu = check_positive("mu", mu)
    a = _check_alpha(alpha)
    out = special.ndtr(-special.ndtri(a) - mu)
    return _scalar_or_array(np.asarray(out, dtype=float), a)


def eps_delta_tradeoff(eps: float, delta: float, alpha: float | np.ndarray) -> float | np.ndarray:
    r"""Trade-off function of (eps, delta)-DP, :math:`f_{\varepsilon,\delta}`.

    .. math::

        f_{\varepsilon,\delta}(\alpha) = \max\{0,\ 1-\delta-e^{\varepsilon}\alpha,\
                                         e^{-\varepsilon}(1-\delta-\alpha)\}

    A mechanism is (eps, delta)-DP iff it is f_{eps,delta}-DP (GDP Sec. 2.2, after Wasserman and
    Zhou). The curve is symmetric and piecewise linear with a kink at
    alpha = (1 - delta)/(1 + e^eps); f(0) = 1 - delta and f(a) = 0 for a >= 1 - delta.

    Args:
        eps: Privacy parameter, finite and >= 0 (``e^eps`` may overflow; the limit is used).
        delta: Privacy parameter in [0, 1).
        alpha: Type I error(s) in [0, 1].

    Returns:
        f_{eps,delta}(alpha), a float for scalar input else an array.

    Raises:
        ValueError: if ``eps``, ``delta`` or any ``alpha`` is out of range.
    """
    eps = check_nonnegative("eps", eps)
    delta = _check_delta_part("delta", delta)
    a = _check_alpha(alpha)
    keep = 1.0 - delta
    steep = keep - _times_exp(np.float64(eps), a)
    flat = math.exp(-eps) * (keep - a)
    out = np.maximum(np.maximum(steep, flat), 0.0)
    return _scalar_or_array(out, a)


def tensor_with_delta(f: TradeOff, d: float) -> TradeOff:
    r"""Tensor a trade-off function with the pure delta part f_{0,d} (GDP Eq. (13)).

    .. math::

        (f \otimes f_{0,d})(\alpha) = \begin{cases} (1-d)\, f\!\left(\frac{\alpha}{1-d}\right),
            & \alpha \le 1-d,\\ 0, & \alpha > 1-d. \end{cases}

    Special cases: f_{eps,delta} = f_{eps,0} (x) f_{0,delta} (GDP Eq. (11)) and
    f_{0,d1} (x) f_{0,d2} = f_{0,1-(1-d1)(1-d2)} (GDP Eq. (12)). In (eps, delta) terms the
    profile becomes d + (1-d) delta_f(eps); see :func:`delta_profile_with_delta_part`.

    Args:
        f: Trade-off function, a vectorized callable mapping an array of alphas in [0, 1] to an
            array of the same shape.
        d: Pure delta part in [0, 1).

    Returns:
        A callable ``alpha -> (f (x) f_{0,d})(alpha)`` that validates alpha in [0, 1] and returns
        a float for scalar input else an array.

    Raises:
        ValueError: if ``f`` is not callable or ``d`` lies outside [0, 1).
    """
    _check_callable("f", f)
    d = _check_delta_part("d", d)
    keep = 1.0 - d

    def tensored(alpha: float | np.ndarray) -> float | np.ndarray:
        a = _check_alpha(alpha)
        inside = a <= keep
        # Clip so that rounding of a/(1-d) never hands f a point above 1.
        x = np.where(inside, np.minimum(a / keep, 1.0), 1.0)
        fx = np.asarray(f(x), dtype=float)
        out = np.where(inside, keep * fx, 0.0)
        return _scalar_or_array(out, a)

    tensored.__doc__ = f"(f (x) f_{{0,d}})(alpha) with d = {d!r} (GDP Eq. (13))."
    return tensored


def compose_delta_parts(deltas: float | np.ndarray) -> float:
    r"""Pure delta part of a composition, :math:`1 - \prod_i (1 - d_i)` (GDP Eq. (12)).

    f_{0,d1} (x) ... (x) f_{0,dn} = f_{0,d} with d = 1 - prod(1 - d_i), evaluated as
    ``-expm1(sum(log1p(-d_i)))`` so that many tiny parts keep full relative precision
    (100 parts of 1e-6 give 9.9995050...e-5, GDP Sec. 3.3).

    Args:
        deltas: Pure delta part(s), each in [0, 1).

    Returns:
        The composed delta part in [0, 1).

    Raises:
        ValueError: if ``deltas`` is empty or any entry lies outside [0, 1).
    """
    arr = _check_unit_array("deltas", deltas, upper_open=True).ravel()
    if arr.size == 1:
        return float(arr[0])  # exact: the round trip through log1p/expm1 could cost an ulp
    return float(-math.expm1(math.fsum(np.log1p(-arr).tolist())))


def delta_profile_with_delta_part(delta_eps: float | np.ndarray, d: float) -> float | np.ndarray:
    r"""Privacy profile after tensoring with f_{0,d}: :math:`d + (1-d)\,\delta_f(\varepsilon)`.

    This is GDP Eq. (13) in (eps, delta) terms: if delta_eps = delta_f(eps) is the profile of f,
    then f (x) f_{0,d} has profile d + (1 - d) delta_f(eps) (equivalently
    1 - (1 - d)(1 - delta_f(eps))).

    Args:
        delta_eps: Profile value(s) delta_f(eps), each in [0, 1].
        d: Pure delta part in [0, 1).

    Returns:
        The new profile value(s) in [0, 1], a float for scalar input else an array.

    Raises:
        ValueError: if any ``delta_eps`` lies outside [0, 1] or ``d`` outside [0, 1).
    """
    arr = _check_unit_array("delta_eps", delta_eps, upper_open=False)
    d = _check_delta_part("d", d)
    out = np.minimum(d + (1.0 - d) * arr, 1.0)
    return _scalar_or_array(np.asarray(out, dtype=float), arr)


def tradeoff_from_delta_curve(
    eps_grid: float | np.ndarray, deltas: float | np.ndarray, alpha: float | np.ndarray
) -> float | np.ndarray:
    r"""Trade-off curve implied by finitely many (eps_i, delta_i) pairs: sup_i f_{eps_i,delta_i}.

    .. math::

        f(\alpha) = \max_i f_{\varepsilon_i,\delta_i}(\alpha).

    A mechanism that is (eps_i, delta_i)-DP for every i is f_{eps_i,delta_i}-DP for every i and
    hence f-DP for their pointwise maximum, which is again a symmetric trade-off function. If the
    pairs lie on the exact profile of a symmetric f_true, delta_i = 1 + f_true^*(-e^{eps_i}),
    then each f_{eps_i,delta_i} is a supporting line of f_true and the result is a *lower
    envelope*: it never exceeds f_true, and it converges to f_true as the grid becomes dense
    (GDP Prop. 2.12: f_true = sup over all eps >= 0). With only finitely many points it is
    exactly the f-DP guarantee those (eps, delta) pairs certify, no more.

    Args:
        eps_grid: Privacy parameters eps_i, finite and >= 0 (1-D, any order).
        deltas: Matching delta_i in [0, 1], same length as ``eps_grid``.
        alpha: Type I error(s) in [0, 1].

    Returns:
        max_i f_{eps_i,delta_i}(alpha), a float for scalar input else an array.

    Raises:
        ValueError: on non-finite or negative eps, deltas outside [0, 1], mismatched lengths,
            or alpha outside [0, 1].
    """
    e = as_float_array("eps_grid", eps_grid, nonnegative=True)
    dl = _check_unit_array("deltas", deltas, upper_open=False)
    if e.ndim > 1 or dl.ndim > 1:
        raise ValueError(f"eps_grid and deltas must be 1-D, got shapes {e.shape} and {dl.shape}")
    e, dl = e.ravel(), dl.ravel()
    if e.size != dl.size:
        raise ValueError(
            f"eps_grid and deltas must have the same length, got {e.size} and {dl.size}"
        )
    a = _check_alpha(alpha)
    flat = a.ravel()
    keep = (1.0 - dl)[:, None]
    decay = np.exp(-e)[:, None]
    out = np.empty_like(flat)
    step = max(1, _CHUNK // e.size)
    for start in range(0, flat.size, step):
        x = flat[start : start + step][None, :]
        steep = keep - _times_exp(e[:, None], x)
        shallow = decay * (keep - x)
        out[start : start + step] = np.maximum(np.maximum(steep, shallow), 0.0).max(axis=0)
    return _scalar_or_array(out, a)


def _evaluate(f: TradeOff, x: np.ndarray) -> np.ndarray:
    """Evaluate a vectorized trade-off callable and check its output shape and range."""
    y = np.asarray(f(x), dtype=float)
    if y.shape != x.shape:
        raise ValueError(
            f"f must map an array of alphas to an array of the same shape, got shape {y.shape} "
            f"for input shape {x.shape}"
        )
    bad = ~((y >= -1e-12) & (y <= 1.0 + 1e-12))
    if bad.any():
        raise ValueError(f"f must return values in [0, 1], got {y[bad].flat[0]!r}")
    return np.clip(y, 0.0, 1.0)


def _min_f_plus_line(
    f: TradeOff, grid: np.ndarray, f_grid: np.ndarray, eps: np.ndarray, steps: int
) -> np.ndarray:
    """min_a f(a) + e^eps a for each eps: grid argmin, then golden-section on its bracket."""
    vals = f_grid[None, :] + _times_exp(eps[:, None], grid[None, :])
    j = np.argmin(vals, axis=1)
    best = vals[np.arange(eps.size), j]
    lo = grid[np.maximum(j - 1, 0)]
    hi = grid[np.minimum(j + 1, grid.size - 1)]

    def g(x: np.ndarray) -> np.ndarray:
        return _evaluate(f, x) + _times_exp(eps, x)

    # f(a) + e^eps a is convex, so its minimum lies in [grid[j-1], grid[j+1]] and golden-section
    # search (comparisons only) converges to it; every evaluated point is an upper bound on inf.
    x1 = hi - _GOLDEN * (hi - lo)
    x2 = lo + _GOLDEN * (hi - lo)
    g1, g2 = g(x1), g(x2)
    best = np.minimum(best, np.minimum(g1, g2))
    for _ in range(steps):
        left = g1 <= g2  # minimum in [lo, x2]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        new = np.where(left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        g_new = g(new)
        best = np.minimum(best, g_new)
        x1, x2 = np.where(left, new, x2), np.where(left, x1, new)
        g1, g2 = np.where(left, g_new, g2), np.where(left, g1, g_new)
    return best


def delta_from_tradeoff(
    f: TradeOff, eps: float | np.ndarray, *, grid_size: int = 4097, refine_steps: int = 80
) -> float | np.ndarray:
    r"""Privacy profile of a symmetric trade-off function (numerical conversion, GDP Prop. 2.12).

    .. math::

        \delta(\varepsilon) = 1 + f^{*}(-e^{\varepsilon})
            = 1 - \inf_{0 \le \alpha \le 1}\bigl(f(\alpha) + e^{\varepsilon}\alpha\bigr).

    This is a *numerical* conversion for a convex, non-increasing callable f: the convex
    objective f(a) + e^eps a is minimized on a fixed grid (``grid_size`` equispaced points on
    [0, 1] joined with 16 log-spaced points per decade down to 1e-300, so minimizers at tiny
    alpha are found) and then refined by golden-section search on the bracketing grid cell.
    Every evaluated point bounds the infimum from above, so the result is a lower estimate of
    the true delta up to rounding; after refinement the gap is at rounding level for smooth and
    piecewise-linear f. Because delta is formed as 1 - (something near 1), its absolute error is
    ~1e-16: relative accuracy degrades for delta below ~1e-10 (use a closed form such as
    :func:`numeric.gdp.delta_mu` there). For an asymmetric f this is the profile of the ordered
    pair with T(P, Q) = f only; take the maximum with that of f^{-1} for the symmetrized notion.

    Args:
        f: Trade-off function, a vectorized callable mapping an array of alphas in [0, 1] to an
            array of the same shape with values in [0, 1]; it must be convex and non-increasing.
        eps: Privacy parameter(s), finite and >= 0.
        grid_size: Number of equispaced grid points on [0, 1] (whole number >= 3).
        refine_steps: Golden-section iterations per eps (whole number >= 0; 80 shrinks the
            bracket below one ulp).

    Returns:
        delta(eps) in [0, 1], a float for scalar input else an array of eps's shape.

    Raises:
        ValueError: if ``f`` is not callable or returns values of the wrong shape or outside
            [0, 1], or if ``eps``, ``grid_size`` or ``refine_steps`` is out of range.
    """
    _check_callable("f", f)
    e = as_float_array("eps", eps, nonnegative=True)
    grid_size = check_count("grid_size", grid_size, minimum=3, maximum=10**7)
    refine_steps = check_count("refine_steps", refine_steps, minimum=0, maximum=10**4)
    grid = np.unique(
        np.concatenate(
            (
                [0.0],
                np.logspace(-_LOG_DECADES, 0.0, _LOG_DECADES * _PER_DECADE + 1),
                np.linspace(0.0, 1.0, grid_size),
            )
        )
    )
    f_grid = _evaluate(f, grid)
    flat = e.ravel()
    inf = np.empty_like(flat)
    step = max(1, _CHUNK // grid.size)
    for start in range(0, flat.size, step):
        chunk = flat[start : start + step]
        inf[start : start + step] = _min_f_plus_line(f, grid, f_grid, chunk, refine_steps)
    out = np.clip(1.0 - inf, 0.0, 1.0)
    return _scalar_or_array(out, e)


def sup_distance(f: TradeOff, g: TradeOff, alpha: float | np.ndarray) -> float:
    """Largest |f(a) - g(a)| over the given alpha points (a grid maximum, not the true sup).

    The maximum over a finite grid is a lower bound on sup_a |f(a) - g(a)|; refine the grid
    around the argmax (or use a tangency argument) when the exact supremum matters.

    Args:
        f: First trade-off function (vectorized callable).
        g: Second trade-off function (vectorized callable).
        alpha: Evaluation point(s) in [0, 1].

    Returns:
        max_a |f(a) - g(a)| over ``alpha``.

    Raises:
        ValueError: if ``f`` or ``g`` is not callable or any ``alpha`` lies outside [0, 1].
    """
    _check_callable("f", f)
    _check_callable("g", g)
    a = _check_alpha(alpha).ravel()
    diff = np.asarray(f(a), dtype=float) - np.asarray(g(a), dtype=float)
    return float(np.max(np.abs(diff)))
