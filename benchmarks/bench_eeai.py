"""EEAI certified eps intervals vs the number of steps, and the time per audit certificate.

Run:  python benchmarks/bench_eeai.py [--quick]

The three settings of the EA paper (Wang et al., arXiv:2206.04236, Section 5): Poisson-subsampled
Gaussian DP-SGD with (sigma 0.8, rate 0.01, delta 0.015), (sigma 1, rate 5e-4, delta 1e-5) and
(sigma 0.8, rate 0.08 sqrt(log m / m), delta 0.1), m = 5e4 .. 1e6. For each: the certified
interval, its width, the uniform bound that won, the AEA estimate (order 2) for reference, and
the wall time of one certified query. Then the time to write and to verify one certificate.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

SETTINGS = (
    ("sigma 0.8, rate 0.01, delta 0.015", 0.8, lambda m: 0.01, 0.015),
    ("sigma 1, rate 5e-4, delta 1e-5", 1.0, lambda m: 5e-4, 1e-5),
    ("sigma 0.8, rate 0.08 sqrt(log m/m), delta 0.1", 0.8,
     lambda m: 0.08 * math.sqrt(math.log(m) / m), 0.1),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="m = 5e4 and 1e5 only")
    args = ap.parse_args(argv)
    from certify.certificate import make_certificate, verify
    from certify.eeai import epsilon_interval
    from numeric import PoissonSubsampledGaussian, aea_epsilon, compose

    ms = (50_000, 100_000) if args.quick else (50_000, 100_000, 500_000, 1_000_000)
    print("EEAI certified eps intervals (Q-only first-order Edgeworth centre +- certified D)")
    print(f"{'setting':<46} {'m':>9} {'lower':>10} {'upper':>10} {'width':>9} "
          f"{'bound':<14} {'AEA o2':>9} {'time s':>7}")
    for label, sigma, rate_of, delta in SETTINGS:
        for m in ms:
            comp = compose([(PoissonSubsampledGaussian(sigma, rate_of(m)), m)])
            t0 = time.perf_counter()
            b = epsilon_interval(comp, delta)
            secs = time.perf_counter() - t0
            lo = float(b.lower_mpf)
            hi = float(b.upper_mpf) if b.upper.is_finite else math.inf
            width = "vacuous" if b.vacuous else f"{hi - lo:9.4f}"
            aea = aea_epsilon(comp, delta).epsilon
            print(f"{label:<46} {m:>9} {lo:10.4f} {hi:10.4f} {width:>9} "
                  f"{b.upper_method[:14]:<14} {aea:9.4f} {secs:7.3f}")
    spec = {"mechanism": [{"type": "subsampled-gaussian", "sigma": 0.8, "rate": 0.01,
                           "count": 500_000}]}
    comp = compose([(PoissonSubsampledGaussian(0.8, 0.01), 500_000)])
    t0 = time.perf_counter()
    from certify.combine import certified_epsilon

    bound = certified_epsilon(comp, 0.015)
    cert = make_certificate(spec, "epsilon", 0.015, bound)
    t_make = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cert.json")
        with open(path, "w") as fh:
            json.dump(cert, fh)
        t0 = time.perf_counter()
        ok, msg, _ = verify(path)
        t_verify = time.perf_counter() - t0
    print(f"\ncertificate (sigma 0.8, rate 0.01, m = 5e5, delta 0.015): make {t_make:.3f} s, "
          f"verify {t_verify:.3f} s ({msg})")
    print("All intervals are proven enclosures (Arb arithmetic); 'vacuous' means the EEAI's "
          "uniform error exceeds what delta allows.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
