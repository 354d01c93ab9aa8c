"""Check that a restructuring moved no number: record the outputs of a grid, then compare.

The house rule: with the same binary64 inputs, every output number is bit-identical before and
after a restructuring. This script records the outputs of a fixed grid of queries through the
public API (``numeric.epsilon(comp, delta, method=...)`` and ``numeric.delta(comp, eps,
method=...)``, scalar and vectorized over an eps array) and compares two recordings.

Run from the repository root (the recorder imports the project from the current directory)::

    python benchmarks/check_numbers_unchanged.py record OUT.json [--quick]
    python benchmarks/check_numbers_unchanged.py --ref GITREF OUT.json [--quick]
    python benchmarks/check_numbers_unchanged.py compare OLD.json NEW.json

``record`` runs the grid (about 5000 queries; on 2 cores about 1.5 minutes, half of it in the
certified queries; ``--quick``: a subset of about 1800 queries, about 30 seconds) and writes every
output. ``--ref GITREF`` records at another commit: it creates a temporary ``git worktree`` of
that ref, runs this recorder with the worktree as the current directory (so it imports that
commit's code, which the recording's ``meta`` confirms), then removes the worktree.
``record --filter TEXT`` keeps only the cases whose id contains TEXT; ``--reverse`` runs the cases
in reverse order.

Caches: the saddlepoint accountant's per-mechanism cache changes the last bits of later results
(and can decide between an answer and an exception), so every query runs cold: the project's
public cache-emptying functions (``clear_cgf_cache``, found by name) are called before each one,
and the outputs do not depend on the queries before them (``--reverse`` gives the same
recording). Warm reuse is covered by a few explicit sequences (a cold query, then the same
composition at other delta and eps and the same mechanisms at other m). ``--no-clear`` records
without emptying the caches.

The grid (the benchmark grids of ``benchmarks/bench_*.py``): methods ``aea`` (orders 0-4),
``aea-ea``, ``saddlepoint`` (orders 1-3), ``gdp``, ``clt``, ``exact`` on Poisson-subsampled
Gaussians (sigma 0.5, 0.8, 1, 2; rate 0.001, 0.01, 0.1; m 10 .. 1e6; delta 1e-5 and 1e-10),
Gaussian, Laplace, randomized response, approximate DP and heterogeneous mixtures; ``auto`` on
the Gaussian grid; ``certified`` and ``auto`` on a dozen cheap compositions; and a few bad inputs.

What is recorded per query: an exception is an output too (its type, base classes and message).
A result is recorded generically: its type, ``float(result)``, its ``to_dict()`` and, for a
dataclass, its raw fields (which keep inf and NaN, which ``to_dict`` turns into null). Floats
are written as ``"f:" + repr(x)`` (repr round-trips binary64 exactly); certified endpoints are
the exact decimal strings of ``to_dict``. Python warnings raised during a query are recorded too.

``compare`` prints the differences as a table (case, field, old, new) in sections and exits 1 if
any number differs (a float by its exact repr, an int, a bool, a null, an exact decimal string,
a ``direction``), if a number of the public ``to_dict``/``float`` record is missing, if a case
is missing from NEW, or if a query that answered in OLD raises in NEW (unless
``--allow-new-exceptions``). Reported but not failing: a query that raised in OLD and answers in
NEW, differences of warning and other texts, of result types, method labels and exception types,
fields added, and raw (non-``to_dict``) fields missing. It exits 0 when no number differs.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

FORMAT = 1
_NO_FLOAT = "no float:"  # the "float" record of a result that float() refuses

# ----------------------------------------------------------------------------- the grid

DELTAS = (1e-5, 1e-10)
EPS_SCALAR = 1.0
EPS_GRID = (0.0, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
BASE_METHODS = ("aea", "aea-ea", "saddlepoint", "gdp", "clt", "exact")
VECTOR_METHODS = ("aea", "aea-ea", "saddlepoint", "gdp", "clt")
EXTRA_ORDERS = (("aea", 0), ("aea", 1), ("aea", 3), ("aea", 4), ("aea-ea", 1),
                ("saddlepoint", 1), ("saddlepoint", 3))

SGD_SIGMAS = (0.5, 0.8, 1.0, 2.0)
SGD_RATES = (0.001, 0.01, 0.1)
SGD_STEPS = (10, 100, 1000, 10**4, 10**5, 10**6)
GAUSS_SIGMAS = (0.5, 1.0, 2.0, 5.0, 20.0)
GAUSS_STEPS = (1, 10, 100, 1000, 10**4)
LAPLACE_MUS = (0.1, 0.2, 0.3, 0.5, 1.0)
LAPLACE_STEPS = (1, 10, 100, 1000)
RR_EPS = (0.1, 0.5, 1.0, 2.0)
RR_STEPS = (1, 10, 100, 1000, 10**4)
ADP_PARAMS = ((0.1, 1e-7), (0.5, 1e-8), (1.0, 0.0), (0.0, 1e-6))
ADP_STEPS = (1, 10, 100, 1000)
TEN_SIGMAS = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4)

# A term is (kind, params, count); kinds are built by _mechanism.
Term = tuple[str, tuple[float, ...], int]

MIXES: tuple[tuple[Term, ...], ...] = (
    (("sgd", (1.0, 0.01), 1000), ("sgd", (2.0, 0.01), 1000), ("gaussian", (5.0,), 10)),
    (("sgd", (1.0, 0.01), 10**5), ("sgd", (2.0, 0.01), 10**5), ("gaussian", (5.0,), 100)),
    tuple(("sgd", (s, 0.01), 1000) for s in TEN_SIGMAS),
    tuple(("gaussian", (s,), 100) for s in TEN_SIGMAS),
    (("laplace", (0.1,), 50), ("rr", (0.5,), 20)),
    (("adp", (0.1, 1e-7), 100), ("gaussian", (2.0,), 10)),
    (("sgd", (0.8, 0.1), 100), ("laplace", (0.3,), 10)),
    (("gaussian", (1.0,), 10), ("laplace", (1.0,), 10)),
)

# Certified and auto queries on cheap compositions: (terms, delta for the eps query).
CERTIFIED_CASES: tuple[tuple[tuple[Term, ...], float], ...] = (
    ((("sgd", (2.0, 0.1), 10),), 1e-5),
    ((("laplace", (1.0,), 10),), 1e-5),
    ((("rr", (1.0,), 100),), 1e-5),
    ((("adp", (0.1, 1e-6), 100),), 1e-3),
    ((("gaussian", (1.0,), 100),), 1e-5),
    ((("sgd", (1.0, 0.01), 100),), 1e-5),
    ((("sgd", (1.0, 0.1), 100),), 1e-5),
    ((("sgd", (0.8, 0.01), 1000),), 1e-5),
    ((("laplace", (0.1,), 100),), 1e-5),
    ((("rr", (0.1,), 1000),), 1e-5),
    ((("sgd", (1.0, 0.01), 100), ("sgd", (2.0, 0.01), 100), ("gaussian", (5.0,), 10)), 1e-5),
    ((("laplace", (0.1,), 50), ("rr", (0.5,), 20)), 1e-5),
)
QUICK_CERTIFIED = 4  # the first ones (the cheapest)

# Warm sequences (the benchmark's sp_same and sp_warm queries): after a cold first query, the
# same composition at other delta and eps, then the same mechanisms at other m.
SEQUENCES: tuple[tuple[str, tuple[Term, ...]], ...] = (
    ("S1", (("sgd", (1.0, 0.01), 1000),)),
    ("S2", (("sgd", (0.8, 0.001), 10**5),)),
    ("S3", (("laplace", (0.3,), 100),)),
    ("S4", (("sgd", (1.0, 0.01), 1000), ("sgd", (2.0, 0.01), 1000), ("gaussian", (5.0,), 10))),
)


@dataclasses.dataclass(frozen=True)
class Case:
    """One query: ``api`` ("epsilon"/"delta") of ``terms`` at ``x`` by ``method``."""

    terms: tuple[Term, ...]
    api: str
    x: float | tuple[float, ...]
    method: str
    options: tuple[tuple[str, Any], ...] = ()
    sequence: str = ""  # a warm sequence's name; "" for a lone (cold) query
    step: int = 0  # position in the sequence; step 0 runs cold, later steps warm

    @property
    def cold(self) -> bool:
        """True when the caches are emptied before this query (not a warm sequence step)."""
        return self.step == 0

    @property
    def id(self) -> str:
        comp = " + ".join(f"{_term_label(k, p)}x{c}" for k, p, c in self.terms)
        name = "delta" if self.api == "epsilon" else "eps"
        x = "[" + ",".join(map(repr, self.x)) + "]" if isinstance(self.x, tuple) else repr(self.x)
        opts = "".join(f" {k}={v!r}" for k, v in self.options)
        seq = f" :: sequence {self.sequence} step {self.step}" if self.sequence else ""
        return f"{comp} :: {self.api}({name}={x}) :: {self.method}{opts}{seq}"


_LABELS = {"sgd": ("SGD", ("sigma", "rate")), "gaussian": ("Gaussian", ("sigma",)),
           "laplace": ("Laplace", ("mu",)), "rr": ("RR", ("eps0",)),
           "adp": ("ApproxDP", ("eps0", "delta0"))}


def _term_label(kind: str, params: tuple[float, ...]) -> str:
    name, keys = _LABELS[kind]
    return f"{name}(" + ",".join(f"{k}={v!r}" for k, v in zip(keys, params, strict=True)) + ")"


def _standard_cases(terms: tuple[Term, ...], *, orders: bool = True,
                    auto: bool = False) -> Iterator[Case]:
    methods = (*BASE_METHODS, "auto") if auto else BASE_METHODS
    for delta in DELTAS:
        for method in methods:
            yield Case(terms, "epsilon", delta, method)
    if orders:
        for method, order in EXTRA_ORDERS:
            yield Case(terms, "epsilon", DELTAS[0], method, (("order", order),))
    for method in methods:
        yield Case(terms, "delta", EPS_SCALAR, method)
    for method in VECTOR_METHODS:
        yield Case(terms, "delta", EPS_GRID, method)


def _bad_input_cases() -> Iterator[Case]:
    sgd = (("sgd", (1.0, 0.01), 1000),)
    gauss = (("gaussian", (1.0,), 10),)
    for terms in (sgd, gauss):
        for delta in (0.0, 1.0, -1e-5, math.nan, 0.5):
            yield Case(terms, "epsilon", delta, "aea")
            yield Case(terms, "epsilon", delta, "saddlepoint")
        for eps in (-1.0, math.nan, math.inf, 1e3):
            yield Case(terms, "delta", eps, "aea")
            yield Case(terms, "delta", eps, "saddlepoint")
        yield Case(terms, "epsilon", 1e-5, "no-such-method")
        yield Case(terms, "epsilon", 1e-5, "aea", (("order", 9),))
        yield Case(terms, "epsilon", 1e-5, "gdp", (("order", 2),))
    yield Case((("sgd", (0.01, 0.01), 10),), "epsilon", 1e-5, "aea")  # sigma below 0.05
    yield Case((("sgd", (1.0, 1.5), 10),), "epsilon", 1e-5, "aea")  # rate above 1
    yield Case((("sgd", (1.0, 1.0), 10),), "epsilon", 1e-5, "exact")  # rate 1: a Gaussian
    yield Case((("laplace", (1.0,), 0),), "epsilon", 1e-5, "aea")  # count 0
    yield Case((("gaussian", (-1.0,), 10),), "epsilon", 1e-5, "aea")


def _sequence_cases(name: str, terms: tuple[Term, ...], method: str) -> Iterator[Case]:
    steps: list[tuple[tuple[Term, ...], str, Any]] = [
        (terms, "epsilon", d) for d in (1e-5, 2e-5, 5e-6, 1e-10)]
    steps += [(terms, "delta", EPS_SCALAR), (terms, "delta", EPS_GRID)]
    for k in (0.9, 1.1):
        steps.append((tuple((kind, p, max(1, round(k * c))) for kind, p, c in terms),
                      "epsilon", 1e-5))
    for i, (t, api, x) in enumerate(steps):
        yield Case(t, api, x, method, sequence=name, step=i)


def build_grid(quick: bool = False) -> list[Case]:
    """The cases of the grid (``quick``: a subset of the full grid), each id once."""
    cases: list[Case] = []
    sigmas = (0.8, 1.0) if quick else SGD_SIGMAS
    steps = (10, 1000, 10**5) if quick else SGD_STEPS
    for sigma in sigmas:
        for rate in SGD_RATES:
            for m in steps:
                cases += _standard_cases((("sgd", (sigma, rate), m),), orders=not quick)
    for sigma in GAUSS_SIGMAS[1:3] if quick else GAUSS_SIGMAS:
        for m in GAUSS_STEPS:
            cases += _standard_cases((("gaussian", (sigma,), m),), auto=True)
    for mu in LAPLACE_MUS[::2] if quick else LAPLACE_MUS:
        for m in LAPLACE_STEPS:
            cases += _standard_cases((("laplace", (mu,), m),))
    for eps0 in RR_EPS[::2] if quick else RR_EPS:
        for m in RR_STEPS:
            cases += _standard_cases((("rr", (eps0,), m),))
    for params in ADP_PARAMS:
        for m in ADP_STEPS[1::2] if quick else ADP_STEPS:
            cases += _standard_cases((("adp", params, m),))
    for terms in MIXES[::2] if quick else MIXES:
        cases += _standard_cases(terms)
    cases += _bad_input_cases()
    for terms, delta in CERTIFIED_CASES[:QUICK_CERTIFIED] if quick else CERTIFIED_CASES:
        for method in ("certified", "auto"):
            cases.append(Case(terms, "epsilon", delta, method))
            cases.append(Case(terms, "delta", EPS_SCALAR, method))
    for name, terms in SEQUENCES[:2] if quick else SEQUENCES:
        cases += _sequence_cases(name, terms, "saddlepoint")
    return list({c.id: c for c in cases}.values())  # a repeated id once, at its first place


# ----------------------------------------------------------------------------- recording


def encode(obj: Any, depth: int = 0) -> Any:
    """A JSON value recording ``obj`` exactly: floats as ``"f:" + repr``, containers recursively.

    Objects with ``to_dict()`` are recorded by their dict, other dataclasses by their fields
    (tagged with ``"__type__"``), anything else by ``"repr:" + repr(obj)``.
    """
    import numpy as np

    if depth > 50:
        return "repr:" + repr(obj)
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return "f:" + repr(float(obj))
    if isinstance(obj, np.ndarray):
        return [encode(v, depth + 1) for v in obj.tolist()] if obj.ndim else encode(obj.item())
    if isinstance(obj, dict):
        return {str(k): encode(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [encode(v, depth + 1) for v in obj]
    if callable(getattr(obj, "to_dict", None)):
        return encode(obj.to_dict(), depth + 1)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {"__type__": type(obj).__qualname__}
        for f in dataclasses.fields(obj):
            out[f.name] = encode(getattr(obj, f.name), depth + 1)
        return out
    return "repr:" + repr(obj)


def record_result(res: Any) -> dict[str, Any]:
    """The record of a returned result (module docstring)."""
    rec: dict[str, Any] = {"outcome": "answer",
                           "type": f"{type(res).__module__}.{type(res).__qualname__}"}
    try:
        rec["float"] = encode(float(res))
    except (TypeError, ValueError) as exc:
        rec["float"] = f"{_NO_FLOAT} {type(exc).__name__}"
    rec["dict"] = encode(res.to_dict()) if callable(getattr(res, "to_dict", None)) \
        else encode(res)
    if dataclasses.is_dataclass(res) and not isinstance(res, type):
        rec["fields"] = {f.name: encode(getattr(res, f.name)) for f in dataclasses.fields(res)}
    return rec


def record_exception(exc: BaseException) -> dict[str, Any]:
    """The record of a raised exception: type, base classes and message."""
    kind = type(exc)
    return {"outcome": "exception", "type": f"{kind.__module__}.{kind.__qualname__}",
            "bases": [c.__name__ for c in kind.__mro__[1:] if c not in (BaseException, object)],
            "message": str(exc)}


def _mechanism(numeric, kind: str, params: tuple[float, ...]):
    if kind == "sgd":
        return numeric.PoissonSubsampledGaussian(*params)
    if kind == "gaussian":
        return numeric.Gaussian(*params)
    if kind == "laplace":
        return numeric.Laplace(1.0 / params[0])
    if kind == "rr":
        return numeric.RandomizedResponse(*params)
    if kind == "adp":
        return numeric.ApproxDP(*params)
    raise ValueError(f"unknown mechanism kind {kind!r}")


def run_case(numeric, case: Case) -> dict[str, Any]:
    """Run one query and return its record (an exception is recorded, not raised)."""
    import numpy as np

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            comp = numeric.compose([(_mechanism(numeric, k, p), c) for k, p, c in case.terms])
            x = np.array(case.x) if isinstance(case.x, tuple) else case.x
            fn = numeric.epsilon if case.api == "epsilon" else numeric.delta
            rec = record_result(fn(comp, x, method=case.method, **dict(case.options)))
        except Exception as exc:
            rec = record_exception(exc)
    rec["pywarnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return rec


def _git(root: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                             check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out.stdout.strip()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _inside(path: str | None, root: Path) -> bool:
    return path is not None and Path(path).resolve().is_relative_to(root)


CACHE_CLEARERS = ("clear_cgf_cache", "clear_caches", "clear_cache")


def cache_clearers() -> dict[str, Callable[[], None]]:
    """The project's public cache-emptying functions, found by name in its loaded modules.

    The saddlepoint accountant keeps a per-mechanism cache whose contents change the last bits
    of later results (and can even decide between an answer and an exception), so every lone
    query runs cold: these are called before it. Found by name (:data:`CACHE_CLEARERS`, in any
    loaded ``numeric``/``certify`` module) so that moving them does not break the recorder.
    """
    for name in ("numeric.saddlepoint", "numeric.cgf"):  # import the usual homes if present
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    found: dict[str, Callable[[], None]] = {}
    for mod_name, mod in sorted(sys.modules.items()):
        if mod is None or mod_name.split(".")[0] not in ("numeric", "certify"):
            continue
        for attr in CACHE_CLEARERS:
            fn = getattr(mod, attr, None)
            if callable(fn) and fn not in found.values():
                found[f"{fn.__module__}.{fn.__qualname__}"] = fn
    return found


def _check_certify(root: Path) -> None:
    certify = sys.modules.get("certify")
    if certify is not None and not _inside(getattr(certify, "__file__", None), root):
        raise SystemExit(f"imported certify from {certify.__file__}, not from {root}")


def _groups(cases: list[Case]) -> list[list[Case]]:
    """The cases split into groups that run together: a cold case and its warm steps."""
    groups: list[list[Case]] = []
    for case in cases:
        if case.cold or not groups:
            groups.append([case])
        else:
            groups[-1].append(case)
    return groups


def record(out: Path, *, quick: bool, root: Path, reverse: bool = False,
           only: str | None = None, clear: bool = True) -> dict[str, Any]:
    """Run the grid with the project at ``root`` and write the recording to ``out``."""
    root = root.resolve()
    if not (root / "numeric" / "__init__.py").is_file():
        raise SystemExit(f"{root} is not the project root (no numeric/__init__.py): run from "
                         "the repository root or pass --root")
    sys.path.insert(0, str(root))
    numeric = importlib.import_module("numeric")
    if not _inside(numeric.__file__, root):
        raise SystemExit(f"imported numeric from {numeric.__file__}, not from {root}")
    try:  # load the plug-ins (certify) now, to check where they come from
        getattr(importlib.import_module("numeric.methods"), "load_plugins", lambda: None)()
    except ImportError:
        pass
    _check_certify(root)
    groups = _groups(build_grid(quick))
    if only:
        groups = [g for g in groups if any(only in c.id for c in g)]
    if reverse:
        groups = groups[::-1]
    cases = [c for g in groups for c in g]
    clearers = cache_clearers() if clear else {}
    if clear and not clearers:
        raise SystemExit("no cache-clearing function found (looked for "
                         f"{', '.join(CACHE_CLEARERS)}); pass --no-clear to record anyway")
    results: dict[str, Any] = {}
    timings: dict[str, float] = {}
    t_start = time.perf_counter()
    for i, case in enumerate(cases):
        if case.cold:
            for fn in clearers.values():
                fn()
        t0 = time.perf_counter()
        results[case.id] = run_case(numeric, case)
        timings[case.id] = round(time.perf_counter() - t0, 4)
        if timings[case.id] > 2.0 or (i + 1) % 500 == 0:
            print(f"  [{i + 1}/{len(cases)}] {timings[case.id]:7.2f} s  {case.id}",
                  file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t_start
    _check_certify(root)
    certify = sys.modules.get("certify")
    meta = {
        "format": FORMAT, "grid": "quick" if quick else "full", "filter": only,
        "reverse": reverse, "cases": len(cases), "seconds": round(seconds, 2),
        "cache_clearers": sorted(clearers) if clear else "none (--no-clear)",
        "root": str(root), "commit": _git(root, "rev-parse", "HEAD"),
        "dirty": bool(_git(root, "status", "--porcelain", "--untracked-files=no")),
        "numeric_file": numeric.__file__,
        "certify_file": getattr(certify, "__file__", None),
        "certify_from_root": _inside(getattr(certify, "__file__", None), root),
        "python": sys.version.split()[0], "platform": platform.platform(),
        "versions": {d: _version(d) for d in ("numpy", "scipy", "python-flint", "mpmath")},
    }
    data = {"meta": meta, "results": results, "timings": timings}
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"recorded {len(cases)} cases in {seconds:.1f} s at {meta['commit'][:12]}"
          f"{' (dirty)' if meta['dirty'] else ''} -> {out}", file=sys.stderr)
    return data


def record_at_ref(ref: str, out: Path, extra: list[str]) -> int:
    """Record at git ``ref``: a temporary worktree, the recorder run there, the worktree removed."""
    repo = _git(Path.cwd(), "rev-parse", "--show-toplevel")
    if not repo:
        raise SystemExit("--ref needs to run inside the project's git repository")
    tmp = Path(tempfile.mkdtemp(prefix="numbers-ref-"))
    tree = tmp / "tree"
    try:
        subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", str(tree), ref],
                       check=True, capture_output=True, text=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), "record", str(out.resolve()),
               *extra]
        return subprocess.run(cmd, cwd=tree, check=False).returncode
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"git worktree add {ref} failed: {exc.stderr.strip()}") from None
    finally:
        subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", str(tree)],
                       check=False, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", repo, "worktree", "prune"], check=False,
                       capture_output=True)


# ----------------------------------------------------------------------------- comparing

TEXT_KEYS = frozenset({"warnings", "assumptions", "note", "diagnostics", "message", "reason",
                       "pywarnings", "auto"})
LABEL_KEYS = frozenset({"type", "bases", "method", "lower_method", "upper_method", "variant",
                        "chosen", "quantity", "__type__"})
OUTPUT_STRING_KEYS = frozenset({"direction"})
PUBLIC_PARTS = ("dict", "float")
_DECIMAL = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")

FAIL = ("number", "missing", "raises")  # the failing categories


def flatten(obj: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """``(path, leaf)`` pairs; a path is a tuple of dict keys (str) and list indices (int)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from flatten(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from flatten(v, (*path, i))
    else:
        yield path, obj


def _keys(path: tuple) -> list[str]:
    return [p for p in path if isinstance(p, str)]


def is_number(leaf: Any, path: tuple) -> bool:
    """True for a recorded number: a float, int, bool or null, or an exact decimal string."""
    if leaf is None or isinstance(leaf, bool | int):
        return True
    if not isinstance(leaf, str):
        return False
    if leaf.startswith("f:"):
        return True
    return bool(_DECIMAL.fullmatch(leaf)) and not TEXT_KEYS.intersection(_keys(path))


def leaf_category(path: tuple, old: Any, new: Any) -> str:
    """``number`` (fails), ``label`` or ``text`` (informational) for a differing leaf."""
    if is_number(old, path) or is_number(new, path):
        return "number"
    keys = _keys(path)
    if keys and keys[-1] in OUTPUT_STRING_KEYS and not TEXT_KEYS.intersection(keys):
        return "number"
    if LABEL_KEYS.intersection(keys[-1:]) or (keys and keys[0] in LABEL_KEYS):
        return "label"
    return "text"


def path_str(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def same_leaf(a: Any, b: Any) -> bool:
    """Exact equality of recorded leaves (floats by repr, hence bit for bit; NaN equals NaN)."""
    return type(a) is type(b) and a == b


Row = tuple[str, str, str, str, str]  # (category, case, field, old, new)


def compare_case(case: str, old: dict, new: dict, allow_new_exceptions: bool) -> list[Row]:
    """The differences of one case's records."""
    rows: list[Row] = []
    if old.get("outcome") != new.get("outcome"):
        cat = "answers" if old.get("outcome") == "exception" else (
            "raises-allowed" if allow_new_exceptions else "raises")
        rows.append((cat, case, "outcome", _summary(old), _summary(new)))
        if "pywarnings" in old or "pywarnings" in new:
            rows += _diff_part(case, "pywarnings", old.get("pywarnings", []),
                               new.get("pywarnings", []))
        return rows
    for part in dict.fromkeys([*old, *new]):
        if part == "outcome":
            continue
        rows += _diff_part(case, part, old.get(part), new.get(part))
    return rows


def _diff_part(case: str, part: str, old: Any, new: Any) -> list[Row]:
    rows: list[Row] = []
    a = dict(flatten(old, (part,))) if old is not None or part in ("dict", "float") else {}
    b = dict(flatten(new, (part,))) if new is not None or part in ("dict", "float") else {}
    for path in dict.fromkeys([*a, *b]):
        field = path_str(path)
        if path in a and path in b:
            if not same_leaf(a[path], b[path]):
                cat = leaf_category(path, a[path], b[path])
                old_nf, new_nf = (str(v).startswith(_NO_FLOAT) for v in (a[path], b[path]))
                if part == "float" and (old_nf or new_nf):  # float() refused in OLD or NEW
                    cat = "missing" if new_nf and not old_nf else "structure"
                rows.append((cat, case, field, _show(a[path]), _show(b[path])))
        elif path in a:
            public = part in PUBLIC_PARTS and is_number(a[path], path)
            rows.append(("missing" if public else "structure", case, field, _show(a[path]),
                         "(absent)"))
        else:
            rows.append(("structure", case, field, "(absent)", _show(b[path])))
    return rows


def _summary(rec: dict) -> str:
    if rec.get("outcome") == "exception":
        return f"raises {rec.get('type')}: {rec.get('message')}"
    value = rec.get("float")
    if isinstance(value, str) and value.startswith("f:"):
        return f"answers {rec.get('type')} {_show(value)}"
    numbers = [f"{path_str(p)}={_show(v)}" for p, v in flatten(rec.get("dict"), ("dict",))
               if isinstance(v, str) and is_number(v, p)][:2]  # e.g. a Bound's two ends
    return f"answers {rec.get('type')} " + ", ".join(numbers)


def _show(leaf: Any) -> str:
    if isinstance(leaf, str) and leaf.startswith("f:"):
        x = float(leaf[2:])
        return f"{leaf[2:]} ({x.hex()})"
    return json.dumps(leaf) if not isinstance(leaf, str) else leaf


SECTIONS = (
    ("number", "NUMBERS THAT DIFFER (fail)"),
    ("missing", "NUMBERS MISSING IN NEW (fail)"),
    ("raises", "ANSWERED IN OLD, RAISES IN NEW (fail; --allow-new-exceptions to allow)"),
    ("cases", "CASES MISSING IN NEW (fail)"),
    ("answers", "RAISED IN OLD, ANSWERS IN NEW (informational)"),
    ("raises-allowed", "ANSWERED IN OLD, RAISES IN NEW (allowed by --allow-new-exceptions)"),
    ("label", "RESULT TYPES, METHOD LABELS, EXCEPTION TYPES (informational)"),
    ("text", "WARNING AND OTHER TEXTS (informational)"),
    ("structure", "FIELDS ADDED, OR RAW FIELDS MISSING (informational)"),
    ("new-cases", "CASES ONLY IN NEW (informational)"),
)


def compare(old: dict, new: dict, *, allow_new_exceptions: bool = False, max_rows: int = 50,
            width: int = 120, write: Callable[[str], None] = print) -> int:
    """Compare two recordings, print the differences; 1 if a number differs, else 0."""
    rows: list[Row] = []
    ro, rn = old["results"], new["results"]
    for case, rec in ro.items():
        if case not in rn:
            rows.append(("cases", case, "(case)", "recorded", "(absent)"))
        else:
            rows += compare_case(case, rec, rn[case], allow_new_exceptions)
    rows += [("new-cases", case, "(case)", "(absent)", "recorded") for case in rn if case not in ro]
    mo, mn = old.get("meta", {}), new.get("meta", {})
    write(f"OLD: {mo.get('commit', '?')[:12]} grid {mo.get('grid')} ({mo.get('cases')} cases, "
          f"{mo.get('seconds')} s)  NEW: {mn.get('commit', '?')[:12]} grid {mn.get('grid')} "
          f"({mn.get('cases')} cases, {mn.get('seconds')} s)")
    if mo.get("cache_clearers") != mn.get("cache_clearers"):
        write(f"note: the caches were emptied by {mo.get('cache_clearers')} in OLD and by "
              f"{mn.get('cache_clearers')} in NEW")
    if mo.get("versions") != mn.get("versions") or mo.get("python") != mn.get("python"):
        write(f"note: dependency versions differ: {mo.get('python')} {mo.get('versions')} vs "
              f"{mn.get('python')} {mn.get('versions')}")
    counts = {}
    for cat, title in SECTIONS:
        sel = [r for r in rows if r[0] == cat]
        counts[cat] = len(sel)
        if not sel:
            continue
        cases = len({r[1] for r in sel})
        write(f"\n== {title}: {len(sel)} difference(s) in {cases} case(s)")
        write(" | ".join(("case", "field", "old", "new")))
        for r in sel[:max_rows]:
            write(" | ".join((r[1], r[2], _clip(r[3], width), _clip(r[4], width))))
        if len(sel) > max_rows:
            write(f"... {len(sel) - max_rows} more (--max-rows)")
    failing = sum(counts.get(c, 0) for c in (*FAIL, "cases"))
    compared = sum(1 for c in ro if c in rn)
    verdict = "FAIL: numbers differ" if failing else "OK: no number differs"
    found = ", ".join(f"{c} {n}" for c, n in counts.items() if n) or "no differences"
    write(f"\n{verdict} ({compared} cases compared; {found})")
    return 1 if failing else 0


def _clip(s: str, width: int) -> str:
    return s if width <= 0 or len(s) <= width else s[: width - 3] + "..."


# ----------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].startswith("--ref"):  # the documented short form: --ref GITREF OUT
        argv = ["record", *argv]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the grid and write every output")
    rec.add_argument("out", type=Path)
    rec.add_argument("--quick", action="store_true", help="a subset of the grid (about a minute)")
    rec.add_argument("--ref", help="record at this git ref (a temporary git worktree)")
    rec.add_argument("--root", type=Path, default=None,
                     help="the project root to import (default: the current directory)")
    rec.add_argument("--reverse", action="store_true", help="run the cases in reverse order")
    rec.add_argument("--filter", dest="only", help="only the cases whose id contains this text")
    rec.add_argument("--no-clear", dest="clear", action="store_false",
                     help="do not empty the caches before each lone query (results then "
                          "depend on the queries before)")
    cmp_ = sub.add_parser("compare", help="compare two recordings; exit 1 if a number differs")
    cmp_.add_argument("old", type=Path)
    cmp_.add_argument("new", type=Path)
    cmp_.add_argument("--allow-new-exceptions", action="store_true",
                      help="a query answered in OLD and raising in NEW does not fail")
    cmp_.add_argument("--max-rows", type=int, default=50, help="rows shown per section")
    cmp_.add_argument("--width", type=int, default=160, help="clip values to this width (0: no)")
    args = ap.parse_args(argv)
    if args.command == "compare":
        old = json.loads(args.old.read_text())
        new = json.loads(args.new.read_text())
        return compare(old, new, allow_new_exceptions=args.allow_new_exceptions,
                       max_rows=args.max_rows, width=args.width)
    if args.ref:
        extra = [*(["--quick"] if args.quick else []), *(["--reverse"] if args.reverse else []),
                 *(["--filter", args.only] if args.only else []),
                 *([] if args.clear else ["--no-clear"])]
        return record_at_ref(args.ref, args.out, extra)
    record(args.out, quick=args.quick, root=args.root or Path(os.getcwd()),
           reverse=args.reverse, only=args.only, clear=args.clear)
    return 0


if __name__ == "__main__":
    sys.exit(main())
