"""Random allocation (shuffled DP-SGD): the paper's worked example next to the exact numbers.

Run:  python examples/shuffle_worked_example.py [--sigma 1] [--delta 0.01] [--batch-size 10]
          [--epochs 1 100] [--rounds 10 100 1000] [--output tradeoff.png]

van Dijk and Ertan (arXiv:2605.06259) work the example sigma = 1, TV delta = 0.01, batch size
10: their Berry-Esseen bound (Thm 4.1; our reconstruction, see docs/shuffle.md) needs
M ~ 1.14e6 rounds, N ~ 1.14e7 examples for one epoch and N ~ 1e11 for E = 100 epochs. The
rigorous chi-square bound and the exact TV (Fourier integral; composed loss grid for E > 1)
need far fewer rounds (exact: M ~ 2.7e3 for one epoch). With ``--output`` (and matplotlib
installed) it plots the one-epoch trade-off curves f(a) for several M.
"""

from __future__ import annotations

import argparse

import numpy as np

from numeric.shuffle.exact import tradeoff_one_epoch
from numeric.shuffle.plan import rounds_required


def main(sigma: float = 1.0, delta: float = 0.01, batch_size: int = 10,
         epochs: tuple[int, ...] = (1, 100), rounds: tuple[int, ...] = (10, 100, 1000),
         output: str | None = None) -> dict:
    """Print the planning table and the trade-off curves; return them."""
    plans = {}
    print(f"Rounds M and dataset size N = M x {batch_size} for TV <= {delta:g} at sigma {sigma:g}")
    print(f"  {'epochs':>6}  {'method':<28} {'M':>14} {'N':>16}")
    labels = {"theorem_4_1": "Thm 4.1 (paper; reconstructed)",
              "chi_square": "chi-square (rigorous)", "exact": "exact (numerical)",
              "gdp": "GDP limit (approximation)"}
    for e in epochs:
        plans[e] = rounds_required(sigma, delta, e, batch_size)
        for key, label in labels.items():
            r = plans[e][key]
            print(f"  {e:>6}  {label:<28} {r['rounds']!s:>14} {r['dataset_size']!s:>16}")
    alpha = np.concatenate([np.geomspace(1e-6, 0.01, 20), np.linspace(0.01, 1.0, 100)[1:]])
    curves = {m: tradeoff_one_epoch(sigma, m, alpha)[0] for m in rounds}
    print("\nOne-epoch trade-off f(a) at a = 0.01, 0.1, 0.5:")
    for m, f in curves.items():
        vals = np.interp([0.01, 0.1, 0.5], alpha, f)
        print(f"  M = {m:>7}: " + "  ".join(f"{v:.4f}" for v in vals))
    if output:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot (pip install 'edgeworth-accountant[plot]')")
        else:
            fig, ax = plt.subplots(figsize=(5, 5))
            for m, f in curves.items():
                ax.plot(alpha, f, label=f"M = {m}")
            ax.plot([0, 1], [1, 0], "k:", lw=0.8, label="perfect privacy")
            ax.set_xlabel("type I error a")
            ax.set_ylabel("type II error f(a)")
            ax.set_title(f"random allocation, one epoch, sigma = {sigma:g}")
            ax.legend()
            fig.savefig(output, dpi=120, bbox_inches="tight")
            print(f"plot written to {output}")
    return {"plans": plans, "alpha": alpha, "curves": curves}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sigma", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=0.01)
    p.add_argument("--batch-size", type=int, default=10)
    p.add_argument("--epochs", type=int, nargs="+", default=[1, 100])
    p.add_argument("--rounds", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument("--output", default=None)
    a = p.parse_args()
    main(a.sigma, a.delta, a.batch_size, tuple(a.epochs), tuple(a.rounds), a.output)
