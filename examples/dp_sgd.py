"""DP-SGD accounting: how private are T noisy, Poisson-subsampled gradient steps?

Run:  python examples/dp_sgd.py [--sigma 1.0] [--rate 0.01] [--steps 10000] [--delta 1e-5]

Prints the Edgeworth (AEA) estimates of orders 0-2 and the GDP/CLT estimates. All of them are
*estimates*: none is a bound.
"""

from __future__ import annotations

import argparse

from numeric import PoissonSubsampledGaussian, compose, epsilon


def main(sigma: float = 1.0, rate: float = 0.01, steps: int = 10_000,
         delta: float = 1e-5) -> dict[str, float]:
    comp = compose([(PoissonSubsampledGaussian(sigma, rate), steps)])
    results = {f"aea order {k}": epsilon(comp, delta, "aea", order=k) for k in (0, 1, 2)}
    results["gdp"] = epsilon(comp, delta, "gdp")
    results["clt"] = epsilon(comp, delta, "clt")
    print(f"DP-SGD sigma={sigma} rate={rate} steps={steps} delta={delta:g}")
    for name, res in results.items():
        print(f"  {name:<12} eps = {res.epsilon:.5f}  (estimate; direction {res.direction})")
    return {name: res.epsilon for name, res in results.items()}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sigma", type=float, default=1.0)
    p.add_argument("--rate", type=float, default=0.01)
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--delta", type=float, default=1e-5)
    a = p.parse_args()
    main(a.sigma, a.rate, a.steps, a.delta)
