r"""Benchmark: random allocation (numeric.shuffle) -- timing and accuracy, and Poisson vs shuffle.

Run from the repository root::

    python benchmarks/bench_shuffle.py            # all tables
    python benchmarks/bench_shuffle.py --quick    # smaller grids

Tables:

1. one-epoch TV and delta(eps) (both orders): time (median of 3 cold runs: the rule cache is
   emptied), value, the stated accuracy, and the actual error against a reference computed with
   32/24-node Gauss-Legendre panels on a rule with twice the panel density (an independent,
   finer quadrature of the same integral);
2. E epochs eps(delta) (composed loss grid): time, value, stated accuracy, and the error against
   the Richardson extrapolation of the values at 200 and 400 cells per sd;
3. Poisson subsampling (rate B/N, E N/B steps; the toolkit's certified enclosure [lower, upper]
   and Google's dp_accounting PLD as a peer reference) vs random allocation (M = N/B, E epochs;
   exact-numerical).

Timings are wall-clock on a shared machine: repeat and read medians.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings

import numpy as np

import numeric.shuffle.law as law_mod
from numeric.shuffle.api import shuffle_epsilon
from numeric.shuffle.exact import delta_one_epoch, tv_one_epoch
from numeric.shuffle.plan import compare_poisson


def _cold(fn, repeat: int = 3):
    times = []
    for _ in range(repeat):
        law_mod._cached_law.cache_clear()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def _reference(fn):
    saved = law_mod._OUT_NODES, law_mod._OUT_CHECK, law_mod._panels
    orig = law_mod._panels

    def finer(sigma, m, spread, cutoff):
        e = orig(sigma, m, spread, cutoff)
        mid = 0.5 * (e[1:] + e[:-1])
        return np.sort(np.concatenate([e, mid]))

    law_mod._OUT_NODES, law_mod._OUT_CHECK, law_mod._panels = 32, 24, finer
    law_mod.MAX_OUTER_NODES *= 4
    law_mod._cached_law.cache_clear()
    try:
        return fn()
    finally:
        law_mod._OUT_NODES, law_mod._OUT_CHECK, law_mod._panels = saved
        law_mod.MAX_OUTER_NODES //= 4
        law_mod._cached_law.cache_clear()


def one_epoch(quick: bool) -> None:
    print("1. one epoch: exact TV and delta(eps) (Fourier integral)")
    print(f"  {'sigma':>5} {'M':>8} {'quantity':<14} {'value':>22} {'stated':>9} "
          f"{'actual':>9} {'time s':>7}")
    ms = (100, 10**4, 10**6) if quick else (10, 100, 10**3, 10**4, 10**5, 10**6)
    for sigma in (0.5, 1.0, 2.0):
        for m in ms:
            if sigma == 0.5 and m < 100:
                continue
            eps = 0.5 * math.sqrt(math.expm1(1 / sigma**2) / m)  # half a sd of S/M
            jobs = {"TV": lambda s=sigma, m=m: tv_one_epoch(s, m),
                    f"d({eps:.3g}) P||Q": lambda s=sigma, m=m, e=eps: delta_one_epoch(
                        s, m, e, "P||Q"),
                    f"d({eps:.3g}) Q||P": lambda s=sigma, m=m, e=eps: delta_one_epoch(
                        s, m, e, "Q||P")}
            for name, job in jobs.items():
                r, t = _cold(job)
                ref = _reference(job).value
                err = abs(r.value - ref) / ref
                print(f"  {sigma:>5} {m:>8} {name:<14} {r.value!r:>22} "
                      f"{r.accuracy / r.value:9.1e} {err:9.1e} {t:7.2f}")


def epochs(quick: bool) -> None:
    print("\n2. E epochs: eps(delta = 1e-5), composed loss grid (200 cells per sd)")
    print(f"  {'sigma':>5} {'M':>8} {'E':>4} {'eps':>20} {'stated':>9} {'actual':>9} "
          f"{'time s':>7}")
    cases = [(1.0, 10**3, 100), (1.0, 10**4, 100), (2.0, 10**3, 100)]
    if not quick:
        cases += [(1.0, 10**6, 100), (0.8, 10**4, 100), (1.0, 10**4, 10)]
    for sigma, m, e in cases:
        r, t = _cold(lambda s=sigma, m=m, e=e: shuffle_epsilon(s, m, e, 1e-5), repeat=1)
        fine = shuffle_epsilon(sigma, m, e, 1e-5, cells_per_sd=400).epsilon
        ref = fine + (fine - r.epsilon) / 3.0  # Richardson: the error falls like Delta^2
        print(f"  {sigma:>5} {m:>8} {e:>4} {r.epsilon!r:>20} "
              f"{r.details['accuracy'] / r.epsilon:9.1e} {abs(r.epsilon - ref) / ref:9.1e} "
              f"{t:7.2f}")


def poisson(quick: bool) -> None:
    print("\n3. Poisson subsampling vs random allocation: eps at delta = 1e-5")
    print(f"  {'sigma':>5} {'B':>5} {'N':>8} {'E':>4} {'Poisson eps (certified)':>24} "
          f"{'Poisson (PLD)':>13} {'shuffle eps':>12} {'shuffle/PLD':>11}")
    rows = [(s, 100, n, e) for s in (0.8, 1.0, 2.0) for n in (10**5,) for e in (1, 10, 100)]
    if quick:
        rows = rows[:3] + rows[6:]
    for s, b, n, e in rows:
        r = compare_poisson(s, b, n, e, 1e-5)
        pe = (f"[{r['poisson_lower']:.5f}, {r['poisson_upper']:.5f}]"
              if r["poisson_lower"] is not None else f"{r['poisson_epsilon']:.5f}")
        pld = _pld_poisson(s, b / n, e * n // b, 1e-5)
        print(f"  {s:>5} {b:>5} {n:>8} {e:>4} {pe:>24} {pld:13.5f} "
              f"{r['shuffle_epsilon']:12.5f} {r['shuffle_epsilon'] / pld:11.3f}")


def _pld_poisson(sigma: float, rate: float, steps: int, delta: float) -> float:
    """Poisson-subsampled Gaussian eps by Google's dp_accounting PLD (a peer reference;
    connect-the-dots, discretization 1e-4); nan when dp_accounting is not installed."""
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError:
        return math.nan
    dist = pld.from_gaussian_mechanism(sigma, sampling_prob=rate,
                                       value_discretization_interval=1e-4,
                                       use_connect_dots=True)
    return float(dist.self_compose(steps).get_epsilon_for_delta(delta))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", choices=("one", "epochs", "poisson"), default=None)
    a = p.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    if a.only in (None, "one"):
        one_epoch(a.quick)
    if a.only in (None, "epochs"):
        epochs(a.quick)
    if a.only in (None, "poisson"):
        poisson(a.quick)
