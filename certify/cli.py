"""``edgeworth certify`` and ``edgeworth verify``, added through the edgeworth.commands entry point.

::

    edgeworth certify --spec FILE (--delta D | --eps E) --out cert.json [--time-budget S]
        [--rel-width R] [--json]
    edgeworth verify cert.json [--json]

``verify`` exits 0 when the certificate is reproduced, 1 when it is tampered with or not
reproduced, and 2 for a malformed file or bad flags.
"""

from __future__ import annotations

import json
import os
import tomllib
from decimal import Decimal

from .install import require_flint

__all__ = ["add_commands"]


def add_commands(sub) -> None:
    """Register the subcommands on an argparse subparsers object."""
    c = sub.add_parser("certify", help="compute a certified enclosure and write a certificate")
    c.add_argument("--spec", required=True, metavar="FILE", help="TOML composition")
    g = c.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta", type=float)
    g.add_argument("--eps", type=float)
    c.add_argument("--out", required=True, metavar="CERT.json")
    c.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                   help="stop methods that would take longer (default: no limit)")
    c.add_argument("--rel-width", type=float, default=None, metavar="R",
                   help="requested relative width of the lattice interval (default 1e-4)")
    c.add_argument("--json", action="store_true")
    c.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    c.set_defaults(handler=_run_certify)
    v = sub.add_parser("verify", help="recompute a certificate and check it")
    v.add_argument("certificate", metavar="CERT.json")
    v.add_argument("--allow-python-files", action="store_true",
                   help="run the mechanism files a certificate names (each checked against its "
                   "recorded SHA-256 first); without it such certificates are refused")
    v.add_argument("--json", action="store_true")
    v.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    v.set_defaults(handler=_run_verify)


def _spec_data(path: str) -> dict:
    """The spec as data with exact decimals; ``file`` entries made absolute and pinned by their
    SHA-256 (so a certificate's ``verify`` runs the same code, and only when allowed)."""
    from numeric.spec import file_sha256, load_spec, resolve_file

    load_spec(path)  # validates with all the limits (size, regular file, structure)
    with open(path, "rb") as fh:  # numbers as exact decimals: the certificate records them
        data = tomllib.loads(fh.read().decode("utf-8"), parse_float=Decimal)
    base = os.path.dirname(os.path.abspath(path))
    for entry in data.get("mechanism", []):
        if isinstance(entry, dict) and "file" in entry:
            entry["file"] = resolve_file(entry["file"], base)
            entry["file_sha256"] = file_sha256(entry["file"])
    return data


def _run_certify(args) -> int:
    from numeric.spec import parse_spec

    from .certificate import make_certificate

    require_flint()
    from .combine import certified_delta, certified_epsilon

    data = _spec_data(args.spec)
    comp = parse_spec(data, args.spec)
    budget = args.time_budget
    if args.delta is not None:
        query, value = "epsilon", args.delta
        bound = certified_epsilon(comp, args.delta, time_budget=budget,
                                  rel_width=args.rel_width)
    else:
        query, value = "delta", args.eps
        bound = certified_delta(comp, args.eps, time_budget=budget, rel_width=args.rel_width)
    cert = make_certificate(data, query, value, bound)
    tmp = f"{args.out}.tmp"
    try:
        with open(tmp, "w", encoding="ascii") as fh:
            json.dump(cert, fh, indent=1, sort_keys=True, allow_nan=False)
        os.replace(tmp, args.out)
    finally:  # a failed write leaves no .tmp behind
        if os.path.exists(tmp):
            os.remove(tmp)
    if args.json:
        print(json.dumps(cert["claim"], allow_nan=False))
    else:
        print(bound.render_text())
        print(f"  certificate written to {args.out}")
    return 0


def _run_verify(args) -> int:
    from .certificate import CertificateError, verify

    require_flint()
    try:
        ok, message, recomputed = verify(args.certificate,
                                         allow_files=args.allow_python_files)
    except CertificateError as exc:
        raise ValueError(str(exc)) from None
    if args.json:
        out = {"verified": ok, "message": message}
        if recomputed is not None:
            out["recomputed"] = recomputed.to_dict()
        print(json.dumps(out, allow_nan=False))
    else:
        print(message)
    return 0 if ok else 1
