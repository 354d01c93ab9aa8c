"""Paper check: Dong, Roth, Su, Gaussian differential privacy (JRSS-B 2022), Section 3.3.

Run:  python examples/check_gdp.py        (or: edgeworth check gdp)

For the n-fold randomized response with eps0 = 1/sqrt(n): the certified sup-distance of its
exact trade-off curve from G_1 (Figure 5: "below 0.013" at n = 10) and the smallest diagonal
shift c_n with G_1(a + c_n) - c_n <= f_n(a) <= G_1(a - c_n) + c_n (Theorem 3.7: c_n = O(1/n);
n c_n settles near 0.0477). Every number is an Arb enclosure, printed as [lower, upper].
"""

from __future__ import annotations

from flint import arb

from certify.engine import workprec
from certify.papers.common import dec_interval
from certify.papers.rr_tradeoff import distances, rr_curve


def main(ns: tuple[int, ...] = (1, 10, 100, 1000), figure: str | None = None) -> dict:
    """Print the certified distances; with ``figure``, also draw Figure 5 (numeric.plotting)."""
    out: dict = {}
    print(f"{'n':>6} {'sup |f_n - G_1|':>36} {'n c_n':>36}")
    with workprec(128):
        for n in ns:
            d = distances(rr_curve(n, 1 / arb(n).sqrt()), arb(1))
            sup, c = dec_interval(d.vertical, 12), dec_interval(n * d.diagonal, 12)
            out[n] = {"sup": sup, "n_c_n": c, "below_0.013": bool(d.vertical < arb("0.013"))}
            print(f"{n:>6} [{sup[0]}, {sup[1]}] [{c[0]}, {c[1]}]")
    print("Figure 5 claim (n = 10, sup < 0.013):",
          "holds" if out.get(10, {}).get("below_0.013") else "not checked / fails")
    if figure:
        _draw_figure5(figure)
    return out


def _draw_figure5(path: str) -> None:
    """GDP Figure 5: the exact 10-fold curve, G_1 and the (eps_exact(1e-3), 1e-3) curve."""
    import math

    from numeric import RandomizedResponse, compose

    try:
        from numeric.plotting import save_figure, tradeoff_data
    except ImportError as exc:  # numeric.plotting / matplotlib not installed
        print(f"figure not drawn ({exc}); use: edgeworth plot tradeoff ...")
        return
    rr = compose([(RandomizedResponse(1 / math.sqrt(10)), 10)])
    data = tradeoff_data([rr], labels=["10 x randomized response, eps0 = 1/sqrt(10)"],
                         mus=[1.0], eps_deltas=[(2.8896727393598113, 1e-3)])
    print(f"wrote {save_figure(data, path)}")


if __name__ == "__main__":
    import sys

    main(figure=sys.argv[1] if len(sys.argv) > 1 else None)
