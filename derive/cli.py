"""``edgeworth derive``: print a mechanism's PLLR and its cumulants (closed form or quadrature).

::

    edgeworth derive MECHANISM --order K [--latex] [--param NAME=VALUE ...] [--timeout S]

MECHANISM is a built-in name (``gaussian``, ``laplace``, ``randomized-response``) or the path of
a Python file that defines a ``derive`` mechanism spec (a variable named ``MECHANISM``, or the
only :class:`derive.MechanismSpec` in the file). The file is executed as Python: run only files
you trust. Added through the ``edgeworth.commands`` entry point; sympy is imported only when the
command runs.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["register_commands"]


def register_commands(sub) -> None:
    """Add the ``derive`` subcommand to an argparse subparsers object."""
    p = sub.add_parser("derive", help="derive a mechanism's PLLR cumulants from its densities")
    p.add_argument("mechanism", help="built-in name or path to a Python file defining a spec")
    p.add_argument("--order", type=int, default=4, help="highest cumulant order (1..16)")
    p.add_argument("--latex", action="store_true", help="print expressions as LaTeX")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter value for the numeric evaluation (default: the spec's)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds allowed per symbolic integral before quadrature takes over")
    p.set_defaults(handler=_run_derive)


def _load_spec(name: str):
    from .builtins import BUILTINS
    from .mechanism import MechanismSpec

    if name in BUILTINS:
        return BUILTINS[name]
    if not (name.endswith(".py") and os.path.isfile(name)):
        raise ValueError(
            f"mechanism must be one of {sorted(BUILTINS)} or a Python file, got {name!r}"
        )
    import runpy

    try:
        namespace = runpy.run_path(name)
    except Exception as exc:  # the user's file failed: report it in one line
        raise ValueError(f"{name}: could not run the file: {type(exc).__name__}: {exc}") from None
    if isinstance(namespace.get("MECHANISM"), MechanismSpec):
        return namespace["MECHANISM"]
    specs = [v for v in namespace.values() if isinstance(v, MechanismSpec)]
    if len(specs) != 1:
        raise ValueError(
            f"{name}: define MECHANISM = <derive mechanism spec> (found {len(specs)} specs)"
        )
    return specs[0]


def _params(items: list[str]) -> dict[str, float]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param must look like NAME=VALUE, got {item!r}")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--param {key}: not a number: {value!r}") from None
    return out


def _run_derive(args) -> int:
    import sympy as sp

    from .mechanism import MAX_ORDER, QuadratureFallbackWarning

    spec = _load_spec(args.mechanism)
    values = _params(args.param)
    # every flag is checked before anything is printed (no partial output on bad input)
    if isinstance(args.order, bool) or not 1 <= args.order <= MAX_ORDER:
        raise ValueError(f"--order must be an integer in [1, {MAX_ORDER}], got {args.order!r}")
    spec.parameter_values(values or None)
    show = sp.latex if args.latex else sp.sstr
    print(f"mechanism: {spec.name}  ({spec.description})" if spec.description else spec.name)
    print(f"PLLR L = log q/p:\n  {show(spec.pllr())}")
    # Python warnings would reach stderr with a file path: record them and print them as
    # "warning:" lines with the rest (the quadrature fallback is already in res.warnings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        deriv = spec.derive(args.order, symbolic_timeout=args.timeout)
        res = spec.cumulants(args.order, values or None, symbolic_timeout=args.timeout)
    for label, exprs in (("X (under P)", deriv.cumulants_x), ("Y (under Q)", deriv.cumulants_y)):
        print(f"cumulants of {label}:")
        for k, e in enumerate(exprs, start=1):
            text = show(e) if e is not None else "no closed form (mpmath quadrature)"
            print(f"  kappa_{k} = {text}")
    print(f"at {res.values}:")
    for k, (vx, vy, how) in enumerate(zip(res.x, res.y, res.provenance_x, strict=True), start=1):
        print(f"  kappa_{k}: X = {sp.Float(vx, 15)}, Y = {sp.Float(vy, 15)}  ({how})")
    for note in deriv.notes:
        print(f"  note: {note}")
    for w in res.warnings:
        print(f"  warning: {w}")
    for w in caught:
        if not issubclass(w.category, QuadratureFallbackWarning):
            print(f"  warning: {w.category.__name__}: {w.message}")
    return 0
