"""Certified lattice eps intervals for DP-SGD vs m and h, side by side with dp_accounting's PLD.

Run:  python benchmarks/bench_lattice.py [--quick]

For Poisson rate 0.01, sigma 1 and delta in {1e-5, 1e-10}: the certified interval
[lattice-test lower, lattice upper] (certify.lattice), its relative width, its wall time (a cold
lattice per (m, h); the second delta reuses it), and dp_accounting's PLD estimate (pessimistic
discretization, value_discretization_interval 1e-4; an estimate, not a certified bound) with
whether it falls inside.
"""

from __future__ import annotations

import argparse
import sys
import time


def _pld(m: int, delta: float) -> float | None:
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        return None
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), m)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    return acc.compose(event).get_epsilon(delta)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="m = 1e3 and 1e4 only")
    args = ap.parse_args(argv)
    from certify.lattice import lattice_epsilon_interval
    from numeric import PoissonSubsampledGaussian, compose

    ms = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    hs = (2.0**-10, None)  # None = the default grid (h ~ 2^-12)
    print("Certified lattice eps intervals, DP-SGD rate 0.01 sigma 1 (certify.lattice)")
    print(f"{'m':>7} {'h':>10} {'delta':>7} {'lower':>11} {'upper':>11} {'rel.width':>10} "
          f"{'time s':>7} {'PLD':>10} {'PLD inside':>10}")
    for m in ms:
        comp = compose([(PoissonSubsampledGaussian(1.0, 0.01), m)])
        for h in hs:
            for delta in (1e-5, 1e-10):
                t0 = time.perf_counter()
                b = lattice_epsilon_interval(comp, delta, h=h)
                secs = time.perf_counter() - t0
                lo, hi = float(b.lower_mpf), float(b.upper_mpf)
                pld = _pld(m, delta)
                inside = "n/a" if pld is None else ("yes" if lo <= pld <= hi else "no")
                hlabel = b.upper_method.split("h=")[-1].rstrip("]")
                pld_s = "n/a" if pld is None else f"{pld:10.5f}"
                print(f"{m:>7} {float(hlabel):10.3g} {delta:7.0e} {lo:11.6f} {hi:11.6f} "
                      f"{(hi - lo) / hi:10.2e} {secs:7.2f} {pld_s:>10} {inside:>10}")
    print("Intervals are proven (Arb + exact integer polynomial composition, directed rounding); "
          "PLD is an estimate.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
