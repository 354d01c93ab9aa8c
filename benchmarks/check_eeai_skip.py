"""Does skipping the EEAI and Chernoff after a narrow lattice interval move any certified number?

Run:  python benchmarks/check_eeai_skip.py

``certified`` without a time budget runs the lattice before the EEAI and Chernoff and, for at
least :data:`certify.combine.EEAI_SKIP_TERMS` distinct terms, skips both (the methods marked
``costly_per_term``) once the lattice interval is within
:data:`certify.combine.EEAI_AFTER_LATTICE` (issue 16). This script answers 103 eps and delta
queries (DP-SGD at three rates, Laplace, mixtures of randomized response, approximate DP,
Gaussian, Laplace and subsampled Gaussians, and four compositions of 20-30 distinct terms)
in one process: with the skip, and with both always run (the threshold set below every width).
It prints every query whose interval differs (a skip may only widen one) and those whose end is
named after another method (a tie); then the same for Chernoff not run at all, whatever the
number of terms (to show why the rule is limited to many terms).
No timings: the later passes reuse the lattice's caches (the timings are in
``bench_certified_grid.py --public`` and ``--hetero``).
"""

from __future__ import annotations

import warnings

from mpmath import nstr

import certify.combine as combine
from numeric.mechanisms import (
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)


def queries() -> list[tuple[str, str, list, float]]:
    """(kind, name, composition, delta or eps) of the 103 queries."""
    sg, rr = PoissonSubsampledGaussian, RandomizedResponse
    out = []
    for q in (0.001, 0.01, 0.1):
        for s in (0.5, 1.0, 2.0):
            for m in (100, 10000):
                for d in (1e-5, 1e-10):
                    out.append(("eps", f"SG({s},{q})x{m}", [(sg(s, q), m)], d))
    for b in (0.5, 1.0, 3.0):
        for m in (2, 10, 1000):
            for d in (1e-5, 1e-10):
                out.append(("eps", f"Lap({b})x{m}", [(Laplace(b), m)], d))
            out.append(("delta", f"Lap({b})x{m}", [(Laplace(b), m)], 1.0 + m ** 0.5 / b))
    mixes = {"RR(1)x100+RR(0.7)x50": [(rr(1.0), 100), (rr(0.7), 50)],
             "5 SG levels x200": [(sg(0.8 + 0.3 * i, 0.01), 200) for i in range(5)],
             "Gauss(3)x20+Lap(2)x30": [(Gaussian(3.0), 20), (Laplace(2.0), 30)],
             "Lap(5)x40+SG(1,0.02)x500": [(Laplace(5.0), 40), (sg(1.0, 0.02), 500)],
             "RR(0.5)x300+ADP(0.3,1e-9)x100": [(rr(0.5), 300), (ApproxDP(0.3, 1e-9), 100)],
             "Lap(1)x3+Lap(2)x2": [(Laplace(1.0), 3), (Laplace(2.0), 2)]}
    many = {"20 SG levels x100": [(sg(0.8 + 1.2 * i / 19, 0.01), 100) for i in range(20)],
            "20 SG levels x10^4": [(sg(0.8 + 1.2 * i / 19, 0.01), 10**4) for i in range(20)],
            "25 Laplace scales x10": [(Laplace(1.0 + i / 6), 10) for i in range(25)],
            "30 RR levels x1000": [(rr(0.05 + 0.01 * i), 1000) for i in range(30)]}
    for name, comp in {**mixes, **many}.items():
        for d in (1e-3, 1e-6, 1e-10):
            out.append(("eps", name, comp, d))
        out.append(("delta", name, comp, 2.0))
    return out


def _answer(kind: str, comp: list, x: float) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn = combine.certified_epsilon if kind == "eps" else combine.certified_delta
        b = fn(comp, x)
    return (b.lower, b.upper), (b.lower_method, b.upper_method)


def _pass(qs: list, **settings) -> list:
    saved = {k: getattr(combine, k) for k in settings}
    for k, v in settings.items():
        setattr(combine, k, v)
    try:
        return [_answer(kind, comp, x) for kind, _, comp, x in qs]
    finally:
        for k, v in saved.items():
            setattr(combine, k, v)


def _show(ends: tuple) -> str:
    return "[" + ", ".join(nstr(e.to_mpf(), 12) if e.is_finite else str(e) for e in ends) + "]"


def _report(title: str, qs: list, a: list, b: list) -> None:
    print(title)
    moved = ties = 0
    for (kind, name, _, x), (ends_a, by_a), (ends_b, by_b) in zip(qs, a, b, strict=True):
        if ends_a != ends_b:
            moved += 1
            print(f"  MOVED {kind} {name} at {x:g}: {_show(ends_a)} {by_a} -> {_show(ends_b)} "
                  f"{by_b}")
        elif by_a != by_b:
            ties += 1
            print(f"  tie, renamed: {kind} {name} at {x:g}: {by_a} -> {by_b}")
    print(f"  {len(qs)} queries: {moved} intervals moved, {ties} ends renamed")


def main() -> None:
    qs = queries()
    base = _pass(qs, EEAI_AFTER_LATTICE=-1.0)  # the EEAI and Chernoff always run
    skip = _pass(qs)
    _report("EEAI and Chernoff always run -> skipped after a narrow lattice interval (the "
            "default)", qs, base, skip)
    no_chernoff = _pass(qs, CERTIFIED_METHODS=[
        m for m in combine.CERTIFIED_METHODS if m.name != "chernoff"])
    _report("the default -> Chernoff not run either (not adopted)", qs, skip, no_chernoff)


if __name__ == "__main__":
    main()
