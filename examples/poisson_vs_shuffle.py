"""Poisson subsampling vs random allocation ("shuffled" DP-SGD): the eps each analysis gives.

Run:  python examples/poisson_vs_shuffle.py [--sigma 1] [--batch-size 100] [--dataset-size 100000]
          [--epochs 1 10 100] [--delta 1e-5] [--method certified] [--output poisson_vs_shuffle.png]

For the same noise multiplier sigma, batch size B, dataset size N and E epochs, a practitioner
who trains with shuffled batches but reports a Poisson-subsampling epsilon (rate B/N, E N/B
steps) is using an analysis of a different sampler. This prints both epsilons side by side --
Poisson by the toolkit's ``method`` (certified by default: the upper end of a proven enclosure),
random allocation (M = N/B rounds per epoch, E epochs; numeric.shuffle, an estimate with a stated
accuracy) -- and, with ``--output``, plots eps against epochs for both (matplotlib, `plot` extra).
docs/shuffle.md says which is larger where.
"""

from __future__ import annotations

import argparse

from numeric.shuffle.plan import compare_poisson


def main(sigma: float = 1.0, batch_size: int = 100, dataset_size: int = 100_000,
         epochs: tuple[int, ...] = (1, 10, 100), delta: float = 1e-5, method: str = "certified",
         output: str | None = None) -> list[dict]:
    """Print the side-by-side table (and plot it with ``output``); return the rows."""
    rows = [compare_poisson(sigma, batch_size, dataset_size, e, delta, method=method)
            for e in epochs]
    print(f"sigma {sigma:g}, batch size {batch_size}, dataset size {dataset_size}, "
          f"delta {delta:g}")
    print(f"  {'epochs':>6} {'Poisson eps (' + method + ')':>28} {'random allocation eps':>22} "
          f"{'ratio':>6}")
    for r in rows:
        print(f"  {r['epochs']:>6} {r['poisson_epsilon']:>28.6f} {r['shuffle_epsilon']:>22.6f} "
              f"{r['ratio']:>6.3f}")
    if output:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot (pip install 'edgeworth-accountant[plot]')")
            return rows
        fig, ax = plt.subplots(figsize=(5.5, 4))
        es = [r["epochs"] for r in rows]
        ax.plot(es, [r["poisson_epsilon"] for r in rows], "o-",
                label=f"Poisson subsampling ({method})")
        ax.plot(es, [r["shuffle_epsilon"] for r in rows], "s--",
                label="random allocation (exact-numerical estimate)")
        ax.set_xscale("log")
        ax.set_xlabel("epochs E")
        ax.set_ylabel(f"epsilon at delta = {delta:g}")
        ax.set_title("Poisson vs random allocation, same sigma, B, N")
        ax.legend()
        fig.text(0.01, 0.01, f"sigma={sigma:g}, B={batch_size}, N={dataset_size}", fontsize=7)
        fig.savefig(output, dpi=120, bbox_inches="tight")
        plt.close(fig)
        print(f"wrote {output}")
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--dataset-size", type=int, default=100_000)
    ap.add_argument("--epochs", type=int, nargs="+", default=[1, 10, 100])
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--method", default="certified")
    ap.add_argument("--output")
    a = ap.parse_args()
    main(a.sigma, a.batch_size, a.dataset_size, tuple(a.epochs), a.delta, a.method, a.output)
