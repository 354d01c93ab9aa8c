r"""Fuzz every built-in mechanism and method with *valid* inputs, against a fixed oracle.

Issue: "No valid input crashes, hangs, exhausts memory or gets a silently wrong number".

Each draw is a composition of 1-3 terms of the built-in mechanisms (``numeric.mechanisms``)
with parameters drawn across their documented domains (log-uniform), counts 1..1e15
(log-uniform), a query (eps at delta in 1e-300..0.5, or delta at eps in 0..1e3) and a method
(``auto`` and the cheap methods; ``certified`` in the checked subset), asked through the Python
API or the command line (in-process ``numeric.cli.main`` or a real ``python -m numeric.cli``).

Every call runs in a persistent *worker* subprocess (``--worker``) with a 2 GiB address-space cap
(``RLIMIT_AS``) and a 60 s wall-clock cap (the worker is killed and restarted on a timeout or a
crash). The saddlepoint CGF caches are emptied before each call, so every finding reproduces in a
fresh process. The oracle (:func:`violations`): no crash, hang, memory exhaustion or exception
other than ``ValueError`` (``NotApplicable`` included); CLI exit status 0 with one JSON object on
stdout (and nothing on stderr), or 1/2 with exactly one line on stderr; no NaN, no negative eps,
no delta outside [0, 1]; an ``auto`` estimate carries a warning unless it is the saddlepoint with
passing diagnostics. The *checked* draws add a reference, the ``certified`` method (time budget
30 s), and ask every method the same question: an answer off the certified interval by more than
1% must carry a warning; ``auto``'s certified answers must overlap it; the ``exact`` method's
float must lie in it (to 1e-9 relative); an eps of exactly 0 must have delta(0) <= delta (checked
with the certified delta at eps = 0; zero answers of the unchecked draws are checked afterwards).

Usage (from the repository root; ``tests/test_fuzz.py`` runs the same code)::

    nice -n 10 python benchmarks/fuzz_run.py --draws 10000 --checked 1000 --seed 1 --out R.md
    python benchmarks/fuzz_run.py --replay '{"terms": [...], ...}'   # one call, printed
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import resource
import select
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMORY_CAP = 2 << 30
TIME_CAP = 60.0
CERTIFIED_BUDGET = 30.0
REL_TOL = 0.01
EXACT_TOL = 1e-9
CHEAP_METHODS = ("aea", "aea-ea", "saddlepoint", "gdp", "clt", "exact")
ALL_METHODS = ("auto", *CHEAP_METHODS)
ORDER_METHODS = ("auto", "aea", "aea-ea", "saddlepoint")
DOCUMENTED_LIMITS: tuple[str, ...] = ()  # (the subsampled Gaussian's sigma >= 0.05 is gone)
"""ValueError messages for values drawn below a documented limit (a correct answer)."""
INTERNAL_VALUEERRORS = ("epsilon must be >= 0", "delta values must lie in [0, 1]",
                        "empty interval", "empty enclosure", "Exceeds the limit")
"""ValueError messages that come from a result's own consistency checks: a bug, not bad input."""


# ---------------------------------------------------------------------------------------------
# Draws
# ---------------------------------------------------------------------------------------------

def log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    """A number log-uniform on [lo, hi], clipped into it."""
    return min(hi, max(lo, math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _sensitivity(rng: random.Random, params: dict) -> dict:
    if rng.random() < 0.3:
        params["sensitivity"] = log_uniform(rng, 1e-2, 1e2)
    return params


def _delta0(rng: random.Random) -> float:
    u = rng.random()
    return 0.0 if u < 0.2 else log_uniform(rng, 1e-12 if u < 0.7 else 1e-300, 0.5)


SAMPLERS = {
    "gaussian": lambda r: _sensitivity(r, {"sigma": log_uniform(r, 1e-3, 1e6)}),
    "laplace": lambda r: _sensitivity(r, {"scale": log_uniform(r, 1e-3, 1e6)}),
    "randomized-response": lambda r: {"eps0": log_uniform(r, 1e-3, 1e4)},
    "approx-dp": lambda r: {"eps0": 0.0 if r.random() < 0.05 else log_uniform(r, 1e-3, 1e4),
                            "delta0": _delta0(r)},
    "subsampled-gaussian": lambda r: {"sigma": log_uniform(r, 1e-3, 1e6),
                                      "rate": 1.0 if r.random() < 0.1
                                      else log_uniform(r, 1e-9, 1.0)},
    "random-allocation": lambda r: {"sigma": log_uniform(r, 0.05, 1e3),
                                    "rounds": 1 if r.random() < 0.2
                                    else round(log_uniform(r, 2.0, 1e9))},
}
"""Parameter samplers of the built-in mechanisms (CLI/spec keys -> values)."""


def make_draw(rng: random.Random, methods=ALL_METHODS, vias=(("api", 80), ("cli", 15),
              ("cli-proc", 5))) -> dict:
    """One valid call: ``{terms, query, x, method, order, via}`` (JSON-ready)."""
    terms = []
    for _ in range(rng.choices((1, 2, 3), weights=(6, 3, 1))[0]):
        name = rng.choice(sorted(SAMPLERS))
        count = 1 if rng.random() < 0.1 else round(log_uniform(rng, 1.0, 1e15))
        terms.append({"mechanism": name, "params": SAMPLERS[name](rng), "count": count})
    via = rng.choices([v for v, _ in vias], weights=[w for _, w in vias])[0]
    if rng.random() < 0.5:
        query = "epsilon"
        x: float | list[float] = log_uniform(rng, 1e-300 if rng.random() < 0.5 else 1e-15, 0.5)
    else:
        query = "delta"
        u = rng.random()
        x = 0.0 if u < 0.1 else log_uniform(rng, 1e-4, 1e3) if u < 0.7 else rng.uniform(0, 1e3)
        if via == "api" and rng.random() < 0.1:
            x = sorted([x, rng.uniform(0, 1e3), log_uniform(rng, 1e-4, 1e3)])
    method = rng.choice(list(methods))
    order = rng.randint(0, 6) if method in ORDER_METHODS and rng.random() < 0.3 else None
    return {"terms": terms, "query": query, "x": x, "method": method, "order": order, "via": via}


def repro(call: dict) -> str:
    """A one-line reproducer (Python API; the CLI command line for single-term CLI calls)."""
    from numeric.mechanisms import MECHANISMS

    parts = []
    for t in call["terms"]:
        entry = MECHANISMS[t["mechanism"]]
        args = ", ".join(f"{entry.params[k]}={v!r}" for k, v in t["params"].items())
        parts.append(f"({entry.cls.__name__}({args}), {t['count']})")
    opts = "".join(f", {k}={call[k]!r}" for k in ("order", "time_budget")
                   if call.get(k) is not None)
    api = (f"{call['query']}(compose([{', '.join(parts)}]), {call['x']!r}, "
           f"method={call['method']!r}{opts})")
    if call["via"].startswith("cli") and len(call["terms"]) == 1:
        return "python -m numeric.cli " + " ".join(cli_argv(call, None))
    return api + (f"  [via {call['via']}]" if call["via"] != "api" else "")


def cli_argv(call: dict, spec_path: str | None) -> list[str]:
    """The command line of a CLI call (a spec file for several terms)."""
    argv = [call["query"]]
    if len(call["terms"]) == 1:
        t = call["terms"][0]
        argv += ["--mechanism", t["mechanism"]]
        for k, v in t["params"].items():
            argv += [f"--{k.replace('_', '-')}", repr(v)]
        argv += ["--steps", str(t["count"])]
    else:
        argv += ["--spec", str(spec_path)]
    argv += ["--delta" if call["query"] == "epsilon" else "--eps", repr(call["x"]),
             "--method", call["method"]]
    if call.get("order") is not None:
        argv += ["--order", str(call["order"])]
    return [*argv, "--json"]


def spec_text(terms: list[dict]) -> str:
    """The TOML spec file of a composition."""
    lines = []
    for t in terms:
        lines += ["[[mechanism]]", f'type = "{t["mechanism"]}"',
                  *(f"{k} = {v!r}" for k, v in t["params"].items()), f"count = {t['count']}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The worker (runs inside the capped subprocess)
# ---------------------------------------------------------------------------------------------

def _reset_peak() -> None:
    with contextlib.suppress(OSError):
        with open("/proc/self/clear_refs", "w") as f:  # "5": reset the peak RSS (Linux >= 4.0)
            f.write("5")


def _exc_record(exc: BaseException, stage: str) -> dict:
    from numeric.errors import NotApplicable

    if isinstance(exc, NotApplicable):
        outcome = "notapplicable"
    elif isinstance(exc, ValueError):
        outcome = "valueerror"
    elif isinstance(exc, MemoryError):
        outcome = "memory"
    else:
        outcome = "exception"
    tb = traceback.format_exception(exc)
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return {"outcome": outcome, "stage": stage, "exc_type": type(exc).__name__,
            "message": msg[:400], "tb": "".join(tb[-3:])[-1500:] if outcome in
            ("exception", "memory") else None}


def _result_record(res) -> dict:
    """The answer's fields, the same for every result type (certify's Bound included)."""
    import numpy as np

    d = res.to_dict()
    rec: dict = {"outcome": "answer", "warnings": list(d.get("warnings", [])),
                 "estimate": bool(d.get("estimate")), "certified": bool(d.get("certified")),
                 "direction": d.get("direction"),
                 "diagnostics": (d.get("details") or {}).get("diagnostics")}
    if hasattr(res, "lower_method"):  # a certified Bound
        rec["method_used"] = "certified"
        rec["certified"] = True
        rec["vacuous"] = bool(res.vacuous)
        ends = []
        for key, end in (("lower", res.lower_mpf), ("upper", res.upper_mpf)):
            if d.get(f"{key}_infinite"):
                ends.append("Infinity" if end > 0 else "-Infinity")
            else:
                ends.append(d[key])
        rec["lower"], rec["upper"] = ends
        rec["value"] = float(Decimal(ends[1]))
        rec["lower_method"], rec["upper_method"] = d.get("lower_method"), d.get("upper_method")
        return rec
    rec["method_used"] = res.method
    value = res.epsilon if hasattr(res, "epsilon") else res.delta
    rec["value"] = np.asarray(value, dtype=float).tolist()
    for key in ("lower", "upper"):
        end = getattr(res, key, None)
        rec[key] = None if end is None else str(end)
    return rec


def _api(call: dict) -> dict:
    from numeric.composition import compose
    from numeric.mechanisms import MECHANISMS
    from numeric.methods import delta, epsilon

    try:
        comp = compose([(MECHANISMS[t["mechanism"]].build(t["params"]), t["count"])
                        for t in call["terms"]])
    except Exception as exc:
        return _exc_record(exc, "construct")
    opts = {k: call[k] for k in ("order", "time_budget") if call.get(k) is not None}
    try:
        res = (epsilon if call["query"] == "epsilon" else delta)(
            comp, call["x"], call["method"], **opts)
        return _result_record(res)
    except Exception as exc:
        return _exc_record(exc, "call")


def _cli_answer(status: int, out: str, err: str, query: str) -> dict:
    rec: dict = {"cli": {"status": status, "stdout": out[-2000:], "stderr": err[-2000:]}}
    if status != 0:
        rec.update(outcome=f"cli-{status}", message=err.strip()[:400])
        return rec
    try:
        d = json.loads(out)
        assert isinstance(d, dict) and out.strip().count("\n") == 0
    except (ValueError, AssertionError):
        rec.update(outcome="cli-badjson")
        return rec
    value = d.get("epsilon") if query == "epsilon" else d.get("delta")
    if value is None and d.get("infinite"):
        value = math.inf
    if value is None and "lower" in d:  # the certified method's Bound
        value = math.inf if d.get("upper_infinite") else float(Decimal(d["upper"]))
    rec.update(outcome="answer", value=value, method_used=d.get("method", "certified"),
               estimate=bool(d.get("estimate")), certified=bool(d.get("certified")),
               warnings=list(d.get("warnings", [])), direction=d.get("direction"),
               diagnostics=(d.get("details") or {}).get("diagnostics"),
               lower=d.get("lower"), upper=d.get("upper"))
    return rec


def _cli_inproc(call: dict, spec_path: str) -> dict:
    import warnings

    from numeric.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():
            warnings.simplefilter("default")  # a warning a fresh process would print, once
            status = main(cli_argv(call, spec_path))
    except BaseException as exc:  # escaped main(): a traceback and status 1 in a real process
        if isinstance(exc, KeyboardInterrupt):
            raise
        rec = _exc_record(exc, "cli")
        rec["outcome"] = "memory" if isinstance(exc, MemoryError) else "exception"
        return rec
    return _cli_answer(status, out.getvalue(), err.getvalue(), call["query"])


def _cli_proc(call: dict, spec_path: str) -> dict:
    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "numeric.cli", *cli_argv(call, spec_path)],
                                cwd=ROOT, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + TIME_CAP - 5.0
        while True:
            pid, wstatus, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return {"outcome": "timeout", "message": "python -m numeric.cli was killed"}
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
    rec = _cli_answer(proc.returncode, out, err, call["query"])
    rec["child_peak_rss_mb"] = usage.ru_maxrss / 1024
    if proc.returncode < 0:
        rec["outcome"] = "crash"
    return rec


def execute(call: dict, spec_dir: str) -> dict:
    """Run one call in this process; the record of what happened (never raises)."""
    from numeric.cgf import clear_cgf_cache

    clear_cgf_cache()
    spec_path = None
    if call["via"].startswith("cli") and len(call["terms"]) > 1:
        spec_path = os.path.join(spec_dir, "draw.toml")
        with open(spec_path, "w") as f:
            f.write(spec_text(call["terms"]))
    _reset_peak()
    t0 = time.perf_counter()
    if call["via"] == "api":
        rec = _api(call)
    elif call["via"] == "cli":
        rec = _cli_inproc(call, spec_path)
    else:
        rec = _cli_proc(call, spec_path)
    rec["time"] = time.perf_counter() - t0
    rec["peak_rss_mb"] = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                             rec.pop("child_peak_rss_mb", 0.0))
    return rec


def worker_main() -> None:
    """The worker loop: one JSON call per stdin line, one JSON record per protocol line."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything the library prints goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    from numeric.methods import load_plugins

    load_plugins()
    proto.write("ready\n")
    proto.flush()
    with tempfile.TemporaryDirectory() as spec_dir:
        for line in sys.stdin:
            rec = execute(json.loads(line), spec_dir)
            proto.write(json.dumps(rec) + "\n")
            proto.flush()


# ---------------------------------------------------------------------------------------------
# The parent: persistent workers, restarted after a crash or a timeout
# ---------------------------------------------------------------------------------------------

class Worker:
    """A persistent capped worker subprocess; :meth:`call` runs one call in it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self._err = tempfile.TemporaryFile("w+")

    def _start(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self._err.seek(0)
        self._err.truncate()
        self.proc = subprocess.Popen([sys.executable, "-u", str(Path(__file__).resolve()),
                                      "--worker"], cwd=ROOT, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._err)
        line = self._read(120.0)
        if line != "ready\n":
            raise RuntimeError(f"worker did not start: {line!r} {self._stderr_tail()}")

    def _read(self, timeout: float) -> str | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline() if ready else None

    def _stderr_tail(self) -> str:
        self._err.flush()
        self._err.seek(0)
        return self._err.read()[-1500:]

    def _kill(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            self.proc.wait()
            self.proc = None
            self.restarts += 1

    def call(self, call: dict, timeout: float = TIME_CAP) -> dict:
        """The worker's record of ``call``; ``timeout``/``crash`` if it hung or died."""
        if self.proc is None:
            self._start()
        t0 = time.perf_counter()
        try:
            self.proc.stdin.write(json.dumps(call) + "\n")
            self.proc.stdin.flush()
            line = self._read(timeout)
        except (BrokenPipeError, OSError):
            line = ""
        wall = time.perf_counter() - t0
        if line is None:
            self._kill()
            return {"outcome": "timeout", "time": wall,
                    "message": f"killed after {timeout:g} s"}
        if not line:
            rc = self.proc.wait()
            tail = self._stderr_tail()
            self.proc = None
            self.restarts += 1
            kind = "memory" if "memory" in tail.lower() else "crash"
            return {"outcome": kind, "time": wall, "message": f"worker died (status {rc})",
                    "tb": tail}
        rec = json.loads(line)
        rec["wall"] = wall
        return rec

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


# ---------------------------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------------------------

def _values(rec: dict) -> list[float]:
    v = rec.get("value")
    return [float(x) for x in (v if isinstance(v, list) else [v]) if x is not None]


def violations(call: dict, rec: dict) -> list[str]:
    """What is wrong with one call's record (empty: nothing). See the module docstring."""
    out = []
    outcome = rec["outcome"]
    if outcome in ("crash", "timeout", "memory", "exception", "cli-badjson"):
        out.append(outcome)
    message = rec.get("message") or ""
    if outcome in ("valueerror", "cli-1", "cli-2") and any(m in message
                                                          for m in INTERNAL_VALUEERRORS):
        out.append("internal-valueerror")
    elif (outcome in ("valueerror", "cli-2") and call["method"] == "auto"
          and not any(m in message for m in DOCUMENTED_LIMITS)):
        out.append("note-auto-raised")  # the README: auto never raises for valid input
    budget = call.get("time_budget") or (3.0 if call["method"] == "auto" else None)
    if budget is not None and outcome != "timeout" and rec.get("time", 0.0) > 1.5 * budget + 5:
        out.append(f"note-over-budget {rec['time']:.1f} s for a {budget:g} s budget")
    if rec.get("peak_rss_mb", 0.0) > MEMORY_CAP / 2**20:
        out.append("memory")
    cli = rec.get("cli")
    if cli is not None:
        status, err = cli["status"], cli["stderr"]
        if status not in (0, 1, 2):
            out.append("cli-status")
        elif status in (1, 2) and (err.count("\n") != 1 or not err.endswith("\n")
                                   or cli["stdout"]):
            out.append("cli-stderr")
        elif status == 0 and err:
            out.append("cli-stderr-on-success")
    if outcome != "answer":
        return out
    vals = _values(rec)
    if not vals and rec.get("value") is None:
        out.append("no-value")
    if any(math.isnan(v) for v in vals):
        out.append("nan")
    if any(v < 0 for v in vals):
        out.append("negative")
    if call["query"] == "delta" and any(v > 1 for v in vals):
        out.append("delta>1")
    if (call["method"] == "auto" and rec.get("estimate") and not rec.get("warnings")
            and not (rec.get("method_used") == "saddlepoint" and not rec.get("diagnostics"))):
        out.append("auto-unwarned-estimate")
    return out


def is_zero_eps(call: dict, rec: dict) -> bool:
    """An eps answer of exactly 0 (to be checked: delta(0) <= delta)."""
    return (call["query"] == "epsilon" and rec["outcome"] == "answer"
            and _values(rec) == [0.0])


def _dec(s) -> Decimal:
    return Decimal(str(s))


def _float_out(end: Decimal, up: bool) -> Decimal:
    """``end`` rounded outward to a binary64 number (a float answer can do no better)."""
    if not end.is_finite():
        return end
    x = float(end)
    if (Decimal(x) < end) if up else (Decimal(x) > end):
        x = math.nextafter(x, math.inf if up else -math.inf)
    return Decimal(x)


def off_interval(value: float, lo: Decimal, hi: Decimal) -> tuple[str, float]:
    """``(side, relative distance)`` of ``value`` from ``[lo, hi]`` rounded outward to floats
    (``("in", 0.0)`` inside; an underflow to 0 or a rounding to the nearest float is inside)."""
    lo, hi = _float_out(lo, False), _float_out(hi, True)
    if math.isinf(value):
        return ("in", 0.0) if hi.is_infinite() else ("over", math.inf)
    v = Decimal(value)
    if v < lo:
        return "under", float((lo - v) / lo) if lo.is_finite() else math.inf
    if v > hi:
        return "over", float((v - hi) / hi) if hi > 0 else math.inf
    return "in", 0.0


def compare(call: dict, rec: dict, ref: dict) -> list[str]:
    """Findings of an answer against the certified reference ``ref`` (an answer record)."""
    if rec["outcome"] != "answer" or not isinstance(rec.get("value"), float | int):
        return []
    lo, hi = _dec(ref["lower"]), _dec(ref["upper"])
    out = []
    if rec.get("certified"):  # auto's certified answer: must overlap the reference
        a, b = _dec(rec["lower"]), _dec(rec["upper"])
        if b < lo or a > hi:
            out.append(f"certified-disjoint [{a}, {b}] vs [{lo}, {hi}]")
        return out
    side, rel = off_interval(float(rec["value"]), lo, hi)
    ref_text = f"(certified [{float(lo):.10g}, {float(hi):.10g}])"
    if rec.get("method_used") == "exact" and rel > EXACT_TOL:
        out.append(f"exact-excluded {side} by {rel:.3g} {ref_text}")
    if rel > REL_TOL and not rec.get("warnings"):
        out.append(f"silent-wrong {side} by {rel:.3g} {ref_text}")
    elif rel > REL_TOL and call["method"] == "auto":
        passed = rec.get("method_used") == "saddlepoint" and not rec.get("diagnostics")
        kind = "note-auto-passed-diagnostics-off" if passed else "note-auto-off-warned"
        out.append(f"{kind} {side} by {rel:.3g} {ref_text}")
    return out


def check_call(worker: Worker, call: dict) -> tuple[dict, list[str]]:
    rec = worker.call(call)
    return rec, violations(call, rec)


def run_checked(worker: Worker, draw: dict) -> dict:
    """A checked draw: the certified reference, then every method on the same question (API),
    and the drawn method once more through the CLI (the same number expected).

    A vacuous reference is still compared: its proven lower end catches under-reporting."""
    x = draw["x"][0] if isinstance(draw["x"], list) else draw["x"]
    base = {**draw, "x": x, "via": "api"}
    cert_call = {**base, "method": "certified", "order": None, "time_budget": CERTIFIED_BUDGET}
    cert = worker.call(cert_call)
    calls = [(cert_call, cert, violations(cert_call, cert))]
    ref = cert if cert["outcome"] == "answer" else None
    item = {"draw": draw, "calls": calls, "reference": cert["outcome"] if ref is None
            else "vacuous" if cert.get("vacuous") else "answer"}
    for method in ALL_METHODS:
        call = {**base, "method": method,
                "order": draw["order"] if method in ORDER_METHODS else None}
        rec, bad = check_call(worker, call)
        if ref is not None:
            bad += compare(call, rec, ref)
        if is_zero_eps(call, rec):
            bad += zero_findings(worker, call, rec, ref)
        calls.append((call, rec, bad))
        if method == draw["method"] and method != "auto" and rec["outcome"] == "answer":
            cli_call = {**call, "via": "cli"}
            cli = worker.call(cli_call)
            mismatch = cli["outcome"] != "answer" or cli.get("value") != rec.get("value")
            calls.append((cli_call, cli, violations(cli_call, cli) + (
                [f"cli-api-mismatch: api {rec.get('value')!r}"] if mismatch else [])))
    return item


def zero_findings(worker: Worker, call: dict, rec: dict, ref: dict | None) -> list[str]:
    """eps = 0 is right only when delta(0) <= delta: the certified delta at eps = 0 decides
    (``silent-zero`` when it is wrong and ``rec`` has no warning, else ``zero-wrong-warned``)."""
    if ref is not None and _dec(ref["upper"]) == 0:
        return []
    d0 = worker.call({**call, "query": "delta", "x": 0.0, "method": "certified", "order": None,
                      "via": "api", "time_budget": CERTIFIED_BUDGET})
    if d0["outcome"] != "answer":
        return [f"note-zero-unverified (certified delta(0): {d0['outcome']})"]
    if _dec(d0["lower"]) > Decimal(call["x"]):
        kind = "note-zero-wrong-warned" if rec.get("warnings") else "silent-zero"
        return [f"{kind}: delta(0) >= {float(_dec(d0['lower'])):.6g} > delta"]
    if _dec(d0["upper"]) <= Decimal(call["x"]):
        return []
    return [f"note-zero-unverified (delta(0) in [{float(_dec(d0['lower'])):.3g}, "
            f"{float(_dec(d0['upper'])):.3g}])"]


INFO = "note-"
"""The prefix of notes that are not violations (reported, not failed)."""


def findings(bad: list[str]) -> list[str]:
    """The violations among ``bad`` (the notes of :data:`INFO` left out)."""
    return [b for b in bad if not b.startswith(INFO)]


# ---------------------------------------------------------------------------------------------
# The big run
# ---------------------------------------------------------------------------------------------

def _tasks(draws: int, checked: int) -> list[tuple[str, int]]:
    """Unchecked and checked draws, the checked ones spread evenly among the others."""
    tasks: list[tuple[str, int]] = []
    c = 0
    for i in range(draws):
        tasks.append(("u", i))
        while c < checked and (c + 1) * draws <= (i + 1) * checked:
            tasks.append(("c", c))
            c += 1
    tasks += [("c", j) for j in range(c, checked)]
    return tasks


def run_all(draws: int, checked: int, seed: int, jobs: int = 2, max_minutes: float = 55.0,
            methods=ALL_METHODS, log=sys.stderr) -> dict:
    """The big run: ``draws`` unchecked and ``checked`` checked draws on ``jobs`` workers."""
    t0 = time.monotonic()
    deadline = t0 + 60.0 * max_minutes
    local, workers, lock = threading.local(), [], threading.Lock()

    def worker() -> Worker:
        if not hasattr(local, "w"):
            local.w = Worker()
            with lock:
                workers.append(local.w)
        return local.w

    def do(task):
        kind, i = task
        if time.monotonic() > deadline:
            return kind, None
        draw = make_draw(random.Random(f"{seed}:{kind}:{i}"), methods)
        if kind == "c":
            return kind, {"i": i, **run_checked(worker(), draw)}
        rec, bad = check_call(worker(), draw)
        return kind, {"i": i, "draw": draw, "rec": rec, "violations": bad}

    out: dict = {"unchecked": [], "checked": [], "skipped": 0}
    with ThreadPoolExecutor(jobs) as ex:
        for n, (kind, item) in enumerate(ex.map(do, _tasks(draws, checked)), 1):
            if item is None:
                out["skipped"] += 1
                continue
            out["unchecked" if kind == "u" else "checked"].append(item)
            if n % 250 == 0:
                print(f"[{time.monotonic() - t0:7.1f} s] {n} draws", file=log, flush=True)
        zeros = {json.dumps(u["draw"]): u for u in out["unchecked"]
                 if is_zero_eps(u["draw"], u["rec"])}

        def zero(u):
            if time.monotonic() > deadline:
                return
            u["violations"] += zero_findings(worker(), u["draw"], u["rec"], None)

        list(ex.map(zero, list(zeros.values())[:400]))
    for w in workers:
        w.close()
    out.update(elapsed=time.monotonic() - t0, restarts=sum(w.restarts for w in workers),
               zero_checked=min(len(zeros), 400), zero_total=len(zeros))
    return out


def _norm(msg: str) -> str:
    import re

    msg = re.sub(r"/tmp/\S+\.toml", "SPEC", msg or "")
    return re.sub(r"[-+]?\d+(\.\d*)?(e[-+]?\d+)?", "#", msg)[:150]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else math.nan


def report(res: dict, command: str) -> str:
    """The run as markdown: outcomes, time and memory, every finding with a reproducer."""
    lines = [f"# Fuzz run\n\n`{command}`\n",
             f"- draws: {len(res['unchecked'])} unchecked, {len(res['checked'])} checked "
             f"(certified, time budget {CERTIFIED_BUDGET:g} s); {res['skipped']} skipped at "
             f"the time limit",
             f"- elapsed {res['elapsed'] / 60:.1f} min; worker restarts {res['restarts']}",
             f"- eps = 0 answers of unchecked draws: {res['zero_total']} (distinct), "
             f"{res['zero_checked']} checked with certified delta(0)\n"]
    calls = [(u["draw"], u["rec"], u["violations"]) for u in res["unchecked"]]
    for c in res["checked"]:
        calls += [tuple(t) for t in c["calls"]]
    zeros = [bad for d, r, bad in calls if is_zero_eps(d, r)]
    wrong = sum(any("zero-wrong" in b or "silent-zero" in b for b in bad) for bad in zeros)
    unsure = sum(any("zero-unverified" in b for b in bad) for bad in zeros)
    lines.append(f"- eps = 0 answers (all calls): {len(zeros)}; wrong (delta(0) > delta) {wrong}; "
                 f"unverified {unsure}; the rest verified or not checked (unchecked draws past "
                 f"the first 400 distinct)\n")
    outcomes = sorted({r["outcome"] for _, r, _ in calls})
    lines += ["## Outcomes (every call, unchecked and checked)\n",
              "| method | " + " | ".join(outcomes) + " | median s | p99 s | max s | max RSS MB |",
              "|---" * (len(outcomes) + 5) + "|"]
    by_method = defaultdict(list)
    for d, r, _ in calls:
        by_method[d["method"]].append(r)
        by_method["via " + d["via"]].append(r)
    for m in sorted(by_method):
        rs = by_method[m]
        cnt = Counter(r["outcome"] for r in rs)
        ts = [r.get("time", r.get("wall", 0.0)) for r in rs]
        rss = max(r.get("peak_rss_mb", 0.0) for r in rs)
        lines.append(f"| {m} | " + " | ".join(str(cnt.get(o, 0)) for o in outcomes)
                     + f" | {_pct(ts, 0.5):.3f} | {_pct(ts, 0.99):.2f} | {max(ts):.2f} | "
                     f"{rss:.0f} |")
    groups = defaultdict(list)
    for d, r, bad in calls:
        for b in bad:
            groups[b.split(" ")[0].rstrip(":")].append((d, r, b))
    lines += ["\n## Findings\n"]
    if not groups:
        lines.append("None.")
    for kind in sorted(groups):
        items = groups[kind]
        lines.append(f"### {kind}: {len(items)}\n")
        for d, r, b in items[:40]:
            what = r.get("message") or ""
            val = f"value {r.get('value')!r}, method {r.get('method_used')}, " \
                  f"warnings {len(r.get('warnings') or [])}" if r["outcome"] == "answer" else ""
            lines.append(f"- `{repro(d)}` -> {r['outcome']} {val} {b} {what}".rstrip())
            if r.get("tb"):
                tail = r["tb"].strip().splitlines()[-1][:300]
                lines.append(f"  - traceback tail: `{tail}`")
        lines.append("")
    lines += _checked_section(res["checked"])
    lines += ["\n## Plain ValueError / exit 2 messages (valid input; review)\n"]
    msgs: dict[str, list] = defaultdict(list)
    for d, r, _ in calls:
        if r["outcome"] in ("valueerror", "cli-2"):
            msgs[_norm(r.get("message", ""))].append(d)
    for m, ds in sorted(msgs.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"- {len(ds)} x `{m}` e.g. `{repro(ds[0])}`")
    lines += ["\n## auto refusing valid input (NotApplicable / exit 1)\n"]
    auto_na = [(d, r) for d, r, _ in calls if d["method"] == "auto"
               and r["outcome"] in ("notapplicable", "cli-1")]
    na_msgs: dict[str, list] = defaultdict(list)
    for d, r in auto_na:
        na_msgs[_norm(r.get("message", ""))].append(d)
    for m, ds in sorted(na_msgs.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"- {len(ds)} x `{m}` e.g. `{repro(ds[0])}`")
    lines += ["\n## Slowest calls\n"]
    slow = sorted(calls, key=lambda c: -c[1].get("time", c[1].get("wall", 0.0)))[:12]
    for d, r, _ in slow:
        lines.append(f"- {r.get('time', r.get('wall', 0.0)):.1f} s {r['outcome']}: `{repro(d)}`")
    return "\n".join(lines) + "\n"


def _checked_section(checked: list[dict]) -> list[str]:
    ref = Counter(c["reference"] for c in checked)
    lines = ["\n## Checked draws (against certified; API calls)\n",
             "reference: " + ", ".join(f"{k} {v}" for k, v in sorted(ref.items())) + "\n",
             "| method | answered | compared | inside | off <= 1% | off > 1% warned (under / "
             "over) | silent > 1% (under / over) | exact excluded > 1e-9 |", "|---" * 8 + "|"]
    for m in ALL_METHODS:
        row: Counter = Counter()
        for c in checked:
            cert = c["calls"][0][1]
            for call, r, _ in c["calls"][1:]:
                if call["method"] != m or call["via"] != "api" or r["outcome"] != "answer":
                    continue
                row["answered"] += 1
                if cert["outcome"] != "answer":
                    continue
                row["compared"] += 1
                if r.get("certified"):
                    row["inside"] += 1
                    continue
                side, rel = off_interval(float(r["value"]), _dec(cert["lower"]),
                                         _dec(cert["upper"]))
                key = ("inside" if rel == 0 else "small" if rel <= REL_TOL
                       else f"warned-{side}" if r.get("warnings") else f"silent-{side}")
                row[key] += 1
                if r.get("method_used") == "exact" and rel > EXACT_TOL:
                    row["excluded"] += 1
        lines.append(f"| {m} | {row['answered']} | {row['compared']} | {row['inside']} | "
                     f"{row['small']} | {row['warned-under']} / {row['warned-over']} | "
                     f"{row['silent-under']} / {row['silent-over']} | {row['excluded']} |")
    return lines


def rescore(path: str) -> dict:
    """A saved run (``--jsonl``) judged again by this oracle; the notes that needed the worker
    (eps = 0 checks, CLI/API mismatches) are kept as recorded."""
    res: dict = {"unchecked": [], "checked": []}
    kept = ("zero", "cli-api-mismatch")
    for line in open(path):
        item = json.loads(line)
        kind = item.pop("kind")
        if kind == "meta":
            res.update(item)
        elif kind == "unchecked":
            old = [b for b in item["violations"] if any(k in b for k in kept)]
            item["violations"] = violations(item["draw"], item["rec"]) + old
            res["unchecked"].append(item)
        else:
            ref = item["calls"][0][1] if item["calls"][0][1]["outcome"] == "answer" else None
            for i, (call, rec, bad) in enumerate(item["calls"]):
                new = violations(call, rec)
                if i and ref is not None and call["via"] == "api":
                    new += compare(call, rec, ref)
                item["calls"][i] = [call, rec, new + [b for b in bad if any(k in b
                                                                           for k in kept)]]
            res["checked"].append(item)
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--checked", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--max-minutes", type=float, default=55.0)
    p.add_argument("--out", help="markdown report")
    p.add_argument("--jsonl", help="every draw and record, one JSON object a line")
    p.add_argument("--replay", help="one call (JSON) or checked draw (with --checked 1)")
    p.add_argument("--rescore", metavar="JSONL", help="re-judge a saved run with this oracle")
    args = p.parse_args(argv)
    if args.worker:
        worker_main()
        return 0
    if args.replay:
        w = Worker()
        call = json.loads(args.replay)
        if args.checked:
            res = run_checked(w, call)
        else:
            rec, bad = check_call(w, call)
            res = {"rec": rec, "violations": bad}
        w.close()
        print(json.dumps(res, indent=1, default=str))
        return 0
    command = "python benchmarks/fuzz_run.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.rescore:
        res = rescore(args.rescore)
        command = res["command"]
    else:
        res = run_all(args.draws, args.checked, args.seed, args.jobs, args.max_minutes)
        res["command"] = command
    text = report(res, command)
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            f.write(json.dumps({"kind": "meta", **{k: v for k, v in res.items()
                                                   if k not in ("unchecked", "checked")}}) + "\n")
            for kind in ("unchecked", "checked"):
                for item in res[kind]:
                    f.write(json.dumps({"kind": kind, **item}, default=str) + "\n")
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
