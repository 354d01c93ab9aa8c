r"""Benchmark: the default method ``auto`` on a held-out style grid (issue 11).

What it measures. ``auto`` (:mod:`numeric.auto`) must answer every case of the held-out style
grid, without an exception, in under 5 s per query, and in under 10 ms where the saddlepoint's
diagnostics pass. The grid (seeded, deterministic; about 200 cases) draws at random

* randomized response and (eps0, delta0)-DP with 1..10^4 steps, eps0 log-uniform in
  [0.01, 10] (and a few in [10, 10^4]);
* Laplace (scale log-uniform in [0.1, 100], sensitivity 1) and Gaussian (sigma log-uniform in
  [0.3, 100]) with 1..10^4 steps;
* DP-SGD (Poisson-subsampled Gaussian) with sigma in [0.5, 4], rate log-uniform in
  [1e-4, 0.5] and rate * m log-uniform in [0.1, 10^4];
* heterogeneous mixes: 2, 10 and 100 distinct DP-SGD noise levels (one rate), and DP-SGD +
  Gaussian + Laplace + randomized response;

with delta log-uniform in [1e-12, 1e-2], plus fixed corner cases (one step of each mechanism,
rate * m = 0.1, eps0 = 10^4, delta = 1e-12 and 1e-2, rate * m = 10^4, an infeasible delta,
randomized response with eps0 = 700 and 10^4 mixed with DP-SGD: composed eps near 10^6).

For each case it runs ``numeric.epsilon(comp, delta)`` (the default method) in this process and
records the method that answered (``exact``, ``saddlepoint``, ``certified``, or ``fallback:*``
when ``auto`` settled for an estimate with a warning), the value, the certified ends, the number
of warnings, and any exception. Timings (wall clock): ``cold`` is the first query of the case's
composition, after :func:`numeric.cgf.clear_cgf_cache` (the random draws also make every
mechanism new to certify's caches); ``warm`` repeats the same query. Imports and a throwaway
query of each path are done first and timed separately ("start-up").

For a subset of the cheaper cases (no 100-term mix; default 40) it also runs
``method="certified"`` (the full certified plug-in; a safety cap ``--cert-cap`` seconds, default
120, is passed as its ``time_budget`` and reported when it dropped a method) and checks ``auto``
against it: a certified ``auto`` enclosure must overlap the full enclosure (its relative excess
over the full upper end is reported as ``loose``); an ``exact`` or estimated answer reports its
relative distance to the full enclosure (0 inside; (lower - v) / lower below, (v - upper) / upper
above). A handful of cases also go through the command line
(``python -m numeric.cli epsilon ... --json``, a subprocess): exit status 0, one JSON object,
and the same value as in process where the answer does not depend on a time budget.

Run from the repository root (on a shared machine: ``nice``, not in parallel with test suites)::

    nice python benchmarks/bench_auto.py                      # full grid (~5-10 min on 2 cores)
    nice python benchmarks/bench_auto.py --quick              # ~30 cases, < 2 min
    nice python benchmarks/bench_auto.py --out auto_grid.md   # also the per-case table

The summary (Markdown, on stdout) gives the counts by method, time percentiles (cold/warm) by
method, the maximum time, and lists every case over 5 s, every saddlepoint answer over 10 ms,
every exception, every answer off the certified enclosure by more than 1 %, every fallback
answer and every failed command-line check.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numeric
from numeric import compose
from numeric.cgf import clear_cgf_cache
from numeric.mechanisms import MECHANISMS

ROOT = Path(__file__).resolve().parent.parent
SEED = 20250611
SLOW_S = 5.0  # the promise: every auto query under 5 s
SP_FAST_S = 0.010  # ... and under 10 ms where the saddlepoint's diagnostics pass
OFF_REL = 0.01  # an answer off the certified enclosure by more than 1 % is listed
QUERY_GUARD_S = 300  # a query still running after this is stopped and recorded as a timeout
SHORT = {"randomized-response": "RR", "approx-dp": "ADP", "laplace": "Lap", "gaussian": "Gau",
         "subsampled-gaussian": "SG"}
KEYS = {"randomized-response": ("eps0",), "approx-dp": ("eps0", "delta0"), "laplace": ("scale",),
        "gaussian": ("sigma",), "subsampled-gaussian": ("sigma", "rate")}


# ------------------------------------------------------------------------------------------
# The grid


@dataclass(frozen=True)
class Case:
    """One query: ``terms`` are ``(mechanism name, ((key, value), ...), count)``."""

    cid: str
    family: str
    terms: tuple[tuple[str, tuple[tuple[str, float], ...], int], ...]
    delta: float
    corner: bool = False

    def composition(self):
        return compose([(MECHANISMS[t].build(dict(p)), c) for t, p, c in self.terms])

    def describe(self) -> str:
        if len(self.terms) > 4:
            sig = [dict(p)["sigma"] for _, p, _ in self.terms]
            rate = dict(self.terms[0][1])["rate"]
            counts = sorted({c for _, _, c in self.terms})
            cnt = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}..{counts[-1]}"
            return (f"{len(self.terms)} x SG(sigma {min(sig):g}..{max(sig):g}, rate={rate:g}) "
                    f"x{cnt} each")
        return " + ".join(f"{SHORT[t]}({', '.join(f'{k}={v:g}' for k, v in p)}) x{c}"
                          for t, p, c in self.terms)

    def rate_m(self) -> float | None:
        rm = [dict(p)["rate"] * c for t, p, c in self.terms if t == "subsampled-gaussian"]
        return sum(rm) if rm else None


def _sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def _logu(rng, lo: float, hi: float) -> float:
    return float(10.0 ** rng.uniform(math.log10(lo), math.log10(hi)))


def _steps(rng, lo: float = 1.0, hi: float = 1e4) -> int:
    return max(1, round(_logu(rng, lo, hi)))


def _delta(rng) -> float:
    return _sig(_logu(rng, 1e-12, 1e-2), 3)


def _sg(sigma: float, rate: float, count: int):
    return ("subsampled-gaussian", (("sigma", sigma), ("rate", rate)), count)


def _corners() -> list[Case]:
    one = [("randomized-response", (("eps0", 1.0),)), ("approx-dp", (("eps0", 1.0),
           ("delta0", 1e-7))), ("laplace", (("scale", 1.0),)), ("gaussian", (("sigma", 1.0),)),
           ("subsampled-gaussian", (("sigma", 1.0), ("rate", 0.1)))]
    out = [Case(f"c-one-{SHORT[t]}", "corner", ((t, p, 1),), 1e-5, True) for t, p in one]
    mix4 = (_sg(1.1, 0.01, 1000), ("gaussian", (("sigma", 20.0),), 10),
            ("laplace", (("scale", 20.0),), 10), ("randomized-response", (("eps0", 0.05),), 10))
    out += [
        Case("c-rm0.1-a", "corner", (_sg(1.0, 1e-3, 100),), 1e-5, True),
        Case("c-rm0.1-b", "corner", (_sg(2.0, 1e-4, 1000),), 1e-8, True),
        Case("c-rm1e4-a", "corner", (_sg(1.5, 0.5, 20000),), 1e-5, True),
        Case("c-rm1e4-b", "corner", (_sg(0.8, 1e-4, 10**8),), 1e-5, True),
        Case("c-eps1e4-RR-1", "corner", (("randomized-response", (("eps0", 1e4),), 1),), 1e-5,
             True),
        Case("c-eps1e4-RR-10", "corner", (("randomized-response", (("eps0", 9999.0),), 10),),
             1e-12, True),
        Case("c-eps1e4-ADP", "corner", (("approx-dp", (("eps0", 1e4), ("delta0", 1e-9)), 10),),
             1e-6, True),
        Case("c-d1e-12-SG", "corner", (_sg(1.2, 0.01, 10000),), 1e-12, True),
        Case("c-d1e-12-Lap", "corner", (("laplace", (("scale", 10.0),), 100),), 1e-12, True),
        Case("c-d1e-12-mix4", "corner", mix4, 1e-12, True),
        Case("c-d1e-2-SG", "corner", (_sg(0.9, 0.02, 500),), 1e-2, True),
        Case("c-bigeps-mix-a", "corner", (("randomized-response", (("eps0", 700.0),), 1000),
                                          _sg(1.0, 0.01, 100)), 1e-5, True),
        Case("c-bigeps-mix-b", "corner", (("randomized-response", (("eps0", 1e4),), 200),
                                          _sg(1.0, 0.01, 100)), 1e-5, True),
        Case("c-infeasible-ADP", "corner", (("approx-dp", (("eps0", 0.5), ("delta0", 1e-6)),
                                             100),), 1e-5, True),
    ]
    return out


def _random_cases(rng) -> list[Case]:
    out: list[Case] = []

    def add(family: str, terms, delta: float) -> None:
        out.append(Case(f"{family}-{sum(c.family == family for c in out):02d}", family,
                        tuple(terms), delta))

    for i in range(25):
        e0 = _sig(_logu(rng, 10, 1e4) if i >= 22 else _logu(rng, 0.01, 10))
        add("RR", [("randomized-response", (("eps0", e0),), _steps(rng))], _delta(rng))
    for i in range(21):
        e0 = _sig(_logu(rng, 10, 1e4) if i >= 18 else _logu(rng, 0.01, 10))
        m, d = _steps(rng), _delta(rng)
        d0 = _sig(d / m * _logu(rng, 1e-3, 0.5), 3)  # composed delta part below delta
        add("ADP", [("approx-dp", (("eps0", e0), ("delta0", d0)), m)], d)
    for _ in range(25):
        add("Lap", [("laplace", (("scale", _sig(_logu(rng, 0.1, 100))),), _steps(rng))],
            _delta(rng))
    for _ in range(15):
        add("Gau", [("gaussian", (("sigma", _sig(_logu(rng, 0.3, 100))),), _steps(rng))],
            _delta(rng))
    for _ in range(60):
        sigma, rate = _sig(rng.uniform(0.5, 4.0), 3), _sig(_logu(rng, 1e-4, 0.5), 3)
        m = max(1, round(_logu(rng, 0.1, 1e4) / rate))
        add("SG", [_sg(sigma, rate, m)], _delta(rng))
    for k, n in ((2, 12), (10, 8), (100, 5)):
        for _ in range(n):
            rate = _sig(_logu(rng, 1e-4, 0.5), 3)
            each = max(1, round(_logu(rng, 0.1, 1e4) / rate / k))
            sigmas = sorted({_sig(s, 4) for s in rng.uniform(0.5, 4.0, k)})
            add(f"mix{k}", [_sg(s, rate, each) for s in sigmas], _delta(rng))
    for _ in range(14):
        rate = _sig(_logu(rng, 1e-4, 0.5), 3)
        terms = [
            _sg(_sig(rng.uniform(0.5, 4.0), 3), rate, max(1, round(_logu(rng, 0.1, 1e4) / rate))),
            ("gaussian", (("sigma", _sig(_logu(rng, 0.3, 100))),), _steps(rng)),
            ("laplace", (("scale", _sig(_logu(rng, 0.1, 100))),), _steps(rng)),
            ("randomized-response", (("eps0", _sig(_logu(rng, 0.01, 10))),), _steps(rng)),
        ]
        add("mix4", terms, _delta(rng))
    return out


def build_grid(seed: int, quick: bool) -> list[Case]:
    """The deterministic grid (corners first); ``quick``: the corners and 15 random cases."""
    cases = _corners() + _random_cases(np.random.default_rng(seed))
    if quick:
        corners = [c for c in cases if c.corner]
        rest = [c for c in cases if not c.corner]
        cases = corners + rest[:: max(1, len(rest) // 15)][:15]
    return cases


# ------------------------------------------------------------------------------------------
# Running


class QueryTimeout(BaseException):
    """A query ran past :data:`QUERY_GUARD_S` (not an Exception: nothing may swallow it)."""


def _alarm(signum, frame):
    raise QueryTimeout(f"stopped after {QUERY_GUARD_S} s")


@dataclass
class Row:
    """What one case gave."""

    case: Case
    kind: str = "-"
    method: str = "-"
    value: float = math.nan
    lower: Decimal | None = None
    upper: Decimal | None = None
    cold: float = math.nan
    warm: float = math.nan
    n_warn: int = 0
    n_pywarn: int = 0
    tried: int = 0
    reason: str = ""
    error: str = ""
    warm_error: str = ""
    warm_differs: bool = False
    warm_value: float = math.nan
    cert_lower: Decimal | None = None
    cert_upper: Decimal | None = None
    cert_time: float = math.nan
    cert_capped: bool = False
    cert_error: str = ""
    check: str = ""
    dist: float | None = None
    loose: float | None = None
    extra: dict = field(default_factory=dict)


def _timed(fn):
    """``(result or None, seconds, 'Type: message' or '', python warnings)``."""
    gc.collect()
    signal.alarm(QUERY_GUARD_S)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            res, err = fn(), ""
        except (Exception, QueryTimeout) as exc:
            res, err = None, f"{type(exc).__name__}: {exc}"
        dt = time.perf_counter() - t0
    signal.alarm(0)
    return res, dt, err, len(caught)


def _kind(res) -> str:
    reason = str(res.details.get("auto", ""))
    if res.certified:
        return "certified"
    if reason.startswith(("exact:", "saddlepoint:")):
        return res.method
    return f"fallback:{res.method}"


def run_auto(case: Case) -> Row:
    row = Row(case)
    comp = case.composition()
    clear_cgf_cache()
    res, row.cold, row.error, row.n_pywarn = _timed(lambda: numeric.epsilon(comp, case.delta))
    if res is None:
        row.kind = "exception"
        return row
    row.kind, row.method, row.value = _kind(res), res.method, float(res.epsilon)
    row.lower, row.upper = res.lower, res.upper
    row.n_warn, row.tried = len(res.warnings), len(res.details.get("tried", []))
    row.reason = str(res.details.get("auto", ""))
    res2, row.warm, row.warm_error, _ = _timed(lambda: numeric.epsilon(comp, case.delta))
    if res2 is not None:
        row.warm_value = float(res2.epsilon)
        same = (res2.epsilon == res.epsilon or (math.isnan(res2.epsilon)
                                                 and math.isnan(res.epsilon)))
        row.warm_differs = not (same and res2.lower == res.lower and res2.upper == res.upper)
    return row


def _rel_dist(v: float, lo: Decimal, hi: Decimal) -> float:
    """Relative distance of ``v`` to ``[lo, hi]`` (0 inside)."""
    if math.isnan(v):
        return math.inf
    if math.isinf(v):
        return 0.0 if hi.is_infinite() else math.inf
    x = Decimal(v)
    if lo <= x <= hi:
        return 0.0
    if x < lo:
        return float((lo - x) / lo) if lo > 0 else math.inf
    return float((x - hi) / hi) if hi > 0 else math.inf


def _end(d: dict, which: str) -> Decimal:
    if d.get(f"{which}_infinite") or d.get(which) is None:
        return Decimal("-Infinity") if which == "lower" else Decimal("Infinity")
    return Decimal(d[which])


def run_certified(row: Row, cap: float | None) -> None:
    comp = row.case.composition()
    opts = {"time_budget": cap} if cap else {}
    b, row.cert_time, row.cert_error, _ = _timed(
        lambda: numeric.epsilon(comp, row.case.delta, method="certified", **opts))
    if b is None:
        row.check = "cert-error"
        return
    d = b.to_dict()
    lo, hi = _end(d, "lower"), _end(d, "upper")
    row.cert_lower, row.cert_upper = lo, hi
    row.cert_capped = any("budget" in w for w in d.get("warnings", []))
    if row.kind == "exception":
        row.check = "FAIL: auto raised, certified answered"
    elif hi.is_infinite() or d.get("vacuous"):
        row.check = "certified vacuous"
    elif row.kind == "certified":
        ok = row.lower <= hi and lo <= row.upper
        row.loose = float((row.upper - hi) / hi) if hi > 0 else 0.0
        row.check = "overlap" if ok else "FAIL: disjoint enclosures"
    else:
        row.dist = _rel_dist(row.value, lo, hi)
        row.check = "inside" if row.dist == 0 else f"off {row.dist:.2e}"


def pick_certified(rows: list[Row], n: int) -> list[Row]:
    """``n`` cheap cases: the corners and a stride over the rest (no 100-term mix), with a
    few ``exact`` answers and the rest answered otherwise."""
    eligible = [r for r in rows if r.case.family != "mix100"
                and not (r.case.corner and r.case.cid.startswith("c-rm1e4-b"))]
    first = [r for r in eligible if r.case.corner and r.kind != "exact"]
    exact = [r for r in eligible if r.kind == "exact" and not r.case.corner]
    other = [r for r in eligible if r.kind != "exact" and not r.case.corner]
    n_exact = min(len(exact), max(1, n // 10))
    picked = first[: max(0, n - n_exact)]
    room = n - n_exact - len(picked)
    if room > 0 and other:
        picked += other[:: max(1, len(other) // room)][:room]
    if n_exact:
        picked += exact[:: max(1, len(exact) // n_exact)][:n_exact]
    return picked


# ------------------------------------------------------------------------------------------
# The command line


def _cli_args(case: Case, tmp: Path) -> list[str]:
    args = [sys.executable, "-m", "numeric.cli", "epsilon", "--delta", repr(case.delta),
            "--json"]
    if len(case.terms) == 1:
        t, p, c = case.terms[0]
        args += ["--mechanism", t, "--steps", str(c)]
        for k, v in p:
            args += [f"--{k}", repr(v)]
        return args
    lines = ["version = 1"]
    for t, p, c in case.terms:
        lines += ["[[mechanism]]", f'type = "{t}"', *(f"{k} = {v!r}" for k, v in p),
                  f"count = {c}"]
    spec = tmp / f"{case.cid}.toml"
    spec.write_text("\n".join(lines) + "\n")
    return [*args, "--spec", str(spec)]


def pick_cli(rows: list[Row]) -> list[Row]:
    """The first non-corner case of each family, and a second DP-SGD case answered by another
    method than the first; DP-SGD and the 4-mechanism mix (a spec file) first."""
    seen: dict[str, Row] = {}
    picked = []
    for r in rows:
        if r.case.corner or r.kind == "exception":
            continue
        f = r.case.family
        if f not in seen or (f == "SG" and r.kind != seen[f].kind
                             and sum(p.case.family == "SG" for p in picked) < 2):
            seen.setdefault(f, r)
            picked.append(r)
    order = ["SG", "mix4", "SG2", "RR", "Lap", "ADP", "Gau", "mix2", "mix10", "mix100"]
    second = {id(r) for r in picked if r.case.family == "SG" and r is not seen["SG"]}
    return sorted(picked, key=lambda r: order.index("SG2" if id(r) in second else r.case.family))


def run_cli(row: Row, tmp: Path) -> dict:
    args = _cli_args(row.case, tmp)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120,
                           check=False)
    except subprocess.TimeoutExpired:
        return {"row": row, "ok": False, "note": "timeout after 120 s", "time": 120.0}
    dt = time.perf_counter() - t0
    out = {"row": row, "rc": p.returncode, "time": dt, "ok": False, "note": ""}
    try:
        obj = json.loads(p.stdout)
    except ValueError:
        out["note"] = f"stdout is not one JSON object: {p.stdout[:120]!r}"
        return out
    if p.returncode != 0 or not isinstance(obj, dict) or p.stdout.strip().count("\n"):
        out["note"] = f"rc={p.returncode}, stderr={p.stderr.strip()[:160]!r}"
        return out
    out["ok"] = True
    out["method"] = obj.get("method")
    eps = obj.get("epsilon")
    eps = math.inf if eps is None and obj.get("infinite") else eps
    out["eps"] = eps
    if row.kind in ("exact", "saddlepoint"):
        same = obj.get("method") == row.method and eps == row.value
        out["ok"] = same
        out["note"] = "same value as in process" if same else (
            f"differs from in process: {obj.get('method')} {eps!r} vs {row.method} {row.value!r}")
    else:
        out["note"] = "(budget-dependent answer: not compared)"
    return out


# ------------------------------------------------------------------------------------------
# Reporting


def _ms(s: float) -> str:
    return "-" if math.isnan(s) else f"{1e3 * s:.1f}" if s < 10 else f"{1e3 * s:.0f}"


def _num(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, Decimal):
        if x.is_infinite():
            return "inf" if x > 0 else "-inf"
        return f"{float(x):.8g}"
    return f"{x:.8g}"


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else math.nan


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "/") for c in r) + " |" for r in rows]
    return out


def _case_cells(r: Row) -> list[str]:
    return [r.case.cid, r.case.describe(), f"{r.case.delta:g}"]


def summary(rows: list[Row], cli: list[dict], startup: float, wall: float) -> list[str]:
    out = [f"## auto on the held-out style grid: {len(rows)} cases "
           f"(start-up {startup:.2f} s, total {wall:.0f} s)", ""]
    kinds = sorted({r.kind for r in rows})
    fams = sorted({r.case.family for r in rows})
    body = []
    for k in kinds:
        sel = [r for r in rows if r.kind == k]
        c, w = [r.cold for r in sel], [r.warm for r in sel if not math.isnan(r.warm)]
        body.append([k, str(len(sel)), _ms(_pct(c, 50)), _ms(_pct(c, 90)), _ms(max(c)),
                     _ms(_pct(w, 50)), _ms(_pct(w, 90)), _ms(max(w) if w else math.nan)])
    out += ["### Method chosen by auto; times in ms", ""]
    out += _table(["answered by", "cases", "cold p50", "cold p90", "cold max", "warm p50",
                   "warm p90", "warm max"], body)
    out += ["", "### Method chosen by family", ""]
    body = [[f, *(str(sum(r.case.family == f and r.kind == k for r in rows)) for k in kinds)]
            for f in fams]
    out += _table(["family", *kinds], body)
    slowest = max(rows, key=lambda r: max(r.cold, 0 if math.isnan(r.warm) else r.warm))
    out += ["", f"Max time: {_ms(max(slowest.cold, slowest.warm))} ms ({slowest.case.cid}, "
            f"{slowest.kind}).", ""]

    def listing(title: str, sel: list[Row], extra: list[str], cells) -> None:
        nonlocal out
        out += [f"### {title}: {len(sel)}", ""]
        if sel:
            out += _table(["case", "composition", "delta", *extra],
                          [[*_case_cells(r), *cells(r)] for r in sel])
            out.append("")

    slow = [r for r in rows if r.cold > SLOW_S or r.warm > SLOW_S]
    listing(f"Queries over {SLOW_S:g} s", slow, ["answered by", "cold ms", "warm ms"],
            lambda r: [r.kind, _ms(r.cold), _ms(r.warm)])
    sp = [r for r in rows if r.kind == "saddlepoint" and (r.cold > SP_FAST_S
                                                           or r.warm > SP_FAST_S)]
    listing("Saddlepoint answers over 10 ms (cold or warm; warm is the promise)", sp,
            ["cold ms", "warm ms", "warm > 10 ms"],
            lambda r: [_ms(r.cold), _ms(r.warm), "YES" if r.warm > SP_FAST_S else "no"])
    exc = [r for r in rows if r.error or r.warm_error or r.cert_error]
    listing("Exceptions", exc, ["where", "exception"],
            lambda r: ["auto" if r.error else "auto (warm)" if r.warm_error else "certified",
                       (r.error or r.warm_error or r.cert_error)[:300]])
    fb = [r for r in rows if r.kind.startswith("fallback")]
    listing("Fallback answers (an estimate with a warning)", fb, ["answered by", "eps", "why"],
            lambda r: [r.kind, _num(r.value), r.reason[:200]])
    checked = [r for r in rows if r.check]
    off = [r for r in checked if (r.dist is not None and r.dist > OFF_REL)
           or r.check.startswith("FAIL")]
    listing(f"Off the full certified enclosure by > {OFF_REL:.0%} or failing "
            f"({len(checked)} cases checked)", off,
            ["auto", "eps", "certified [lower, upper]", "check"],
            lambda r: [r.kind, _num(r.value), f"[{_num(r.cert_lower)}, {_num(r.cert_upper)}]",
                       r.check])
    est = [r.dist for r in checked if r.dist is not None and r.kind != "exact"]
    ex = [r.dist for r in checked if r.dist is not None and r.kind == "exact"]
    loose = [r.loose for r in checked if r.loose is not None]
    out += [f"Checked against certified: {len(checked)} cases. Outside the full enclosure: "
            f"{sum(d > 0 for d in est)} of {len(est)} estimates (max relative distance "
            f"{max(est, default=0):.2e}), {sum(d > 0 for d in ex)} of {len(ex)} exact answers "
            f"(max {max(ex, default=0):.2e}). Certified auto answers overlapping the full "
            f"enclosure: {sum(r.check == 'overlap' for r in checked)} of {len(loose)}; auto's "
            f"upper end above the full upper end by median {_pct(loose, 50):.2%}, max "
            f"{max(loose, default=math.nan):.2%}. Certified runs cut by the cap: "
            f"{sum(r.cert_capped for r in checked)}; max certified time "
            f"{max((r.cert_time for r in checked), default=math.nan):.1f} s.", ""]
    loose_rows = [r for r in checked if r.loose is not None and r.loose > 0.05]
    listing("Certified auto answers more than 5 % above the full certified upper end",
            loose_rows, ["auto [lower, upper]", "full [lower, upper]", "excess"],
            lambda r: [f"[{_num(r.lower)}, {_num(r.upper)}]",
                       f"[{_num(r.cert_lower)}, {_num(r.cert_upper)}]", f"{r.loose:.1%}"])
    wd = [r for r in rows if r.warm_differs and r.kind in ("exact", "saddlepoint")]
    n_cert_wd = sum(r.warm_differs for r in rows if r.kind == "certified")
    out += [f"Warm repeat differs from the cold answer: {len(wd)} exact/saddlepoint cases (must "
            f"be 0); {n_cert_wd} certified cases (the time budget makes those timing-dependent)."
            f" Python warnings raised during cold queries: "
            f"{sum(r.n_pywarn for r in rows)} (in {sum(r.n_pywarn > 0 for r in rows)} cases).",
            ""]
    if cli:
        out += [f"### Command line (`python -m numeric.cli epsilon ... --json`): "
                f"{sum(c['ok'] for c in cli)} of {len(cli)} ok", ""]
        out += _table(["case", "composition", "delta", "exit", "method", "eps", "wall s", "ok",
                       "note"],
                      [[*_case_cells(c["row"]), str(c.get("rc", "-")), str(c.get("method")),
                        _num(c.get("eps")), f"{c['time']:.2f}", "yes" if c["ok"] else "NO",
                        c["note"]] for c in cli])
        out.append("")
    return out


def full_table(rows: list[Row]) -> list[str]:
    body = []
    for r in rows:
        ends = f"[{_num(r.lower)}, {_num(r.upper)}]" if r.lower is not None else "-"
        cert = (f"[{_num(r.cert_lower)}, {_num(r.cert_upper)}] {r.cert_time:.1f}s"
                f"{' capped' if r.cert_capped else ''}" if r.cert_lower is not None else "-")
        eps = _num(r.value) + (f" (warm: {_num(r.warm_value)})" if r.warm_differs else "")
        body.append([*_case_cells(r), r.kind, eps, ends, _ms(r.cold), _ms(r.warm),
                     str(r.n_warn), str(r.tried), cert, r.check or "-",
                     (r.error or r.warm_error or r.cert_error)[:120] or "-"])
    header = ["case", "composition", "delta", "answered by", "eps", "auto [lower, upper]",
              "cold ms", "warm ms", "warnings", "tried", "certified [lower, upper] time", "check",
              "exception"]
    return ["## Per-case results", "", *_table(header, body)]


# ------------------------------------------------------------------------------------------


def _startup() -> float:
    """Imports and one throwaway query along each path (exact, saddlepoint, certified)."""
    from numeric import Laplace, PoissonSubsampledGaussian, RandomizedResponse

    t0 = time.perf_counter()
    numeric.epsilon([(RandomizedResponse(eps=0.777), 7)], 1e-5)
    numeric.epsilon([(PoissonSubsampledGaussian(sigma=1.111, rate=0.0123), 5000)], 1e-5)
    numeric.epsilon([(Laplace(scale=3.333), 3)], 1e-5)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="about 30 cases (< 2 min)")
    ap.add_argument("--out", metavar="FILE", help="also write the summary and per-case table")
    ap.add_argument("--seed", type=int, default=SEED, help=f"grid seed (default {SEED})")
    ap.add_argument("--cert-cases", type=int, default=None,
                    help="cases checked against method='certified' (default 40; quick 6)")
    ap.add_argument("--cert-cap", type=float, default=120.0,
                    help="time_budget (s) of the certified check runs; 0 = none (default 120)")
    ap.add_argument("--cli-cases", type=int, default=None,
                    help="cases run through the command line (default 7; quick 2)")
    args = ap.parse_args(argv)
    n_cert = args.cert_cases if args.cert_cases is not None else (6 if args.quick else 40)
    n_cli = args.cli_cases if args.cli_cases is not None else (2 if args.quick else 7)
    signal.signal(signal.SIGALRM, _alarm)

    t_start = time.perf_counter()
    startup = _startup()
    cases = build_grid(args.seed, args.quick)
    print(f"{len(cases)} cases (seed {args.seed}); start-up {startup:.2f} s", file=sys.stderr)
    rows = []
    for i, case in enumerate(cases):
        r = run_auto(case)
        rows.append(r)
        print(f"[{i + 1}/{len(cases)}] {case.cid}: {r.kind} {_num(r.value)} cold "
              f"{_ms(r.cold)} ms warm {_ms(r.warm)} ms {r.error[:80]}", file=sys.stderr,
              flush=True)
    for i, r in enumerate(pick_certified(rows, n_cert)):
        run_certified(r, args.cert_cap or None)
        print(f"[cert {i + 1}/{n_cert}] {r.case.cid}: {r.check} ({r.cert_time:.1f} s) "
              f"{r.cert_error[:80]}", file=sys.stderr, flush=True)
    cli = pick_cli(rows)
    with tempfile.TemporaryDirectory() as tmp:
        cli_res = [run_cli(r, Path(tmp)) for r in cli[:n_cli]]
    wall = time.perf_counter() - t_start
    text = summary(rows, cli_res, startup, wall)
    print("\n".join(text))
    if args.out:
        Path(args.out).write_text("\n".join([*text, "", *full_table(rows), ""]))
        print(f"per-case table written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
