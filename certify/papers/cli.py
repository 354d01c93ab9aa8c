r"""``edgeworth check PAPER``: run a paper's checks and print a verdict table.

::

    edgeworth check {gdp,edgeworth,shuffle,all} [--quick] [--json]

``--json`` prints a list of rows with the keys ``claim``, ``paper_value``, ``our_value``,
``method``, ``holds``, ``source`` (plus ``paper``, and ``undecided``/``details`` where present)
at full precision: floats as their shortest round-trip repr, exact rationals as ``"p/q"``,
Decimals as their exact digits. Exit status: 0 when every check ran, whatever the verdicts; 1
when one could not run (its row has ``details.error``); 2 for bad flags.
"""

from __future__ import annotations

import json
import math
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any

__all__ = ["add_commands", "jsonable", "main_check"]


def add_commands(sub) -> None:
    """Register ``check`` on an argparse subparsers object."""
    from .registry import PAPERS

    c = sub.add_parser("check", help="check a paper's claims: verdict table (exact/certified)")
    c.add_argument("paper", choices=[*PAPERS, "all"],
                   help="; ".join(f"{k}: {v[1]}" for k, v in PAPERS.items()))
    c.add_argument("--quick", action="store_true", help="small parameters (all papers < 15 s)")
    c.add_argument("--json", action="store_true", help="print a JSON list of rows")
    c.set_defaults(handler=main_check)


def jsonable(x: Any) -> Any:
    """A JSON value at full precision (Fraction -> "p/q", Decimal -> its digits, inf -> "inf")."""
    if x is None or isinstance(x, (bool, str, int)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, Decimal):
        return str(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "tolist"):  # numpy scalars and arrays
        return jsonable(x.tolist())
    return str(x)  # mpmath mpf, Arb balls: their own full-precision text


def _short(x: Any, width: int = 28) -> str:
    if isinstance(x, float):
        s = f"{x:.10g}"
    elif isinstance(x, (list, tuple)) and len(x) == 2 and all(
            isinstance(v, (float, int, Decimal, Fraction)) for v in x):
        s = f"[{float(x[0]):.10g}, {float(x[1]):.10g}]"
    elif x is None:
        s = "-"
    else:
        s = str(jsonable(x)) if not isinstance(x, str) else x
    return s if len(s) <= width else s[: width - 3] + "..."


def _verdict(holds: bool | None) -> str:
    return {True: "holds", False: "FAILS", None: "undecided"}[holds]


def render_table(results) -> str:
    """Plain-text verdict table of a list of :class:`~certify.papers.registry.PaperResult`."""
    lines = []
    for res in results:
        lines.append(f"== {res.paper} ({len(res.rows)} checks, {res.seconds:.1f} s)")
        for r in res.rows:
            lines.append(f"  [{_verdict(r.holds):9}] {r.claim}")
            lines.append(f"      paper: {_short(r.paper_value, 60)}   ours: "
                         f"{_short(r.our_value, 60)}   ({r.method}; {r.source})")
            if r.holds is None:
                lines.append(f"      to decide: {r.undecided}")
    counts = {k: sum(1 for res in results for r in res.rows if r.holds is k)
              for k in (True, False, None)}
    errors = sum(len(res.errors) for res in results)
    lines.append(f"{counts[True]} hold, {counts[False]} fail, {counts[None]} undecided"
                 f" ({errors} could not run)")
    return "\n".join(lines)


def main_check(args) -> int:
    """Handler of ``edgeworth check``; returns the exit status (0 all ran, 1 one could not)."""
    from .registry import PAPERS, run_paper

    names = list(PAPERS) if args.paper == "all" else [args.paper]
    results = [run_paper(n, quick=args.quick) for n in names]
    if args.json:
        out = []
        for res in results:
            for r in res.rows:
                d = {"paper": res.paper, **r.to_dict()}
                out.append(jsonable(d))
        print(json.dumps(out, allow_nan=False, indent=1))
    else:
        print(render_table(results))
    bad = [r for res in results for r in res.errors]
    for r in bad:
        print(f"edgeworth check: could not run: {r.claim}: {r.details['error']}", file=sys.stderr)
    return 1 if bad else 0
