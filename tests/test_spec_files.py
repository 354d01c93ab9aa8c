"""Spec files: exact decimal numbers, a user's mechanism from a Python file, hostile numbers."""

from __future__ import annotations

import json
import textwrap

import pytest

from numeric import Gaussian, compose, epsilon, load_spec
from numeric.cli import main

_TOY = '''
from dataclasses import dataclass

from numeric import Gaussian


@dataclass(frozen=True)
class Doubled(Gaussian):
    """A user's mechanism: a Gaussian whose noise is given as a variance."""


def MECHANISM(variance):
    return Doubled(sigma=variance ** 0.5)
'''


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_spec_names_a_python_file_defining_mechanism(tmp_path, capsys):
    _write(tmp_path, "toy.py", _TOY)
    spec = _write(tmp_path, "comp.toml", """
        [[mechanism]]
        file = "toy.py"
        variance = 4.0
        count = 10
    """)
    comp = load_spec(spec)
    (mech, count), = comp.terms
    assert count == 10 and mech.sigma == 2.0
    want = epsilon(compose([(Gaussian(2.0), 10)]), 1e-5, "exact").epsilon
    assert main(["epsilon", "--spec", str(spec), "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == want and out["method"] == "exact"


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ('file = "missing.py"\ncount = 1', "not found"),
        ('file = "toy.txt"\ncount = 1', "Python file"),
        ('file = "bad.py"\ncount = 1', "could not run"),
        ('file = "nomech.py"\ncount = 1', "MECHANISM"),
        ('type = "gaussian"\nfile = "toy.py"\ncount = 1', "either type or file"),
        ('type = "gaussian"\nsigma = 1e-999999999\ncount = 1', "exponent"),
        ('type = "gaussian"\nsigma = 123456789012345678901234567890123456789012345678901234567'
         '8901234567890123456789012345678901234567890123456789012345678901234567890123456789012'
         '3456789012345678901234567890123456789012345678901234567890123456789012345678901234567'
         '890123456789012345678901234567890123456789012345678901234567890\ncount = 1',
         "too large an integer"),
        ('type = "gaussian"\nsigma = 1.0\ncount = 1.5e0', "whole number"),
    ],
)
def test_bad_file_entries_are_clear_errors(tmp_path, capsys, entry, needle):
    _write(tmp_path, "toy.py", _TOY)
    _write(tmp_path, "bad.py", "raise RuntimeError('boom')\n")
    _write(tmp_path, "nomech.py", "X = 1\n")
    spec = tmp_path / "comp.toml"
    spec.write_text("[[mechanism]]\n" + entry + "\n")
    rc = main(["epsilon", "--spec", str(spec), "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and len(err.splitlines()) == 1
    assert needle in err, err


def test_spec_numbers_are_read_exactly_and_used_as_floats(tmp_path):
    spec = _write(tmp_path, "comp.toml", """
        [[mechanism]]
        type = "randomized-response"
        eps0 = 0.1
        count = 1e1
    """)
    (mech, count), = load_spec(spec).terms
    assert mech.eps == 0.1 and count == 10


_DERIVED = '''
import sympy as sp

from derive.compile import compile_mechanism
from derive.mechanism import DiscreteMechanism, Parameter

c = sp.Symbol("c", positive=True)
THREE_POINT = DiscreteMechanism(
    "three-point-spec-test",
    p=(sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6)),
    q=(sp.Rational(1, 2) - c / 4, sp.Rational(1, 3), sp.Rational(1, 6) + c / 4),
    params=(Parameter(c, default=0.6, domain=(0.0, 1.0), typical=(0.1, 0.9)),),
)


def MECHANISM(c):
    return compile_mechanism(THREE_POINT, c=c)
'''


def test_spec_file_with_a_derived_mechanism_every_method(tmp_path, capsys):
    # a mechanism derived from its pmf by derive, named by a spec file: auto, certified and
    # a certificate work for it as for a built-in
    pytest.importorskip("sympy")
    pytest.importorskip("flint")
    _write(tmp_path, "three.py", _DERIVED)
    spec = _write(tmp_path, "comp.toml", """
        [[mechanism]]
        file = "three.py"
        c = 0.6
        count = 50
    """)
    outs = {}
    for method in ("saddlepoint", "certified"):  # (each run executes the file: sympy, seconds)
        assert main(["epsilon", "--spec", str(spec), "--delta", "1e-5", "--method", method,
                     "--json"]) == 0, capsys.readouterr().err
        outs[method] = json.loads(capsys.readouterr().out)
    lo, hi = float(outs["certified"]["lower"]), float(outs["certified"]["upper"])
    assert lo <= hi
    assert outs["saddlepoint"]["epsilon"] == pytest.approx(hi, rel=0.05)
    assert outs["certified"]["method"] == "certified"
    cert = tmp_path / "cert.json"
    assert main(["certify", "--spec", str(spec), "--delta", "1e-5", "--out", str(cert)]) == 0
    assert main(["verify", str(cert), "--allow-python-files"]) == 0
    capsys.readouterr()
