"""How much would a perfect choice of the one-term ladder's final level save?

Run:  python benchmarks/ladder_oracle.py [--rates 0.01 0.1] [--out FILE.jsonl]

For every DP-SGD query of the grid at the given rates (sigma {0.5, 0.8, 1, 2} x m {10^2 .. 10^7}
x delta {1e-5, 1e-10}), this computes the lattice's width and CPU at the coarsest level and at
every level from the first probe (16, 32) to one past the level the ladder answers at (a fresh
process per query, levels in increasing order, the evaluation memos shared as in a real query), then
replays on those curves:
- ``ladder``: the jump rule of :func:`certify.lattice_target._next_level` (the factor measured
  from the coarsest level to the probe, at least ``FIRST_MIN_WIDTH_PER_LEVEL``, at most 2, slack
  0.5 for long jumps);
- ``oracle``: straight from the probe to the first level that meets the 1e-4 target;
- ``prior F``: the ladder with the factor taken as at least F for the jump from the probe
  (``no slack``: and that jump rounded up even when long).
It prints each query's needed level and the CPU each rule would spend (the sum of its levels'
CPU), then the geometric mean of the per-query ratios to ``ladder``. The replay only chooses
levels; every level's interval is the lattice's own. (issue 16, docs/lattice-speed.md, "The
final level of the ladder".)
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import certify.lattice_target as lt
from certify import lattice_jump
from certify.engine import to_arb
from numeric.composition import compose
from numeric.mechanisms import PoissonSubsampledGaussian

TARGET = lt.DEFAULT_REL_WIDTH
PROBE = 6  # LEVELS[6] = (16, 32), where every grid query's first jump lands


def _in_child(fn, *args):
    """``fn(*args)`` in a fresh forked process (its own caches and memos, as a grid query)."""
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        return pool.apply(fn, args)


def curve(rate: float, sigma: float, m: int, delta: float) -> dict:
    """Widths and CPU at level 0 and at every level from PROBE to one past the answer's (the
    ladder's run and the curve each in a fresh process)."""
    seen = _in_child(_ladder_levels, rate, sigma, m, delta)
    return _in_child(_curve_levels, rate, sigma, m, delta, seen)


def _ladder_levels(rate: float, sigma: float, m: int, delta: float) -> list[tuple[int, int]]:
    """(level, bits) of every level the ladder runs for this query."""
    comp = compose([(PoissonSubsampledGaussian(sigma, rate), m)])
    seen: list[tuple[int, int]] = []
    once = lt._epsilon_once

    def record(c, x, res, bits, **kw):
        seen.append((lt.LEVELS.index(res), bits))
        return once(c, x, res, bits, **kw)

    lt._epsilon_once = record
    try:
        lt.target_epsilon_interval(comp, delta)
    finally:
        lt._epsilon_once = once
    return seen


def _curve_levels(rate: float, sigma: float, m: int, delta: float,
                  seen: list[tuple[int, int]]) -> dict:
    comp = compose([(PoissonSubsampledGaussian(sigma, rate), m)])
    once = lt._epsilon_once
    last, bits = seen[-1]
    first_bits = seen[0][1]
    x = to_arb("delta", delta)
    out, carry = {}, {}
    for k in [0, *range(PROBE, min(last + 2, len(lt.LEVELS)))]:
        t0 = time.process_time()
        b, _ = once(comp, x, lt.LEVELS[k], first_bits if k == 0 else bits, carry=carry,
                    prec=lt.DEFAULT_PRECISION + first_bits)
        width = float((b.upper_mpf - b.lower_mpf) / lt._scale(b))
        out[k] = (width, time.process_time() - t0)
    return out


def _jump(hist: list[tuple[int, float]], floor: float, long_slack: float) -> int:
    """The ladder's jump (:func:`certify.lattice_jump.one_term_model`, as
    :func:`certify.lattice_target._next_level` uses it, budgets aside), the measured factor
    taken as at least ``floor`` and ``long_slack`` used for a long jump."""
    per_level, cap, slack, _ = lattice_jump.one_term_model(tuple(hist), lt._WIDTH_PER_LEVEL, 6,
                                                           lt._COST_PER_LEVEL)
    if slack:  # a measured factor (else the fixed one, no slack)
        per_level = min(max(per_level, floor), lattice_jump.MAX_WIDTH_PER_LEVEL)
        slack = long_slack
    x = math.log(max(hist[-1][1] / TARGET, 1.0)) / math.log(per_level)
    return min(cap, max(1, math.ceil(x - (slack if x >= lattice_jump.LONG_JUMP else 0.0))))


def replay(c: dict, floor: float, long_slack: float = lattice_jump.JUMP_SLACK) -> float | None:
    """CPU the ladder's rule (the first factor at least ``floor``, ``long_slack`` on the first
    long jump) spends on curve ``c`` (None: it would go past the computed levels)."""
    hist = [(0, c[0][0]), (PROBE, c[PROBE][0])]
    cost, i = c[0][1] + c[PROBE][1], PROBE
    while hist[-1][1] > TARGET:
        first = len(hist) == 2
        i += _jump(hist, floor if first else lattice_jump.FIRST_MIN_WIDTH_PER_LEVEL,
                   long_slack if first else lattice_jump.JUMP_SLACK)
        if i not in c:
            return None
        cost += c[i][1]
        hist.append((i, c[i][0]))
    return cost


def oracle(c: dict) -> float:
    base = c[0][1] + c[PROBE][1]
    if c[PROBE][0] <= TARGET:
        return base
    return base + next(c[k][1] for k in sorted(c) if k > PROBE and c[k][0] <= TARGET)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rates", type=float, nargs="+", default=[0.01, 0.1])
    p.add_argument("--out", help="write the curves (JSON lines)")
    p.add_argument("--priors", type=float, nargs="+", default=[1.8, 1.85, 1.9])
    args = p.parse_args()
    rules = {"ladder": (lattice_jump.FIRST_MIN_WIDTH_PER_LEVEL, lattice_jump.JUMP_SLACK),
             **{f"prior {f}": (f, lattice_jump.JUMP_SLACK) for f in args.priors},
             **{f"prior {f} no slack": (f, 0.0) for f in args.priors}}
    ratios: dict[str, list[float]] = {k: [] for k in [*rules, "oracle"]}
    sink = open(args.out, "w") if args.out else None
    for rate in args.rates:
        for sigma in (0.5, 0.8, 1.0, 2.0):
            for m in (10**2, 10**3, 10**4, 10**5, 10**6, 10**7):
                for delta in (1e-5, 1e-10):
                    c = curve(rate, sigma, m, delta)
                    if sink:
                        sink.write(json.dumps({"rate": rate, "sigma": sigma, "m": m,
                                               "delta": delta, "curve": c}) + "\n")
                    need = next((k for k in sorted(c) if k >= PROBE and c[k][0] <= TARGET), None)
                    costs = {k: replay(c, *f) for k, f in rules.items()}
                    costs["oracle"] = oracle(c)
                    base = costs["ladder"]
                    for k, v in costs.items():
                        if v is not None and base:
                            ratios[k].append(v / base)
                    print(f"rate {rate} sigma {sigma} m {m:.0e} delta {delta:.0e}: needs level "
                          f"{need}; " + ", ".join(f"{k} {v:.2f} s" if v is not None else
                                                  f"{k} beyond" for k, v in costs.items()),
                          flush=True)
    if sink:
        sink.close()
    for k, v in ratios.items():
        geo = math.exp(sum(math.log(r) for r in v) / len(v)) if v else math.nan
        worse = sum(1 for r in v if r > 1.15)
        print(f"{k}: geometric mean of CPU / ladder {geo:.3f} over {len(v)} queries, "
              f"{worse} more than 15% slower")


if __name__ == "__main__":
    main()
