r"""Noise calibration for DP-SGD: the smallest noise, the most steps, the largest rate.

:func:`calibrate_noise` returns the smallest noise multiplier sigma (to a relative tolerance)
such that ``steps`` Poisson-subsampled Gaussian steps at ``rate`` have eps(delta) <= target;
:func:`calibrate_steps` the largest number of steps and :func:`calibrate_rate` the largest rate.
The default method is ``certified`` (the settings of ``edgeworth epsilon --method certified``):
the condition is checked on the certified **upper** end of eps, so the answer is a guarantee.
Any other method (``auto``, ``saddlepoint``, ...) gives a labelled estimate (``estimate=True``).

Search (eps is decreasing in sigma and increasing in steps and rate): first the fast
saddlepoint estimate (or GDP where it does not apply) is solved to a tight tolerance; then the
requested method is evaluated at a few points around that guess -- a prediction from the
estimate's log-log slope, then a pair straddling it -- narrowing a bracket [fails, passes]
until its ends are within the relative tolerance (integers: adjacent). The returned parameter
is the passing end, with the result computed there (``result``; ``satisfied`` re-states that its
upper eps is <= target).

Certified calls take seconds each (a lattice for subsampled Gaussians), so a calibration takes a
handful of them; with ``time_budget`` each call is cheaper but coarser and timing dependent.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ._validation import check_count, check_delta, check_positive, check_rate
from .errors import NotApplicable
from .mechanisms import PoissonSubsampledGaussian
from .progress import progress
from .results import float_up

__all__ = ["Calibration", "calibrate_noise", "calibrate_rate", "calibrate_steps",
           "register_command", "upper_epsilon"]

SIGMA_MIN = 0.05
"""Smallest noise multiplier the subsampled Gaussian accepts (its quadrature cumulants)."""
SIGMA_MAX = 1e4
MAX_EVALS = 12
"""Evaluations of the requested method before the search stops with the best bracket."""


@dataclass(frozen=True)
class Calibration:
    """The calibrated parameter and the accounting at it.

    Attributes:
        parameter: ``"sigma"``, ``"steps"`` or ``"rate"``.
        value: The calibrated value (also as ``sigma`` / ``steps`` / ``rate``).
        epsilon: The reported eps at it (the certified upper end when certified).
        lower: Exact lower end of the certified enclosure at it (Decimal), else None.
        upper: Exact upper end (Decimal), else None.
        target_eps: The target.
        delta: The delta.
        method: The method whose eps was required to be <= target.
        estimate: True unless the method is certified (or exact).
        satisfied: eps at ``value`` <= target (re-stated from ``result``).
        iterations: Evaluations of ``method`` made.
        bracket: ``(failing, passing)`` values that ended the search (None: a domain end).
        inputs: The problem (target_eps, delta, rate/steps/sigma, tol).
        warnings: Notes (a domain end reached, tolerance not reached, the result's warnings).
        result: The result of ``method`` at ``value`` (a Bound when certified).
    """

    parameter: str
    value: float
    epsilon: float
    lower: Decimal | None
    upper: Decimal | None
    target_eps: float
    delta: float
    method: str
    estimate: bool
    satisfied: bool
    iterations: int
    bracket: tuple[float | None, float | None]
    inputs: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    result: Any = field(default=None, repr=False, compare=False)

    @property
    def sigma(self) -> float:
        """The calibrated noise multiplier (``parameter == "sigma"``)."""
        return self._get("sigma")

    @property
    def steps(self) -> int:
        """The calibrated number of steps (``parameter == "steps"``)."""
        return int(self._get("steps"))

    @property
    def rate(self) -> float:
        """The calibrated sampling rate (``parameter == "rate"``)."""
        return self._get("rate")

    def _get(self, name: str) -> float:
        if self.parameter != name:
            return float(self.inputs[name])
        return self.value

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (exact ends as decimal strings)."""
        return {
            self.parameter: int(self.value) if self.parameter == "steps" else self.value,
            "epsilon": self.epsilon if math.isfinite(self.epsilon) else None,
            "lower": None if self.lower is None or not self.lower.is_finite() else str(self.lower),
            "upper": None if self.upper is None or not self.upper.is_finite() else str(self.upper),
            "target_eps": self.target_eps, "delta": self.delta, "method": self.method,
            "estimate": self.estimate, "certified": self.lower is not None and not self.estimate,
            "satisfied": self.satisfied, "iterations": self.iterations,
            "bracket": list(self.bracket), "inputs": dict(self.inputs),
            "warnings": list(self.warnings),
        }


def upper_epsilon(result: Any) -> tuple[float, Decimal | None, Decimal | None]:
    """``(eps, lower, upper)`` of any method's result: eps is the value reported (the certified
    upper end rounded up to a float for certified results), lower/upper the exact ends (None for
    estimates)."""
    d = result.to_dict()
    lo = hi = None
    if "lower" in d or "upper" in d:
        lo = Decimal(d["lower"]) if d.get("lower") is not None else Decimal("-Infinity")
        hi = Decimal(d["upper"]) if d.get("upper") is not None else Decimal("Infinity")
    if d.get("epsilon") is not None:
        return float(d["epsilon"]), lo, hi
    if d.get("infinite") or d.get("upper_infinite") or hi is None:
        return math.inf, lo, hi
    return float_up(hi), lo, hi


def _epsilon(method: str, sigma: float, rate: float, steps: int, delta: float,
             options: dict) -> Any:
    from .methods import epsilon

    return epsilon([(PoissonSubsampledGaussian(sigma=sigma, rate=rate), steps)], delta, method,
                   **options)


def _estimate(sigma: float, rate: float, steps: int, delta: float) -> float:
    """The fast guide: the saddlepoint estimate (GDP where it does not apply)."""
    for method in ("saddlepoint", "gdp"):
        try:
            return float(_epsilon(method, sigma, rate, steps, delta, {}).epsilon)
        except NotApplicable:
            continue
    return math.inf  # pragma: no cover - gdp applies to every subsampled Gaussian


@dataclass
class _Search:
    """Bracketing search for the boundary of ``{x : eps(x) <= target}`` in ``[lo, hi]``.

    ``increasing``: eps grows with x (steps, rate), so passing values lie below the boundary.
    ``integer``: x is a whole number.
    """

    eps_at: Callable[[float], tuple[float, Any]]
    target: float
    increasing: bool
    lo: float
    hi: float
    tol: float
    integer: bool = False
    evals: int = 0
    passing: float | None = None
    failing: float | None = None
    seen: dict = field(default_factory=dict)

    def snap(self, x: float) -> float:
        x = min(max(x, self.lo), self.hi)
        if self.integer:
            x = float(max(self.lo, min(self.hi, round(x))))
        return x

    def evaluate(self, x: float) -> bool:
        x = self.snap(x)
        if x not in self.seen:
            self.evals += 1
            self.seen[x] = self.eps_at(x)
        ok = self.seen[x][0] <= self.target
        if ok:
            better = self.passing is None or (x > self.passing if self.increasing
                                              else x < self.passing)
            self.passing = x if better else self.passing
        else:
            better = self.failing is None or (x < self.failing if self.increasing
                                              else x > self.failing)
            self.failing = x if better else self.failing
        return ok

    def done(self) -> bool:
        if self.passing is None or self.failing is None:
            return False
        a, b = sorted((self.passing, self.failing))
        return (b - a <= 1) if self.integer else (b <= a * (1 + self.tol))

    def run(self, guess: float, max_evals: int) -> None:
        """Bracket from ``guess`` (steps growing 4x from tol/2 away from it), then bisect (in
        log space; integers: arithmetic) until :meth:`done` or ``max_evals``."""
        step = self.tol / 2
        x = self.snap(guess)
        while (self.passing is None or self.failing is None) and self.evals < max_evals:
            ok = self.evaluate(x)
            grow = ok == self.increasing  # a pass moves down when eps decreases in x
            nxt = self.snap(x * (1 + step) if grow else x / (1 + step))
            if self.integer and nxt == x:
                nxt = self.snap(x + 1 if grow else x - 1)
            if nxt == x:
                return  # a domain end: nothing beyond it to test
            x, step = nxt, step * 4
        while not self.done() and self.evals < max_evals:
            a, b = sorted((self.passing, self.failing))
            self.evaluate(math.floor((a + b) / 2) if self.integer else math.sqrt(a * b))


def _calibrate(parameter: str, eps_at, estimate_at, *, target, increasing, lo, hi, tol, integer,
               guess, method, delta, inputs) -> Calibration:
    guide = _Search(lambda x: (estimate_at(x), None), target, increasing, lo, hi,
                    min(tol, 1e-4) / 4, integer)
    guide.run(guess, 80)
    start = guide.passing if guide.passing is not None else guide.failing
    with progress(MAX_EVALS, f"calibrate {parameter} ({method})") as bar:
        def counted(x: float) -> tuple[float, Any]:
            out = eps_at(x)
            bar.report()
            return out

        search = _Search(counted, target, increasing, lo, hi, tol, integer)
        search.run(start if start is not None else guess, MAX_EVALS)
    notes = []
    if search.passing is None:
        end = lo if increasing else hi
        raise NotApplicable(
            f"no {parameter} in [{lo:g}, {hi:g}] meets eps <= {target:g} at delta {delta:g} "
            f"with method {method!r} (at {parameter} = {end:g} it is not met)")
    if search.failing is None:
        notes.append(f"every tested {parameter} meets the target up to the domain end "
                     f"{search.passing:g}")
    elif not search.done():
        notes.append(f"tolerance not reached within {MAX_EVALS} evaluations; bracket "
                     f"{sorted((search.passing, search.failing))}")
    eps, res = search.seen[search.passing]
    _, lower, upper = upper_epsilon(res)
    # only the certified method makes the calibration a guarantee (auto mixes methods per point)
    est = method != "certified" or bool(res.to_dict().get("estimate", True))
    kept = tuple(w for w in getattr(res, "warnings", ()) if not w.startswith("not applicable"))
    return Calibration(parameter, search.passing, eps, lower, upper, target, delta, method, est,
                       eps <= target, search.evals, (search.failing, search.passing),
                       inputs, tuple(notes) + kept, res)


def _common(target_eps, delta, method, time_budget, tol):
    target = check_positive("target_eps", target_eps)
    delta = check_delta("delta", delta)
    tol = check_positive("tol", tol)
    if tol > 0.1:
        raise ValueError(f"tol must lie in (0, 0.1], got {tol!r}")
    from .methods import METHODS, load_plugins

    if method not in METHODS:
        load_plugins()
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    options = {}
    if time_budget is not None:
        if "time_budget" not in METHODS[method].options:
            raise ValueError(f"method {method!r} takes no time_budget")
        options["time_budget"] = check_positive("time_budget", time_budget)
    return target, delta, tol, options


def _evaluator(method, delta, options, build):
    def eps_at(x):
        res = _epsilon(method, *build(x), delta, options)
        return upper_epsilon(res)[0], res

    return eps_at


def calibrate_noise(target_eps: float, delta: float, rate: float, steps: int, *,
                    method: str = "certified", time_budget: float | None = None,
                    tol: float = 1e-3) -> Calibration:
    """The smallest noise multiplier sigma with eps(delta) <= ``target_eps`` (module docstring).

    Args:
        target_eps: Target eps > 0.
        delta: delta in (0, 1).
        rate: Poisson sampling rate in (0, 1].
        steps: Number of steps, a whole number >= 1.
        method: ``certified`` (default; a guarantee) or another registered method (estimate).
        time_budget: Seconds per evaluation, for methods that take one (None: no limit).
        tol: Relative tolerance on sigma, in (0, 0.1] (sigma * (1 - tol) may also pass).

    Returns:
        A :class:`Calibration` (``.sigma``).

    Raises:
        ValueError: on bad input, naming the parameter.
        NotApplicable: if no sigma in [0.05, 1e4] meets the target.
    """
    target, delta, tol, options = _common(target_eps, delta, method, time_budget, tol)
    rate = check_rate("rate", rate)
    steps = check_count("steps", steps)
    inputs = {"target_eps": target, "delta": delta, "rate": rate, "steps": steps, "tol": tol}
    return _calibrate(
        "sigma", _evaluator(method, delta, options, lambda s: (s, rate, steps)),
        lambda s: _estimate(s, rate, steps, delta), target=target, increasing=False,
        lo=SIGMA_MIN, hi=SIGMA_MAX, tol=tol, integer=False, guess=1.0, method=method,
        delta=delta, inputs=inputs)


def calibrate_steps(target_eps: float, delta: float, rate: float, sigma: float, *,
                    method: str = "certified", time_budget: float | None = None,
                    tol: float = 1e-3, max_steps: int = 10**8) -> Calibration:
    """The largest number of steps with eps(delta) <= ``target_eps``.

    Args:
        target_eps: Target eps > 0.
        delta: delta in (0, 1).
        rate: Poisson sampling rate in (0, 1].
        sigma: Noise multiplier > 0.
        method: ``certified`` (default) or another registered method (estimate).
        time_budget: Seconds per evaluation (None: no limit).
        tol: Relative tolerance on steps (adjacent integers end the search first).
        max_steps: Upper end of the search.

    Returns:
        A :class:`Calibration` (``.steps``).

    Raises:
        ValueError: on bad input; NotApplicable if even one step exceeds the target.
    """
    target, delta, tol, options = _common(target_eps, delta, method, time_budget, tol)
    rate = check_rate("rate", rate)
    PoissonSubsampledGaussian(sigma=sigma, rate=rate)  # validates sigma
    max_steps = check_count("max_steps", max_steps)
    inputs = {"target_eps": target, "delta": delta, "rate": rate, "sigma": float(sigma),
              "tol": tol}
    return _calibrate(
        "steps", _evaluator(method, delta, options, lambda m: (sigma, rate, int(m))),
        lambda m: _estimate(sigma, rate, int(m), delta), target=target, increasing=True,
        lo=1.0, hi=float(max_steps), tol=tol, integer=True, guess=1000.0, method=method,
        delta=delta, inputs=inputs)


def calibrate_rate(target_eps: float, delta: float, sigma: float, steps: int, *,
                   method: str = "certified", time_budget: float | None = None,
                   tol: float = 1e-3) -> Calibration:
    """The largest Poisson sampling rate with eps(delta) <= ``target_eps``.

    Args:
        target_eps: Target eps > 0.
        delta: delta in (0, 1).
        sigma: Noise multiplier > 0.
        steps: Number of steps >= 1.
        method: ``certified`` (default) or another registered method (estimate).
        time_budget: Seconds per evaluation (None: no limit).
        tol: Relative tolerance on the rate, in (0, 0.1].

    Returns:
        A :class:`Calibration` (``.rate``; 1.0 if even rate 1 meets the target).

    Raises:
        ValueError: on bad input; NotApplicable if no rate >= 1e-9 meets the target.
    """
    target, delta, tol, options = _common(target_eps, delta, method, time_budget, tol)
    PoissonSubsampledGaussian(sigma=sigma, rate=1.0)  # validates sigma
    steps = check_count("steps", steps)
    inputs = {"target_eps": target, "delta": delta, "sigma": float(sigma), "steps": steps,
              "tol": tol}
    return _calibrate(
        "rate", _evaluator(method, delta, options, lambda q: (sigma, q, steps)),
        lambda q: _estimate(sigma, q, steps, delta), target=target, increasing=True,
        lo=1e-9, hi=1.0, tol=tol, integer=False, guess=0.01, method=method, delta=delta,
        inputs=inputs)


def register_command(subparsers) -> None:
    """Add ``edgeworth calibrate`` (call from ``numeric.cli.build_parser``)."""
    p = subparsers.add_parser("calibrate", help="smallest DP-SGD noise multiplier for a target "
                              "eps (certified by default)")
    p.add_argument("--target-eps", dest="target_eps", required=True, help="target eps (> 0)")
    p.add_argument("--delta", required=True, help="delta in (0, 1)")
    p.add_argument("--rate", required=True, help="Poisson sampling rate in (0, 1]")
    p.add_argument("--steps", required=True, help="number of steps")
    p.add_argument("--method", default="certified",
                   help="certified (default: a guarantee) | auto | saddlepoint | ... (estimates)")
    p.add_argument("--tol", default="1e-3", help="relative tolerance on sigma (default 1e-3)")
    p.add_argument("--time-budget", dest="time_budget", default=None,
                   help="seconds per evaluation (certified, auto)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    p.set_defaults(handler=_run_calibrate)


def _number(flag: str, text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{flag} must be a number, got {text!r}") from None
    return x


def _run_calibrate(args: argparse.Namespace) -> int:
    try:
        steps: int | float = int(args.steps)
    except ValueError:
        steps = _number("--steps", args.steps)
    try:
        res = calibrate_noise(
            _number("--target-eps", args.target_eps), _number("--delta", args.delta),
            _number("--rate", args.rate), check_count("--steps", steps), method=args.method,
            time_budget=None if args.time_budget is None else _number("--time-budget",
                                                                      args.time_budget),
            tol=_number("--tol", args.tol))
    except NotApplicable:
        raise
    except ValueError as exc:  # name the flag, not the Python parameter
        msg = str(exc)
        for name in ("target_eps", "time_budget"):
            msg = msg.replace(name, "--" + name.replace("_", "-"))
        raise ValueError(msg) from None
    if args.json:
        print(json.dumps(res.to_dict(), allow_nan=False))
        return 0
    kind = "ESTIMATE (not a bound)" if res.estimate else "certified"
    print(f"sigma = {res.sigma:.6g}  (eps <= {res.target_eps:g} at delta {res.delta:g}; "
          f"rate {res.inputs['rate']:g}, {res.inputs['steps']} steps)")
    if res.lower is not None and res.upper is not None:
        print(f"  eps at sigma in [{res.lower}, {res.upper}]  ({kind}, method {res.method})")
    else:
        print(f"  eps at sigma = {res.epsilon:.10g}  ({kind}, method {res.method})")
    for w in res.warnings:
        print(f"  warning: {w}")
    return 0
