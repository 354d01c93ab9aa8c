r"""Side by side: this toolkit against the DP accounting libraries practitioners use (issue 13).

One run, the same configurations for everyone:

* this toolkit: ``aea`` (Edgeworth estimate with its reliability diagnostic), ``saddlepoint``
  (estimate), ``auto`` (the default) and ``certified`` (a proven interval [lower, upper]);
* Google's dp_accounting: the PLD accountant (``PLDAccountant``, pessimistic, what users get)
  and the optimistic PLD (``pessimistic_estimate=False``, same discretization 1e-4), and the RDP
  accountant (default orders);
* Microsoft's prv_accountant (``PRVAccountant``, eps_error 0.01, delta_error delta/1000) with its
  own error bars [lower, upper];
* autodp (RDP-based ``get_approxDP``).

Grid: DP-SGD (Poisson-subsampled Gaussian) with rate in {0.001, 0.01}, sigma in {0.8, 1.0, 2.0},
steps in {1e2, 1e3, 1e4, 1e5, 1e6}, delta 1e-5; Laplace (scale 10, sensitivity 1; 1e2 .. 1e4
steps); randomized response (eps0 = 1/sqrt(10), 10 steps, delta 1e-3: the README's seed
example, exact value 2.8897...; eps0 = 0.1, 1000 steps); heterogeneous DP-SGD (10 and 100 noise
levels, sigma geometric in [0.8, 2.0], rate 0.01, 1000 steps each). ``--quick`` keeps a small
grid (a few minutes).

**Timing.** Each (configuration, method) runs in its own subprocess: the libraries are imported
first (timed and reported separately as ``import``), then the query is timed once (``cold``: the
first query in a fresh process, every cache empty) and again (``warm``: the same query repeated
in that process, skipped when the cold query took over ``--warm-cap`` seconds). A peer query
includes building its accountant and composing (what its users run); ours includes ``compose``.
Timings are wall clock on whatever machine runs this (on a shared machine they are contended:
repeat and compare ratios in the same run).

**Safety.** Every answer is checked against the certified interval: ``safe`` (>= its upper end,
proven not to under-report), ``unsafe`` (< its lower end, proven to under-report), ``inside``
(between the ends: undecided at the interval's width). For this toolkit's AEA the honesty
numbers of issue 13 are reported: a *silent miss* is an AEA answer more than 1% (relative) off
the certified interval with no warning; and the share of AEA answers within 0.5% that carry a
warning. Cases with exact answers (randomized response) list which peers fail them.

Also measured in process: the public ``numeric.delta(comp, eps_array)`` for 10^6 eps values
against its kernel (:func:`numeric.edgeworth.q_only_delta` on the same array).

Run from the repository root (peers from the ``bench`` extra; a missing peer is reported, not
fatal)::

    python benchmarks/compare_peers.py --quick
    python benchmarks/compare_peers.py --markdown benchmarks/results/compare_peers.md \
        --json out.json

Options: ``--quick``, ``--markdown FILE``, ``--json FILE``, ``--methods a,b`` (a subset; also
``dropin-certified`` and ``dropin-opacus``, the certified dp_accounting and Opacus drop-ins, run
only when named: their section checks that each returns the certified upper end and whether that
is proven within 0.1% of the truth, with its time next to dp_accounting's PLD),
``--cases TEXT`` (ids containing TEXT), ``--reuse FILE`` (repeatable: reuse the results, with
their timings, of an earlier ``--json`` run, e.g. the certified intervals, which take minutes;
the Markdown names the files), ``--timeout`` seconds per subprocess (default 1800),
``--warm-cap`` (default 5 s; with ``--json FILE`` the rows measured so far are also kept in
``FILE.partial`` after every case, for ``--reuse``), ``--cold-repeats N`` (N fresh processes
per (case, method); the times reported are medians), ``--no-delta-array``, ``--no-run``
(tables from the ``--reuse`` files only, nothing computed).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers_report import (  # noqa: E402 (the script's own directory, first)
    METHODS,
    OPACUS_KINDS,
    OPTIONAL,
    OURS,
    fmt_eps,
    fmt_s,
    honesty,
    markdown,
)

HAVE_DP_ACCOUNTING = importlib.util.find_spec("dp_accounting") is not None
PEER_DIST = {"pld": "dp-accounting", "pld-optimistic": "dp-accounting", "rdp": "dp-accounting",
             "prv": "prv-accountant", "autodp": "autodp"}
PEER_MODULE = {"dp-accounting": "dp_accounting", "prv-accountant": "prv_accountant",
               "autodp": "autodp"}


# ------------------------------------------------------------------------------------------
# The grid
# ------------------------------------------------------------------------------------------


def _steps_id(m: int) -> str:
    return f"1e{round(math.log10(m))}" if m >= 100 and 10 ** round(math.log10(m)) == m else str(m)


def grid(quick: bool) -> list[dict]:
    """The configurations: dicts with ``id``, ``kind``, parameters and ``delta``."""
    cases: list[dict] = []
    rates = (0.01,) if quick else (0.001, 0.01)
    sigmas = (1.0,) if quick else (0.8, 1.0, 2.0)
    steps = (10**2, 10**3) if quick else (10**2, 10**3, 10**4, 10**5, 10**6)
    for q in rates:
        for s in sigmas:
            for m in steps:
                cases.append({"id": f"dpsgd q={q:g} sigma={s:g} m={_steps_id(m)}",
                              "kind": "dpsgd", "sigma": s, "rate": q, "steps": m,
                              "delta": 1e-5})
    for m in ((10**2,) if quick else (10**2, 10**3, 10**4)):
        cases.append({"id": f"laplace b=10 m={_steps_id(m)}", "kind": "laplace", "scale": 10.0,
                      "steps": m, "delta": 1e-5})
    cases.append({"id": "rr eps0=1/sqrt10 n=10", "kind": "rr", "eps0": 1 / math.sqrt(10),
                  "steps": 10, "delta": 1e-3, "exact": True})
    if not quick:
        cases.append({"id": "rr eps0=0.1 n=1000", "kind": "rr", "eps0": 0.1, "steps": 1000,
                      "delta": 1e-5, "exact": True})
    for n in ((10,) if quick else (10, 100)):
        cases.append({"id": f"hetero {n} levels", "kind": "hetero", "levels": n, "rate": 0.01,
                      "steps": 1000, "delta": 1e-5})
    return cases


def _hetero_sigmas(n: int) -> list[float]:
    return [0.8 * (2.0 / 0.8) ** (i / (n - 1)) for i in range(n)]


def _rr_p(eps0: float) -> float:
    """dp_accounting's noise parameter p of 2-bucket randomized response with eps0:
    e^eps0 = (2 (1 - p) + p) / p, so p = 2 / (e^eps0 + 1)."""
    return 2.0 / (math.exp(eps0) + 1.0)


# ------------------------------------------------------------------------------------------
# One query per method (run inside the worker subprocess)
# ------------------------------------------------------------------------------------------


def _ours(case: dict, method: str) -> tuple[Callable[[], dict], list[str]]:
    import numeric
    import numeric.aea
    import numeric.auto
    import numeric.saddlepoint
    from numeric.methods import epsilon, load_plugins

    if method in ("auto", "certified"):
        load_plugins()
        import certify.combine  # noqa: F401

    def terms():
        kind = case["kind"]
        if kind == "dpsgd":
            return [(numeric.PoissonSubsampledGaussian(case["sigma"], case["rate"]),
                     case["steps"])]
        if kind == "laplace":
            return [(numeric.Laplace(scale=case["scale"]), case["steps"])]
        if kind == "rr":
            return [(numeric.RandomizedResponse(case["eps0"]), case["steps"])]
        return [(numeric.PoissonSubsampledGaussian(s, case["rate"]), case["steps"])
                for s in _hetero_sigmas(case["levels"])]

    built = terms()  # the mechanisms' objects: cheap, outside the timing is fine either way

    def run() -> dict:
        res = epsilon(numeric.compose(built), case["delta"], method)
        d = res.to_dict()
        if method == "certified":
            return {"eps": res.value, "lower": d.get("lower"), "upper": d.get("upper"),
                    "rel_width": res.inputs.get("rel_width"),
                    "warnings": len(d.get("warnings", []))}
        return {"eps": float(res.epsilon), "warnings": len(res.warnings),
                "warning_texts": list(res.warnings)[:3],
                "answered_by": str(res.details.get("auto", res.method))[:80]}

    return run, []


def _dp_event(case: dict):
    import dp_accounting as dpa

    kind = case["kind"]
    if kind == "dpsgd":
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(
            case["rate"], dpa.GaussianDpEvent(case["sigma"])), case["steps"])
    if kind == "laplace":
        return dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(case["scale"]), case["steps"])
    if kind == "rr":
        return dpa.SelfComposedDpEvent(
            dpa.RandomizedResponseDpEvent(_rr_p(case["eps0"]), 2), case["steps"])
    return dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(case["rate"], dpa.GaussianDpEvent(s)),
                                case["steps"]) for s in _hetero_sigmas(case["levels"])])


def _relation(case: dict):
    from dp_accounting import NeighboringRelation

    # dp_accounting's PLD accepts randomized response only under REPLACE_ONE
    return (NeighboringRelation.REPLACE_ONE if case["kind"] == "rr"
            else NeighboringRelation.ADD_OR_REMOVE_ONE)


def _pld(case: dict) -> Callable[[], dict]:
    from dp_accounting.pld import pld_privacy_accountant

    def run() -> dict:
        acc = pld_privacy_accountant.PLDAccountant(_relation(case))
        acc.compose(_dp_event(case))
        return {"eps": float(acc.get_epsilon(case["delta"]))}

    return run


def _pld_optimistic(case: dict) -> Callable[[], dict]:
    from dp_accounting.pld import privacy_loss_distribution as pld

    def one():
        kind = case["kind"]
        if kind == "dpsgd":
            return pld.from_gaussian_mechanism(case["sigma"], sampling_prob=case["rate"],
                                               pessimistic_estimate=False).self_compose(
                                                   case["steps"])
        if kind == "laplace":
            return pld.from_laplace_mechanism(case["scale"], pessimistic_estimate=False
                                              ).self_compose(case["steps"])
        if kind == "rr":
            return pld.from_randomized_response(_rr_p(case["eps0"]), 2,
                                                pessimistic_estimate=False
                                                ).self_compose(case["steps"])
        out = None
        for s in _hetero_sigmas(case["levels"]):
            p = pld.from_gaussian_mechanism(s, sampling_prob=case["rate"],
                                            pessimistic_estimate=False).self_compose(
                                                case["steps"])
            out = p if out is None else out.compose(p)
        return out

    return lambda: {"eps": float(one().get_epsilon_for_delta(case["delta"]))}


def _rdp(case: dict) -> Callable[[], dict]:
    from dp_accounting.rdp import rdp_privacy_accountant

    def run() -> dict:
        acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=_relation(case))
        acc.compose(_dp_event(case))
        return {"eps": float(acc.get_epsilon(case["delta"]))}

    return run


def _prv(case: dict) -> Callable[[], dict]:
    from prv_accountant import PRVAccountant
    from prv_accountant import privacy_random_variables as prvs

    def mechs():
        kind = case["kind"]
        if kind == "dpsgd":
            return [prvs.PoissonSubsampledGaussianMechanism(case["rate"], case["sigma"])], [
                case["steps"]]
        if kind == "laplace":
            # prv_accountant's LaplaceMechanism takes the privacy parameter sensitivity/scale
            return [prvs.LaplaceMechanism(1.0 / case["scale"])], [case["steps"]]
        if kind == "rr":  # the 2-bucket randomized response is the pure eps0-DP pair
            return [prvs.PureDPMechanism(case["eps0"])], [case["steps"]]
        sig = _hetero_sigmas(case["levels"])
        return ([prvs.PoissonSubsampledGaussianMechanism(case["rate"], s) for s in sig],
                [case["steps"]] * len(sig))

    def run() -> dict:
        ms, counts = mechs()
        acc = PRVAccountant(prvs=ms, max_self_compositions=counts, eps_error=0.01,
                            delta_error=case["delta"] / 1000)
        lo, est, hi = acc.compute_epsilon(case["delta"], counts)
        return {"eps": float(est), "lower": float(lo), "upper": float(hi)}

    return run


def _autodp(case: dict) -> Callable[[], dict]:
    from autodp import mechanism_zoo, transformer_zoo

    def run() -> dict:
        kind = case["kind"]
        if kind == "dpsgd":
            mech = mechanism_zoo.SubsampleGaussianMechanism(
                {"prob": case["rate"], "sigma": case["sigma"], "coeff": case["steps"]})
        elif kind == "laplace":
            base = mechanism_zoo.LaplaceMechanism(b=case["scale"])
            mech = transformer_zoo.Composition()([base], [case["steps"]])
        elif kind == "rr":  # autodp's p: probability of the truth, e^eps0 = p / (1 - p)
            p = 1.0 - 1.0 / (math.exp(case["eps0"]) + 1.0)
            base = mechanism_zoo.RandresponseMechanism(p=p)
            mech = transformer_zoo.Composition()([base], [case["steps"]])
        else:
            sub = transformer_zoo.AmplificationBySampling()
            parts = [sub(mechanism_zoo.GaussianMechanism(sigma=s), case["rate"],
                         improved_bound_flag=True) for s in _hetero_sigmas(case["levels"])]
            mech = transformer_zoo.Composition()(parts, [case["steps"]] * len(parts))
        return {"eps": float(mech.get_approxDP(case["delta"]))}

    return run


def _enclosure(eps: float, bound) -> dict:
    """A drop-in's answer with its certified interval, and whether it is the upper end."""
    d = bound.to_dict()
    return {"eps": eps, "lower": d.get("lower"), "upper": d.get("upper"),
            "is_upper_end": eps == bound.value, "rel_width": bound.inputs.get("rel_width")}


def _dropin(case: dict) -> Callable[[], dict]:
    sys.path.insert(0, ROOT)
    from certify.interop.dp_accounting import CertifiedPrivacyAccountant

    def run() -> dict:
        acc = CertifiedPrivacyAccountant(_relation(case))
        acc.compose(_dp_event(case))
        return _enclosure(float(acc.get_epsilon(case["delta"])), acc.last_bound)

    return run


def _dropin_opacus(case: dict) -> Callable[[], dict]:
    """Opacus's drop-in fed one ``step()`` per DP-SGD step. The steps are recorded once, outside
    the timed query (``steps_s``); the timed query rebuilds the accountant from that history
    (``load_state_dict``, no cached answer) and asks ``get_epsilon``."""
    sys.path.insert(0, ROOT)
    from certify.interop.opacus import CertifiedAccountant

    if case["kind"] not in OPACUS_KINDS:
        raise ValueError(f"Opacus accounts Poisson-sampled Gaussian steps only, not {case['kind']}")
    sigmas = [case["sigma"]] if case["kind"] == "dpsgd" else _hetero_sigmas(case["levels"])
    t = time.perf_counter()
    stepped = CertifiedAccountant()
    for s in sigmas:
        for _ in range(case["steps"]):
            stepped.step(noise_multiplier=s, sample_rate=case["rate"])
    steps_s = time.perf_counter() - t
    state = stepped.state_dict()

    def run() -> dict:
        acc = CertifiedAccountant()
        acc.load_state_dict(state)
        out = _enclosure(float(acc.get_epsilon(case["delta"])), acc.last_bound)
        return {**out, "steps_s": steps_s, "history": len(acc)}

    return run


_PEER_BUILDERS = {"dropin-certified": _dropin, "dropin-opacus": _dropin_opacus, "pld": _pld,
                  "pld-optimistic": _pld_optimistic, "rdp": _rdp, "prv": _prv, "autodp": _autodp}


def _import_for(method: str) -> None:
    if method in OURS:
        import numeric  # noqa: F401
    elif method == "dropin-opacus":
        import certify.interop.opacus
    elif method in OPTIONAL:
        import dp_accounting

        import certify.interop.dp_accounting  # noqa: F401
    else:
        __import__(PEER_MODULE[PEER_DIST[method]])
        if method.startswith("pld") or method == "rdp":
            import dp_accounting.pld.pld_privacy_accountant
            import dp_accounting.rdp.rdp_privacy_accountant  # noqa: F401


def worker(method: str, case: dict, warm_cap: float) -> dict:
    """Run one (method, case) in this (fresh) process: import, cold query, warm query."""
    import warnings

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    try:
        if method in OURS or method in OPTIONAL:
            sys.path.insert(0, ROOT)
        _import_for(method)
        run = _ours(case, method)[0] if method in OURS else _PEER_BUILDERS[method](case)
    except Exception as exc:  # a missing or broken peer: reported, never fatal
        return {"error": f"import: {type(exc).__name__}: {exc}"[:300]}
    out: dict[str, Any] = {"import_s": time.perf_counter() - t0}
    try:
        t, cpu = time.perf_counter(), time.process_time()
        res = run()
        out["cold_s"] = time.perf_counter() - t
        out["cold_cpu_s"] = time.process_time() - cpu  # this process's CPU: less contended
        out.update(res)
        if out["cold_s"] <= warm_cap:
            t = time.perf_counter()
            run()
            out["warm_s"] = time.perf_counter() - t
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"[:300]
    return out


# ------------------------------------------------------------------------------------------
# Orchestration
# ------------------------------------------------------------------------------------------


def _spawn(method: str, case: dict, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", method, json.dumps(case),
           "--warm-cap", str(args.warm_cap)]
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              cwd=ROOT, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {args.timeout:g} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {proc.returncode}: {tail}"[:300]}
    res = json.loads(lines[-1])
    res["process_s"] = time.perf_counter() - t
    return res


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("edgeworth-accountant", "dp-accounting", "prv-accountant", "autodp", "numpy",
                 "scipy", "python-flint"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def delta_array_speed(n: int = 10**6) -> dict:
    """The public ``delta(comp, eps_array)`` (method aea) against its kernel on the same array."""
    sys.path.insert(0, ROOT)
    import numpy as np

    import numeric
    from numeric import aea as aea_mod
    from numeric.edgeworth import q_only_delta

    comp = numeric.compose([(numeric.PoissonSubsampledGaussian(1.0, 0.01), 10**4)])
    eps = np.linspace(0.0, 20.0, n)
    numeric.delta(comp, eps[:10], method="aea")  # caches of this composition warm
    prof = aea_mod._profiles(comp, 2)
    public, kernel = [], []
    for _ in range(5):
        t = time.perf_counter()
        numeric.delta(comp, eps, method="aea")
        public.append(time.perf_counter() - t)
        t = time.perf_counter()
        for p in prof:
            q_only_delta((eps - p.k1) / p.sigma, p.sigma, p.coeffs)
        kernel.append(time.perf_counter() - t)
    pub, ker = sorted(public)[2], sorted(kernel)[2]
    return {"n": n, "public_s": pub, "kernel_s": ker, "ratio": pub / ker}


def run_grid(args: argparse.Namespace) -> dict:
    cases = [c for c in grid(args.quick) if not args.cases or args.cases in c["id"]]
    methods = [m for m in METHODS + OPTIONAL if m in args.methods]
    reuse: dict[tuple[str, str], dict] = {}
    reused_delta_array = None
    for path in args.reuse:  # a later file's result replaces an earlier one's
        with open(path, encoding="utf-8") as fh:
            earlier = json.load(fh)
        reused_delta_array = earlier.get("delta_array", reused_delta_array)
        for row in earlier["rows"]:
            for method, res in row["results"].items():
                key = row["case"]["id"], method
                if "error" not in res or "eps" in res:
                    reuse[key] = {**res, "reused": path}
                elif args.no_run and key not in reuse:  # a failure (e.g. a timeout) is shown
                    reuse[key] = {**res, "reused": path}  # only where nothing succeeded
    missing: dict[str, str] = {}
    rows = []
    started = time.perf_counter()
    for i, case in enumerate(cases):
        row = {"case": case, "results": {}}
        for method in methods:
            if (case["id"], method) in reuse:
                row["results"][method] = reuse[case["id"], method]
                continue
            if args.no_run or (method == "dropin-opacus" and case["kind"] not in OPACUS_KINDS):
                continue  # a table from earlier runs only; Opacus accounts DP-SGD only
            if method in PEER_DIST and PEER_DIST[method] in missing:
                row["results"][method] = {"error": missing[PEER_DIST[method]]}
                continue
            res = _spawn(method, case, args)
            if args.cold_repeats > 1 and "cold_s" in res:  # medians of fresh processes
                more = [res] + [_spawn(method, case, args) for _ in range(args.cold_repeats - 1)]
                for key in ("cold_s", "warm_s", "import_s"):
                    vals = sorted(r[key] for r in more if key in r)
                    if vals:
                        res[key] = vals[len(vals) // 2]
                        res[key + "_all"] = vals
            if res.get("error", "").startswith("import:") and method in PEER_DIST:
                missing[PEER_DIST[method]] = res["error"]
            row["results"][method] = res
            print(f"[{i + 1}/{len(cases)}] {case['id']:<32} {method:<15} "
                  f"{fmt_eps(res.get('eps')):>10} {fmt_s(res.get('cold_s')):>10}"
                  f"{'  ' + res['error'] if 'error' in res else ''}", file=sys.stderr,
                  flush=True)
        rows.append(row)
        if args.json:  # after every case: an interrupted run keeps what it measured
            with open(args.json + ".partial", "w", encoding="utf-8") as fh:
                json.dump({"rows": rows, "missing": missing}, fh)
    out = {"meta": {"python": platform.python_version(), "machine": platform.machine(),
                    "cpus": os.cpu_count(), "versions": _versions(), "quick": args.quick,
                    "reused_from": args.reuse, "notes": args.note, "no_run": args.no_run,
                    "wall_s": time.perf_counter() - started},
           "missing": missing, "rows": rows}
    out["honesty"] = honesty(rows)
    if "aea" in methods and not (args.no_delta_array or args.no_run):
        out["delta_array"] = delta_array_speed()
    elif reused_delta_array is not None:
        out["delta_array"] = {**reused_delta_array, "reused": True}
    return out


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a small grid (a few minutes)")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown tables here")
    p.add_argument("--json", metavar="FILE", help="write every number here")
    p.add_argument("--methods", default=",".join(METHODS),
                   help=f"comma-separated subset of {','.join(METHODS + OPTIONAL)} (default: "
                   "all but the drop-ins)")
    p.add_argument("--cases", default="", help="only the cases whose id contains this text")
    p.add_argument("--reuse", metavar="FILE", action="append", default=[],
                   help="reuse the results of an earlier --json output (repeatable; a result "
                   "is kept with its timings and marked 'reused' in the JSON)")
    p.add_argument("--note", action="append", default=[],
                   help="a line added at the end of the Markdown (repeatable)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per subprocess")
    p.add_argument("--warm-cap", type=float, default=5.0,
                   help="no warm repeat after a cold query longer than this (seconds)")
    p.add_argument("--cold-repeats", type=int, default=1, metavar="N",
                   help="run each (case, method) in N fresh processes; times are medians")
    p.add_argument("--no-delta-array", action="store_true",
                   help="skip the delta(comp, eps_array) measurement")
    p.add_argument("--no-run", action="store_true",
                   help="compute nothing: the tables from the --reuse files only (a (case, "
                   "method) they lack is left out)")
    p.add_argument("--worker", nargs=2, metavar=("METHOD", "CASE"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = sorted(set(args.methods) - set(METHODS + OPTIONAL))
    if bad:
        p.error(f"--methods: unknown {bad}; choose from {list(METHODS + OPTIONAL)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], json.loads(args.worker[1]), args.warm_cap)))
        return 0
    data = run_grid(args)
    given = list(sys.argv[1:] if argv is None else argv)
    shown = [a for i, a in enumerate(given)  # the notes are printed below the table anyway
             if a not in ("--no-delta-array", "--note") and (i == 0 or given[i - 1] != "--note")]
    command = "python benchmarks/compare_peers.py" + (" " + shlex.join(shown) if shown else "")
    text = markdown(data, command)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
        if os.path.exists(args.json + ".partial"):
            os.remove(args.json + ".partial")
    if args.markdown:
        os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
