"""Generated cumulant kernels of the built-ins (derive.codegen -> numeric and certify).

Oracles: the docs/math.md section 4 closed forms typed here independently of derive and evaluated
with mpmath at 100 working digits (at mu = 1e-8 Laplace kappa_4 ~ -2e-32 cancels terms of size
90, losing 34 digits, so 100 working digits leave more than 50 correct ones); the zeros of
Laplace and randomized-response kappa_4 found here by mpmath; mpmath quadrature of the Laplace
PLLR law for orders 5 and 6.
"""

from __future__ import annotations

import ast
import contextlib
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sp = pytest.importorskip("sympy")
mp = pytest.importorskip("mpmath")

from derive import codegen  # noqa: E402
from derive.codegen import (  # noqa: E402
    BUILTIN_CUMULANTS_ARB_PATH,
    BUILTIN_CUMULANTS_PATH,
    TARGETS,
    KernelPrinter,
    render_builtin_cumulants,
    render_builtin_cumulants_arb,
    strict_kernel_code,
)
from numeric import Laplace  # noqa: E402
from numeric._generated import builtin_cumulants as gen  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REF_DPS = 100
TOL = 1e-14


# --- oracles ------------------------------------------------------------------------------------


def _mp_laplace(mu) -> list:
    """docs/math.md section 4, Laplace kappa_1..kappa_4 of X (current mpmath precision)."""
    mu = mp.mpf(mu)
    e = mp.exp
    return [
        1 - mu - e(-mu),
        3 - 4 * mu * e(-mu) - 2 * e(-mu) - e(-2 * mu),
        2 * e(-3 * mu) * (7 * e(3 * mu) - 3 * (2 * mu**2 + 2 * mu + 1) * e(2 * mu)
                          - 3 * (2 * mu + 1) * e(mu) - 1),
        2 * e(-4 * mu) * (45 * e(4 * mu) - 4 * (4 * mu**3 + 6 * mu**2 + 6 * mu + 3) * e(3 * mu)
                          - 6 * (8 * mu**2 + 8 * mu + 3) * e(2 * mu) - 12 * (2 * mu + 1) * e(mu)
                          - 3),
    ]


def _mp_rr(eps0) -> list:
    """docs/math.md section 4, randomized response kappa_1..kappa_4 of X, a = 1/(1 + e^eps0)."""
    e = mp.mpf(eps0)
    a = 1 / (1 + mp.exp(e))
    return [-e * mp.tanh(e / 2), 4 * e**2 * a * (1 - a), 8 * e**3 * a * (1 - a) * (1 - 2 * a),
            16 * e**4 * a * (1 - a) * (1 - 6 * a * (1 - a))]


def _mp_gaussian(mu) -> list:
    mu = mp.mpf(mu)
    return [-mu**2 / 2, mu**2, mp.mpf(0), mp.mpf(0)]


ORACLES = {"laplace": _mp_laplace, "randomized-response": _mp_rr, "gaussian": _mp_gaussian}


def _zero_of_kappa4(oracle, bracket) -> mp.mpf:
    with mp.workdps(REF_DPS):
        return mp.findroot(lambda x: oracle(x)[3], bracket, solver="anderson")


def _points_near(r) -> list[float]:
    """Doubles next to and around the real number r (floats closest to a zero of kappa)."""
    hi = float(r)
    pts = [hi]
    for direction in (math.inf, -math.inf):
        x = hi
        for _ in range(4):
            x = math.nextafter(x, direction)
            pts.append(x)
    pts += [hi * (1 + s * 10.0**-k) for k in range(3, 15) for s in (-1, 1)]
    return pts


def _thresholds() -> list[float]:
    """Every branch boundary of the generated kernels and its lower neighbour."""
    out = []
    for kerns in codegen._builtin_kernels().values():
        for kern in kerns:
            for piece in kern.pieces:
                if piece.upper is not None:
                    out += [piece.upper, math.nextafter(piece.upper, 0.0)]
    return out


def _max_rel_error(fn, oracle, points) -> tuple[float, float, int]:
    """(worst relative error, its parameter, its order) over ``points`` and kappa_1..kappa_4."""
    worst = (0.0, math.nan, 0)
    with mp.workdps(REF_DPS):
        for x in points:
            got = fn(x)
            for k, ref in enumerate(oracle(x), start=1):
                if ref == 0:
                    err = abs(got[k - 1])
                else:
                    err = float(abs((mp.mpf(got[k - 1]) - ref) / ref))
                if err > worst[0]:
                    worst = (err, x, k)
    return worst


GRID = [float(x) for x in np.geomspace(1e-8, 50.0, 4001)]


# --- accuracy of the numeric kernels ------------------------------------------------------------


def test_laplace_kernel_relative_accuracy_dense_grid():
    r = _zero_of_kappa4(_mp_laplace, (1.5, 1.8))
    points = GRID + _points_near(r) + [x for x in _thresholds() if x <= 50]
    err, x, k = _max_rel_error(gen.laplace_cumulants_x, _mp_laplace, points)
    assert err <= TOL, f"kappa_{k} at mu = {x!r}: relative error {err:.3g}"


def test_randomized_response_kernel_relative_accuracy_dense_grid():
    r = _zero_of_kappa4(_mp_rr, (1.2, 1.4))
    with mp.workdps(REF_DPS):
        assert abs(r - mp.acosh(2)) < mp.mpf(10) ** -60  # 1 - 6a(1-a) = 0 <=> cosh(eps0) = 2
    points = GRID + _points_near(r) + [x for x in _thresholds() if x <= 50]
    err, x, k = _max_rel_error(gen.randomized_response_cumulants_x, _mp_rr, points)
    assert err <= TOL, f"kappa_{k} at eps0 = {x!r}: relative error {err:.3g}"


def test_gaussian_kernel():
    for mu in (1e-8, 0.3, 1.0, 7.5, 50.0):
        assert gen.gaussian_cumulants_x(mu) == (-(mu * mu) / 2, mu * mu, 0.0, 0.0)


def test_kernels_large_parameters_and_limits():
    big = [50.0, 80.0, 200.0, 700.0, 745.0, 745.5, 746.0, 800.0, 1e4, 1e8]
    err, x, k = _max_rel_error(gen.laplace_cumulants_x, _mp_laplace, big)
    assert err <= TOL, (x, k, err)
    # randomized response: kappa_2..4 ~ eps0^k e^-eps0 underflow past ~700; kappa_1 = -eps0 tanh
    err, x, k = _max_rel_error(lambda e: gen.randomized_response_cumulants_x(e)[:1],
                               lambda e: _mp_rr(e)[:1], big)
    assert err <= TOL, (x, k, err)
    assert gen.laplace_cumulants_x(1e300) == (-1e300, 3.0, 14.0, 90.0)  # no 0 * inf
    assert gen.randomized_response_cumulants_x(1e300) == (-1e300, 0.0, 0.0, 0.0)
    assert all(math.isfinite(v) for v in gen.laplace_cumulants_x(1e-300))


def test_kernel_branches_are_documented():
    """Every kernel's docstring names its thresholds and series lengths (from the generator)."""
    for mech, kerns in codegen._builtin_kernels().items():
        for kern in kerns:
            doc = getattr(gen, f"_{mech.replace('-', '_')}_kappa_{kern.order}").__doc__
            for piece in kern.pieces:
                if piece.upper is not None:
                    assert f"< {piece.upper:g}" in doc, (mech, kern.order, doc)
                if piece.coeffs:
                    assert f"{len(piece.coeffs)} terms" in doc, (mech, kern.order, doc)
    assert "1e-14" in gen.__doc__ and "Taylor series" in gen.__doc__


# --- numeric.Laplace uses the kernel ------------------------------------------------------------


@pytest.mark.parametrize("mu", [1e-8, 1e-6, 1e-3, 0.5, 1.6734832392250096, 3.0, 30.0])
def test_laplace_mechanism_uses_generated_kernel(mu):
    mech = Laplace(1.0, sensitivity=mu)
    want = gen.laplace_cumulants_x(mu)
    for order in (1, 2, 3, 4):
        assert mech.pllr_cumulants(order).x == want[:order]
    c6 = mech.pllr_cumulants(6)
    assert c6.x[:4] == want  # the same four cumulants whatever the order asked for
    assert c6.y == tuple((-1) ** k * v for k, v in enumerate(c6.x, start=1))


def test_laplace_small_mu_kappa3_full_precision():
    # the moment route lost ~1e-10 relative here; the generated series keeps full precision
    with mp.workdps(REF_DPS):
        ref = _mp_laplace(1e-6)
    got = Laplace(1e6).pllr_cumulants(4).x
    for g, r in zip(got, ref, strict=True):
        assert abs(g - float(r)) <= TOL * abs(float(r))


@pytest.mark.parametrize("mu", [0.5, 3.0])
def test_laplace_orders_5_and_6_still_from_the_law(mu):
    with mp.workdps(30):
        m = mp.mpf(mu)

        def moment(k):  # E_P[L^k]: atoms -mu (1/2), +mu (e^-mu/2), L = 2x - mu on (0, mu)
            cont = mp.quad(lambda x: (2 * x - m) ** k * mp.exp(-x) / 2, [0, m])
            return (-m) ** k / 2 + m**k * mp.exp(-m) / 2 + cont

        raw = [mp.mpf(1)] + [moment(k) for k in range(1, 7)]
        kap = [mp.mpf(0)]
        for n in range(1, 7):
            kap.append(raw[n] - sum(mp.binomial(n - 1, j - 1) * kap[j] * raw[n - j]
                                    for j in range(1, n)))
    got = Laplace(1.0, sensitivity=mu).pllr_cumulants(6).x
    np.testing.assert_allclose(got, [float(v) for v in kap[1:]], rtol=1e-9)


# --- Arb kernels --------------------------------------------------------------------------------

flint = pytest.importorskip("flint")
from flint import arb, ctx  # noqa: E402

from certify._generated import builtin_cumulants_arb as gen_arb  # noqa: E402


@contextlib.contextmanager
def _prec(bits: int):
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def _ref_ball(value) -> arb:
    """A ball containing the exact value of an mpmath number computed to >= 75 correct digits."""
    with _prec(400):
        return arb(mp.nstr(value, 75, min_fixed=1, max_fixed=0)) + arb(0, 1e-73 * abs(float(value)))


ARB_POINTS = [1e-8, 1e-3, 0.1, 0.5, 1.0, 2.0, 3.3, 10.0, 50.0, 745.5]
ZEROS = [1.3169578969248168, 1.6734832392250096]  # doubles next to a zero of some kappa_4


def _rel_limit(x: float) -> float:
    """Relative radius expected at 128 bits (2.9e-39): cancellation costs Laplace kappa_4 about
    3 log2(1/x) bits at small x (measured 3.6e-12 at x = 1e-8, 2e-27 at x = 1e-3)."""
    return 1e-10 if x < 1e-4 else (1e-25 if x < 0.1 else 1e-30)


@pytest.mark.parametrize("mech", ["laplace", "randomized-response", "gaussian"])
def test_arb_balls_contain_reference_and_are_narrow(mech):
    _, fn = gen_arb.KERNELS[mech]
    for x in ARB_POINTS + ZEROS:
        with mp.workdps(REF_DPS):
            refs = ORACLES[mech](x)
            with _prec(128):
                balls = fn(x)
            for k, (ball, ref) in enumerate(zip(balls, refs, strict=True), start=1):
                # the exact value lies in the reference ball; meeting it means containing the
                # exact value up to 1e-73 relative (the kernel balls are >= 1e-40 wide or exact)
                assert ball.overlaps(_ref_ball(ref)), (mech, x, k, ball, ref)
                rad = mp.mpf(ball.rad().str(30, radius=False))
                if ref == 0:
                    assert ball == 0, (mech, x, k, ball)
                elif x in ZEROS and abs(ref) < 1e-10:  # kappa_4 ~ 1e-16 next to its zero
                    assert rad < 1e-34, (mech, x, k, ball)
                else:
                    assert rad / abs(ref) < _rel_limit(x), (mech, x, k, ball, rad / abs(ref))


def test_arb_accepts_balls_and_propagates_them():
    with _prec(128):
        wide = gen_arb.laplace_cumulants_x(arb("0.5") + arb(0, 1e-10))
        point = gen_arb.laplace_cumulants_x(0.5)
    for w, p in zip(wide, point, strict=True):
        assert w.contains(p) and w.rad() > p.rad()


def test_arb_module_never_lets_python_round_a_constant():
    """No float literal and no int/int division in the Arb module (1/3 would be a float)."""
    tree = ast.parse(BUILTIN_CUMULANTS_ARB_PATH.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        assert not (isinstance(node, ast.Constant) and isinstance(node.value, float)), node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            assert not (isinstance(node.left, ast.Constant) and isinstance(node.right,
                                                                           ast.Constant))


# --- the strict printer -------------------------------------------------------------------------

X = sp.Symbol("x")


@pytest.mark.parametrize("target", ["math", "arb"])
def test_strict_kernel_printer_maps_known_functions(target):
    from sympy.codegen.cfunctions import expm1, log1p

    expr = sp.exp(-X) + expm1(-2 * X) + sp.log(X) + log1p(X) + X**3 / 7 - 1 / X
    src = strict_kernel_code(expr, target)
    if target == "math":
        for f in ("math.exp(-x)", "math.expm1(-2*x)", "math.log(x)", "math.log1p(x)"):
            assert f in src
        ns = {"math": math, "x": 0.7}
        want = math.exp(-0.7) + math.expm1(-1.4) + math.log(0.7) + math.log1p(0.7) + 0.343 / 7
        assert eval(src, ns) == pytest.approx(want - 1 / 0.7, rel=1e-15)
    else:
        for f in ("(-x).exp()", "(-2*x).expm1()", "(x).log()", "(x).log1p()"):
            assert f in src
        with _prec(128):
            val = eval(src, {"arb": arb, "x": arb(0.7)})
            with mp.workdps(40):
                x = mp.mpf(0.7)
                ref = mp.exp(-x) + mp.expm1(-2 * x) + mp.log(x) + mp.log1p(x) + x**3 / 7 - 1 / x
            assert val.contains(_ref_ball(ref))
    assert strict_kernel_code(sp.Rational(1, 3) + X, "arb") in {"x + (arb(1)/3)", "(arb(1)/3) + x"}


@pytest.mark.parametrize("target", ["math", "arb"])
@pytest.mark.parametrize("bad", [
    sp.besselj(0, X), sp.Integral(sp.exp(-X**2), X), sp.Integral(X, (X, 0, 1)), sp.Float(0.5) * X,
    sp.pi * X, sp.sqrt(X), sp.Abs(X), sp.erf(X), sp.Function("f")(X), sp.Function("exp")(X),
    sp.Piecewise((X, X > 0), (0, True)), X ** sp.Rational(1, 3), sp.E + X,
])
def test_strict_kernel_printer_refuses_unknown(target, bad):
    with pytest.raises(TypeError, match="strict printer"):
        strict_kernel_code(bad, target)
    with pytest.raises(TypeError, match="strict printer"):
        KernelPrinter(target).doprint(X + 2 * bad)


def test_kernel_printer_rejects_unknown_target():
    with pytest.raises(ValueError, match="target"):
        KernelPrinter("c")


def test_closed_form_rewrite_refuses_other_exponentials():
    mu = sp.Symbol("mu", positive=True)
    for bad in (sp.exp(-mu**2), sp.exp(-mu / 2), sp.sqrt(mu) + sp.exp(-mu), sp.besselj(0, mu)):
        with pytest.raises(ValueError):
            codegen._exp_rational(bad, mu)
    num, den = codegen._exp_rational(3 - 4 * mu * sp.exp(-mu) - sp.exp(-2 * mu), mu)
    t = sp.Symbol("t")
    assert den.as_expr() == 1 and sp.expand(num.as_expr() - (3 - 4 * mu * t - t**2)) == 0


# --- generated modules: imports, headers, freshness ---------------------------------------------


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.module if isinstance(n, ast.ImportFrom) else a.name
            for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
            for a in n.names}


def test_generated_modules_import_no_sympy():
    assert _imports(BUILTIN_CUMULANTS_PATH) <= {"__future__", "math", "collections.abc"}
    assert _imports(BUILTIN_CUMULANTS_ARB_PATH) <= {"__future__", "flint", "collections.abc"}
    code = (
        "import sys, numeric.mechanisms.laplace, numeric._generated.builtin_cumulants, "
        "certify._generated.builtin_cumulants_arb; "
        "print(','.join(m for m in ('sympy', 'derive') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_targets_registered():
    assert TARGETS[BUILTIN_CUMULANTS_PATH] is render_builtin_cumulants
    assert TARGETS[BUILTIN_CUMULANTS_ARB_PATH] is render_builtin_cumulants_arb
    assert (BUILTIN_CUMULANTS_ARB_PATH.parent / "__init__.py").exists()


def _check_header(path: Path, function: str) -> str:
    head = path.read_text(encoding="utf-8").splitlines()[:3]
    assert head[0] == (f"# Generated by derive.codegen.{function} (derive/codegen.py) -- "
                       "DO NOT EDIT."), head[0]
    assert head[1] == "# Regenerate with: python -m derive.codegen"
    match = re.fullmatch(r"# sympy version: (\S+)", head[2])
    assert match, head[2]
    return match.group(1)


@pytest.mark.parametrize(("path", "render"), [
    (BUILTIN_CUMULANTS_PATH, render_builtin_cumulants),
    (BUILTIN_CUMULANTS_ARB_PATH, render_builtin_cumulants_arb),
], ids=["numeric", "certify"])
def test_generated_file_is_fresh(path, render):
    version = _check_header(path, render.__name__)
    if version != sp.__version__:
        pytest.skip(
            f"{path.name} was generated with sympy {version} but sympy {sp.__version__} is "
            f"installed; its printing may differ, so the byte-for-byte freshness check only runs "
            f"under sympy {version}"
        )
    assert render().encode("utf-8") == path.read_bytes(), (
        f"{path.relative_to(ROOT)} is stale: run python -m derive.codegen"
    )


def test_codegen_check_reports_nothing_stale():
    versions = {_check_header(p, r.__name__) for p, r in TARGETS.items()}
    if versions != {sp.__version__}:
        pytest.skip(f"generated with sympy {sorted(versions)}, sympy {sp.__version__} installed")
    assert codegen.write_all(check=True) == []
    assert codegen.main(["--check"]) == 0
