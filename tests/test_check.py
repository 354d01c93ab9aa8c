"""``edgeworth check``: the verdict rows, the CLI (JSON shape, exit status), and verdicts against
independent oracles.

Reference values (copied here with their provenance; the tests do not read them from elsewhere):

* GDP Figure 5 numbers, n = 10, eps0 = 1/sqrt 10, mu = 1 -- the project's f-DP reference table
  (``fdp_reference.csv``: exact piecewise-linear NP curve vs G, tangency points, mpmath at 50-120
  digits): sup |f - G| = 0.0122881705659670224260617294374736077195966680, sup (G - f)_+ =
  0.00878367755757906947255101781503981744752286837, the diagonal (Levy-type) shift c =
  0.004701077724529353081307375, Berry-Esseen mu = 1.00417187810127511516930691672519721829729540
  and gamma = 0.183714736854001478628336003509709397161976609.
* DGG bound, non-i.i.d. with the continuity condition (C0 = 1, p = 2): values of the authors'
  R package BoundEdgeworth (``dgg_bound_reference.csv``; K4 = 9, eps = 0.1, package defaults
  K3 = K4^(3/4), lambda3 = 0.621 K3, K3tilde = 2 K3).
* KOV: an mpmath (50 digits) evaluation of the binomial form of the exact homogeneous profile,
  delta(k eps0) (1 + t)^m = sum_{j: 2j - m > k} C(m, j) (t^j - t^(m - j + k)) -- a different
  formula from KOV's theorem statement used by the code.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import types
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from flint import arb

from certify.dgg import dgg_continuity_bound_noniid
from certify.engine import workprec
from certify.papers import registry
from certify.papers.cli import jsonable
from certify.papers.gdp_paper import kov_deltas, np_vertices
from certify.papers.registry import run_paper
from certify.papers.rows import CheckRow
from certify.papers.rr_tradeoff import distances, rr_curve
from numeric.cli import main as cli_main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _contains(ball: arb, ref: str) -> bool:
    return bool(arb(ball.lower()) <= arb(ref)) and bool(arb(ref) <= arb(ball.upper()))


# --- CheckRow ------------------------------------------------------------------------------------


def _row(**kw):
    base = dict(claim="c", paper_value=1, our_value=1.0, method="exact", holds=True, source="s")
    base.update(kw)
    return CheckRow(**base)


@pytest.mark.parametrize("bad", [
    {"method": "guess"}, {"holds": 1}, {"claim": " "}, {"source": ""},
    {"method": "estimate", "holds": True}, {"holds": None}, {"our_value": float("nan")},
])
def test_checkrow_rejects(bad):
    with pytest.raises(ValueError):
        _row(**bad)


def test_checkrow_to_dict_and_undecided():
    r = _row(holds=None, undecided="a narrower interval", details={"x": 1})
    d = r.to_dict()
    assert list(d)[:6] == ["claim", "paper_value", "our_value", "method", "holds", "source"]
    assert d["undecided"] == "a narrower interval" and d["details"] == {"x": 1}


def test_jsonable_full_precision():
    from decimal import Decimal

    x = 0.1 + 0.2
    out = json.loads(json.dumps(jsonable({"f": x, "q": Fraction(1, 3), "d": Decimal("1.25"),
                                          "i": math.inf, "t": (1, 2)})))
    assert out == {"f": x, "q": "1/3", "d": "1.25", "i": "inf", "t": [1, 2]}


# --- CLI: JSON shape, exit status ----------------------------------------------------------------


def test_cli_gdp_quick_json(capsys):
    assert cli_main(["check", "gdp", "--quick", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) >= 10
    for r in rows:
        assert {"claim", "paper_value", "our_value", "method", "holds", "source"} <= set(r)
        assert r["method"] in ("exact", "certified", "estimate")
        assert r["holds"] in (True, False, None)
        assert "read" in r["source"] or "reconstructed" in r["source"]
        if r["holds"] is None:
            assert "decide" in r["undecided"]
    sup = next(r for r in rows if "0.013" in r["claim"])
    assert sup["holds"] is True and sup["method"] == "certified"
    lo, hi = (float(v) for v in sup["our_value"])
    assert lo <= 0.012288170565967022 <= hi and hi - lo < 1e-15


def test_cli_text_table(capsys):
    assert cli_main(["check", "gdp", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "[holds    ]" in out and "undecided" in out and "to decide:" in out


def _fake_paper(monkeypatch, body):
    mod = types.ModuleType("certify.papers._fake_paper")
    mod.checks = body
    monkeypatch.setitem(sys.modules, "certify.papers._fake_paper", mod)
    monkeypatch.setitem(registry.PAPERS, "fake", ("certify.papers._fake_paper", "a fake paper"))


def test_exit_status_zero_whatever_the_verdicts(monkeypatch, capsys):
    _fake_paper(monkeypatch, lambda quick: [_row(holds=False)])
    assert cli_main(["check", "fake", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["holds"] is False


def test_exit_status_one_when_a_check_cannot_run(monkeypatch, capsys):
    def broken(quick):
        return [*registry.guarded("a claim", "a source", lambda: 1 / 0), _row()]

    _fake_paper(monkeypatch, broken)
    assert cli_main(["check", "fake", "--json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["holds"] is None and "ZeroDivisionError" in rows[0]["details"]["error"]
    assert "decide" in rows[0]["undecided"] and rows[1]["holds"] is True


def test_missing_paper_module_is_reported(monkeypatch):
    monkeypatch.setitem(registry.PAPERS, "ghost", ("certify.papers._no_such_module", "ghost"))
    res = run_paper("ghost")
    assert not res.all_ran and "not in this version" in res.rows[0].details["error"]


def test_unknown_paper_is_a_usage_error():
    assert cli_main(["check", "nonsense"]) == 2
    with pytest.raises(ValueError):
        run_paper("nonsense")


# --- verdicts against independent oracles --------------------------------------------------------


def test_figure5_distances_match_reference():
    with workprec(160):
        d = distances(rr_curve(10, 1 / arb(10).sqrt()), arb(1))
        assert _contains(d.vertical, "0.0122881705659670224260617294374736077195966680")
        assert _contains(d.sup_g_minus_f, "0.00878367755757906947255101781503981744752286837")
        # the reference is printed to 25 digits: compare to half a unit in its last digit
        assert abs(float(d.diagonal.mid()) - 0.004701077724529353081307375) < 1e-17
        assert bool(abs(d.diagonal - arb("0.004701077724529353081307375")) < arb("5e-28"))
        assert d.vertical.rad() < 1e-14 and d.diagonal.rad() < 1e-14
        assert bool(d.vertical < arb("0.013"))


def test_berry_esseen_row_matches_reference():
    rows = run_paper("gdp", quick=True).rows
    be = next(r for r in rows if r.claim.startswith("Thm 3.4"))
    mu, gamma = be.our_value["mu"], be.paper_value["gamma"]
    assert float(mu[0]) <= 1.0041718781012751 <= float(mu[1])
    assert float(gamma[0]) <= 0.18371473685400148 <= float(gamma[1])
    assert be.holds is True
    rate = next(r for r in rows if r.claim.startswith("Thm 3.7"))
    assert rate.holds is None and "would decide" in rate.undecided


def test_rate_shift_is_the_smallest_c():
    # independent check of c at n = 2: G_1(a + c) - c <= f(a) <= G_1(a - c) + c on a fine grid,
    # and some a violates it for 0.999 c (mpmath at 30 digits, exact NP vertices of 2-fold RR)
    mpmath.mp.dps = 30
    with workprec(160):
        c = float(distances(rr_curve(2, 1 / arb(2).sqrt()), arb(1)).diagonal.mid())
    t = mpmath.e ** (1 / mpmath.sqrt(2))
    p = [t**2 / (1 + t) ** 2, 2 * t / (1 + t) ** 2, 1 / (1 + t) ** 2]  # P(K = k), P(+) = 1/(1+t)
    q = p[::-1]
    verts = [(mpmath.mpf(1), mpmath.mpf(0))]
    a, b = mpmath.mpf(1), mpmath.mpf(0)
    for k in range(3):
        a, b = a - p[k], b + q[k]
        verts.append((a, b))
    verts.sort()
    verts[0] = (mpmath.mpf(0), mpmath.mpf(1))  # P(K >= 3) = 0 exactly (rounding aside)

    def f(x):
        for (a0, b0), (a1, b1) in itertools.pairwise(verts):
            if a0 <= x <= a1:
                return b0 + (b1 - b0) * (x - a0) / (a1 - a0)
        return mpmath.mpf(0)

    def g(x):
        if x <= 0:
            return mpmath.mpf(1)
        if x >= 1:
            return mpmath.mpf(0)
        return mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * x - 1) - 1)

    def ok(cc, grid):
        return all(g(x + cc) - cc <= f(x) + 1e-25 and f(x) <= g(x - cc) + cc + 1e-25
                   for x in grid)

    grid = [mpmath.mpf(i) / 4000 for i in range(4001)] + [a for a, _ in verts]
    assert ok(c * (1 + 1e-9), grid)
    assert not ok(c * 0.999, grid)


def test_kov_rationals_match_mpmath_binomial_form():
    mpmath.mp.dps = 50
    k, t = 12, Fraction(6, 5)
    for m_eps, dk in kov_deltas(k, t, Fraction(0)):
        if m_eps <= 0:
            continue
        tm = mpmath.mpf(t.numerator) / t.denominator
        s = sum(mpmath.binomial(k, j) * (tm**j - tm ** (k - j + m_eps))
                for j in range(k + 1) if 2 * j - k > m_eps)
        want = s / (1 + tm) ** k
        assert abs(mpmath.mpf(dk.numerator) / dk.denominator - want) <= mpmath.mpf(10) ** -45 * (
            abs(want) + mpmath.mpf(10) ** -40)


def test_np_vertices_of_f_eps_0_are_exact():
    t = Fraction(3)
    vs = np_vertices([1 / (1 + t), t / (1 + t)], [t / (1 + t), 1 / (1 + t)])
    assert vs == [(0, 1), (Fraction(1, 4), Fraction(1, 4)), (1, 0)]  # f_{ln3,0}: kink at 1/(1+t)


# DGG non-i.i.d. continuity variant vs the R package (C0 = 1, p = 2; package's S_n, no 1/p)
@pytest.mark.parametrize(("n", "skewed", "ref"), [
    (100, True, "1.07394733"), (1000, True, "0.07920199708"),
    (100, False, "0.440706372"), (1000, False, "0.009925286849"),
])
def test_dgg_noniid_continuity_matches_r_package(n, skewed, ref):
    with workprec(128):
        k4 = arb(9)
        k3 = k4.root(4) ** 3
        v = dgg_continuity_bound_noniid(n, k4, k3, 2 * k3, arb("0.621") * k3, 1, 2,
                                        skewed=skewed, r_package_sn=True)
        assert v.rad() < 1e-25
        digits = len(ref.replace("0.", "").lstrip("0"))
        assert float(v.mid()) == pytest.approx(float(ref), rel=0.6 * 10.0 ** (1 - digits))
        # the integral (with 1/p) is smaller by (1 - 1/p) S_n for p = 2, larger for p = 1/2
        w = dgg_continuity_bound_noniid(n, k4, k3, 2 * k3, arb("0.621") * k3, 1, 2,
                                        skewed=skewed)
        assert bool(w < v)
        a = dgg_continuity_bound_noniid(n, k4, k3, 2 * k3, arb("0.621") * k3, 1, "0.5",
                                        skewed=skewed, r_package_sn=True)
        b = dgg_continuity_bound_noniid(n, k4, k3, 2 * k3, arb("0.621") * k3, 1, "0.5",
                                        skewed=skewed)
        assert bool(b > a)


@pytest.mark.parametrize("bad", [{"C0": 0}, {"p": -1}, {"eps": "0.4"}])
def test_dgg_noniid_rejects_bad_parameters(bad):
    args = {"C0": 1, "p": 2, "eps": "0.1"}
    args.update(bad)
    with workprec(128), pytest.raises(ValueError):
        dgg_continuity_bound_noniid(1000, 9, 5.2, 10.4, 3.2, args["C0"], args["p"],
                                    eps=args["eps"])


def test_aea_status_undecided_inside_the_interval():
    from certify.papers.edgeworth_paper import _status

    ball = arb("0.5").union(arb("0.6"))
    assert _status(0.55, ball) == "undecided"
    assert _status(0.4, ball) == "under-reports" and _status(0.7, ball) == "over-reports"


# --- examples (small parameters) -----------------------------------------------------------------


def _load(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_check_gdp(capsys):
    out = _load("check_gdp").main(ns=(10, 50))
    assert out[10]["below_0.013"] is True
    assert float(out[10]["sup"][0]) <= 0.012288170565967022 <= float(out[10]["sup"][1])
    assert 0.04 < float(out[50]["n_c_n"][0]) < 0.05
    assert "holds" in capsys.readouterr().out


def test_example_check_edgeworth(capsys):
    out = _load("check_edgeworth").main(ms=(20,), h=2.0**-8)
    r = out[20]
    # m = 20 (rate * m = 0.2): the Q-only AEA under-reports, the two-sided one over-reports
    assert r["aea"]["status"] == "under-reports" and r["aea-ea"]["status"] == "over-reports"
    assert out["dgg_noniid_continuity_n1000"] == pytest.approx(0.07920199708, rel=1e-9)
    assert "certified eps" in capsys.readouterr().out


# --- whole papers (slow) -------------------------------------------------------------------------


@pytest.mark.slow
def test_check_all_quick_runs(capsys):
    import time

    t0 = time.perf_counter()
    status = cli_main(["check", "all", "--quick", "--json"])
    rows = json.loads(capsys.readouterr().out)
    papers = {r["paper"] for r in rows}
    assert {"gdp", "edgeworth"} <= papers
    ran = [r for r in rows if r["paper"] in ("gdp", "edgeworth")]
    assert not any("error" in r.get("details", {}) for r in ran)
    assert status == (1 if any("error" in r.get("details", {}) for r in rows) else 0)
    assert time.perf_counter() - t0 < 60  # < 15 s unloaded; generous under CI load
