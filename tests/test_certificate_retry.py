"""verify: a recomputed enclosure that overlaps the claim but pokes out of it is recomputed once
at a 10x tighter target before the certificate is refused (another library version's lattice
ladder can stop at another level: both enclosures proven, neither inside the other). The oracle
is the certified method itself at the tighter target, run independently of verify: the claim is
built around that proven interval, and a claim disjoint from it must still be refused."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

pytest.importorskip("flint")

from certify.certificate import canonical_hash, spec_from_json, verify
from certify.combine import certified_epsilon
from numeric.cli import main
from numeric.spec import parse_spec

SPEC = '[[mechanism]]\ntype = "subsampled-gaussian"\nsigma = 1.0\nrate = 0.1\ncount = 20\n'


def _certificate(tmp_path, capsys) -> tuple[dict, object]:
    spec = tmp_path / "comp.toml"
    spec.write_text(SPEC)
    path = tmp_path / "cert.json"
    assert main(["certify", "--spec", str(spec), "--delta", "1e-5", "--out", str(path)]) == 0
    capsys.readouterr()
    return json.loads(path.read_text()), path


def _ends(b) -> tuple[Fraction, Fraction]:
    return Fraction(b.lower.decimal("floor")), Fraction(b.upper.decimal("ceiling"))


def _write(path, cert: dict, lower: Fraction, upper: Fraction) -> None:
    cert["claim"]["lower"], cert["claim"]["upper"] = str(float(lower)), str(float(upper))
    cert["hash"] = {"algorithm": "sha256", "value": canonical_hash(cert)}
    path.write_text(json.dumps(cert))


def test_a_claim_inside_the_default_enclosure_is_checked_at_a_tighter_target(tmp_path, capsys):
    cert, path = _certificate(tmp_path, capsys)
    comp = parse_spec(spec_from_json(cert["inputs"]["spec"]), "spec")
    default = certified_epsilon(comp, 1e-5)
    tight = certified_epsilon(comp, 1e-5, rel_width=1e-5)
    lo_d, hi_d = _ends(default)
    lo_t, hi_t = _ends(tight)
    assert lo_d < lo_t and hi_t < hi_d  # the tighter target is strictly tighter here
    # a true claim (it contains the proven tight enclosure) narrower than the default enclosure
    pad = min(lo_t - lo_d, hi_d - hi_t) / 4
    _write(path, cert, lo_t - pad, hi_t + pad)
    ok, message, recomputed = verify(path)
    assert ok, message
    assert Fraction(recomputed.upper.decimal("ceiling")) <= hi_t + pad


def test_a_claim_disjoint_from_the_proven_enclosure_is_refused(tmp_path, capsys):
    cert, path = _certificate(tmp_path, capsys)
    hi = Fraction(cert["claim"]["upper"])
    _write(path, cert, hi * 2, hi * 3)  # a false claim: eps is proven below hi
    ok, message, _ = verify(path)
    assert not ok and "NOT REPRODUCED" in message
