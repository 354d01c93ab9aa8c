"""edgeworth check shuffle: the shuffling paper's rows (certify/papers/shuffle_paper.py).

Oracles: the Thm 4.1 constant K = 2 B sqrt(kurtosis) + sqrt(v/(2 pi)) in mpmath at 40 digits
(the reconstruction recorded in the project's notes: sigma = 1, delta = 0.01 gives M = 1.136e6);
exact one-epoch TV reference values from the project's notes (s = 1: M = 100 -> 0.0514).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("flint")
mpmath = pytest.importorskip("mpmath")
shuffle_paper = pytest.importorskip("certify.papers.shuffle_paper")
pytest.importorskip("numeric.shuffle.bounds")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _k(sigma) -> mpmath.mpf:
    mpmath.mp.dps = 40
    a = 1 / mpmath.mpf(sigma) ** 2
    kurt = mpmath.exp(4 * a) + 2 * mpmath.exp(3 * a) + 3 * mpmath.exp(2 * a) - 3
    return 2 * mpmath.mpf("0.4748") * mpmath.sqrt(kurt) + mpmath.sqrt(
        (mpmath.exp(a) - 1) / (2 * mpmath.pi))


@pytest.fixture(scope="module")
def rows():
    return shuffle_paper.checks(quick=True)


def test_worked_example_matches_mpmath(rows):
    one, hundred = rows[0], rows[1]
    m1 = (_k(1) / mpmath.mpf("0.01")) ** 2  # 1.136e6 (project notes)
    lo, hi = (mpmath.mpf(x) for x in one.our_value)
    assert lo <= m1 <= hi and hi - lo < 1e-3 * m1
    assert one.holds is True and one.method == "exact" and "reconstructed" in one.source
    d1 = 1 - mpmath.mpf("0.99") ** (mpmath.mpf(1) / 100)
    n100 = 10 * (_k(1) / d1) ** 2
    lo, hi = (mpmath.mpf(x) for x in hundred.our_value)
    assert lo <= n100 <= hi and 1e11 <= n100 < 2e11 and hundred.holds is True


def test_every_row_has_a_verdict_or_says_what_would_decide(rows):
    assert len(rows) >= 6
    for r in rows:
        assert "error" not in r.details, r.details
        assert r.holds is not None or r.undecided
        d = r.to_dict()
        assert set(d) >= {"claim", "paper_value", "our_value", "method", "holds", "source"}


def test_berry_esseen_bound_against_the_true_tv(rows):
    (r,) = [r for r in rows if r.claim.startswith("Thm 4.1: one-epoch TV")]
    lo, hi = r.our_value  # quick: sigma = 2, M = 100; notes: exact TV 0.0212 (4 decimals)
    assert lo <= 0.02125 and 0.02115 <= hi and hi - lo < 1e-3
    assert r.paper_value == pytest.approx(float(_k(2) / 10), rel=1e-12)
    assert r.method == "certified" and r.holds is True  # 0.30 >> 0.021


def test_impossibility_row(rows):
    (r,) = [r for r in rows if r.claim.startswith("impossibility")]
    floor = (1 - 1 / mpmath.sqrt(4 * mpmath.pi * mpmath.log(10))) / 2
    assert r.paper_value == pytest.approx(float(floor), rel=1e-12)
    assert r.method == "certified" and r.holds is True and r.our_value[0] >= float(floor)


def test_example_runs(capsys):
    spec = importlib.util.spec_from_file_location("check_shuffle", EXAMPLES / "check_shuffle.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(quick=True)
    assert out and "1.14e6" in capsys.readouterr().out
    assert [r.claim for r in out] == [r.claim for r in shuffle_paper.checks(quick=True)]
