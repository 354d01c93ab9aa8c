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


def main(ns: tuple[int, ...] = (1, 10, 100, 1000)) -> dict[int, dict]:
    out = {}
    print(f"{'n':>6} {'sup |f_n - G_1|':>36} {'n c_n':>36}")
    with workprec(128):
        for n in ns:
            d = distances(rr_curve(n, 1 / arb(n).sqrt()), arb(1))
            sup, c = dec_interval(d.vertical, 12), dec_interval(n * d.diagonal, 12)
            out[n] = {"sup": sup, "n_c_n": c, "below_0.013": bool(d.vertical < arb("0.013"))}
            print(f"{n:>6} [{sup[0]}, {sup[1]}] [{c[0]}, {c[1]}]")
    print("Figure 5 claim (n = 10, sup < 0.013):",
          "holds" if out.get(10, {}).get("below_0.013") else "not checked / fails")
    return out


if __name__ == "__main__":
    main()
