"""Exact inputs: what a user types is what certified methods and certificates use.

``--eps0 0.1`` means eps0 = 1/10: ten steps of (1/10, 0)-DP have delta(1) = 0 exactly (the
PLLR never exceeds 10 x 1/10 = 1), while the nearest binary64 number 0.1000000000000000055...
gives a tiny positive delta. Certificates record the typed decimals, refuse hostile claims
before any recomputation, and run a user's mechanism file only when allowed and unchanged.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from fractions import Fraction

import pytest

pytest.importorskip("flint")

from certify.certificate import CertificateError, canonical_hash, verify
from numeric import RandomizedResponse, compose, delta
from numeric.cli import main


def _json(capsys, argv: list[str]) -> tuple[int, dict]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, (json.loads(cap.out) if cap.out.strip() else {"err": cap.err})


def test_typed_eps0_is_the_rational_the_user_typed(capsys):
    rc, d = _json(capsys, ["delta", "--mechanism", "randomized-response", "--eps0", "0.1",
                           "--steps", "10", "--eps", "1", "--method", "certified", "--json"])
    assert rc == 0, d
    assert d["upper"] == "0" and d["lower"] == "0"
    # the same query on the binary64 number 0.1 (Python API, no typed decimal) is positive
    b = delta(compose([(RandomizedResponse(0.1), 10)]), 1.0, "certified")
    assert Fraction(b.to_dict()["lower"]) > 0


def test_typed_decimals_reach_every_certified_method(capsys):
    # sigma = 0.3 typed: the Gaussian mu = 10/3 exactly; the exact method's interval is tight
    # around the GDP value at mu = 10/3, and the other methods must agree with it (they are
    # intersected: one of them using the binary64 0.3 could contradict the exact one)
    rc, d = _json(capsys, ["epsilon", "--mechanism", "gaussian", "--sigma", "0.3", "--steps", "1",
                           "--delta", "1e-3", "--method", "certified", "--json"])
    assert rc == 0, d
    assert Fraction(d["upper"]) - Fraction(d["lower"]) < Fraction(1, 10**20)


def _spec(tmp_path, text: str):
    p = tmp_path / "comp.toml"
    p.write_text(text)
    return p


def test_certificate_records_typed_decimals_and_verifies(tmp_path, capsys):
    spec = _spec(tmp_path, '[[mechanism]]\ntype = "randomized-response"\neps0 = 0.1\n'
                           'count = 10\n')
    cert = tmp_path / "cert.json"
    assert main(["certify", "--spec", str(spec), "--eps", "1", "--out", str(cert)]) == 0
    capsys.readouterr()
    data = json.loads(cert.read_text())
    assert data["inputs"]["spec"]["mechanism"][0]["eps0"] == "0.1"
    assert data["claim"]["upper"] == "0"
    ok, message, _ = verify(cert)
    assert ok, message
    assert not (tmp_path / "cert.json.tmp").exists()


def _rehash(cert: dict) -> dict:
    cert["hash"] = {"algorithm": "sha256", "value": canonical_hash(cert)}
    return cert


@pytest.mark.parametrize(
    ("lower", "upper", "needle"),
    [
        ("0", "1e-999999999", "exponent"),
        ("1e999999999", None, "exponent"),
        ("9" * 30_000, None, "decimal number"),
        (None, None, "certifies nothing"),
    ],
)
def test_hostile_claims_are_refused_before_any_recomputation(tmp_path, capsys, lower, upper,
                                                             needle):
    spec = _spec(tmp_path, '[[mechanism]]\ntype = "gaussian"\nsigma = 2.0\ncount = 4\n')
    path = tmp_path / "cert.json"
    assert main(["certify", "--spec", str(spec), "--delta", "1e-5", "--out", str(path)]) == 0
    capsys.readouterr()
    cert = json.loads(path.read_text())
    cert["claim"]["lower"], cert["claim"]["upper"] = lower, upper
    path.write_text(json.dumps(_rehash(cert)))
    t0 = time.perf_counter()
    with pytest.raises(CertificateError, match=needle):
        verify(path)
    assert time.perf_counter() - t0 < 1.0


_MECH_FILE = '''
from dataclasses import dataclass

from numeric import Gaussian


@dataclass(frozen=True)
class Scaled(Gaussian):
    """A user's mechanism (a Gaussian by another name)."""


def MECHANISM(noise):
    return Scaled(sigma=noise)
'''


def test_certificates_of_user_mechanism_files(tmp_path, capsys):
    (tmp_path / "mine.py").write_text(_MECH_FILE)
    spec = _spec(tmp_path, '[[mechanism]]\nfile = "mine.py"\nnoise = 2.0\ncount = 4\n')
    cert = tmp_path / "cert.json"
    assert main(["certify", "--spec", str(spec), "--delta", "1e-5", "--out", str(cert)]) == 0
    capsys.readouterr()
    entry = json.loads(cert.read_text())["inputs"]["spec"]["mechanism"][0]
    assert entry["file"] == str((tmp_path / "mine.py").resolve())
    assert len(entry["file_sha256"]) == 64
    with pytest.raises(CertificateError, match="allow-python-files"):
        verify(cert)  # an untrusted certificate never runs code by default
    ok, message, _ = verify(cert, allow_files=True)
    assert ok, message
    assert main(["verify", str(cert), "--allow-python-files"]) == 0
    capsys.readouterr()
    (tmp_path / "mine.py").write_text(_MECH_FILE + "\n# edited\n")
    with pytest.raises(CertificateError, match="file_sha256"):
        verify(cert, allow_files=True)


def test_typed_record_survives_only_exact_rounding():
    with pytest.raises(ValueError, match="does not round"):
        RandomizedResponse(0.1).with_typed({"eps": "0.2"})
    assert RandomizedResponse(0.5).with_typed({"eps": "0.5"}).typed == ()
    m = RandomizedResponse(0.1).with_typed({"eps": Decimal("0.1")})
    assert m.exact_value("eps") == Fraction(1, 10) and m != RandomizedResponse(0.1)


def test_far_dyadic_ends_are_written_rounded_outward():
    # 2^-20000 has a 20000-digit exact decimal (beyond Python's int-to-str limit); such ends are
    # written with 60 digits, the lower end rounded down and the upper end up (found by the fuzz)
    from certify.engine import Endpoint

    for man, exp in ((3, -20000), (-3, -20000), (12345678901234567, 5000), (-7, 4000)):
        e = Endpoint(man, exp)
        lo, hi = e.decimal("floor"), e.decimal("ceiling")
        x = Fraction(man) * Fraction(2) ** exp
        assert len(lo) < 80 and len(hi) < 80
        assert Fraction(Decimal(lo)) <= x <= Fraction(Decimal(hi))
    assert Endpoint(1, -10).decimal("floor") == "0.0009765625"  # short ones stay exact
