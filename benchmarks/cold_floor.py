"""The idealized numpy floor of a cold AEA / saddlepoint query (issue 13).

Used by ``python benchmarks/bench_aea_vs_pld.py --cold-grid --floor``: the irreducible numerical
work of one cold query written as directly as numpy allows (no validation, diagnostics, result
objects or branches for extreme inputs), timed against the 1000x budget PLD / 1000. If even this
exceeds the budget, no restructuring of the Python/numpy code path can reach 1000x there.
"""

from __future__ import annotations

import math

import numpy as np


def floor_times(mu: float, rate: float, repeats: int = 9) -> dict[str, float]:
    r"""Idealized numpy floor of the irreducible numerical work of one cold query (not the
    project's code path, no validation, no diagnostics, no branches for extreme inputs): the
    PLLR cumulants up to order 6 under P and Q on the two Gauss-Legendre rules that check each
    other (24 and 16 nodes per panel of width min(1/2, 1/mu) on [-20, mu + 20]), and the
    saddlepoint cross-check as 5 Newton rounds of the tilted CGF (K, K', K'' at two tilts, one
    per pair order, 12 nodes per panel on [-13, 2 mu + 13]). Minimum over ``repeats`` runs of
    100 (seconds per call). A compiled kernel could go below it; numpy cannot."""
    import timeit

    def rule(n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        t, w = np.polynomial.legendre.leggauss(n)
        k = math.ceil((b - a) / min(0.5, 1.0 / mu))
        h = 0.5 * (b - a) / k
        mid = a + h * (2.0 * np.arange(k) + 1.0)
        return (mid[:, None] + h * t).ravel(), np.tile(h * w, k)

    rules = [rule(24, -20.0, mu + 20.0), rule(16, -20.0, mu + 20.0)]

    def cumulants() -> None:
        for x, w in rules:
            L = np.log1p(rate * np.expm1(mu * x - 0.5 * mu * mu))
            phi = np.exp(-0.5 * x * x)
            wq = w * ((1.0 - rate) * phi + rate * np.exp(-0.5 * (x - mu) ** 2))
            for ww in (w * phi, wq):
                d = L - ww @ L
                pw = d * d
                for _ in range(5):
                    ww @ pw
                    pw *= d

    xs, ws = rule(12, -13.0, 2.0 * mu + 13.0)
    ls = np.log1p(rate * np.expm1(mu * xs - 0.5 * mu * mu))
    lb = np.log(ws) - 0.5 * xs * xs

    def saddlepoint() -> None:
        for _ in range(5):
            for s in (4.0, 4.07):
                a = s * ls + lb
                a -= a.max()
                wt = np.exp(a)
                wt /= wt.sum()
                d = ls - wt @ ls
                wt @ (d * d)

    return {name: min(timeit.repeat(f, number=100, repeat=repeats)) / 100
            for name, f in (("cumulants", cumulants), ("saddlepoint check", saddlepoint))}


def floor_report(plds: dict) -> str:
    """The floor table of ``--floor``: the idealized numpy floor against PLD / 1000."""
    lines = ["Idealized numpy floor of a cold query's irreducible work (benchmarks/cold_floor.py; "
             "min of 9 x 100, wall), against the 1000x budget PLD/1000:"]
    for (sigma, rate), pld in plds.items():
        f = floor_times(1.0 / sigma, rate)
        total = sum(f.values())
        budget = f"{1e6 * pld['cpu'] / 1000:.0f} us" if pld else "-"
        lines.append(f"  q={rate:g} sigma={sigma:g}: cumulants {1e6 * f['cumulants']:.0f} us + "
                     f"saddlepoint check {1e6 * f['saddlepoint check']:.0f} us = "
                     f"{1e6 * total:.0f} us; 1000x budget {budget}"
                     + (f"; best possible ratio ~{pld['cpu'] / total:.0f}x" if pld else ""))
    return "\n".join(lines)
