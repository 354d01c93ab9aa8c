"""The ``edgeworth`` command line: a stable contract for scripts and audits.

::

    edgeworth epsilon --mechanism NAME [--sigma S] [--scale B] [--eps0 E] [--delta0 D0]
        [--rate Q] [--sensitivity D] --steps M --delta D [--method M] [--order K] [--rel-width R]
        [--time-budget S] [--json]
    edgeworth delta   (same flags, --eps E instead of --delta)
    edgeworth epsilon|delta --spec FILE ...      (a TOML composition, see numeric.spec)
    edgeworth demo
    edgeworth plot tradeoff|delta|steps ...      (figures: numeric.plotting.cli)

Other layers add subcommands through the ``edgeworth.commands`` entry-point group (an object
called with the argparse subparsers) and methods through ``edgeworth.methods``; numeric never
imports them by name.

Exit status: 0 with an answer; 2 for bad input (a flag or value outside its documented domain,
one line on stderr); 1 for valid input that could not be computed (a method that does not apply,
a budget exceeded, memory exhausted, interrupted), also one line on stderr. The default method is
``auto``. Parameter values are read as decimal strings: the float methods use the nearest
binary64 number, certified methods the exact rational typed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
import warnings
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from importlib import metadata

from ._validation import check_count, parse_decimal
from .calibrate import register_command as register_calibrate
from .composition import Composition, compose
from .errors import NotApplicable
from .mechanisms import MECHANISMS, PoissonSubsampledGaussian, RandomizedResponse
from .methods import DEFAULT_METHOD, METHODS, PLUGIN_ERRORS, load_plugins
from .methods import delta as delta_by_method
from .methods import epsilon as epsilon_by_method
from .plotting.cli import register_command as register_plot
from .progress import enabled as progress_enabled
from .spec import load_spec

__all__ = ["add_mechanism_flags", "build_parser", "main"]

def _param_flags() -> dict[str, list[str]]:
    """Every parameter key of the registered mechanisms, with the mechanisms that take it."""
    flags: dict[str, list[str]] = {}
    for name, entry in sorted(MECHANISMS.items()):
        for key in entry.params:
            flags.setdefault(key, []).append(name)
    return flags


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        raise _UsageError(message)


def _steps(text: str) -> int:
    try:
        value: int | float = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--steps must be a whole number, got {text!r}"
            ) from None
    try:
        return check_count("steps", value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _real(flag: str):
    def conv(text: str) -> Decimal:
        try:
            return parse_decimal(flag, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return conv


def add_mechanism_flags(p: argparse.ArgumentParser, *, several_specs: bool = False) -> None:
    """Add --mechanism, --spec, every registered mechanism's parameter flags and --steps
    (shared by ``epsilon``/``delta`` and ``plot``; ``several_specs``: --spec may repeat)."""
    p.add_argument("--mechanism", choices=sorted(MECHANISMS),
                   help="a registered mechanism (its parameters below)")
    if several_specs:
        p.add_argument("--spec", metavar="FILE", action="append",
                       help="TOML composition (repeat for several on one figure)")
    else:
        p.add_argument("--spec", metavar="FILE", help="TOML composition (replaces --mechanism)")
    for key, users in _param_flags().items():
        helps = sorted({MECHANISMS[u].param_help.get(key, "") for u in users} - {""})
        text = "; ".join(helps) if helps else key
        p.add_argument(f"--{key.replace('_', '-')}", dest=key, type=_real(f"--{key}"),
                       metavar="X", help=f"{text} (for: {', '.join(users)})")
    p.add_argument("--steps", type=_steps, help="number of compositions")


def _add_query(sub, name: str, target: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text)
    add_mechanism_flags(p)
    p.add_argument(f"--{target}", type=_real(f"--{target}"), required=True)
    p.add_argument("--method", default=DEFAULT_METHOD,
                   help="auto (default: exact, else saddlepoint, else certified, else estimate) "
                   "| aea | aea-ea | saddlepoint | gdp | clt | exact | certified | plug-ins")
    p.add_argument("--order", type=int, default=2, help="Edgeworth order (aea, saddlepoint, auto)")
    p.add_argument("--rel-width", type=_real("--rel-width"), default=None, metavar="R",
                   help="requested relative width of certified discretized methods (default 1e-4)")
    p.add_argument("--time-budget", type=_real("--time-budget"), default=None,
                   metavar="SECONDS", help="seconds the certified and auto methods may spend "
                   "(certified: also its work budget; default: none, the built-in work budget)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true",
                   help="no progress display on stderr (shown only on a terminal, not with --json)")
    p.set_defaults(handler=_run_query, query=name)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, including subcommands contributed by plug-ins."""
    parser = _Parser(prog="edgeworth", description="Privacy accounting for compositions.")
    try:
        version = metadata.version("edgeworth-accountant")
    except metadata.PackageNotFoundError:
        version = "unknown"
    parser.add_argument("--version", action="version", version=f"edgeworth {version}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_query(sub, "epsilon", "delta", "epsilon at a target delta")
    _add_query(sub, "delta", "eps", "delta at a given epsilon")
    demo = sub.add_parser("demo", help="a representative DP-SGD accounting, side by side")
    demo.set_defaults(handler=_run_demo)
    register_calibrate(sub)
    register_plot(sub, add_mechanism_flags, _composition)
    from .shuffle.cli import add_commands as register_shuffle

    register_shuffle(sub)
    for ep in metadata.entry_points(group="edgeworth.commands"):
        try:
            ep.load()(sub)
        except Exception as exc:  # a broken plug-in must not break the CLI
            PLUGIN_ERRORS.append(f"command plug-in {ep.name!r} failed to load: {exc}")
    return parser


def _composition(args) -> tuple[Composition, dict]:
    params = {k: getattr(args, k) for k in _param_flags() if getattr(args, k, None) is not None}
    if args.spec is not None:
        if args.mechanism is not None or params or args.steps is not None:
            raise ValueError("--spec replaces --mechanism, its parameters and --steps")
        comp = load_spec(args.spec)
        return comp, {"spec": args.spec, "composition": comp.describe()}
    if args.mechanism is None:
        raise ValueError("give --mechanism (with its parameters and --steps) or --spec FILE")
    if args.steps is None:
        raise ValueError("--steps is required with --mechanism")
    entry = MECHANISMS[args.mechanism]
    try:
        mech = entry.build(params)  # Decimal values: floats for the methods, exact in 'typed'
    except ValueError as exc:
        raise ValueError(f"--mechanism {args.mechanism}: {exc}") from None
    inputs = {"mechanism": args.mechanism, **{k: float(v) for k, v in params.items()},
              "steps": args.steps, "typed": {k: str(v) for k, v in params.items()}}
    return compose([(mech, args.steps)]), inputs


def _run_query(args) -> int:
    comp, inputs = _composition(args)
    if args.method not in METHODS:
        load_plugins()
    if args.method not in METHODS:
        raise ValueError(f"--method must be one of {sorted(METHODS)}, got {args.method!r}")
    opts = {"order": args.order} if "order" in METHODS[args.method].options else {}
    if args.rel_width is not None:  # refused by name where it would be ignored, as the budget
        if "rel_width" not in METHODS[args.method].options:
            load_plugins()  # the methods that take one may be plug-ins not yet loaded
            takes = sorted(k for k, m in METHODS.items() if "rel_width" in m.options)
            raise ValueError(f"--rel-width: method {args.method!r} takes no requested width "
                             f"(methods that do: {', '.join(takes) or 'none installed'})")
        opts["rel_width"] = float(args.rel_width)
    if args.time_budget is not None:
        if "time_budget" not in METHODS[args.method].options:
            raise ValueError(f"--time-budget: method {args.method!r} takes no time budget")
        opts["time_budget"] = float(args.time_budget)
    if args.query == "epsilon":
        res = epsilon_by_method(comp, float(args.delta), args.method, **opts)
        inputs["delta"] = float(args.delta)
    else:
        res = delta_by_method(comp, float(args.eps), args.method, **opts)
        inputs["eps"] = float(args.eps)
    if args.json:
        out = res.to_dict()
        out["inputs"] = {**out.get("inputs", {}), **inputs}
        print(json.dumps(out, allow_nan=False))
        return 0
    if hasattr(res, "render_text"):  # results of plug-in methods (e.g. certify's Bound)
        print(res.render_text())
        return 0
    if res.estimate:
        kind = "ESTIMATE (not a bound)"
    elif getattr(res, "certified", False):
        kind = f"CERTIFIED: the true value lies in [{res.lower}, {res.upper}]"
    else:
        kind = "exact for this mechanism"
    if args.query == "epsilon":
        val = "inf (delta not achievable)" if math.isinf(res.epsilon) else f"{res.epsilon:.10g}"
        print(f"epsilon = {val}  at delta = {args.delta}")
    else:
        print(f"delta = {float(res.delta):.10g}  at eps = {args.eps}")
    order = f", order {res.details['order']}" if "order" in res.details else ""
    print(f"  method: {res.method}{order}; {kind}; direction {res.direction}")
    if args.method == "auto":
        reason = str(res.details.get("auto", ""))
        print(f"  chosen by auto: {reason.removeprefix('auto: ')}")
    for w in res.warnings:
        print(f"  warning: {w}")
    return 0


def _row(label: str, fn, note: str) -> str:
    t0 = time.perf_counter()
    try:
        value = f"{float(fn()):10.5f}"
    except ValueError as exc:
        value, note = "       n/a", str(exc)
    ms = 1e3 * (time.perf_counter() - t0)
    return f"  {label:<34} {value}  {ms:8.1f} ms   {note}"


def _certified_row(comp: Composition, delta: float) -> str:
    t0 = time.perf_counter()
    try:
        d = epsilon_by_method(comp, delta, "certified").to_dict()
    except ValueError as exc:
        return f"  {'certified':<34} {'n/a':>10}  {'':>11}   {exc}"
    ms = 1e3 * (time.perf_counter() - t0)
    lo = float(d["lower"]) if d["lower"] is not None else -math.inf
    hi = float(d["upper"]) if d["upper"] is not None else math.inf
    what = "vacuous here (EEAI needs larger delta or m)" if d["vacuous"] else "proven bound"
    return f"  {'certified interval':<34} {_interval_text(lo, hi)}  {ms:8.1f} ms   {what}"


def _outward(x: float, digits: int, rounding: str) -> str:
    if not math.isfinite(x):
        return str(x)
    if x == 0.0:
        return "0"
    d = Decimal(x)
    quantum = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return str(d.quantize(quantum, rounding=rounding).normalize())


def _interval_text(lo: float, hi: float) -> str:
    """[lo, hi] rounded outward (lower end down, upper end up) with the fewest significant
    digits (>= 6) that tell the two ends apart, so the printed interval contains the true one."""
    digits = 6
    while digits < 17 and _outward(lo, digits, ROUND_FLOOR) == _outward(hi, digits, ROUND_CEILING):
        digits += 1
    return f"[{_outward(lo, digits, ROUND_FLOOR)}, {_outward(hi, digits, ROUND_CEILING)}]"


def _run_demo(args) -> int:
    load_plugins()
    sigma, rate, steps, delta = 1.0, 0.01, 10_000, 1e-5
    sgd = compose([(PoissonSubsampledGaussian(sigma, rate), steps)])
    print(f"DP-SGD: noise multiplier {sigma}, Poisson rate {rate}, {steps} steps, delta {delta:g}")
    print(f"  {'method':<34} {'epsilon':>10}  {'time':>11}   what it is")
    print(_row("auto (the default)", lambda: epsilon_by_method(sgd, delta, "auto"),
               "exact, else saddlepoint if its diagnostics pass, else certified"))
    for order in (0, 1, 2):
        print(_row(f"AEA (Q-only Edgeworth) order {order}",
                   lambda o=order: epsilon_by_method(sgd, delta, "aea", order=o),
                   "estimate, not a bound"))
    print(_row("Saddlepoint (tilted Edgeworth) o2",
               lambda: epsilon_by_method(sgd, delta, "saddlepoint", order=2),
               "estimate, not a bound"))
    print(_row("AEA two-sided (EA paper) order 2",
               lambda: epsilon_by_method(sgd, delta, "aea-ea", order=2),
               "estimate (paper variant), not a bound"))
    print(_row("GDP (Thm 3.5 centring mu)", lambda: epsilon_by_method(sgd, delta, "gdp"),
               "CLT estimate, not a bound"))
    print(_row("CLT (Bu et al. 2020 mu)", lambda: epsilon_by_method(sgd, delta, "clt"),
               "CLT estimate, not a bound"))
    if "certified" in METHODS:
        print(_certified_row(sgd, delta))
    else:
        print("  certified: needs the certify extra: pip install 'edgeworth-accountant[certify]'")
    n, eps0, d2 = 10, 1 / math.sqrt(10), 1e-3
    rr = compose([(RandomizedResponse(eps0), n)])
    print(f"\nSeed example: {n} x randomized response eps0 = 1/sqrt({n}), delta {d2:g}")
    print(_row("exact (binomial, KOV)", lambda: epsilon_by_method(rr, d2, "exact"),
               "exact for this mechanism"))
    print(_row("CLT mu = 1 (GDP Thm 3.6)", lambda: epsilon_by_method(rr, d2, "clt"),
               "CLT estimate"))
    print(_row("AEA order 2", lambda: epsilon_by_method(rr, d2, "aea", order=2),
               "estimate; lattice PLLR"))
    print("\nEstimates can under-report epsilon; only certified bounds are guarantees.")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``edgeworth`` console script; returns the exit status."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        with warnings.catch_warnings(), _progress_display(args):
            # numpy's floating-point RuntimeWarnings (with file paths) are not for users: every
            # result that loses accuracy says so in its own warnings
            warnings.simplefilter("ignore", RuntimeWarning)
            return int(args.handler(args) or 0)
    except _UsageError as exc:
        return _fail(2, str(exc))
    except NotApplicable as exc:  # valid input, no method could answer: not a usage error
        return _fail(1, str(exc) or type(exc).__name__)
    except (ValueError, OSError) as exc:
        return _fail(2, str(exc) or type(exc).__name__)
    except MemoryError:
        return _fail(1, "out of memory: the computation needs more memory than is available "
                        "(try --method auto or a smaller problem)")
    except RecursionError:
        return _fail(1, "the computation recursed too deeply")
    except ArithmeticError as exc:
        return _fail(1, f"the computation failed: {type(exc).__name__}: {exc}")
    except KeyboardInterrupt:
        return _fail(1, "interrupted")


def _progress_display(args) -> contextlib.AbstractContextManager:
    """Progress bars (:mod:`numeric.progress`) on stderr only when it is a terminal and the
    answer is for a person: none with ``--json`` or ``--quiet``, or when stderr is not a tty."""
    quiet = getattr(args, "json", False) or getattr(args, "quiet", False)
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stderr
        tty = False
    return contextlib.nullcontext() if quiet or not tty else progress_enabled(sys.stderr)


def _fail(status: int, message: str) -> int:
    """Print one line on stderr and return ``status``."""
    lines = message.splitlines()
    print(f"edgeworth: error: {lines[0] if lines else message}", file=sys.stderr)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
