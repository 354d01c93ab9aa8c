"""Benchmark: the approximate Edgeworth accountant (AEA) against numerical peers on DP-SGD.

Run from the repository root::

    python benchmarks/bench_aea_vs_pld.py            # steps 1e2 .. 1e6 (a few minutes)
    python benchmarks/bench_aea_vs_pld.py --quick    # steps 1e2 .. 1e4 only

Options: ``--sigma`` (noise multiplier, default 1.0), ``--rate`` (Poisson sampling rate, default
0.01), ``--delta`` (default 1e-5), ``--repeats`` (warm AEA repeats, default 7),
``--prv-eps-error`` (default 0.1), ``--skip pld-coarse prv rdp`` (leave out optional columns).

For each number of steps it reports eps(delta) of the composed Poisson-subsampled Gaussian from

* ``numeric.aea_epsilon`` (this project's AEA, Edgeworth order 2; orders 0 and 1 as extra
  columns). The first call in a process computes and caches the per-step PLLR cumulants by
  quadrature ("cold"); the timed column is the median of ``--repeats`` *warm* calls.
* ``dp_accounting.pld.PLDAccountant`` (privacy loss distributions, FFT composition) with the
  default ``value_discretization_interval=1e-4`` and with the coarser 1e-3, timed end to end
  (construction + compose + get_epsilon), one run each after an untimed warm-up.
* optionally ``prv_accountant.PRVAccountant`` and ``dp_accounting.rdp.RdpAccountant``.

``--cold-grid`` (issue 13) instead times *cold* queries at one number of steps (``--cold-steps``,
default 1e6) on the DP-SGD grid rate {0.001, 0.01} x sigma {0.8, 1, 2}: AEA with every
composition-dependent cache emptied before each query (``numeric.cgf.clear_cgf_cache``, as
``benchmarks/fuzz_run.py`` does, plus the per-step cumulant cache), median of ``--cold-repeats``
queries in one process, in CPU time of the thread (``time.thread_time``: robust to other jobs on a
shared machine) and in wall time; optionally the same at another git ref (``--baseline REF``: a
temporary ``git worktree``, measured in a subprocess in the same run); and, with
``--fresh-processes N``, the first query of N fresh processes (modules imported first, import not
timed), as ``benchmarks/compare_peers.py`` measures cold. dp_accounting's PLD
(``value_discretization_interval=1e-4``, its default) is timed end to end, median of
``--pld-repeats`` runs in CPU time of the process and in wall time. It also times the public
``numeric.delta(comp, eps, method='aea')`` for 1e6 eps values against its kernel
(``q_only_delta`` per pair order). ``--cold-methods`` chooses the methods timed cold (default
``aea saddlepoint``); ``--floor`` adds the idealized numpy floor of a cold query's irreducible
work (``benchmarks/cold_floor.py``) against the 1000x budget PLD/1000. Example::

    python benchmarks/bench_aea_vs_pld.py --cold-grid --baseline b7d6294 --fresh-processes 3 \
        --floor

Every peer is imported inside ``try``/``except``: a missing or failing peer is reported and
skipped, so the script runs with only ``numeric`` (numpy, scipy) installed. The script can also
be imported; :func:`main` takes an optional argument list.

Caveats: AEA is an *estimate*, not a bound (it can under-report eps, notably for few steps). The
PLD accountant is a discretized numerical approximation with ``pessimistic_estimate=True``: its
rounding is chosen so that delta(eps) is over- rather than under-estimated (up to the truncated
tail mass and floating-point error of the FFT), so its eps errs on the high side by an amount
that shrinks with the discretization interval. PRV reports an estimate with error bars
``[lower, upper]`` (Gopi, Lee, Wutschitz 2021); RDP is a (loose) upper bound.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

import numpy as np

FULL_STEPS = (10**2, 10**3, 10**4, 10**5, 10**6)
QUICK_STEPS = (10**2, 10**3, 10**4)
PEER_SKIPPABLE = ("pld-coarse", "prv", "rdp")
PLD_DEFAULT_VDI = 1e-4
PLD_COARSE_VDI = 1e-3


def _import_numeric():
    """Import ``numeric``; fall back to the source tree this script lives in."""
    try:
        return importlib.import_module("numeric")
    except ModuleNotFoundError:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        sys.path.insert(0, root)
        return importlib.import_module("numeric")


def _try_import(name: str) -> tuple[Any | None, str | None]:
    try:
        return importlib.import_module(name), None
    except Exception as exc:  # missing or broken peer: report, never crash
        return None, f"{type(exc).__name__}: {exc}"


def _dist_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _clear_cumulant_cache(numeric) -> bool:
    """Clear the subsampled-Gaussian cumulant cache so the cold timing really is cold."""
    try:
        mod = importlib.import_module(numeric.__name__ + ".mechanisms.subsampled_gaussian")
        mod._cached_cumulants.cache_clear()
        return True
    except Exception:
        return False


# --------------------------------------------------------------------------- peers


def _make_aea(numeric, sigma: float, rate: float, delta: float):
    def run(steps: int, order: int = 2):
        mech = numeric.PoissonSubsampledGaussian(sigma, rate)
        return numeric.aea_epsilon([(mech, steps)], delta, order=order)

    return run


def _make_pld(dpa, sigma: float, rate: float, delta: float, vdi: float):
    def run(steps: int) -> float:
        event = dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(rate, dpa.GaussianDpEvent(sigma)), steps
        )
        acc = dpa.pld.PLDAccountant(value_discretization_interval=vdi)
        acc.compose(event)
        return float(acc.get_epsilon(delta))

    return run


def _make_rdp(dpa, sigma: float, rate: float, delta: float):
    def run(steps: int) -> float:
        event = dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(rate, dpa.GaussianDpEvent(sigma)), steps
        )
        acc = dpa.rdp.RdpAccountant()
        acc.compose(event)
        return float(acc.get_epsilon(delta))

    return run


def _make_prv(prv, sigma: float, rate: float, delta: float, eps_error: float):
    def run(steps: int) -> tuple[float, float, float]:
        mech = prv.PoissonSubsampledGaussianMechanism(
            sampling_probability=rate, noise_multiplier=sigma
        )
        acc = prv.PRVAccountant(
            prvs=[mech],
            eps_error=eps_error,
            delta_error=delta / 1000.0,
            max_self_compositions=[steps],
        )
        lower, estimate, upper = acc.compute_epsilon(delta=delta, num_self_compositions=[steps])
        return float(lower), float(estimate), float(upper)

    return run


# --------------------------------------------------------------------------- formatting


def _fmt_eps(x: float | None) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return str(x)
    return f"{x:.5f}"


def _fmt_ms(t: float | None) -> str:
    return "-" if t is None else f"{1e3 * t:.2f}"


def _fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b <= 0.0:
        return "-"
    return f"{a / b:.0f}x"


def _fmt_rel(a: float | None, ref: float | None) -> str:
    if a is None or ref is None or not math.isfinite(a) or not math.isfinite(ref) or ref == 0:
        return "-"
    return f"{(a - ref) / ref:+.2e}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))
    out = [line, "-" * len(line)]
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- main


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sigma", type=float, default=1.0, help="noise multiplier (default 1.0)")
    ap.add_argument("--rate", type=float, default=0.01, help="Poisson sampling rate (0.01)")
    ap.add_argument("--delta", type=float, default=1e-5, help="target delta (default 1e-5)")
    ap.add_argument("--quick", action="store_true", help="steps 1e2..1e4 only")
    ap.add_argument("--repeats", type=int, default=7, help="warm AEA repeats (median)")
    ap.add_argument(
        "--prv-eps-error", type=float, default=0.1, help="PRVAccountant eps_error (default 0.1)"
    )
    ap.add_argument(
        "--skip", nargs="*", default=[], choices=PEER_SKIPPABLE, help="optional columns to skip"
    )
    ap.add_argument("--cold-grid", action="store_true",
                    help="time cold queries on the DP-SGD grid at --cold-steps (issue 13)")
    ap.add_argument("--cold-steps", type=float, default=1e6, help="steps of --cold-grid (1e6)")
    ap.add_argument("--cold-repeats", type=int, default=31,
                    help="cold AEA queries per case, caches emptied before each (median)")
    ap.add_argument("--pld-repeats", type=int, default=3, help="PLD runs per case (median)")
    ap.add_argument("--baseline", metavar="REF", help="also time cold AEA at this git ref")
    ap.add_argument("--fresh-processes", type=int, default=0, metavar="N",
                    help="also time the first query of N fresh processes per case")
    ap.add_argument("--cold-methods", nargs="+", default=list(COLD_METHODS),
                    choices=COLD_METHODS, help="methods timed by --cold-grid (aea saddlepoint)")
    ap.add_argument("--ab-rounds", type=int, default=1, metavar="N",
                    help="with --baseline: alternate this tree and the baseline N times (cold "
                         "in-process medians), report the median over rounds (fairer under load)")
    ap.add_argument("--floor", action="store_true",
                    help="with --cold-grid: also time the idealized numpy floor of a cold query")
    ap.add_argument("--cold-worker", help=argparse.SUPPRESS)  # internal: JSON cases, one process
    ap.add_argument("--fresh-worker", help=argparse.SUPPRESS)  # internal: one first query
    return ap.parse_args(argv)


def _header(numeric, args: argparse.Namespace, steps: Sequence[int], notes: list[str]) -> None:
    print("AEA vs PLD (and PRV, RDP) for DP-SGD: Poisson-subsampled Gaussian, eps(delta)")
    print(
        f"  sigma={args.sigma:g}  rate={args.rate:g}  delta={args.delta:g}  "
        f"steps={', '.join(f'{s:.0e}' for s in steps)}"
    )
    print(
        f"  machine: {platform.platform()}; {platform.machine()}; "
        f"{os.cpu_count()} logical CPUs; Python {platform.python_version()}"
    )
    versions = {
        "numeric (edgeworth-accountant)": getattr(numeric, "__version__", "?"),
        "numpy": np.__version__,
        "scipy": _dist_version("scipy"),
        "dp-accounting": _dist_version("dp-accounting"),
        "prv-accountant": _dist_version("prv-accountant"),
        "autodp (not benchmarked)": _dist_version("autodp"),
    }
    print("  versions: " + "; ".join(f"{k} {v}" for k, v in versions.items()))
    for note in notes:
        print(f"  note: {note}")
    print()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the tables; returns a process exit code."""
    args = _parse(argv)
    if args.cold_worker:
        print(json.dumps(_cold_worker(json.loads(args.cold_worker), args.cold_repeats)))
        return 0
    if args.fresh_worker:
        print(json.dumps(_fresh_worker(json.loads(args.fresh_worker))))
        return 0
    if args.cold_grid:
        return _cold_grid(args)
    steps_list = QUICK_STEPS if args.quick else FULL_STEPS
    numeric = _import_numeric()
    sigma, rate, delta = args.sigma, args.rate, args.delta
    notes: list[str] = []

    dpa, err = _try_import("dp_accounting")
    if dpa is not None:
        for sub in ("dp_accounting.pld", "dp_accounting.rdp"):
            _, sub_err = _try_import(sub)
            if sub_err:
                dpa, err = None, sub_err
    if dpa is None:
        notes.append(f"dp_accounting unavailable ({err}); PLD and RDP columns skipped")
    prv = None
    if "prv" not in args.skip:
        prv, err = _try_import("prv_accountant")
        if prv is None:
            notes.append(f"prv_accountant unavailable ({err}); PRV column skipped")

    aea = _make_aea(numeric, sigma, rate, delta)
    peers: dict[str, Callable[[int], Any]] = {}
    if dpa is not None:
        peers["pld"] = _make_pld(dpa, sigma, rate, delta, PLD_DEFAULT_VDI)
        if "pld-coarse" not in args.skip:
            peers["pld-coarse"] = _make_pld(dpa, sigma, rate, delta, PLD_COARSE_VDI)
        if "rdp" not in args.skip:
            peers["rdp"] = _make_rdp(dpa, sigma, rate, delta)
    if prv is not None:
        peers["prv"] = _make_prv(prv, sigma, rate, delta, args.prv_eps_error)

    cleared = _clear_cumulant_cache(numeric)
    notes.append(
        "t_AEA = median of "
        f"{args.repeats} WARM calls (per-step cumulants already cached); the COLD first call "
        + ("(cumulant cache cleared) " if cleared else "(first call in this process) ")
        + "is reported once below"
    )
    if peers:
        notes.append(
            "t_PLD, t_PRV, t_RDP = one end-to-end run (construct + compose + get_epsilon) after an "
            "untimed warm-up at 10 steps; PLD = PLDAccountant(value_discretization_interval=1e-4, "
            "the default), PLD(1e-3) the coarser grid; neighbouring relation add/remove"
        )
    if "prv" in peers:
        notes.append(
            f"PRV = PRVAccountant(eps_error={args.prv_eps_error:g}, delta_error=delta/1000): "
            "estimate with [lower, upper]"
        )
    _header(numeric, args, steps_list, notes)

    # Cold AEA call: the first one computes the per-step cumulant quadrature.
    cold_res, cold_t = _timed(lambda: aea(steps_list[0]))
    for name, fn in peers.items():  # untimed warm-ups (imports, first-use set-up)
        try:
            with _quiet():
                fn(10)
        except Exception as exc:
            _log(f"warm-up of {name} failed: {type(exc).__name__}: {exc}")

    results = []
    for steps in steps_list:
        row: dict[str, Any] = {"steps": steps}
        res = aea(steps)
        times = []
        for _ in range(max(1, args.repeats)):
            res, t = _timed(lambda s=steps: aea(s))
            times.append(t)
        row["aea"], row["t_aea"], row["aea_warn"] = res.epsilon, statistics.median(times), res
        for order in (0, 1):
            try:
                row[f"aea{order}"] = aea(steps, order).epsilon
            except Exception as exc:
                _log(f"AEA order {order} at {steps} steps failed: {exc}")
                row[f"aea{order}"] = None
        for name, fn in peers.items():
            _log(f"steps={steps:.0e}: running {name} ...")
            try:
                with _quiet():
                    value, t = _timed(lambda fn=fn, s=steps: fn(s))
            except Exception as exc:  # never crash on a peer
                _log(f"  {name} failed at {steps} steps: {type(exc).__name__}: {exc}")
                value, t = None, None
            row[name], row[f"t_{name}"] = value, t
            if t is not None:
                _log(f"  {name}: {t:.2f} s")
        results.append(row)

    print(
        f"AEA cold first call (steps={steps_list[0]:.0e}, order 2): "
        f"{1e3 * cold_t:.2f} ms (eps={_fmt_eps(cold_res.epsilon)}); warm timings below"
    )
    print()

    # Table 1: the headline comparison with PLD (default discretization).
    head1 = [
        "steps",
        "eps_AEA(o2)",
        "eps_PLD",
        "rel.diff",
        "t_AEA warm(ms)",
        "t_PLD(ms)",
        "t_PLD/t_AEA",
    ]
    rows1 = []
    flagged = []
    for r in results:
        mark = "*" if r["aea_warn"].warnings else ""
        if mark:
            flagged.append(r)
        rows1.append(
            [
                f"{r['steps']:.0e}",
                _fmt_eps(r["aea"]) + mark,
                _fmt_eps(r.get("pld")),
                _fmt_rel(r["aea"], r.get("pld")),
                _fmt_ms(r["t_aea"]),
                _fmt_ms(r.get("t_pld")),
                _fmt_ratio(r.get("t_pld"), r["t_aea"]),
            ]
        )
    print("Table 1: AEA (order 2) vs dp_accounting PLD (value_discretization_interval=1e-4)")
    print("  rel.diff = (eps_AEA - eps_PLD) / eps_PLD")
    print(_table(head1, rows1))
    print()

    # Table 2: the other columns.
    head2 = ["steps", "eps_AEA(o0)", "eps_AEA(o1)"]
    if "pld-coarse" in peers:
        head2 += ["eps_PLD(1e-3)", "t_PLD(1e-3)(ms)"]
    if "prv" in peers:
        head2 += ["eps_PRV [lower, upper]", "t_PRV(ms)"]
    if "rdp" in peers:
        head2 += ["eps_RDP", "t_RDP(ms)"]
    rows2 = []
    for r in results:
        cells = [f"{r['steps']:.0e}", _fmt_eps(r["aea0"]), _fmt_eps(r["aea1"])]
        if "pld-coarse" in peers:
            cells += [_fmt_eps(r.get("pld-coarse")), _fmt_ms(r.get("t_pld-coarse"))]
        if "prv" in peers:
            v = r.get("prv")
            cells.append("-" if v is None else f"{v[1]:.5f} [{v[0]:.4f}, {v[2]:.4f}]")
            cells.append(_fmt_ms(r.get("t_prv")))
        if "rdp" in peers:
            cells += [_fmt_eps(r.get("rdp")), _fmt_ms(r.get("t_rdp"))]
        rows2.append(cells)
    print("Table 2: AEA orders 0/1 and the other peers")
    print(_table(head2, rows2))
    print()

    if flagged:
        print("* AEA diagnostics (the estimate is flagged as unreliable at these steps):")
        for r in flagged:
            for w in r["aea_warn"].warnings:
                print(f"    steps={r['steps']:.0e}: {w}")
        print()
    print(
        "AEA is an estimate, not a bound (it can under-report eps); PLD is a discretized "
        "numerical approximation with its own (pessimistic-by-construction) error."
    )
    return 0


# --------------------------------------------------------------------------- cold grid (issue 13)

COLD_GRID = tuple((sigma, rate) for rate in (0.001, 0.01) for sigma in (0.8, 1.0, 2.0))
COLD_METHODS = ("aea", "saddlepoint")


def _empty_caches() -> None:
    """Empty every composition-dependent cache: what the fuzz empties (``clear_cgf_cache``: the
    saddlepoint's per-mechanism cache and the mechanisms' CGF rules), the per-step cumulants,
    and (at older commits) the correction-polynomial cache. Tables that depend on no parameter
    (Gauss-Legendre nodes per node count) stay: any first query of the process fills them."""
    from numeric.cgf import clear_cgf_cache

    clear_cgf_cache()
    for module, name in (("numeric.mechanisms.subsampled_gaussian", "_cached_cumulants"),
                         ("numeric.edgeworth", "_correction_polynomial_cached")):
        fn = getattr(sys.modules.get(module), name, None)
        if fn is not None:
            fn.cache_clear()


def _import_query_modules():
    numeric = _import_numeric()
    for sub in ("aea", "saddlepoint", "methods", "cgf", "mechanisms.subsampled_gaussian"):
        importlib.import_module(f"numeric.{sub}")
    return numeric


def _cold_worker(cases: list, repeats: int) -> list:
    """Cold AEA queries in this process: per case, the medians of ``repeats`` queries with
    every composition-dependent cache emptied before each (CPU time of the thread, wall)."""
    numeric = _import_query_modules()
    from numeric.methods import epsilon

    out = []
    for sigma, rate, steps, delta, *meth in cases:
        method = meth[0] if meth else "aea"
        comp = numeric.compose([(numeric.PoissonSubsampledGaussian(sigma, rate), int(steps))])
        cpu, wall = [], []
        for _ in range(max(1, repeats)):
            _empty_caches()
            w0, c0 = time.perf_counter(), time.thread_time()
            res = epsilon(comp, delta, method=method)
            cpu.append(time.thread_time() - c0)
            wall.append(time.perf_counter() - w0)
        out.append({"eps": res.epsilon, "warnings": len(res.warnings),
                    "cpu": statistics.median(cpu), "wall": statistics.median(wall),
                    "cpu_min": min(cpu)})
    return out


def _fresh_worker(case: list) -> dict:
    """The first AEA query of this (fresh) process, modules imported first (not timed)."""
    numeric = _import_query_modules()
    from numeric.methods import epsilon

    sigma, rate, steps, delta, *meth = case
    comp = numeric.compose([(numeric.PoissonSubsampledGaussian(sigma, rate), int(steps))])
    w0, c0 = time.perf_counter(), time.thread_time()
    res = epsilon(comp, delta, method=meth[0] if meth else "aea")
    return {"eps": res.epsilon, "cpu": time.thread_time() - c0, "wall": time.perf_counter() - w0}


def _run_json(cmd: list[str], cwd: str) -> Any:
    env = dict(os.environ, PYTHONPATH=cwd, PYTHONWARNINGS="ignore")
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _measure_tree(root: str, cases: list, args: argparse.Namespace) -> tuple[list, list | None]:
    """Cold timings of the project at ``root`` (in subprocesses that import it from there)."""
    script = os.path.abspath(__file__)
    cold = _run_json([sys.executable, script, "--cold-worker", json.dumps(cases),
                      "--cold-repeats", str(args.cold_repeats)], root)
    fresh = None
    if args.fresh_processes > 0:
        fresh = []
        for case in cases:
            runs = [_run_json([sys.executable, script, "--fresh-worker", json.dumps(case)], root)
                    for _ in range(args.fresh_processes)]
            fresh.append({k: statistics.median(r[k] for r in runs) for k in ("cpu", "wall")})
    return cold, fresh


def _cold_only(root: str, cases: list, args: argparse.Namespace) -> list:
    """One in-process cold-worker run at ``root`` (no fresh processes)."""
    return _run_json([sys.executable, os.path.abspath(__file__), "--cold-worker",
                      json.dumps(cases), "--cold-repeats", str(args.cold_repeats)], root)


def _median_rounds(rounds: list[list[dict]]) -> list[dict]:
    """Per case, the median over rounds of each timing (eps and warnings of the first)."""
    out = []
    for per_case in zip(*rounds, strict=True):
        row = dict(per_case[0])
        for key in ("cpu", "wall", "cpu_min"):
            row[key] = statistics.median(r[key] for r in per_case)
        out.append(row)
    return out


def _pld_cold(dpa, sigma: float, rate: float, steps: int, delta: float, repeats: int) -> dict:
    cpu, wall, eps = [], [], None
    for _ in range(max(1, repeats)):
        w0, c0 = time.perf_counter(), time.process_time()
        with _quiet():
            eps = _make_pld(dpa, sigma, rate, delta, PLD_DEFAULT_VDI)(steps)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {"eps": eps, "cpu": statistics.median(cpu), "wall": statistics.median(wall)}


def _delta_path(n: int = 10**6) -> tuple[float, float]:
    """Medians of the public delta(comp, eps, method='aea') for n eps values and its kernel
    (the measurement of benchmarks/compare_peers.py, run here)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compare_peers import delta_array_speed

    res = delta_array_speed(n)
    return res["public_s"], res["kernel_s"]


def _cold_grid(args: argparse.Namespace) -> int:
    """The issue-13 cold-query table (module docstring, ``--cold-grid``)."""
    _import_numeric()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    steps, delta = int(args.cold_steps), args.delta
    cases = [[s, q, steps, delta, m] for s, q in COLD_GRID for m in args.cold_methods]
    dpa, _ = _try_import("dp_accounting.pld")
    if dpa is not None:
        dpa = importlib.import_module("dp_accounting")
    print(f"Cold queries at m = {steps:.0e}, delta = {delta:g} (issue 13); machine: "
          f"{platform.platform()}, {os.cpu_count()} logical CPUs; numpy {np.__version__}, "
          f"dp-accounting {_dist_version('dp-accounting')}")
    print(f"{', '.join(args.cold_methods)}: median of {args.cold_repeats} queries per case in "
          "one process, every composition-dependent cache emptied before each; PLD: median of "
          f"{args.pld_repeats} end-to-end runs (construct + compose + get_epsilon, "
          "value_discretization_interval 1e-4). CPU = CPU time (ours: thread; PLD: process), "
          "robust to other jobs on a shared machine; wall = elapsed.")
    _log("timing cold queries (this tree) ...")
    after, after_fresh = _measure_tree(root, cases, args)
    before = before_fresh = None
    if args.baseline:
        tmp = tempfile.mkdtemp(prefix="aea-baseline-")
        tree = os.path.join(tmp, "tree")
        subprocess.run(["git", "-C", root, "worktree", "add", "--detach", tree, args.baseline],
                       check=True, capture_output=True)
        try:
            _log(f"timing cold queries at {args.baseline} ...")
            before, before_fresh = _measure_tree(tree, cases, args)
            rounds_a, rounds_b = [after], [before]
            for r in range(1, max(1, args.ab_rounds)):  # alternate: load drifts hit both trees
                _log(f"A/B round {r + 1} of {args.ab_rounds} ...")
                rounds_a.append(_cold_only(root, cases, args))
                rounds_b.append(_cold_only(tree, cases, args))
            after, before = _median_rounds(rounds_a), _median_rounds(rounds_b)
        finally:
            subprocess.run(["git", "-C", root, "worktree", "remove", "--force", tree],
                           check=False, capture_output=True)
    if args.ab_rounds > 1 and args.baseline:
        print(f"cold ms: median over {args.ab_rounds} alternating A/B rounds of the in-process "
              "medians")
    plds: dict[tuple[float, float], dict | None] = {}
    rows = []
    for i, (sigma, rate, _, _, method) in enumerate(cases):
        if (sigma, rate) not in plds:
            plds[sigma, rate] = None
            if dpa is not None:
                _log(f"timing PLD sigma={sigma} rate={rate} ...")
                plds[sigma, rate] = _pld_cold(dpa, sigma, rate, steps, delta, args.pld_repeats)
        pld = plds[sigma, rate]
        a, b = after[i], (before[i] if before else None)
        cells = [f"q={rate:g} sigma={sigma:g}", method, _fmt_eps(a["eps"]),
                 _fmt_eps(pld["eps"]) if pld else "-",
                 f"{_fmt_ms(pld['cpu'])} / {_fmt_ms(pld['wall'])}" if pld else "-"]
        if b:
            cells.append(f"{_fmt_ms(b['cpu'])} / {_fmt_ms(b['wall'])}")
        cells.append(f"{_fmt_ms(a['cpu'])} / {_fmt_ms(a['wall'])}")
        if after_fresh:
            if before_fresh:
                cells.append(f"{_fmt_ms(before_fresh[i]['cpu'])} / "
                             f"{_fmt_ms(before_fresh[i]['wall'])}")
            cells.append(f"{_fmt_ms(after_fresh[i]['cpu'])} / {_fmt_ms(after_fresh[i]['wall'])}")
        if pld:
            ratio = f"{_fmt_ratio(pld['cpu'], a['cpu'])} / {_fmt_ratio(pld['wall'], a['wall'])}"
            if b:
                ratio = (f"{_fmt_ratio(pld['cpu'], b['cpu'])} -> " + ratio)
            cells.append(ratio)
        rows.append(cells)
    head = ["case", "method", "eps", "eps PLD", "PLD cold ms (CPU / wall)"]
    if before:
        head.append(f"cold ms before ({args.baseline})")
    head.append("cold ms after")
    if after_fresh:
        if before_fresh:
            head.append("fresh-process before")
        head.append("fresh-process after")
    head.append("PLD / ours (CPU / wall)" + (" before -> after" if before else ""))
    print(_table(head, rows))
    if args.floor:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from cold_floor import floor_report

        print()
        print(floor_report(plds))
    public, kernel = _delta_path()
    print(f"\npublic delta(comp, eps, method='aea') for 1e6 eps values: {1e3 * public:.1f} ms; "
          f"its kernel (q_only_delta per pair order): {1e3 * kernel:.1f} ms; ratio "
          f"{public / kernel:.2f} (medians of 5, wall time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
