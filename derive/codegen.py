r"""Code generation from derive's symbolic expressions into numeric and certify ``_generated``.

Run ``python -m derive.codegen`` (from the source tree) to rewrite every generated module, or
``python -m derive.codegen --check`` to report stale files without writing (exit status 1).

Generated modules are plain Python with no sympy (and here no numpy) import. Each starts with a
header naming this generator, the command that regenerates it and the sympy version used; the
freshness tests (``tests/test_derive_series.py``, ``tests/test_codegen_cumulants.py``) re-render
them and compare byte for byte.

Targets:

* ``numeric/_generated/edgeworth_series.py`` -- Edgeworth density coefficients
  :math:`c_k(\lambda_3, \dots, \lambda_{r+2})` of orders 1..:data:`SERIES_MAX_ORDER`
  (:func:`derive.series.edgeworth_density_coefficients`; Petrov 1975, Ch. VI; Hall 1992,
  Section 2.2; Wang et al., arXiv:2206.04236, Eq. (3.3)-(3.4)), each coefficient in multivariate
  Horner form with common subexpressions eliminated across the coefficients of one order.
  ``numeric.edgeworth`` registers orders >= 3 with ``register_series_order``.
* ``numeric/_generated/builtin_cumulants.py`` -- kappa_1..kappa_4 of X for the built-in
  Gaussian, Laplace and randomized-response mechanisms (:mod:`derive.builtins`) as float
  kernels of their parameter: derive's closed forms rewritten in t = exp(-p) or expm1(-j p),
  with Taylor-series branches at 0 and around sign changes where the closed form cancels
  (:func:`render_builtin_cumulants`, branch table ``_KERNEL_BRANCHES``). ``numeric.Laplace``
  uses it for orders <= 4.
* ``certify/_generated/builtin_cumulants_arb.py`` -- the same closed forms for python-flint
  ``arb`` balls, closed forms only (:func:`render_builtin_cumulants_arb`).

The printers are strict. :func:`strict_pycode` (Edgeworth coefficients) prints only sums,
products, positive integer powers, symbols and rational numbers; :class:`KernelPrinter` (the
cumulant kernels) also maps exp, log, expm1 and log1p to ``math`` or to Arb methods. Anything else
(an unevaluated ``Integral``, a float, any other function) raises ``TypeError`` instead of
reaching generated code. This module must not import ``numeric`` (numeric imports the generated
files, so a stale or missing file must not block regeneration).

Layout: :mod:`derive.codegen_series` (Edgeworth coefficients), :mod:`derive.codegen_kernels`
(the kernels' branches and the strict kernel printer), :mod:`derive.codegen_render` (the kernel
files), :mod:`derive.codegen_text` (header and line wrapping); this module holds the targets and
the command line, and re-exports their public names.
"""


from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from .codegen_kernels import KernelPrinter, builtin_kernels, exp_rational, strict_kernel_code
from .codegen_render import render_builtin_cumulants, render_builtin_cumulants_arb
from .codegen_series import SERIES_MAX_ORDER, render_edgeworth_series, strict_pycode
from .codegen_text import GENERATOR, REGENERATE_COMMAND, header

__all__ = [
    "BUILTIN_CUMULANTS_ARB_PATH",
    "BUILTIN_CUMULANTS_PATH",
    "CERTIFY_GENERATED_DIR",
    "EDGEWORTH_SERIES_PATH",
    "GENERATED_DIR",
    "GENERATOR",
    "REGENERATE_COMMAND",
    "SERIES_MAX_ORDER",
    "TARGETS",
    "KernelPrinter",
    "header",
    "main",
    "render_builtin_cumulants",
    "render_builtin_cumulants_arb",
    "render_edgeworth_series",
    "strict_kernel_code",
    "strict_pycode",
    "write_all",
]

GENERATED_DIR = Path(__file__).resolve().parent.parent / "numeric" / "_generated"
EDGEWORTH_SERIES_PATH = GENERATED_DIR / "edgeworth_series.py"
BUILTIN_CUMULANTS_PATH = GENERATED_DIR / "builtin_cumulants.py"
CERTIFY_GENERATED_DIR = GENERATED_DIR.parent.parent / "certify" / "_generated"
BUILTIN_CUMULANTS_ARB_PATH = CERTIFY_GENERATED_DIR / "builtin_cumulants_arb.py"

# Former private names, kept for existing callers (tests); the public ones live in
# derive.codegen_kernels.
_builtin_kernels = builtin_kernels
_exp_rational = exp_rational


TARGETS: dict[Path, Callable[[], str]] = {
    EDGEWORTH_SERIES_PATH: render_edgeworth_series,
    BUILTIN_CUMULANTS_PATH: render_builtin_cumulants,
    BUILTIN_CUMULANTS_ARB_PATH: render_builtin_cumulants_arb,
}
"""Every generated file and the function rendering its exact text."""


def write_all(check: bool = False) -> list[Path]:
    """Render every target; write the changed ones (or, with ``check``, only report them).

    Returns:
        The paths whose committed text differed from the rendering (before writing).
    """
    stale = []
    for path, render in TARGETS.items():
        text = render()
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            stale.append(path)
            if not check:
                path.write_text(text, encoding="utf-8")
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m derive.codegen [--check]``."""
    parser = argparse.ArgumentParser(
        prog="python -m derive.codegen", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="report stale files, write nothing")
    args = parser.parse_args(argv)
    stale = write_all(check=args.check)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path}")
    if not stale:
        print("generated files are up to date")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())
