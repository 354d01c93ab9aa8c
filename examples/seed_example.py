"""Paper check: 10-fold composition of (1/sqrt(10), 0)-DP vs its GDP limit (Dong, Roth, Su, Fig. 5).

Run:  python examples/seed_example.py

The exact binomial answer (KOV), the GDP central-limit value (mu = 1) and the Edgeworth estimate
at several deltas. The exact eps at delta = 1e-3 is 2.8896727393598...; GDP gives 3.1386705485829...
"""

from __future__ import annotations

import math

from numeric import RandomizedResponse, compose, epsilon


def main(n: int = 10, deltas: tuple[float, ...] = (1e-1, 1e-2, 1e-3, 1e-5)) -> list[tuple]:
    comp = compose([(RandomizedResponse(1 / math.sqrt(n)), n)])
    rows = []
    print(f"{n} x randomized response, eps0 = 1/sqrt({n})")
    print(f"{'delta':>8} {'exact':>10} {'GDP mu=1':>10} {'AEA o2':>10}")
    for d in deltas:
        ex = epsilon(comp, d, "exact").epsilon
        gdp = epsilon(comp, d, "clt").epsilon
        aea = epsilon(comp, d, "aea", order=2).epsilon
        rows.append((d, ex, gdp, aea))
        print(f"{d:8.0e} {ex:10.6f} {gdp:10.6f} {aea:10.6f}")
    return rows


if __name__ == "__main__":
    main()
