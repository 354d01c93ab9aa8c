"""``edgeworth plot tradeoff|delta|steps``: figures from the command line.

::

    edgeworth plot tradeoff [--mechanism NAME --PARAM X ... --steps M] [--spec FILE ...]
        [--gdp-mu MU ...] [--eps-delta EPS,DELTA ...] [--method M] [--certified] [--points N]
        [--time-budget S] (--output FILE.png|.svg|.pdf | --json)
    edgeworth plot delta    (same composition flags) [--eps-max E] ...
    edgeworth plot steps    --mechanism NAME --PARAM X ... --steps M --delta D ...   (or --spec)

The composition flags are ``edgeworth epsilon``'s (``numeric.cli.add_mechanism_flags``); the
mechanism given by flags and every ``--spec`` are drawn on one figure. ``--json`` prints the
plotted points (full precision) instead of drawing. Exit status as in ``numeric.cli``: 2 for bad
input (including an unsupported ``--output`` suffix), 1 if a curve cannot be computed or
matplotlib is missing (the message names the ``plot`` extra).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable

from ..errors import NotApplicable
from ..spec import load_spec
from .points import DEFAULT_CERTIFIED_BUDGET, DEFAULT_METHOD, delta_data, steps_data, tradeoff_data

__all__ = ["register_command"]


def _number(flag: str, text: str, *, positive: bool = False, unit: bool = False) -> float:
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{flag} must be a number, got {text!r}") from None
    if positive and not (math.isfinite(x) and x > 0):
        raise ValueError(f"{flag} must be a finite number > 0, got {text!r}")
    if unit and not (0.0 <= x < 1.0):
        raise ValueError(f"{flag} must be in [0, 1), got {text!r}")
    return x


def _pair(text: str) -> tuple[float, float]:
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"--eps-delta must be EPS,DELTA, got {text!r}")
    eps = _number("--eps-delta eps", parts[0])
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"--eps-delta eps must be a finite number >= 0, got {parts[0]!r}")
    return eps, _number("--eps-delta delta", parts[1], unit=True)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default=DEFAULT_METHOD,
                   help=f"method of curves without a closed form (default {DEFAULT_METHOD}; an "
                   "estimate); closed forms are always exact")
    p.add_argument("--certified", action="store_true",
                   help="add certified bands (certify extra); drawn only as far as proven")
    p.add_argument("--points", default="50", help="certified points per band (default 50)")
    p.add_argument("--time-budget", dest="time_budget", default=str(DEFAULT_CERTIFIED_BUDGET),
                   help="seconds for each band's certified points together "
                   f"(default {DEFAULT_CERTIFIED_BUDGET:g})")
    p.add_argument("--output", metavar="FILE", help="write the figure (.png, .svg or .pdf)")
    p.add_argument("--json", action="store_true", help="print the plotted points as JSON")


def register_command(subparsers, add_mechanism_flags: Callable, composition_of: Callable) -> None:
    """Add ``edgeworth plot`` (called by ``numeric.cli.build_parser``).

    Args:
        subparsers: The ``edgeworth`` subparsers.
        add_mechanism_flags: ``numeric.cli``'s builder of the composition flags.
        composition_of: ``numeric.cli``'s ``args -> (Composition, inputs)`` for those flags.
    """
    plot = subparsers.add_parser("plot", help="figures: trade-off curves, delta(eps), eps vs "
                                 "steps (matplotlib: the plot extra)")
    kinds = plot.add_subparsers(dest="figure", required=True, parser_class=type(plot))
    t = kinds.add_parser("tradeoff", help="trade-off curves f(alpha) with G_mu and "
                         "f_(eps,delta) curves")
    add_mechanism_flags(t, several_specs=True)
    t.add_argument("--gdp-mu", dest="gdp_mu", action="append", default=[], metavar="MU",
                   help="add the Gaussian trade-off curve G_MU (repeatable)")
    t.add_argument("--eps-delta", dest="eps_delta", action="append", default=[],
                   metavar="EPS,DELTA", help="add f_(eps,delta) (repeatable)")
    _common(t)
    d = kinds.add_parser("delta", help="privacy profiles delta(eps)")
    add_mechanism_flags(d, several_specs=True)
    d.add_argument("--eps-max", dest="eps_max", default=None, help="right end of the eps axis")
    _common(d)
    s = kinds.add_parser("steps", help="eps at --delta against the number of steps 1..M")
    add_mechanism_flags(s)
    s.add_argument("--delta", required=True, help="target delta in (0, 1)")
    _common(s)
    for p in (t, d, s):
        p.set_defaults(handler=lambda args: _run(args, composition_of))


def _compositions(args, composition_of: Callable) -> list:
    specs = args.spec if isinstance(args.spec, list) else []
    comps = []
    if args.mechanism is not None:
        flags = argparse.Namespace(**{**vars(args), "spec": None})
        comps.append(composition_of(flags)[0])
    elif any(getattr(args, k) is not None for k in ("steps",)):
        raise ValueError("--steps needs --mechanism")
    comps += [load_spec(f) for f in specs]
    if not comps:
        raise ValueError("give --mechanism (with its parameters and --steps) or --spec FILE")
    return comps


def _run(args, composition_of: Callable) -> int:
    if args.output is None and not args.json:
        raise ValueError("give --output FILE (.png, .svg, .pdf) or --json")
    if args.output is not None:
        from .draw import check_output

        check_output(args.output)  # a bad suffix fails before any computation
    opts = {"method": args.method, "certified": args.certified,
            "points": int(_number("--points", args.points, positive=True)),
            "time_budget": _number("--time-budget", args.time_budget, positive=True)}
    if args.figure == "steps":
        comp, _ = composition_of(args)
        data = steps_data(comp, _number("--delta", args.delta, positive=True), **opts)
    elif args.figure == "delta":
        eps_max = None if args.eps_max is None else _number("--eps-max", args.eps_max,
                                                            positive=True)
        data = delta_data(_compositions(args, composition_of), eps_max=eps_max, **opts)
    else:
        data = tradeoff_data(_compositions(args, composition_of),
                             mus=[_number("--gdp-mu", m, positive=True) for m in args.gdp_mu],
                             eps_deltas=[_pair(e) for e in args.eps_delta], **opts)
    if args.output is not None:
        from .draw import save_figure

        try:
            save_figure(data, args.output)
        except ImportError as exc:
            raise NotApplicable(str(exc)) from None
    if args.json:
        print(json.dumps(data.to_dict(), allow_nan=False))
    else:
        print(f"wrote {args.output}")
    return 0
