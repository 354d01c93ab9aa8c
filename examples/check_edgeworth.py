"""Paper check: the Edgeworth accountant (Wang et al., arXiv:2206.04236) on DP-SGD.

Run:  python examples/check_edgeworth.py  (or: edgeworth check edgeworth)

The paper's two-sided AEA (``aea-ea``) and the Q-only AEA (``aea``) are estimates; this compares
them with a certified enclosure of the true epsilon (lattice method) and says whether each
under-reports (below the certified lower end: unsafe), over-reports, or is undecided (inside the
interval: a finer grid would decide). It then evaluates the DGG non-i.i.d. continuity bound
(C0, p) next to the authors' R package value.
"""

from __future__ import annotations

from flint import arb

from certify.dgg import dgg_continuity_bound_noniid
from certify.engine import workprec
from certify.papers.edgeworth_paper import aea_vs_truth


def main(sigma: float = 0.8, rate: float = 0.01, delta: float = 0.015,
         ms: tuple[int, ...] = (20, 200), h: float = 2.0**-9) -> dict:
    out = {}
    with workprec(128):
        for m in ms:
            r = aea_vs_truth(sigma, rate, delta, m, h)
            r.pop("ball")
            out[m] = r
            print(f"m = {m}: certified eps in [{r['truth'][0]}, {r['truth'][1]}]")
            for v in ("aea-ea", "aea"):
                print(f"   {v:7} {r[v]['eps']:.6f}  {r[v]['status']}"
                      f" (rel. error {r[v]['rel_error_vs_mid']:+.2%})")
        k4 = arb(9)
        k3 = k4.root(4) ** 3
        dgg = dgg_continuity_bound_noniid(1000, k4, k3, 2 * k3, arb("0.621") * k3, 1, 2,
                                          r_package_sn=True)
        out["dgg_noniid_continuity_n1000"] = float(dgg.mid())
        print(f"DGG non-i.i.d. continuity bound, n = 1000, C0 = 1, p = 2: {float(dgg.mid()):.10g}"
              " (R package BoundEdgeworth: 0.07920199708)")
    return out


if __name__ == "__main__":
    main()
