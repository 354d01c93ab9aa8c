"""Certified random allocation: TV bracket width and time vs M (one epoch), and E epochs.

    python benchmarks/bench_certify_shuffle.py [--rounds 10 100 1000 10000] [--epochs 100]
        [--epoch-rounds 1000] [--sigma 1.0] [--delta 1e-5]

Each row is a fresh computation (the caches are cleared); timings are wall-clock seconds on
this machine (noisy under load: repeat and take medians).
"""

from __future__ import annotations

import argparse
import time


def _clear() -> None:
    from certify.shuffle.multi_epoch import clear_caches

    clear_caches()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, nargs="*", default=[10, 100, 1000, 10000])
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--epoch-rounds", type=int, nargs="*", default=[1000])
    p.add_argument("--sigma", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-5)
    a = p.parse_args(argv)
    from certify.shuffle.multi_epoch import epsilon_bound
    from certify.shuffle.one_epoch import one_epoch_tv

    print(f"one epoch, sigma = {a.sigma}: certified TV bracket")
    print(f"{'M':>9} {'TV lower':>22} {'TV upper':>22} {'rel. width':>11} {'seconds':>8}")
    for m in a.rounds:
        _clear()
        t = time.perf_counter()
        b = one_epoch_tv(a.sigma, m)
        dt = time.perf_counter() - t
        w = float((b.upper_mpf - b.lower_mpf) / b.upper_mpf)
        print(f"{m:>9} {float(b.lower_mpf):>22.15g} {float(b.upper_mpf):>22.15g} {w:>11.2e} "
              f"{dt:>8.2f}", flush=True)
    if a.epochs > 1:
        print(f"\n{a.epochs} epochs, sigma = {a.sigma}: certified eps(delta = {a.delta})")
        print(f"{'M':>9} {'eps lower':>20} {'eps upper':>20} {'rel. width':>11} {'seconds':>8}")
        for m in a.epoch_rounds:
            _clear()
            t = time.perf_counter()
            b = epsilon_bound(a.sigma, m, a.epochs, a.delta)
            dt = time.perf_counter() - t
            w = float((b.upper_mpf - b.lower_mpf) / b.upper_mpf)
            print(f"{m:>9} {float(b.lower_mpf):>20.12g} {float(b.upper_mpf):>20.12g} "
                  f"{w:>11.2e} {dt:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
