"""Certified lattice eps intervals for DP-SGD vs m and h, side by side with dp_accounting's PLD.

Run:  python benchmarks/bench_lattice.py [--quick] [--others-only]

Table 1. For Poisson rate 0.01, sigma 1 and delta in {1e-5, 1e-10}: the certified interval
[lattice-test lower, lattice upper] (certify.lattice), its relative width, its wall time (a cold
lattice per (m, h); the second delta reuses it), and dp_accounting's PLD estimate (pessimistic
discretization, value_discretization_interval 1e-4; an estimate, not a certified bound) with
whether it falls inside.

Table 2. Other mechanisms at the default grid: Laplace (mu = 0.1), randomized response
(eps0 = 0.1), an (eps, delta)-DP step and a heterogeneous mixture, each with m as listed, against
the exact value where one exists (binomial composition, numeric.exact) and dp_accounting's PLD.
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


def _pld_of(terms) -> object | None:
    """dp_accounting PLD (pessimistic, grid 1e-4) of a list of (kind, params, count)."""
    try:
        from dp_accounting.pld import privacy_loss_distribution as pl
    except ImportError:
        return None
    out = None
    for kind, par, count in terms:
        if kind == "laplace":
            one = pl.from_laplace_mechanism(par, value_discretization_interval=1e-4)
        elif kind == "rr":
            import math
            one = pl.from_randomized_response(2.0 / (1.0 + math.exp(par)), 2,
                                              value_discretization_interval=1e-4)
        elif kind == "sg":
            one = pl.from_gaussian_mechanism(par[0], sampling_prob=par[1],
                                             value_discretization_interval=1e-4)
        else:
            return None
        part = one.self_compose(count)
        out = part if out is None else out.compose(part)
    return out


def others() -> None:
    from certify.lattice import lattice_epsilon_interval
    from numeric import (
        ApproxDP,
        Laplace,
        PoissonSubsampledGaussian,
        RandomizedResponse,
        compose,
    )
    from numeric.exact import exact_epsilon

    cases = [
        ("Laplace mu=0.1", [(Laplace(10.0), 1000)], [("laplace", 10.0, 1000)], False),
        ("RR eps0=0.1", [(RandomizedResponse(0.1), 1000)], [("rr", 0.1, 1000)], True),
        ("ApproxDP(0.1,1e-9)", [(ApproxDP(0.1, 1e-9), 1000)], [], True),
        ("Lap(20)x100+SG(1,.02)x300+RR(.05)x50",
         [(Laplace(20.0), 100), (PoissonSubsampledGaussian(1.0, 0.02), 300),
          (RandomizedResponse(0.05), 50)],
         [("laplace", 20.0, 100), ("sg", (1.0, 0.02), 300), ("rr", 0.05, 50)], False),
    ]
    print("\nOther mechanisms, m = 1000 unless listed, default grid (certify.lattice)")
    print(f"{'case':>38} {'delta':>7} {'lower':>11} {'upper':>11} {'rel.width':>10} "
          f"{'time s':>7} {'exact':>14} {'PLD':>11} {'PLD is':>7}")
    for name, terms, pld_terms, has_exact in cases:
        comp = compose(terms)
        pld = _pld_of(pld_terms) if pld_terms else None
        for delta in (1e-5, 1e-10):
            t0 = time.perf_counter()
            b = lattice_epsilon_interval(comp, delta)
            secs = time.perf_counter() - t0
            lo, hi = float(b.lower_mpf), float(b.upper_mpf)
            ex = exact_epsilon(comp, delta).epsilon if has_exact else None
            pv = pld.get_epsilon_for_delta(delta) if pld is not None else None
            ex_s = "n/a" if ex is None else f"{ex:11.6f}" + (" in" if lo <= ex <= hi else " OUT")
            pos = "n/a" if pv is None else (
                "inside" if lo <= pv <= hi else ("above" if pv > hi else "BELOW"))
            pv_s = "n/a" if pv is None else f"{pv:11.6f}"
            print(f"{name:>38} {delta:7.0e} {lo:11.6f} {hi:11.6f} {(hi - lo) / hi:10.2e} "
                  f"{secs:7.2f} {ex_s:>14} {pv_s:>11} {pos:>7}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="m = 1e3 and 1e4 only")
    ap.add_argument("--others-only", action="store_true", help="table 2 only")
    args = ap.parse_args(argv)
    if args.others_only:
        others()
        return 0
    from certify.lattice import lattice_epsilon_interval
    from numeric import PoissonSubsampledGaussian, compose

    ms = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    hs = (2.0**-10, None)  # None = the default grid (h ~ 2^-12)
    print("Certified lattice eps intervals, DP-SGD rate 0.01 sigma 1 (certify.lattice)")
    print(f"{'m':>7} {'h':>10} {'delta':>7} {'lower':>11} {'upper':>11} {'rel.width':>10} "
          f"{'time s':>7} {'PLD':>10} {'PLD is':>10}")
    for m in ms:
        comp = compose([(PoissonSubsampledGaussian(1.0, 0.01), m)])
        for h in hs:
            for delta in (1e-5, 1e-10):
                t0 = time.perf_counter()
                b = lattice_epsilon_interval(comp, delta, h=h)
                secs = time.perf_counter() - t0
                lo, hi = float(b.lower_mpf), float(b.upper_mpf)
                pld = _pld(m, delta)
                inside = "n/a" if pld is None else (
                    "inside" if lo <= pld <= hi else ("above" if pld > hi else "BELOW"))
                hlabel = b.upper_method.split("h=")[-1].rstrip("]")
                pld_s = "n/a" if pld is None else f"{pld:10.5f}"
                print(f"{m:>7} {float(hlabel):10.3g} {delta:7.0e} {lo:11.6f} {hi:11.6f} "
                      f"{(hi - lo) / hi:10.2e} {secs:7.2f} {pld_s:>10} {inside:>10}")
    print("Intervals are proven (Arb + exact integer polynomial composition, directed rounding); "
          "PLD is an estimate.")
    others()
    return 0


if __name__ == "__main__":
    sys.exit(main())
