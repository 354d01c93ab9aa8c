r"""``edgeworth shuffle tv|epsilon|plan``: random allocation from the command line.

::

    edgeworth shuffle tv --sigma S --rounds M [--epochs E] [--method exact|certified] [--json]
    edgeworth shuffle epsilon --sigma S --rounds M --epochs E --delta D [--method ...] [--json]
    edgeworth shuffle plan --sigma S --delta D [--epochs E] [--batch-size B] [--json]

JSON shapes (numbers at full precision):

* tv: ``{"inputs": {...}, "method": ..., "tv": x, "tv_accuracy": e, "tv_lower": lo,
  "tv_upper": hi, "bounds": {"theorem_4_1": ..., "chi_square": ..., "gdp": ...},
  "bounds_notes": {...}}`` (``tv`` the exact value, or the upper end when certified;
  ``tv_lower``/``tv_upper`` only when certified; ``tv_accuracy`` the estimated absolute error of
  the exact value, or the width of the certified interval);
* epsilon: the object of ``edgeworth epsilon --json`` (``epsilon``; ``lower``/``upper`` when
  certified);
* plan: ``{"inputs": {...}, "theorem_4_1": {"rounds": M, "dataset_size": N, ...},
  "chi_square": {...}, "exact": {...}, "gdp": {...}}``.

``--method certified`` uses the providers registered through :mod:`.hooks` (the certify extra);
without them the command exits 1: "certified shuffle bounds need the certify extra".
Exit status as for ``edgeworth epsilon``: 2 bad input, 1 not computable.
"""

from __future__ import annotations

import json
import math

from .._validation import check_count, check_delta, check_positive
from ..results import json_safe

__all__ = ["add_commands"]

_METHODS = ("exact", "certified")


def _whole(flag: str):
    def conv(text: str) -> int:
        try:
            x = float(text)
        except ValueError:
            raise ValueError(f"{flag} must be a whole number, got {text!r}") from None
        return check_count(flag, x, maximum=10**15)
    return conv


def _num(flag: str):
    def conv(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{flag} must be a number, got {text!r}") from None
    return conv


def add_commands(subparsers) -> None:
    """Add ``edgeworth shuffle`` with ``tv``, ``epsilon`` and ``plan`` (from numeric.cli)."""
    p = subparsers.add_parser("shuffle", help="shuffled / random-allocation DP-SGD: exact and "
                              "certified TV and (eps, delta), the paper's bounds, a planner")
    sub = p.add_subparsers(dest="shuffle_command", required=True,
                           parser_class=type(p))
    tv = sub.add_parser("tv", help="total variation between H0 and H1 over E epochs")
    eps = sub.add_parser("epsilon", help="eps(delta) of E epochs (both pair orders)")
    plan = sub.add_parser("plan", help="rounds / dataset size each method needs for a TV")
    for q in (tv, eps, plan):
        q.add_argument("--sigma", required=True, help="noise multiplier (>= 0.05)")
        q.add_argument("--json", action="store_true", help="print one JSON object")
    for q in (tv, eps):
        q.add_argument("--rounds", required=True, help="rounds per epoch M")
        q.add_argument("--method", default="exact", help="exact (default) | certified")
    tv.add_argument("--epochs", default="1", help="epochs E (default 1)")
    eps.add_argument("--epochs", required=True, help="epochs E")
    eps.add_argument("--delta", required=True, help="target delta in (0, 1)")
    plan.add_argument("--delta", required=True, help="target TV (delta of f >= 1 - a - delta)")
    plan.add_argument("--epochs", default="1", help="epochs E (default 1)")
    plan.add_argument("--batch-size", dest="batch_size", default="1",
                      help="batch size B (dataset size N = M B; default 1)")
    tv.set_defaults(handler=_run_tv)
    eps.set_defaults(handler=_run_epsilon)
    plan.set_defaults(handler=_run_plan)


def _common(args) -> tuple[float, int, int]:
    sigma = check_positive("--sigma", _num("--sigma")(args.sigma))
    rounds = _whole("--rounds")(args.rounds)
    epochs = _whole("--epochs")(args.epochs)
    if getattr(args, "method", "exact") not in _METHODS:
        raise ValueError(f"--method must be one of {list(_METHODS)}, got {args.method!r}")
    return sigma, rounds, epochs


def _closed_forms(sigma: float, rounds: int, epochs: int) -> tuple[dict, dict]:
    from .bounds import chi_square_tv, gdp_tv, impossibility, theorem_4_1

    t41 = theorem_4_1(sigma, rounds, epochs)
    chi = chi_square_tv(sigma, rounds, epochs)
    gdp = gdp_tv(sigma, rounds, epochs)
    bounds = {"theorem_4_1": t41["tv"], "chi_square": chi["tv"], "gdp": gdp["tv"]}
    notes = {"theorem_4_1": {"in_regime": t41["in_regime"], "regime": t41["regime"],
                             "status": t41["status"]},
             "chi_square": {"chi_square": chi["chi_square"], "status": chi["status"]},
             "gdp": {"mu": gdp["mu"], "status": gdp["status"]},
             "impossibility": impossibility(sigma, rounds)}
    return bounds, notes


def _run_tv(args) -> int:
    sigma, rounds, epochs = _common(args)
    inputs = {"sigma": sigma, "rounds": rounds, "epochs": epochs, "method": args.method}
    out: dict = {"inputs": inputs, "method": args.method}
    if args.method == "certified":
        from .exact import check_pair
        from .hooks import bound_ends, certified_shuffle

        check_pair(sigma, rounds)
        b = certified_shuffle().tv(sigma, rounds, epochs)
        lo, hi = bound_ends(b)
        out.update({"tv": hi, "tv_accuracy": hi - lo, "tv_lower": lo, "tv_upper": hi})
        if hasattr(b, "method"):
            out["certified_method"] = str(b.method)
    else:
        from .api import shuffle_tv

        value, acc, how = shuffle_tv(sigma, rounds, epochs)
        out.update({"tv": value, "tv_accuracy": acc, "derivation": how})
    bounds, notes = _closed_forms(sigma, rounds, epochs)
    out["bounds"] = bounds
    out["bounds_notes"] = notes
    if args.json:
        print(json.dumps(json_safe(out), allow_nan=False))
        return 0
    if "tv_lower" in out:
        print(f"TV in [{out['tv_lower']!r}, {out['tv_upper']!r}]  (certified)")
    else:
        print(f"TV = {out['tv']!r}  (+- {out['tv_accuracy']:.2g}, exact-numerical)")
    print(f"  sigma {sigma:g}, rounds {rounds}, epochs {epochs}")
    reg = "" if notes["theorem_4_1"]["in_regime"] else " (OUTSIDE its regime)"
    print(f"  Thm 4.1 bound (reconstructed){reg}: {bounds['theorem_4_1']!r}")
    print(f"  chi-square bound: {bounds['chi_square']!r};  GDP limit: {bounds['gdp']!r}")
    if notes["impossibility"]["applies"]:
        print(f"  impossibility (reconstructed): TV >= {notes['impossibility']['tv_lower']!r}")
    return 0


def _run_epsilon(args) -> int:
    sigma, rounds, epochs = _common(args)
    delta = check_delta("--delta", _num("--delta")(args.delta))
    if args.method == "certified":
        out = _certified_epsilon(sigma, rounds, epochs, delta)
    else:
        from .api import shuffle_epsilon

        out = shuffle_epsilon(sigma, rounds, epochs, delta).to_dict()
    out["inputs"] = {**out.get("inputs", {}), "sigma": sigma, "rounds": rounds,
                     "epochs": epochs, "delta": delta, "method": args.method}
    if args.json:
        print(json.dumps(json_safe(out), allow_nan=False))
        return 0
    if "lower" in out and out.get("certified"):
        print(f"epsilon in [{out['lower']}, {out['upper']}]  at delta = {delta}  (certified)")
    else:
        acc = out.get("details", {}).get("accuracy", math.nan)
        print(f"epsilon = {out['epsilon']!r}  at delta = {delta}  (+- {acc:.2g}; "
              "exact-numerical estimate, not a bound)")
    print(f"  random allocation: sigma {sigma:g}, rounds {rounds}, epochs {epochs}; "
          f"direction {out.get('direction')}")
    return 0


def _certified_epsilon(sigma: float, rounds: int, epochs: int, delta: float) -> dict:
    r"""eps(delta) enclosure from the certified providers: their ``epsilon`` if registered, else
    bisection on eps with the proven delta brackets of both orders (upper end: the smallest
    tested eps whose max upper delta <= target; lower end: the largest tested eps whose max
    lower delta > target; delta(eps) is non-increasing, so the true eps lies between)."""
    from .exact import ORDERS, check_pair
    from .hooks import bound_ends, certified_shuffle

    check_pair(sigma, rounds)
    prov = certified_shuffle()
    if prov.epsilon is not None:
        b = prov.epsilon(sigma, rounds, epochs, delta)
        if hasattr(b, "to_dict"):
            return dict(b.to_dict())
        lo, hi = bound_ends(b)
        return {"epsilon": hi, "lower": repr(lo), "upper": repr(hi),
                "certified": True, "method": "certified", "estimate": False}

    def brackets(e: float) -> tuple[float, float]:
        ends = [bound_ends(prov.delta(sigma, rounds, epochs, e, o)) for o in ORDERS]
        return max(x[0] for x in ends), max(x[1] for x in ends)

    lo, hi = 0.0, 1.0
    if brackets(0.0)[1] <= delta:
        hi = 0.0
    else:
        for _ in range(30):
            if brackets(hi)[1] <= delta:
                break
            lo, hi = hi, 2.0 * hi
        else:
            hi = math.inf
        for _ in range(40):
            if not math.isfinite(hi) or hi - lo <= 1e-6 * max(hi, 1e-9):
                break
            mid = 0.5 * (lo + hi)
            dlo, dhi = brackets(mid)
            if dhi <= delta:
                hi = mid
            elif dlo > delta:
                lo = mid
            else:  # undecided at this eps: stop refining
                break
    return {"epsilon": hi if math.isfinite(hi) else None, "infinite": not math.isfinite(hi),
            "delta": delta, "method": "certified", "estimate": False, "certified": True,
            "lower": repr(lo), "upper": repr(hi) if math.isfinite(hi) else None,
            "details": {"how": "bisection on eps over certified delta brackets, both orders"}}


def _run_plan(args) -> int:
    from .plan import rounds_required

    sigma = check_positive("--sigma", _num("--sigma")(args.sigma))
    target = check_delta("--delta", _num("--delta")(args.delta))
    epochs = _whole("--epochs")(args.epochs)
    batch = _whole("--batch-size")(args.batch_size)
    res = rounds_required(sigma, target, epochs, batch)
    out = {"inputs": {"sigma": sigma, "delta": target, "epochs": epochs, "batch_size": batch},
           **res}
    if args.json:
        print(json.dumps(json_safe(out), allow_nan=False))
        return 0
    print(f"rounds M and dataset size N = M x {batch} for TV <= {target:g} over {epochs} "
          f"epoch(s) at sigma {sigma:g}:")
    for name in ("theorem_4_1", "chi_square", "exact", "gdp"):
        r = res[name]
        extra = r.get("status", r.get("error", ""))
        print(f"  {name:<12} M = {r.get('rounds')!s:>14}  N = {r.get('dataset_size')!s:>16}  "
              f"{extra}")
    return 0
