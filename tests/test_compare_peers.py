"""benchmarks/compare_peers.py on a tiny grid: one case with an exact answer, four methods.

The case is issue 13's randomized-response example (eps0 = 1/sqrt(10), 10 steps, delta 1e-3),
whose exact eps 2.8897 (binomial privacy profile; README seed example) the certified interval
must contain, and on which dp_accounting's PLD accountant (0.6.0) returns 0.3146 because it
composes a RandomizedResponseDpEvent once whatever its count.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXACT = 2.8897  # issue 13 / README: exact eps of the example, 4 decimals


def _load(name: str = "compare_peers"):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_verdicts_and_distance():
    cp = _load("compare_peers_report")
    iv = (1.0, 1.1)
    assert [cp.verdict(v, iv) for v in (0.9, 1.05, 1.1, 2.0)] == ["unsafe", "inside", "safe",
                                                                  "safe"]
    assert cp.verdict(None, iv) == "-" and cp.verdict(1.0, None) == "-"
    assert cp.off_interval(0.9, iv) == pytest.approx(0.1)
    assert cp.off_interval(1.21, iv) == pytest.approx(0.1)
    assert cp.off_interval(1.05, iv) == 0.0


def test_grid_sizes():
    cp = _load()
    full = cp.grid(False)
    assert sum(c["kind"] == "dpsgd" for c in full) == 2 * 3 * 5
    assert {c["levels"] for c in full if c["kind"] == "hetero"} == {10, 100}
    assert len({c["id"] for c in full}) == len(full)
    assert len(cp.grid(True)) < len(full)


def test_tiny_run_checks_peers_against_the_certified_interval(tmp_path):
    pytest.importorskip("flint", reason="the certified interval needs python-flint")
    pytest.importorskip("dp_accounting", reason="the PLD peer needs dp_accounting")
    cp = _load()
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    status = cp.main(["--quick", "--cases", "rr eps0=1/sqrt10", "--methods",
                      "aea,certified,pld,dropin-certified,dropin-opacus", "--no-delta-array",
                      "--json", str(out_json), "--markdown", str(out_md)])
    assert status == 0
    data = json.loads(out_json.read_text())
    (row,) = data["rows"]
    res = row["results"]
    lo, hi = float(res["certified"]["lower"]), float(res["certified"]["upper"])
    assert lo <= EXACT + 5e-5 and hi >= EXACT - 5e-5
    assert res["pld"]["eps"] == pytest.approx(0.3146, abs=1e-4)  # the count is ignored
    assert _load("compare_peers_report").verdict(res["pld"]["eps"], (lo, hi)) == "unsafe"
    # the dp_accounting drop-in (its RandomizedResponseDpEvent with p = 2/(e^eps0 + 1)) answers
    # with the upper end of a certified interval holding the exact value; Opacus has no RR
    d = res["dropin-certified"]
    assert d["is_upper_end"] and d["rel_width"] == 1e-4
    assert float(d["lower"]) <= EXACT + 5e-5 and float(d["upper"]) >= EXACT - 5e-5
    assert "dropin-opacus" not in res
    # its eps0 = log((2 - p)/p) from dp_accounting's float p, rounded up: a dominating pair a
    # few ulps off, so its enclosure is not intersected with `certified`'s
    assert abs(float(d["upper"]) - hi) <= 1e-14 * hi
    assert _load("compare_peers_report").interval(row) == (lo, hi)
    for method in ("aea", "certified", "pld"):
        assert res[method]["cold_s"] > 0 and res[method]["import_s"] > 0
    assert data["honesty"]["checked"] == 1
    assert data["honesty"]["silent_misses"] == []  # AEA is 1.7% off here and warns
    md = out_md.read_text()
    assert "dp_accounting PLD (pessimistic)" in md and "0.31457 unsafe" in md
    assert "Peers' failures on cases with exact answers" in md


def test_missing_peer_is_reported_not_fatal(tmp_path, monkeypatch):
    cp = _load()
    fake = tmp_path / "shadow" / "autodp"  # an autodp that fails to import, first on the path
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "shadow"))
    status = cp.main(["--quick", "--cases", "rr eps0=1/sqrt10", "--methods", "autodp",
                      "--no-delta-array", "--json", str(tmp_path / "r.json")])
    assert status == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert "autodp" in data["missing"]
    assert data["rows"][0]["results"]["autodp"]["error"].startswith("import:")


# ---------------------------------------------------------------- the drop-in checks (report)


def _row(cid: str, kind: str = "dpsgd", **results) -> dict:
    return {"case": {"id": cid, "kind": kind, "delta": 1e-5}, "results": results}


def test_float_up_against_exact_rationals():
    rep = _load("compare_peers_report")
    for text in ("0.1", "0.3", "2.8896727393598112124", "1e-300", "7"):
        x, exact = rep.float_up(text), Fraction(text)
        assert Fraction(x) >= exact and Fraction(math.nextafter(x, -math.inf)) < exact


def test_dropin_summary_and_intersection():
    rep = _load("compare_peers_report")
    hi = "1.00010000000000000000000001"  # not a binary64: the answer must be rounded up
    good = {"eps": rep.float_up(hi), "lower": "1.0", "upper": hi, "cold_s": 2.0,
            "rel_width": 1e-4}
    rows = [
        _row("a", certified={**good, "eps": 1.0001}, **{"dropin-certified": good,
                                                         "dropin-opacus": dict(good)},
             pld={"eps": 1.00005, "cold_s": 1.0}),
        # the lower end returned (not the upper) and an interval 1% wide: neither check passes
        _row("b", **{"dropin-certified": {"eps": 1.0, "lower": "1.0", "upper": "1.01",
                                           "cold_s": 3.0}}, pld={"eps": 1.0, "cold_s": 1.0}),
        # an interval from before the rel-width target (no "rel_width"): not compared
        _row("c", certified={"eps": 1.1, "lower": "0.9", "upper": "1.1"},
             **{"dropin-certified": good}),
    ]
    # randomized response: not counted on the DP-SGD grid, and its enclosure (eps0 from p) is
    # not compared with (nor intersected with) `certified`'s
    rr = _row("r", "rr", certified={"eps": 2.0, "lower": "2", "upper": "2", "rel_width": 1e-4},
              **{"dropin-certified": {"eps": 2.5, "lower": "2.5", "upper": "2.5"}})
    assert rep.interval(rr) == (2.0, 2.0)
    assert "eps0 from p" in "\n".join(rep.dropin_lines([rr]))
    late = _row("t", **{"dropin-certified": {"error": "timeout after 900 s"}})
    assert "fails: timeout after 900 s" in "\n".join(rep.dropin_lines([late]))
    sm = rep.dropin_summary([*rows, rr, late])
    assert sm["failed"] == 1
    assert (sm["cases"], sm["upper_end"], sm["within"]) == (3, 2, 2)
    assert (sm["same_as_certified"], sm["compared"]) == (1, 1)
    assert (sm["opacus_same"], sm["opacus_cases"]) == (1, 1)
    assert sorted(sm["ratios"]) == [2.0, 3.0] and sm["rel_widths"] == [1e-4]
    assert rep.rel_width(rows[1]["results"]["dropin-certified"]) == pytest.approx(0.01)
    # a row's interval: the intersection of its certified enclosures
    assert rep.interval(rows[2]) == (1.0, float(hi))
    with pytest.raises(ValueError, match="disjoint"):
        rep.interval(_row("d", certified={"lower": "1", "upper": "2"},
                          **{"dropin-certified": {"lower": "3", "upper": "4"}}))
    lines = "\n".join(rep.dropin_lines(rows))
    assert "Certified drop-ins" in lines and "1 (NOT hi)" in lines and "1% no" in lines
    assert "| a | 1.0001 | 0.01% yes | yes | 2 s |" in lines


def test_dropin_workers_agree_on_a_small_dpsgd_case():
    """The two drop-in workers on q = 0.5, sigma = 2, 3 steps (about a second): the same
    certified interval, its upper end returned, the Opacus stepping timed apart."""
    pytest.importorskip("flint", reason="the drop-ins need python-flint")
    cp = _load()
    case = {"id": "small", "kind": "dpsgd", "sigma": 2.0, "rate": 0.5, "steps": 3,
            "delta": 1e-5}
    o = cp._dropin_opacus(case)()
    d = cp._dropin(case)() if cp.HAVE_DP_ACCOUNTING else o
    assert o["is_upper_end"] and o["history"] == 1 and o["steps_s"] >= 0
    assert (d["eps"], d["lower"], d["upper"]) == (o["eps"], o["lower"], o["upper"])
    assert _load("compare_peers_report").is_upper_end(o)
    with pytest.raises(ValueError, match="Opacus"):
        cp._dropin_opacus({**case, "kind": "laplace"})
