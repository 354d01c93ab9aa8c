"""The certified lattice at a target width on the DP-SGD grid, side by side with dp_accounting.

Run:  python benchmarks/bench_certified_grid.py [--quick] [--old] [--hetero N ...] [--out FILE]

For each configuration (Poisson rate q, noise multiplier sigma, steps m, delta) it reports the
certified eps interval of :func:`certify.lattice_target.target_epsilon_interval` at the default
target (relative width 1e-4, absolute 1e-6 below eps = 0.01), its width, wall and CPU time, the
peak resident memory of the process that computed it (each configuration runs in a fresh
child), and dp_accounting's PLD estimate at its default discretization (an estimate, not a
bound) with its time, whether it lies inside, and the time ratio certified / PLD. ``--old`` adds
the fixed-grid lattice (:func:`certify.lattice.lattice_epsilon_interval`, h = 2^-12 by default)
and checks that old and new intervals intersect. ``--hetero N`` times N distinct noise levels
(sigma 0.8 .. 2.0, rate 0.01, 100 steps each, delta 1e-5; ``--repeat K`` medians of K runs,
``--hetero-pld`` dp_accounting's PLD on the same composition). Writes a Markdown table (default
benchmarks/results/certified_grid.md).

Timings on a shared machine are contended: the CPU column is the process time of the child
(``--repeat N``: the median of N runs, PLD likewise). ``--configs`` and ``--deltas`` pick rows,
``--cpu-limit S`` ends a certified query after S s of CPU (reported as an error row);
``--no-split`` computes the laws on one fine lattice each (the method before the fine-core /
coarse-tail laws of :mod:`certify.lattice_split`). ``--public`` times the public ``certified``
method (:func:`certify.combine.certified_epsilon`) instead of the lattice alone.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

RATES = (0.001, 0.01, 0.1)
SIGMAS = (0.5, 0.8, 1.0, 2.0)
COUNTS = (10**2, 10**3, 10**4, 10**5, 10**6, 10**7)
DELTAS = (1e-5, 1e-10)
QUICK = [(0.001, 2.0, 10**6), (0.001, 1.0, 10**6), (0.001, 0.8, 10**5), (0.01, 1.0, 10**4),
         (0.01, 1.0, 10**7), (0.1, 1.0, 10**3), (0.01, 0.5, 10**2), (0.001, 2.0, 10**2)]


def _pld(q: float, s: float, m: int, delta: float) -> tuple[float | None, float]:
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        return None, 0.0
    t0 = time.process_time()
    ev = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), m)
    acc = pld_privacy_accountant.PLDAccountant()
    eps = acc.compose(ev).get_epsilon(delta)
    return eps, time.process_time() - t0


def _hetero_comp(n: int, rate: float = 0.01, steps: int = 100) -> list:
    """n distinct noise levels sigma 0.8 .. 2.0 (evenly spaced), each run ``steps`` times."""
    return [(0.8 + 1.2 * i / max(n - 1, 1), rate, steps) for i in range(n)]


def _pld_hetero(n: int, delta: float = 1e-5) -> tuple[float | None, float]:
    """dp_accounting's PLD (default discretization) on the --hetero composition."""
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        return None, 0.0
    t0 = time.process_time()
    acc = pld_privacy_accountant.PLDAccountant()
    for s, q, m in _hetero_comp(n):
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), m))
    return acc.get_epsilon(delta), time.process_time() - t0


def _child(conn, job, cpu_limit: float = 0.0) -> None:
    kind, payload = job
    if os.environ.get("LATTICE_NO_SPLIT"):  # --no-split: one fine lattice per law (before)
        import certify.lattice_target as lt

        lt.SPLIT_TAILS = False
    if cpu_limit > 0:  # SIGXCPU ends the child; the parent reports the limit
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_limit), int(cpu_limit) + 5))
    from certify.lattice import lattice_epsilon_interval
    from certify.lattice_target import target_epsilon_interval
    from numeric.mechanisms import PoissonSubsampledGaussian

    epsilon_interval = target_epsilon_interval  # the lattice alone
    if os.environ.get("CERTIFIED_PUBLIC"):  # --public: every certified method, as users call it
        import importlib

        from certify.combine import certified_epsilon as epsilon_interval

        for name in ("exact", "one_step", "eeai", "chernoff", "mechanisms.random_allocation",
                     "mechanisms.subsampled_gaussian_reveal"):  # their imports before the clock
            importlib.import_module(f"certify.{name}")

    t0, c0 = time.perf_counter(), time.process_time()
    try:
        if kind == "new":
            q, s, m, d = payload
            b = epsilon_interval([(PoissonSubsampledGaussian(s, q), m)], d)
        elif kind == "old":
            q, s, m, d = payload
            b = lattice_epsilon_interval([(PoissonSubsampledGaussian(s, q), m)], d)
        else:
            n = payload
            comp = [(PoissonSubsampledGaussian(s, q), m) for s, q, m in _hetero_comp(n)]
            b = epsilon_interval(comp, 1e-5)
        out = {"lo": float(b.lower_mpf), "hi": float(b.upper_mpf) if b.upper.is_finite else
               float("inf"), "warn": [w for w in b.warnings if "target" in w],
               "res": b.inputs.get("resolution"), "h": b.inputs.get("h")}
    except Exception as exc:  # reported in the table
        out = {"error": f"{type(exc).__name__}: {exc}"[:160]}
    out["wall"] = time.perf_counter() - t0
    out["cpu"] = time.process_time() - c0
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    conn.send(out)
    conn.close()


def _run(job, cpu_limit: float = 0.0) -> dict:
    # a fresh interpreter per query (spawn, not fork): its peak RSS is its own, not the pages of
    # a parent that ran dp_accounting's PLD (5 GiB at rate 0.1, sigma 0.5, m = 1e6)
    ctx = mp.get_context("spawn")
    a, b = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(b, job, cpu_limit))
    p.start()
    b.close()
    try:
        out = a.recv()
    except EOFError:
        out = {"error": f"killed (cpu limit {cpu_limit:g} s)" if cpu_limit else "child died"}
    p.join()
    return out


def _run_repeated(job, repeat: int, cpu_limit: float) -> dict:
    """The first run's result with the median CPU and wall time over ``repeat`` runs."""
    runs = [_run(job, cpu_limit)]
    if "error" in runs[0]:
        return runs[0]
    runs += [_run(job, cpu_limit) for _ in range(repeat - 1)]
    out = dict(runs[0])
    for key in ("cpu", "wall"):
        out[key] = statistics.median(r[key] for r in runs if key in r)
    out["rss_mib"] = max(r["rss_mib"] for r in runs if "rss_mib" in r)
    return out


PLD_CPU_LIMIT = 300  # s: dp_accounting's PLD at rate 0.1, sigma 0.5, m = 1e6 took 74 s
PLD_MEMORY_GIB = 16  # address space (--pld-memory-gib): PLD used 5 GiB of RSS at m = 1e6, and
# 8 GiB of address space were too few there


def _pld_child(conn, args, memory_gib: float) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (PLD_CPU_LIMIT, PLD_CPU_LIMIT + 5))
    limit = int(memory_gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        import dp_accounting  # noqa: F401  (imported before the clock starts)

        eps, t = _pld(*args)
        conn.send({"eps": eps, "cpu": t,
                   "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    except MemoryError:
        conn.send({"error": f"out of memory ({memory_gib:g} GiB)"})
    except Exception as exc:  # reported in the table
        conn.send({"error": f"{type(exc).__name__}: {exc}"[:100]})
    conn.close()


def _pld_isolated(q: float, s: float, m: int, delta: float,
                  memory_gib: float = PLD_MEMORY_GIB) -> tuple[float | None, float, str]:
    """dp_accounting's PLD in a fresh process under CPU and memory limits: (eps, CPU s, note)."""
    ctx = mp.get_context("spawn")
    a, b = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_pld_child, args=(b, (q, s, m, delta), memory_gib))
    p.start()
    b.close()
    try:
        out = a.recv()
    except EOFError:
        out = {"error": f"killed (cpu limit {PLD_CPU_LIMIT} s)"}
    p.join()
    if "error" in out:
        return None, 0.0, out["error"]
    return out["eps"], out["cpu"], ""


def _pld_repeated(q: float, s: float, m: int, delta: float, repeat: int,
                  memory_gib: float = PLD_MEMORY_GIB):
    runs = [_pld_isolated(q, s, m, delta, memory_gib) for _ in range(repeat)]
    return runs[0][0], statistics.median(t for _, t, _ in runs), runs[0][2]


def _fmt(x: float | None, digits: int = 6) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a subset (QUICK) of the grid")
    ap.add_argument("--old", action="store_true", help="also the fixed-grid lattice")
    ap.add_argument("--hetero", type=int, nargs="*", default=[], metavar="N")
    ap.add_argument("--hetero-pld", action="store_true",
                    help="also time dp_accounting's PLD on each --hetero composition")
    ap.add_argument("--no-grid", action="store_true", help="only the --hetero rows")
    ap.add_argument("--configs", default=None, metavar="Q,S,M;...",
                    help="only these (rate, sigma, steps) rows, e.g. '0.001,2,1e6;0.1,1,1e3'")
    ap.add_argument("--deltas", default=None, metavar="D,...", help="only these deltas")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per query (certified and PLD); the median CPU time is reported")
    ap.add_argument("--no-split", action="store_true",
                    help="one fine lattice per composed law (lattice_target.SPLIT_TAILS off: "
                         "the numbers before the fine-core/coarse-tail laws)")
    ap.add_argument("--pld-memory-gib", type=float, default=PLD_MEMORY_GIB, metavar="G",
                    help="address-space limit of the dp_accounting PLD process")
    ap.add_argument("--no-pld", action="store_true",
                    help="skip dp_accounting's PLD (a second, concurrent run of the certified "
                         "side only, e.g. an older commit's code on PYTHONPATH for a before/after "
                         "on the same machine)")
    ap.add_argument("--public", action="store_true",
                    help="time the public certified method (certify.combine.certified_epsilon: "
                         "the lattice with the closed forms, Chernoff and the EEAI where they "
                         "run) instead of the lattice alone")
    ap.add_argument("--cpu-limit", type=float, default=0.0, metavar="S",
                    help="end a certified query after S s of CPU (reported as an error)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "certified_grid.md"))
    args = ap.parse_args()
    if args.no_split:
        os.environ["LATTICE_NO_SPLIT"] = "1"
    if args.public:
        os.environ["CERTIFIED_PUBLIC"] = "1"
    import certify.lattice_target  # noqa: F401  (imported before forking)
    import numeric.mechanisms  # noqa: F401

    configs = [] if args.no_grid else (
        QUICK if args.quick else [(q, s, m) for q in RATES for s in SIGMAS for m in COUNTS])
    if args.configs:
        configs = [(float(q), float(s), int(float(m))) for q, s, m in
                   (c.split(",") for c in args.configs.split(";") if c.strip())]
    deltas = DELTAS if not args.deltas else tuple(float(d) for d in args.deltas.split(","))
    lines = [
        "| rate | sigma | m | delta | certified [lower, upper] | rel. width | wall s | cpu s "
        "| peak MiB | PLD eps | PLD cpu s | PLD inside | cpu ratio | old [lower, upper] | old s "
        "| old and new intersect |",
        "|" + "---|" * 16,
    ]
    ratios, fails = [], 0
    for q, s, m in configs:
        for d in deltas:
            new = _run_repeated(("new", (q, s, m, d)), args.repeat, args.cpu_limit)
            pld, pld_t, pld_note = ((None, 0.0, "") if args.no_pld else
                                    _pld_repeated(q, s, m, d, args.repeat, args.pld_memory_gib))
            if "error" in new:
                row = f"| {q} | {s} | {m:.0e} | {d:.0e} | {new['error']} |" + " |" * 11
                lines.append(row)
                print(row, flush=True)
                fails += 1
                continue
            lo, hi = new["lo"], new["hi"]
            width = (hi - lo) / hi if hi > 0 else 0.0
            ok_w = hi - lo <= 1e-4 * max(hi, 0.01)
            inside = None if pld is None else lo <= pld <= hi
            ratio = new["cpu"] / pld_t if pld_t > 0 else None
            if ratio is not None:
                ratios.append(ratio)
            old_s = old_t = inter = "-"
            if args.old:
                old = _run(("old", (q, s, m, d)))
                if "error" in old:
                    old_s = old["error"]
                else:
                    old_s = f"[{old['lo']:.6f}, {old['hi']:.6f}]"
                    inter = str(old["lo"] <= hi and lo <= old["hi"])
                old_t = f"{old['cpu']:.2f}"
            row = (f"| {q} | {s} | {m:.0e} | {d:.0e} | [{lo:.7f}, {hi:.7f}] | {width:.1e}"
                   f"{'' if ok_w else ' (above target)'} | {new['wall']:.2f} | {new['cpu']:.2f} "
                   f"| {new['rss_mib']:.0f} | {_fmt(pld) if not pld_note else pld_note} | "
                   f"{pld_t:.2f} | {inside} | "
                   f"{_fmt(ratio, 2)} | {old_s} | {old_t} | {inter} |")
            lines.append(row)
            print(row, flush=True)
            _write(args.out, lines)
    if args.hetero:
        lines += ["", "heterogeneous DP-SGD: N noise levels sigma 0.8..2.0 x 100 steps, rate "
                  f"0.01, delta 1e-5 (medians of {args.repeat} runs)", "",
                  "| levels | certified [lower, upper] | rel. width | wall s | cpu s | peak MiB "
                  "| resolution | PLD eps | PLD cpu s | warning |", "|" + "---|" * 10]
    for n in args.hetero:
        runs = [_run(("hetero", n)) for _ in range(max(1, args.repeat))]
        het = runs[-1]
        pld, pld_t = _pld_hetero(n) if args.hetero_pld else (None, 0.0)
        if "error" in het:
            row = f"| {n} | {het['error']} |" + " |" * 8
        else:
            wall = statistics.median(r["wall"] for r in runs)
            cpu = statistics.median(r["cpu"] for r in runs)
            row = (f"| {n} | [{het['lo']:.7f}, {het['hi']:.7f}] | "
                   f"{(het['hi'] - het['lo']) / het['hi']:.1e} | {wall:.1f} | {cpu:.1f} | "
                   f"{het['rss_mib']:.0f} | {het['res']} | {_fmt(pld)} | {pld_t:.1f} | "
                   f"{'; '.join(het['warn']) or '-'} |")
        lines.append(row)
        print(row, flush=True)
    if ratios:
        lines.append(f"\nmedian cpu ratio certified / PLD: {statistics.median(ratios):.2f} "
                     f"(max {max(ratios):.2f}, {len(ratios)} queries; CPU medians of "
                     f"{args.repeat} runs); errors: {fails}")
        print(lines[-1])
    lines.append("\nTimings contended (a 2-core machine shared with other jobs): the cpu column "
                 "is the process time of a fresh process per query (imports before the clock), "
                 "the PLD column likewise (dp_accounting in its own process, at most "
                 f"{PLD_CPU_LIMIT} s and {args.pld_memory_gib:g} GiB); the ratio compares the "
                 "two; peak MiB is the certified process's whole peak RSS (interpreter and "
                 "imports included).")
    _write(args.out, lines)


def _write(path: str, lines: list[str]) -> None:
    """Write the table so far (rows appear as they finish)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
