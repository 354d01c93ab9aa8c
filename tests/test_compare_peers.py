"""benchmarks/compare_peers.py on a tiny grid: one case with an exact answer, four methods.

The case is issue 13's randomized-response example (eps0 = 1/sqrt(10), 10 steps, delta 1e-3),
whose exact eps 2.8897 (binomial privacy profile; README seed example) the certified interval
must contain, and on which dp_accounting's PLD accountant (0.6.0) returns 0.3146 because it
composes a RandomizedResponseDpEvent once whatever its count.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXACT = 2.8897  # issue 13 / README: exact eps of the example, 4 decimals


def _load():
    spec = importlib.util.spec_from_file_location("compare_peers",
                                                  ROOT / "benchmarks" / "compare_peers.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compare_peers"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_verdicts_and_distance():
    cp = _load()
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
                      "aea,certified,pld", "--no-delta-array", "--json", str(out_json),
                      "--markdown", str(out_md)])
    assert status == 0
    data = json.loads(out_json.read_text())
    (row,) = data["rows"]
    res = row["results"]
    lo, hi = float(res["certified"]["lower"]), float(res["certified"]["upper"])
    assert lo <= EXACT + 5e-5 and hi >= EXACT - 5e-5
    assert res["pld"]["eps"] == pytest.approx(0.3146, abs=1e-4)  # the count is ignored
    assert cp.verdict(res["pld"]["eps"], (lo, hi)) == "unsafe"
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
