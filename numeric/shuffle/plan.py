r"""Planning with random allocation: rounds (and dataset size) for a target TV, sigma for a
target, and the Poisson-vs-shuffle comparison.

Methods: ``theorem_4_1`` (the Berry-Esseen bound, reconstructed; :mod:`.bounds`),
``chi_square`` (TV <= sqrt(c_E)/2, rigorous), ``exact`` (the Fourier value for one epoch, the
composed loss grid for E > 1: :mod:`.api`), ``gdp`` (the limit, an approximation). The rounds
for the closed forms are solved in closed form; for ``exact`` by bisection on log M (at most 40
steps) inside the bracket [M_gdp/4, M_chi] (the chi-square bound is rigorous, so M_chi
suffices). Dataset size N = M * B for batch size B (each example in exactly one round of B).
"""

from __future__ import annotations

import math

from scipy.special import ndtri

from .._validation import check_count, check_delta, check_positive
from ..errors import NotApplicable
from .api import shuffle_epsilon, shuffle_tv
from .bounds import chi_square_tv, theorem_4_1, theorem_4_1_delta
from .hooks import bound_ends

__all__ = ["compare_poisson", "rounds_required", "sigma_required"]

_MAX_M = 10**15


def _m_theorem(sigma: float, target: float, epochs: int) -> int:
    d1 = -math.expm1(math.log1p(-target) / epochs)  # 1 - (1 - target)^(1/E)
    return math.ceil((theorem_4_1_delta(sigma) / d1) ** 2)


def _m_chi(sigma: float, target: float, epochs: int) -> int:
    c = 4.0 * target * target  # sqrt(c)/2 = target (target <= 1/2)
    if target > 0.5:
        c = target / (1.0 - target)
    return math.ceil(math.expm1(1.0 / sigma**2) / math.expm1(math.log1p(c) / epochs))


def _m_gdp(sigma: float, target: float, epochs: int) -> float:
    mu = 2.0 * float(ndtri(0.5 * (1.0 + target)))  # 2 Phi(mu/2) - 1 = target
    return epochs * math.expm1(1.0 / sigma**2) / mu**2


def rounds_required(sigma: float, target: float, epochs: int = 1, batch_size: int = 1,
                    cells_per_sd: int = 50) -> dict:
    r"""Rounds M (and N = M B) each method needs for TV <= ``target`` over E epochs.

    Returns:
        ``{"theorem_4_1": {"rounds", "dataset_size", "in_regime", "status"}, "chi_square":
        {...}, "exact": {...}, "gdp": {...}}``; a method that cannot answer holds ``"error"``.
    """
    sigma = check_positive("sigma", sigma)
    target = check_delta("delta", target)
    epochs = check_count("epochs", epochs, maximum=10**6)
    batch_size = check_count("batch_size", batch_size)
    out: dict = {}
    mt = _m_theorem(sigma, target, epochs)
    out["theorem_4_1"] = {"rounds": mt, "dataset_size": mt * batch_size,
                          "in_regime": theorem_4_1(sigma, mt)["in_regime"],
                          "status": "reconstructed"}
    mc = _m_chi(sigma, target, epochs)
    out["chi_square"] = {"rounds": mc, "dataset_size": mc * batch_size, "status": "rigorous"}
    mg = max(math.ceil(_m_gdp(sigma, target, epochs)), 1)
    out["gdp"] = {"rounds": mg, "dataset_size": mg * batch_size, "status": "approximation"}
    try:
        me = _m_exact(sigma, target, epochs, mc, mg, cells_per_sd)
        out["exact"] = {"rounds": me, "dataset_size": me * batch_size,
                        "status": "exact-numerical (accuracy of the TV in docs/shuffle.md)"}
    except NotApplicable as exc:
        out["exact"] = {"rounds": None, "dataset_size": None, "error": str(exc)}
    return out


def _m_exact(sigma: float, target: float, epochs: int, m_chi: int, m_gdp: int,
             cells: int) -> int:
    def ok(m: int) -> bool:
        try:
            return shuffle_tv(sigma, m, epochs, cells)[0] <= target
        except NotApplicable:
            return False  # only small M with heavy tails fail: there TV is large

    hi = min(max(m_chi, 1), 10**9)
    if not ok(hi):
        raise NotApplicable(f"exact TV at the chi-square rounds {hi} is above the target")
    lo = max(1, min(m_gdp // 4, hi))
    for _ in range(40):
        if not ok(lo):
            break
        if lo == 1:
            return 1
        hi, lo = lo, max(1, lo // 4)
    for _ in range(40):  # invariant: ok(hi), not ok(lo) (or lo = 1)
        if hi - lo <= 1:
            break
        mid = int(math.sqrt(lo * hi)) if hi > 2 * lo else (lo + hi) // 2
        mid = min(max(mid, lo + 1), hi - 1)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def sigma_required(rounds: int, target: float, epochs: int = 1,
                   dataset_size: int | None = None, cells_per_sd: int = 50,
                   methods: tuple[str, ...] = ("theorem_4_1", "chi_square", "exact")) -> dict:
    r"""The smallest sigma (to 1e-4 relative) at which each method gives TV <= ``target`` for
    M = ``rounds`` and E = ``epochs`` (bisection on log sigma in [0.05, 1e3], 60 steps at most).

    Args:
        rounds: M; target: the TV; epochs: E; dataset_size: N (recorded; TV does not depend on
            the batch size); cells_per_sd: loss grid (E > 1); methods: which to solve.

    Returns:
        ``{"theorem_4_1": {"sigma": ...}, "chi_square": {...}, "exact": {...}}``.
    """
    rounds = check_count("rounds", rounds, maximum=10**9)
    target = check_delta("delta", target)
    epochs = check_count("epochs", epochs, maximum=10**6)
    if dataset_size is not None:
        check_count("dataset_size", dataset_size, maximum=_MAX_M)
    tests = {
        "theorem_4_1": lambda s: theorem_4_1(s, rounds, epochs)["tv"],
        "chi_square": lambda s: chi_square_tv(s, rounds, epochs)["tv"],
        "exact": lambda s: shuffle_tv(s, rounds, epochs, cells_per_sd)[0],
    }
    unknown = set(methods) - set(tests)
    if unknown:
        raise ValueError(f"methods must be among {sorted(tests)}, got {sorted(unknown)}")
    out: dict = {}
    for name in methods:
        tv = tests[name]
        lo, hi = 0.05, 1e3
        try:
            if tv(hi) > target:
                out[name] = {"sigma": None, "error": "no sigma <= 1000 reaches the target"}
                continue
            for _ in range(60):
                if hi / lo <= 1 + 1e-4:
                    break
                mid = math.sqrt(lo * hi)
                try:
                    good = tv(mid) <= target
                except NotApplicable:
                    good = False
                if good:
                    hi = mid
                else:
                    lo = mid
            out[name] = {"sigma": hi}
        except NotApplicable as exc:
            out[name] = {"sigma": None, "error": str(exc)}
    return out


def compare_poisson(sigma: float, batch_size: int, dataset_size: int, epochs: int,
                    delta: float, method: str = "certified") -> dict:
    r"""Poisson-subsampling eps vs random-allocation eps for the same training run.

    Poisson: rate q = B/N, T = E N / B steps of the Poisson-subsampled Gaussian, accounted by
    the toolkit's ``method`` (``certified`` by default: the upper end of a proven enclosure is
    reported, with ``poisson_lower``/``poisson_upper``; estimates such as ``saddlepoint`` can be
    several percent low for few expected samplings per example). Random allocation: M = N/B
    rounds per epoch (N must be a multiple of B), E epochs (:func:`.api.shuffle_epsilon`).

    Returns:
        A row: inputs, ``poisson_epsilon``, ``poisson_method``, ``shuffle_epsilon``,
        ``shuffle_accuracy``, ``ratio`` (shuffle / Poisson).
    """
    from ..composition import compose
    from ..mechanisms import PoissonSubsampledGaussian
    from ..methods import epsilon as epsilon_by_method

    sigma = check_positive("sigma", sigma)
    batch_size = check_count("batch_size", batch_size)
    dataset_size = check_count("dataset_size", dataset_size, maximum=_MAX_M)
    epochs = check_count("epochs", epochs, maximum=10**6)
    delta = check_delta("delta", delta)
    if dataset_size % batch_size or dataset_size < 2 * batch_size:
        raise ValueError(f"dataset_size must be a multiple (>= 2x) of batch_size, got "
                         f"dataset_size={dataset_size}, batch_size={batch_size}")
    rounds = dataset_size // batch_size
    steps = epochs * rounds
    pois = epsilon_by_method(compose([(PoissonSubsampledGaussian(sigma, batch_size
                                                                 / dataset_size), steps)]),
                             delta, method)
    shuf = shuffle_epsilon(sigma, rounds, epochs, delta)
    value = getattr(pois, "epsilon", None)
    lower = upper = None
    if getattr(pois, "lower", None) is not None:  # a certified enclosure
        lower, upper = bound_ends(pois)
    if value is None:  # a certified Bound: report its upper end
        value = upper if upper is not None else math.inf
    return {"sigma": sigma, "batch_size": batch_size, "dataset_size": dataset_size,
            "epochs": epochs, "delta": delta, "rounds": rounds, "steps": steps,
            "poisson_epsilon": float(value), "poisson_method": str(getattr(pois, "method",
                                                                          method)),
            "poisson_lower": None if lower is None else float(lower),
            "poisson_upper": None if upper is None else float(upper),
            "shuffle_epsilon": float(shuf.epsilon),
            "shuffle_accuracy": shuf.details["accuracy"],
            "ratio": float(shuf.epsilon) / value if value > 0 else math.inf}
