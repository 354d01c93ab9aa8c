"""Speed of the generated Edgeworth kernel, of deriving a new mechanism, and import hygiene.

Run:  python benchmarks/bench_kernels.py [--skip-derive]

Prints (derive issue, "Numbers to reach"):
1. the Q-only Edgeworth delta(eps) kernel on 10^6 eps values, orders 0..6 (target: < 0.1 s at
   order 2 on one core);
2. deriving a new continuous mechanism's cumulants to order 4 and compiling it (target: < 60 s),
   for logistic and generalized-Gaussian noise, in fresh processes (no warm caches);
3. whether ``import numeric`` loads sympy (``python -X importtime``; target: no).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernel_table() -> None:
    from numeric.edgeworth import SERIES_ORDERS, q_only_delta, series_coefficients

    z = np.linspace(0.01, 8.0, 10**6)
    lam = {j: 0.3 / j for j in range(3, 20)}
    print("1. Q-only Edgeworth delta kernel, 10^6 eps values (best of 5, one core)")
    print(f"   {'order':>5} {'seconds':>9} {'ns/point':>9} {'+cancellation bound (s)':>24}")
    for order in sorted(SERIES_ORDERS):
        c = series_coefficients(lam, order)
        best = min(_timed(lambda c=c: q_only_delta(z, 2.0, c, cancellation=False))
                   for _ in range(5))
        full = min(_timed(lambda c=c: q_only_delta(z, 2.0, c)) for _ in range(5))
        print(f"   {order:>5} {best:9.4f} {best * 1e3:9.1f} {full:24.4f}")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


_DERIVE = """
import time, warnings
t0 = time.perf_counter()
import importlib.util, sys
spec = importlib.util.spec_from_file_location("ex", {path!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
from derive.compile import compile_mechanism
warnings.simplefilter("ignore")
mech = compile_mechanism(getattr(mod, {var!r}), order=4)
print(f"{{time.perf_counter() - t0:.1f}}")
"""


def derive_table() -> None:
    print("2. derive + compile a new mechanism to order 4 (fresh process, incl. sympy import)")
    for name, var in (("logistic_noise", "LOGISTIC"),
                      ("generalized_gaussian_noise", "GENERALIZED_GAUSSIAN")):
        path = os.path.join(ROOT, "examples", f"{name}.py")
        out = subprocess.run([sys.executable, "-c", _DERIVE.format(path=path, var=var)],
                             capture_output=True, text=True, cwd=ROOT, timeout=600)
        secs = out.stdout.strip().splitlines()[-1] if out.returncode == 0 else "failed"
        print(f"   {name:<28} {secs:>6} s")


def import_check() -> None:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import numeric"],
                         capture_output=True, text=True, cwd=ROOT)
    mods = [line for line in out.stderr.splitlines() if "sympy" in line]
    last = out.stderr.strip().splitlines()[-1].split("|") if out.stderr else ["", "?"]
    print(f"3. import numeric: sympy modules loaded = {len(mods)}; cumulative import time of "
          f"{last[-1].strip()} = {int(last[1]) / 1e6:.2f} s (numpy and scipy included)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-derive", action="store_true")
    args = ap.parse_args(argv)
    kernel_table()
    if not args.skip_derive:
        derive_table()
    import_check()
    return 0


if __name__ == "__main__":
    sys.exit(main())
