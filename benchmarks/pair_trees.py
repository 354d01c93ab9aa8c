"""Paired CPU of the certified lattice in two source trees, query by query on the DP-SGD grid.

Run:  python benchmarks/pair_trees.py OLD_TREE NEW_TREE [--rates 0.01,0.001] [--out F.jsonl]

Each grid query (rate x sigma in {0.5, 0.8, 1, 2} x m in {1e2 .. 1e7} x delta in {1e-5,
1e-10}) runs :func:`certify.lattice_target.target_epsilon_interval` once per tree, each in a
fresh process with that tree first on ``PYTHONPATH`` (imports before the clock). The two runs
of a query go to the two workers together, so on a 2-core machine they share whatever load
the machine has. Prints, per query, both CPU times, their ratio, both relative widths and the
largest move of an end (relative to max(|upper|, 0.01)); then the geometric mean of the
ratios per rate. A tree is a directory holding ``certify/`` and ``numeric/`` (a git worktree
of an older commit, for instance). Timings, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import subprocess
import sys
from collections import defaultdict

SIGMAS = (0.5, 0.8, 1.0, 2.0)
COUNTS = (10**2, 10**3, 10**4, 10**5, 10**6, 10**7)
DELTAS = (1e-5, 1e-10)

_CHILD = """
import json, time
from certify.lattice_target import target_epsilon_interval
from numeric.mechanisms import PoissonSubsampledGaussian
c0 = time.process_time()
b = target_epsilon_interval([(PoissonSubsampledGaussian({s!r}, {q!r}), {m!r})], {d!r})
print(json.dumps(dict(cpu=time.process_time() - c0, lo=float(b.lower_mpf),
                      hi=float(b.upper_mpf), res=str(b.inputs.get("resolution")))))
"""


def _run(job: tuple) -> dict:
    tree, q, s, m, d = job
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    out = subprocess.run([sys.executable, "-c", _CHILD.format(q=q, s=s, m=m, d=d)], env=env,
                         cwd=os.path.abspath(tree), capture_output=True, text=True, check=False)
    lines = out.stdout.strip().splitlines()
    row = json.loads(lines[-1]) if out.returncode == 0 and lines else {"error": out.stderr[-300:]}
    row.update(tree=tree, q=q, s=s, m=m, d=d)
    return row


def _report(rows: list[dict], old: str, new: str) -> None:
    by: dict = defaultdict(dict)
    for r in rows:
        by[(r["q"], r["s"], r["m"], r["d"])][r["tree"]] = r
    logs: dict = defaultdict(list)
    for key in sorted(by):
        a, b = by[key].get(old), by[key].get(new)
        if a is None or b is None or "error" in a or "error" in b:
            print(key, "error:", (a or {}).get("error"), (b or {}).get("error"))
            continue
        scale = max(abs(a["hi"]), 0.01)
        move = max(abs(a["lo"] - b["lo"]), abs(a["hi"] - b["hi"])) / scale
        ratio = b["cpu"] / a["cpu"]
        logs[key[0]].append(math.log(ratio))
        print(f"rate {key[0]} sigma {key[1]} m {key[2]:.0e} delta {key[3]:.0e}: "
              f"{a['cpu']:.2f} -> {b['cpu']:.2f} s ({ratio:.2f}), width "
              f"{(a['hi'] - a['lo']) / scale:.2e} -> {(b['hi'] - b['lo']) / scale:.2e}, "
              f"largest move {move:.1e}" + ("" if a["res"] == b["res"] else ", other level"))
    for rate, v in sorted(logs.items()):
        print(f"rate {rate}: CPU geometric mean new / old {math.exp(sum(v) / len(v)):.3f} "
              f"over {len(v)} queries")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rates", default="0.01")
    ap.add_argument("--out", default=None, help="also write the raw rows (JSON lines)")
    args = ap.parse_args()
    rates = [float(x) for x in args.rates.split(",")]
    jobs = [(t, q, s, m, d) for q in rates for s in SIGMAS for m in COUNTS for d in DELTAS
            for t in (args.old, args.new)]
    with mp.Pool(2) as pool:
        rows = list(pool.imap(_run, jobs))
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    _report(rows, args.old, args.new)


if __name__ == "__main__":
    main()
