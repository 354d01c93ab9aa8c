"""``edgeworth derive`` (the derive layer's subcommand, added through an entry point)."""

from __future__ import annotations

import pytest

pytest.importorskip("sympy")

from numeric.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_builtin_laplace_closed_forms(capsys):
    rc, out, err = run(capsys, "derive", "laplace", "--order", "2")
    assert rc == 0, err
    assert "PLLR" in out and "kappa_2" in out and "closed form" in out
    # kappa_1(X) = 1 - mu - e^-mu at mu = 1 (docs/math.md section 4): -e^-1 = -0.367879441171442
    assert "-0.367879441171442" in out


def test_latex_output(capsys):
    rc, out, _ = run(capsys, "derive", "gaussian", "--order", "2", "--latex")
    assert rc == 0
    assert "mu^{2}" in out


def test_mechanism_from_python_file(capsys, tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(
        "import sympy as sp\n"
        "from derive import DensityMechanism, Parameter\n"
        "x, mu = sp.symbols('x mu', real=True)\n"
        "p = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)\n"
        "MECHANISM = DensityMechanism('shifted-normal', x, p, p.subs(x, x - mu),\n"
        "    params=(Parameter(mu, default=0.5, typical=(0.1, 2.0)),))\n"
    )
    rc, out, err = run(capsys, "derive", str(f), "--order", "2", "--param", "mu=2")
    assert rc == 0, err
    assert "shifted-normal" in out
    assert "-2.0000000000000" in out  # kappa_1(X) = -mu^2/2 at mu = 2


@pytest.mark.parametrize("argv", [
    ("derive", "no-such-mechanism"),
    ("derive", "laplace", "--order", "0"),
    ("derive", "laplace", "--param", "mu"),
    ("derive", "laplace", "--param", "mu=abc"),
    ("derive", "laplace", "--order", "99"),
    ("derive", "laplace", "--param", "zz=1"),
])
def test_bad_input_is_one_line(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert out == ""  # every flag is checked before anything is printed


def test_broken_file_is_one_line(capsys, tmp_path):
    f = tmp_path / "broken.py"
    f.write_text("raise RuntimeError('boom')\n")
    rc, _, err = run(capsys, "derive", str(f))
    assert rc == 2 and "boom" in err and len(err.splitlines()) == 1
