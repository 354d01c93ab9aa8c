"""Trade-off curves on one figure: GDP's Figure 5 setting next to DP-SGD, with certified bands.

Ten steps of randomized response with eps0 = 1/sqrt(10) (exact curve), its CLT limit G_1
(Dong, Roth, Su, GDP Sec. 3.3 and Thm 3.6), one (eps, delta) pair's curve, and a DP-SGD run
(Poisson-subsampled Gaussian, an estimate where no closed form exists) with certified bands.

    python examples/plot_tradeoff.py [OUTPUT.png]

The same figure from the command line:

    edgeworth plot tradeoff --mechanism randomized-response --eps0 0.31622776601683794 \\
        --steps 10 --gdp-mu 1 --eps-delta 1,0.001 --certified --output tradeoff.png
"""

from __future__ import annotations

import math
import sys

from numeric import PoissonSubsampledGaussian, RandomizedResponse, compose
from numeric.plotting import save_figure, tradeoff_data


def main(output: str = "tradeoff.png", *, n: int = 10, sgd_steps: int = 1000,
         certified: bool = True, points: int = 50, time_budget: float = 45.0) -> dict:
    """Compute and draw the figure; return the data and the file written."""
    rr = compose([(RandomizedResponse(1 / math.sqrt(n)), n)])
    sgd = compose([(PoissonSubsampledGaussian(1.0, 0.01), sgd_steps)])
    data = tradeoff_data(
        [rr, sgd], labels=[f"{n} x randomized response, eps0 = 1/sqrt({n})",
                           f"DP-SGD sigma 1, rate 0.01, {sgd_steps} steps"],
        mus=[1.0], eps_deltas=[(1.0, 1e-3)], certified=certified, points=points,
        time_budget=time_budget)
    path = save_figure(data, output)
    for s in data.series:
        kind = {"certified": "proven band", "estimate": "ESTIMATE"}.get(s.kind, s.kind)
        print(f"{kind:>12}: {s.label}")
    print(f"wrote {path}")
    return {"data": data, "path": path}


if __name__ == "__main__":
    main(*sys.argv[1:2])
