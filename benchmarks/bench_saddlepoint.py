r"""Benchmark: the saddlepoint accountant against the exact Bromwich inversion, AEA and PLD.

Run from the repository root::

    python benchmarks/bench_saddlepoint.py            # DP-SGD grid (30 points) + Laplace
    python benchmarks/bench_saddlepoint.py --quick    # m <= 1e4 only

Reference ("exact"): the Bromwich integral (Laplace inversion of the hockey-stick kernel)

.. math::

    \delta(\varepsilon) = \frac{1}{2\pi i}\int_{c-i\infty}^{c+i\infty}
        \frac{e^{mK(z) - z\varepsilon}}{z(1+z)}\,dz
      = \frac{e^{mK(c) - c\varepsilon}}{\pi}\int_0^\infty
        \operatorname{Re}\frac{\varphi_c(y)^m e^{-iy\varepsilon}}{(c+iy)(1+c+iy)}\,dy,

with c > 0 (the saddlepoint tilt, so the integrand does not oscillate at y = 0) and
:math:`\varphi_c(y) = E_c e^{iyL}` the characteristic function of the tilted single-step PLLR.
For DP-SGD, :math:`\varphi_c` is a composite Gauss-Legendre sum over x with the weights
:math:`e^{(1+c)L(x)}\varphi(x)` (panel width min(1/2, 1/mu, 3/(y_max mu)) so that e^{iyL(x)} is
resolved, 12 nodes), the mean removed before exponentiating, and phi^m formed as
exp(m log phi) (m is an integer, so the branch does not matter). The y-integral is composite
Gauss-Legendre on panels of width min(0.5/s, ...), extended until |phi_c|^m / y^2 falls below
1e-13 relative to the result (reported as "tail"), and capped at y = 1e3 (flagged "cap" when
hit). For rate * m < 10 the plateau of |phi_c|^m (few expected sampled steps) makes the inversion
too slow for a benchmark; there the reference is the certified lattice enclosure
``certify.lattice.lattice_epsilon_interval`` (marked lat-ref), taken per direction from the
Bound's ``inputs["per_direction_lower"]`` / ``inputs["per_direction"]`` (upper ends), or for the
max over directions when those are absent (marked lat-max). eps_ref is the interval midpoint,
ref_acc its relative half-width, and sp_err the error against the midpoint; an estimate counts as
"wrong by more than 1e-4" iff it lies outside [lower (1 - 1e-4), upper (1 + 1e-4)] (column
">1e-4"). Without certify installed those rows print n/a with a note.
Estimated reference accuracy: the change of delta between the rule and a rule with
doubled nodes (reported per point; typically <= 1e-9 relative), translated to eps through the
slope. eps(delta) of the reference: secant iterations on the Bromwich delta started from the
saddlepoint value, to |delta/target - 1| < 1e-9. For Laplace the reference is the exact lattice
convolution (atoms on the lattice, continuous part binned at spacing mu/400, FFT powers), which
agrees with dp_accounting's PLD to about 1e-8 relative.

Timings (wall clock, one eps query, both pair orders): ``sp_cold`` is the first query for a
mechanism in a warm process (imports done, the per-mechanism cache emptied with
``clear_cgf_cache``; best of 3), ``sp_warm`` the median of four later queries on the same
mechanism at other m (0.9, 0.95, 1.05, 1.1 times m, delta 1e-5: the cached quadrature rule,
CGF rows and eps = 0 tilts are reused, the points and the saddlepoint are new), ``sp_same`` the
median of four queries on the same composition at other delta (2, 1/2, 5, 1/5 times 1e-5: the
grid and bracket points are reused as well). ``aea_ms`` and ``pld_ms`` are single queries
(PLD: dp_accounting's PLDAccountant at value discretization 1e-4, including the composition).
The summary lines give the ranges over all rows, and separately over the queries whose
diagnostics pass and those where they fire.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from numeric import Laplace, PoissonSubsampledGaussian, aea_epsilon, compose
from numeric.mechanisms.subsampled_gaussian import subsampled_gaussian_pllr
from numeric.moments import gauss_legendre_panels
from numeric.saddlepoint import clear_cgf_cache, saddlepoint_epsilon

DELTA = 1e-5
RATES = (0.001, 0.01)
SIGMAS = (0.8, 1.0, 2.0)
STEPS = (10**2, 10**3, 10**4, 10**5, 10**6)


def _bromwich_delta(mu: float, rate: float, m: int, eps: float, c: float, swap: bool,
                    nodes: int = 12, y_cap: float = 1e3) -> tuple[float, str]:
    """Bromwich delta(eps) of m DP-SGD steps (module docstring); returns (delta, status)."""
    # tilted single-step law on an x-rule: weights e^{(1+c) L} phi (swap: e^{-c L} phi)
    s_exp = -c if swap else 1.0 + c
    hi = max(s_exp, 1.0) * mu + 14.0

    def rule(y_max: float):
        width = min(0.5, 1.0 / mu, 3.0 / max(y_max * mu, 1e-300))
        x, w = gauss_legendre_panels(-14.0, hi, math.ceil((hi + 14.0) / width), nodes)
        L = subsampled_gaussian_pllr(x, mu, rate)
        lv = s_exp * L - 0.5 * x * x + np.log(w)
        top = float(np.max(lv))
        wt = np.exp(lv - top)
        k = top + math.log(float(np.sum(wt))) - 0.5 * math.log(2 * math.pi)
        wt /= np.sum(wt)
        vals = -L if swap else L
        mean = float(np.dot(wt, vals))
        return vals - mean, wt, k, mean, float(np.dot(wt, (vals - mean) ** 2))

    dev, wt, k_c, mean, var = rule(1.0)
    s = math.sqrt(m * var)
    log_pref = m * k_c - c * eps
    total, y0, block, status = 0.0, 0.0, 4.0 / s, "tail"
    tg, tw = np.polynomial.legendre.leggauss(nodes)
    while True:
        y1 = y0 + block
        dev, wt, *_ = rule(y1)
        panels = max(1, math.ceil((y1 - y0) * max(s, eps - m * mean, 1.0) / 2.0))
        edges = np.linspace(y0, y1, panels + 1)
        half, mid = 0.5 * np.diff(edges), 0.5 * (edges[:-1] + edges[1:])
        y = (mid[:, None] + half[:, None] * tg[None, :]).ravel()
        wy = (half[:, None] * tw[None, :]).ravel()
        phi = np.empty(y.size, dtype=complex)
        for i in range(0, y.size, 256):
            yy = y[i:i + 256]
            phi[i:i + 256] = np.exp(1j * np.outer(yy, dev)) @ wt
        z = c + 1j * y
        logf = m * np.log(phi) + 1j * y * (m * mean - eps)
        f = np.exp(logf) / (z * (1.0 + z))
        total += float(np.dot(wy, f.real))
        mag = float(np.max(np.abs(f)))
        if mag < 1e-13 * abs(total):
            break
        if y1 >= y_cap:
            status = "cap"
            break
        y0, block = y1, block * 2.0
    return math.exp(log_pref) * total / math.pi, status


def _bromwich_epsilon(mu, rate, m, swap, eps0, t0):
    target = DELTA
    e_a = eps0
    d_a, st = _bromwich_delta(mu, rate, m, e_a, t0, swap)
    e_b = eps0 * (1 + 1e-4)
    d_b, _ = _bromwich_delta(mu, rate, m, e_b, t0, swap)
    for _ in range(8):
        if abs(d_b / target - 1.0) < 1e-9:
            break
        la, lb = math.log(d_a), math.log(d_b)
        e_new = e_b + (math.log(target) - lb) * (e_b - e_a) / (lb - la)
        e_a, d_a = e_b, d_b
        e_b = e_new
        d_b, st = _bromwich_delta(mu, rate, m, e_b, t0, swap)
    d_fine, _ = _bromwich_delta(mu, rate, m, e_b, t0, swap, nodes=20)
    slope = (math.log(d_b) - math.log(d_a)) / (e_b - e_a)
    acc = abs(math.log(d_fine / d_b) / slope) / e_b
    return e_b, st, acc


def _lattice_interval(comp):
    """Certified eps enclosures per direction from the lattice, or None if certify is missing.

    Returns ({direction: (lower, upper)}, per_direction: bool); when the Bound does not expose
    per-direction values, every direction gets the (max-over-directions) interval and the flag
    is False."""
    try:
        from certify.lattice import lattice_epsilon_interval
    except Exception:
        return None, False
    b = lattice_epsilon_interval(comp, DELTA)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    per_lo = b.inputs.get("per_direction_lower")
    per_hi = b.inputs.get("per_direction")
    if isinstance(per_lo, dict) and isinstance(per_hi, dict):
        return {d: (float(per_lo[d]), float(per_hi[d])) for d in per_lo if d in per_hi}, True
    return {"P||Q": (lo, hi), "Q||P": (lo, hi)}, False


def _pld_epsilon(sigma, rate, m):
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except Exception:
        return None, None
    t = time.perf_counter()
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    ev = dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(sigma))
    acc.compose(ev, m)
    return acc.get_epsilon(DELTA), time.perf_counter() - t


def _timed(fn, repeats=3):
    best = math.inf
    out = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def _sp_timed(mech, m, repeats=3):
    """Saddlepoint eps(DELTA) of ``m`` steps of ``mech``: (result, cold seconds, warm seconds
    for other m, warm seconds for the same composition at other delta).

    Cold: best of ``repeats`` first queries, the per-mechanism cache emptied before each. Warm:
    medians of later queries (module docstring). The garbage collector is paused while timing
    (collected before), so a collection triggered by the reference computations does not land
    in a query."""
    comp = compose([(mech, m)])
    gc.collect()
    gc.disable()
    try:
        return _sp_timed_queries(mech, comp, m, repeats)
    finally:
        gc.enable()


def _sp_timed_queries(mech, comp, m, repeats):
    cold = math.inf
    res = None
    for _ in range(repeats):
        clear_cgf_cache()
        t = time.perf_counter()
        res = saddlepoint_epsilon(comp, DELTA)
        cold = min(cold, time.perf_counter() - t)
    warm, same = [], []
    for k in (0.9, 0.95, 1.05, 1.1):  # other m: the root search is new, the CGF rows are not
        other = compose([(mech, max(1, round(k * m)))])
        t = time.perf_counter()
        saddlepoint_epsilon(other, DELTA)
        warm.append(time.perf_counter() - t)
    for delta in (2 * DELTA, DELTA / 2, 5 * DELTA, DELTA / 5):  # same composition, other delta
        t = time.perf_counter()
        saddlepoint_epsilon(comp, delta)
        same.append(time.perf_counter() - t)
    return res, cold, float(np.median(warm)), float(np.median(same))


def dp_sgd_table(steps, with_pld=True):
    print(f"DP-SGD, delta = {DELTA:g}; rel. errors against the Bromwich reference (per direction)")
    hdr = (f"{'rate':>6} {'sig':>4} {'m':>8} {'dir':>5} {'eps_ref':>11} {'ref_acc':>8} "
           f"{'sp_err':>9} {'diag':>5} {'aea2_err':>9} {'pld_err':>9} {'sp_cold':>7} "
           f"{'sp_warm':>7} {'sp_same':>7} {'aea_ms':>6} {'pld_ms':>7} {'>1e-4':>5}")
    print(hdr)
    rows = []
    timings = []
    for rate in RATES:
        for sigma in SIGMAS:
            for m in steps:
                mech = PoissonSubsampledGaussian(sigma, rate)
                comp = compose([(mech, m)])
                sp, sp_t, sp_w, sp_s = _sp_timed(mech, m)
                timings.append((sp_t, sp_w, sp_s, bool(sp.warnings)))
                aea, aea_t = _timed(lambda c=comp: aea_epsilon(c, DELTA, order=2), 1)
                pld, pld_t = _pld_epsilon(sigma, rate, m) if with_pld else (None, None)
                lat, lat_per = _lattice_interval(comp) if rate * m < 10 else (None, False)
                for direction, swap in (("P||Q", False), ("Q||P", True)):
                    det = sp.details["saddlepoint"][direction]
                    e_sp = sp.per_direction[direction]
                    fired = any(w.startswith(direction) for w in sp.warnings)
                    if rate * m < 10:
                        if lat is None or direction not in lat:
                            print(f"{rate:6g} {sigma:4g} {m:8d} {direction:>5}  reference n/a "
                                  f"(rate*m < 10, certify not installed); sp eps {e_sp:.6f} "
                                  f"diag {'yes' if fired else 'no'}")
                            continue
                        lo, hi = lat[direction]
                        ref, acc = 0.5 * (lo + hi), 0.5 * (hi - lo) / (0.5 * (lo + hi))
                        st = "lat-ref" if lat_per else "lat-max"
                        if not lat_per:  # compare the max over directions
                            e_sp = sp.epsilon
                        wrong = not (lo * (1 - 1e-4) <= e_sp <= hi * (1 + 1e-4))
                    else:
                        ref, st, acc = _bromwich_epsilon(1 / sigma, rate, m, swap, e_sp,
                                                         det["t"])
                        wrong = abs(e_sp - ref) / ref > 1e-4
                    e_aea = aea.per_direction[direction]
                    pld_err = ((pld - ref) / ref) if (pld is not None and direction == "P||Q") \
                        else None
                    row = (rate, sigma, m, direction, ref, acc, (e_sp - ref) / ref, fired,
                           (e_aea - ref) / ref, pld_err, sp_t, aea_t, pld_t, st, wrong)
                    rows.append(row)
                    pe = f"{pld_err:+9.1e}" if pld_err is not None else f"{'':>9}"
                    pt = f"{1e3 * pld_t:7.0f}" if (pld_t and direction == "P||Q") else f"{'':>7}"
                    print(f"{rate:6g} {sigma:4g} {m:8d} {direction:>5} {ref:11.6f} {acc:8.1e} "
                          f"{(e_sp - ref) / ref:+9.1e} {('yes' if fired else 'no'):>5} "
                          f"{(e_aea - ref) / ref:+9.1e} {pe} {1e3 * sp_t:7.2f} "
                          f"{1e3 * sp_w:7.2f} {1e3 * sp_s:7.2f} {1e3 * aea_t:6.1f} {pt} "
                          f"{('yes' if wrong else 'no'):>5}"
                          + ("" if st == "tail" else f"  ({st})"),
                          flush=True)
    ok = [r for r in rows if not r[7]]
    wrong = [r for r in rows if r[14]]
    bad = [r for r in wrong if not r[7]]
    worst = max((abs(r[6]) for r in ok), default=float("nan"))
    print(f"\nworst |rel err| where diagnostics pass: {worst:.2e} over {len(ok)} direction-cases;"
          f" {len(rows)} direction-cases with a reference, {len(wrong)} with error > 1e-4"
          f" (lattice rows: outside the widened certified interval), of which without a"
          f" diagnostic: {len(bad)}")
    for r in bad:
        print(f"  UNFLAGGED: rate {r[0]:g} sigma {r[1]:g} m {r[2]} {r[3]} rel err {r[6]:+.2e}")
    _timing_summary("DP-SGD", timings)
    return rows


def _timing_summary(name, timings):
    """Ranges and medians of the three timings, for all queries and for those whose
    diagnostics pass (no warning)."""
    for label, rows in (("all", timings), ("diagnostics pass", [r for r in timings if not r[3]]),
                        ("diagnostics fire", [r for r in timings if r[3]])):
        if not rows:
            continue
        parts = []
        for col, what in ((0, "cold"), (1, "warm (other m)"), (2, "warm (same m, other delta)")):
            ms = [1e3 * r[col] for r in rows]
            parts.append(f"{what} {min(ms):.2f}-{max(ms):.2f} ms (median {np.median(ms):.2f})")
        print(f"saddlepoint time per eps query ({name}, {label}, {len(rows)} cases): "
              + "; ".join(parts))


def _laplace_ref_delta(mu, m, eps, n=400):
    from scipy.signal import fftconvolve

    h = mu / n
    one = np.zeros(2 * n + 1)
    one[0], one[-1] = 0.5 * math.exp(-mu), 0.5
    edges = -mu + h * (np.arange(2 * n + 2) - 0.5)

    def cdf(x):
        return 0.5 * np.exp((np.clip(x, -mu, mu) - mu) / 2.0)

    one += cdf(edges[1:]) - cdf(edges[:-1])
    dist, base, k = np.array([1.0]), one, m
    while k:
        if k & 1:
            dist = fftconvolve(dist, base)
        k >>= 1
        if k:
            base = fftconvolve(base, base)
    dist = np.clip(dist, 0.0, None)
    s = -m * mu + h * np.arange(dist.size)
    return lambda e: float(np.sum(dist * -np.expm1(np.minimum(e - s, 0.0))))


def laplace_table(mus=(0.1, 0.3, 1.0), steps=(10, 100, 1000, 10_000)):
    from scipy import optimize

    print(f"\nLaplace, delta = {DELTA:g}; rel. eps errors against the lattice reference")
    print(f"{'mu':>5} {'m':>6} {'eps_ref':>11} {'sp_err':>9} {'diag':>5} {'aea2_err':>9} "
          f"{'sp_cold':>7} {'sp_warm':>7} {'sp_same':>7}")
    timings = []
    for mu in mus:
        for m in steps:
            n = 400 if m * mu <= 300 else 100
            if m * n * mu / mu * 2 > 4e7:
                n = max(20, int(4e7 / (2 * m)))
            dfun = _laplace_ref_delta(mu, m, 0.0, n)
            comp = compose([(Laplace(1 / mu), m)])
            sp, sp_t, sp_w, sp_s = _sp_timed(Laplace(1 / mu), m)
            timings.append((sp_t, sp_w, sp_s, bool(sp.warnings)))
            hi = min(sp.epsilon * 1.5 + 1.0, m * mu)
            ref = optimize.brentq(lambda e, f=dfun: math.log(max(f(e), 1e-300)) - math.log(DELTA),
                                  0.0, hi, xtol=1e-12)
            aea = aea_epsilon(comp, DELTA)
            print(f"{mu:5g} {m:6d} {ref:11.6f} {(sp.epsilon - ref) / ref:+9.1e} "
                  f"{('yes' if sp.warnings else 'no'):>5} {(aea.epsilon - ref) / ref:+9.1e} "
                  f"{1e3 * sp_t:7.2f} {1e3 * sp_w:7.2f} {1e3 * sp_s:7.2f}  (lattice n={n})",
                  flush=True)
    _timing_summary("Laplace", timings)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-pld", action="store_true")
    ap.add_argument("--laplace-only", action="store_true")
    args = ap.parse_args(argv)
    steps = STEPS[:3] if args.quick else STEPS
    if not args.laplace_only:
        dp_sgd_table(steps, with_pld=not args.no_pld)
    laplace_table()


if __name__ == "__main__":
    main()
