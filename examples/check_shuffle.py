"""Check the shuffling paper's claims: `edgeworth check shuffle` as a script.

van Dijk and Ertan (arXiv:2605.06259) bound the privacy of one epoch of random allocation
("shuffled" DP-SGD) with a Berry-Esseen argument (Thm 4.1). This script evaluates the paper's
worked example (sigma = 1, TV <= 0.01: M ~ 1.14e6 rounds; over 100 epochs N ~ 1e11 samples),
compares the Berry-Esseen bound with the true (certified) total variation, checks the
impossibility threshold of Ertan and van Dijk (arXiv:2601.10237), and shows the E = c^2 M regime
where the composed TV tends to the GDP limit.

    python examples/check_shuffle.py [--quick]

Same as ``edgeworth check shuffle [--quick] [--json]``; the rows and their proofs are in
certify/papers/shuffle_paper.py.
"""

from __future__ import annotations

import sys

from certify.papers.shuffle_paper import checks


def main(quick: bool = False) -> list:
    """Run the checks and print one line per claim; return the rows."""
    rows = checks(quick)
    for r in rows:
        verdict = {True: "holds", False: "FAILS", None: "undecided"}[r.holds]
        print(f"[{verdict:>9}] {r.claim}")
        print(f"             paper: {r.paper_value}   ours: {r.our_value}   ({r.method})")
        if r.undecided:
            print(f"             to decide: {r.undecided}")
    return rows


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:])
