r"""Benchmark: certified exact randomized response / approx-DP at n = 10^5 .. 10^7.

Run from the repository root::

    python benchmarks/bench_certify_exact.py            # the table below, 5 repeats each
    python benchmarks/bench_certify_exact.py --repeat 3 --quick   # n <= 1e6 only

For each row: ``eps(delta)`` with ``certify.exact.exact_epsilon_bound`` and ``delta(eps)`` with
``certify.exact.exact_delta_bound`` at the eps found (default width target 1e-30), their relative
widths ``(hi - lo) / hi``, and wall-clock times (median of ``--repeat`` runs, in a warm process:
imports done, the first query discarded; each query builds its profile from scratch, no cache
is shared between runs). ``n <= 1e5`` uses the full binomial sum
(:class:`certify.exact_profiles.PureProfile`), larger n the windowed profile
(:mod:`certify.exact_binomial`). ``float_ms`` is the float exact method ``numeric.exact`` on the
same query and ``|cert - float|`` the relative gap between its eps and the certified upper end.
``certified_s`` is the whole ``certify.combine.certified_epsilon`` call (exact first; the other
methods are skipped once the exact enclosure is 1e-12 tight). Timings on a shared machine are
noisy: repeat and read medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from certify.combine import certified_epsilon
from certify.exact import exact_delta_bound, exact_epsilon_bound
from numeric import ApproxDP, RandomizedResponse, exact_epsilon


def _rows(quick: bool) -> list[tuple[str, list, float]]:
    ns = [10**5, 10**6] if quick else [10**5, 10**6, 10**7]
    rows = [(f"RR(0.1) x {n:.0e}", [(RandomizedResponse(0.1), n)], 1e-5) for n in ns]
    big = ns[-1]
    rows += [
        (f"RR(1e-3) x {big:.0e}", [(RandomizedResponse(1e-3), big)], 1e-5),
        (f"RR(1e4) x {big:.0e}", [(RandomizedResponse(1e4), big)], 1e-5),
        (f"ApproxDP(0.1,1e-12) + RR(0.1), {big:.0e} total",
         [(ApproxDP(0.1, 1e-12), big // 2), (RandomizedResponse(0.1), big - big // 2)], 1e-5),
    ]
    return rows


def _timed(fn, repeat: int):
    out = fn()  # warm-up, discarded from the timing
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def _rel(b) -> float:
    hi = b.upper_mpf
    return float((hi - b.lower_mpf) / hi) if hi else 0.0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per query (median)")
    ap.add_argument("--quick", action="store_true", help="n <= 1e6 only")
    args = ap.parse_args(argv)
    hdr = (f"{'composition':<40} {'delta':>6} {'eps (upper)':>22} {'eps_width':>9} {'eps_s':>7} "
           f"{'delta_width':>11} {'delta_s':>7} {'float_ms':>8} {'|cert-float|':>12} "
           f"{'certified_s':>11}")
    print(hdr)
    print("-" * len(hdr))
    for label, comp, delta in _rows(args.quick):
        b, t_eps = _timed(lambda comp=comp, delta=delta: exact_epsilon_bound(comp, delta),
                          args.repeat)
        eps = float(b.upper_mpf)
        bd, t_delta = _timed(lambda comp=comp, eps=eps: exact_delta_bound(comp, eps), args.repeat)
        f, t_float = _timed(lambda comp=comp, delta=delta: exact_epsilon(comp, delta),
                            args.repeat)
        gap = abs(f.epsilon - eps) / eps
        _, t_cert = _timed(lambda comp=comp, delta=delta: certified_epsilon(comp, delta), 1)
        print(f"{label:<40} {delta:>6.0e} {b.upper_mpf!s:>22} {_rel(b):>9.1e} {t_eps:>7.3f} "
              f"{_rel(bd):>11.1e} {t_delta:>7.3f} {1e3 * t_float:>8.1f} {gap:>12.1e} "
              f"{t_cert:>11.3f}")


if __name__ == "__main__":
    main()
