"""The ``auto`` method: exact, else saddlepoint, else certified within a budget, else an estimate.

Whatever it picks it returns the same result type (EpsilonResult / DeltaResult), names the
method that answered and says why; only NotApplicable moves it to the next step.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import Decimal

import pytest

from numeric import (
    DeltaResult,
    EpsilonResult,
    Gaussian,
    Laplace,
    Mechanism,
    PLLRCumulants,
    PoissonSubsampledGaussian,
    RandomizedResponse,
    compose,
    delta,
    epsilon,
)
from numeric import methods as methods_module
from numeric.aea import aea_epsilon
from numeric.cli import main
from numeric.exact import exact_epsilon
from numeric.saddlepoint import saddlepoint_delta, saddlepoint_epsilon

_WELL = [(PoissonSubsampledGaussian(1.0, 0.01), 10_000)]
_BIG_STEP = [(PoissonSubsampledGaussian(0.8, 0.01), 100)]  # rate * m = 1: "one big step"


@dataclass(frozen=True)
class _NoCGF(Mechanism):
    """A toy pair with cumulants only (no CGF, no exact form, no certified knowledge)."""

    def _cumulants(self, order: int) -> PLLRCumulants:
        return PLLRCumulants(x=(-0.5,) + (1.0,) * (order - 1), y=(0.5,) + (1.0,) * (order - 1))


def _without_certified(monkeypatch) -> None:
    methods_module.load_plugins()
    monkeypatch.delitem(methods_module.METHODS, "certified", raising=False)


def test_auto_is_the_default_method():
    comp = compose(_WELL)
    assert epsilon(comp, 1e-5).details["auto"] == epsilon(comp, 1e-5, "auto").details["auto"]


def test_auto_returns_saddlepoint_when_diagnostics_pass():
    comp = compose(_WELL)
    sp = saddlepoint_epsilon(comp, 1e-5)
    assert not sp.details["diagnostics"]
    res = epsilon(comp, 1e-5, method="auto")
    assert type(res) is EpsilonResult
    assert res.method == "saddlepoint" and res.estimate and not res.certified
    assert res.epsilon == sp.epsilon
    assert "diagnostics passed" in res.details["auto"]


@pytest.mark.parametrize("steps", [1, 2, 10, 1000])
def test_auto_answers_randomized_response_exactly_at_any_step_count(steps):
    comp = compose([(RandomizedResponse(1.0), steps)])
    res = epsilon(comp, 1e-3)
    assert type(res) is EpsilonResult and res.method == "exact" and not res.estimate
    assert res.epsilon == exact_epsilon(comp, 1e-3).epsilon
    assert math.isfinite(res.epsilon) and res.epsilon >= 0.0


def test_auto_gaussian_is_exact():
    comp = compose([(Gaussian(2.0), 7)])
    assert epsilon(comp, 1e-6).method == "exact"
    assert delta(comp, 1.0).method == "exact"


def test_auto_returns_certified_enclosure_when_diagnostics_fire():
    pytest.importorskip("flint")
    comp = compose(_BIG_STEP)
    sp = saddlepoint_epsilon(comp, 1e-5)
    assert sp.details["diagnostics"]
    res = epsilon(comp, 1e-5, method="auto")
    assert type(res) is EpsilonResult  # the same type whatever auto picked
    assert res.method == "certified" and res.certified and not res.estimate
    assert isinstance(res.lower, Decimal) and isinstance(res.upper, Decimal)
    assert res.lower <= res.upper and res.upper.is_finite()
    assert Decimal(res.epsilon) >= res.upper  # the value is the upper end, never rounded down
    assert float(res.upper) == pytest.approx(res.epsilon, rel=1e-15)
    assert "diagnostics fired" in res.warnings[0] and "certified" in res.warnings[0]
    assert res.details["saddlepoint_estimate"] == sp.epsilon
    d = res.to_dict()
    assert d["certified"] is True and d["estimate"] is False
    assert Decimal(d["lower"]) == res.lower and Decimal(d["upper"]) == res.upper
    json.dumps(d, allow_nan=False)


def test_auto_without_certified_reports_the_saddlepoint_estimate_with_warning(monkeypatch):
    _without_certified(monkeypatch)
    comp = compose(_BIG_STEP)
    res = epsilon(comp, 1e-5, method="auto")
    sp = saddlepoint_epsilon(comp, 1e-5)
    assert res.method == "saddlepoint" and res.epsilon == sp.epsilon and res.estimate
    assert "diagnostics fired" in res.warnings[0] and "no certified answer" in res.warnings[0]
    assert any("tilted cumulants" in w for w in res.warnings)
    d = delta(comp, 1.5, method="auto")  # the delta(eps) side follows the same policy
    assert type(d) is DeltaResult
    assert d.method == "saddlepoint" and "diagnostics fired" in d.warnings[0]
    assert d.delta == saddlepoint_delta(comp, 1.5).delta


def test_auto_falls_back_to_a_labelled_aea_estimate_when_nothing_else_applies():
    comp = compose([(_NoCGF(), 10)])
    res = epsilon(comp, 1e-5, method="auto")
    assert type(res) is EpsilonResult and res.method == "aea" and res.estimate
    assert res.epsilon == aea_epsilon(comp, 1e-5).epsilon
    assert "AEA estimate" in res.warnings[0]
    tried = " ".join(res.details["tried"])
    assert "exact:" in tried and "saddlepoint:" in tried and "certified:" in tried


def test_auto_cli_json(capsys, monkeypatch):
    argv = ["epsilon", "--mechanism", "subsampled-gaussian", "--sigma", "1", "--rate", "0.01",
            "--steps", "10000", "--delta", "1e-5", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "saddlepoint" and out["epsilon"] == pytest.approx(6.1877, rel=1e-4)
    assert out["details"]["diagnostics"] == []
    _without_certified(monkeypatch)
    argv[argv.index("10000")] = "100"
    argv[argv.index("1")] = "0.8"
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "saddlepoint" and "diagnostics fired" in out["warnings"][0]


@pytest.mark.parametrize("steps", ["1", "2", "5"])
def test_cli_default_answers_few_step_randomized_response(capsys, steps):
    # formerly exit 2 ("the tilted variance K''(t) must be > 0"): valid input is answered
    rc = main(["epsilon", "--mechanism", "randomized-response", "--eps0", "1", "--steps", steps,
               "--delta", "1e-3", "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    out = json.loads(captured.out)
    assert out["method"] == "exact" and out["estimate"] is False


def test_tiny_sigma_one_step_is_certified_quickly_within_memory():
    # issue: the saddlepoint's quadrature asked for 17.6 GB here and AEA said 2.79 against a true
    # value near 168; now the saddlepoint refuses up front (memory budget), and the one-step
    # certified method answers from the step's own hockey-stick curve
    pytest.importorskip("flint")
    import subprocess
    import sys
    import time

    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30));"
        "from numeric.cli import main;"
        "raise SystemExit(main(['epsilon', '--mechanism', 'subsampled-gaussian', '--sigma', "
        "'0.0714', '--rate', '7e-6', '--steps', '1', '--delta', '1.3e-14', '--json']))"
    )
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert time.perf_counter() - t0 < 20.0
    res = json.loads(out.stdout)
    assert res["method"] == "certified" and res["certified"] is True
    lower, upper = Decimal(res["lower"]), Decimal(res["upper"])
    assert Decimal("167.9581") < lower <= upper < Decimal("167.9582")


@pytest.mark.parametrize("sigma", ["1e-3", "1e-6", "1e6"])
@pytest.mark.parametrize("steps", ["1", "1000000000000000"])
def test_gaussian_extremes_are_answered(capsys, sigma, steps):
    rc = main(["epsilon", "--mechanism", "gaussian", "--sigma", sigma, "--steps", steps,
               "--delta", "1e-5", "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    out = json.loads(captured.out)
    assert out["epsilon"] is not None and out["epsilon"] >= 0.0


def test_gaussian_below_the_documented_domain_is_a_clear_bad_input(capsys):
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1e-200", "--steps", "10",
                 "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert "sigma" in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_huge_eps0_mixed_with_dp_sgd_is_certified():
    # found by benchmarks/bench_auto.py: the lattice's grid spacing exceeds 1 here (no coarser
    # grid exists) and its lower eps search ran past 5e5
    pytest.importorskip("flint")
    comp = compose([(RandomizedResponse(700.0), 1000), (PoissonSubsampledGaussian(1.0, 0.01), 100)])
    res = epsilon(comp, 1e-5)
    # Oracle: the 1000 RR steps are a point mass at loss 700000 up to probability 1000 e^-700
    # (any other value is 1400 lower, beyond the DP-SGD part's reach), so eps = 700000 +
    # eps_DPSGD(1e-5); dp_accounting's PLD (add/remove, value_discretization_interval 1e-5)
    # gives eps_DPSGD = 0.71803567 (1e-4 grid: 0.71803671). (The test once asserted
    # lower <= 700000, true of a loose interval only.)
    assert res.certified and res.lower <= Decimal("700000.71803") <= res.upper


def test_fuzz_findings_auto_uses_informative_enclosures_and_tiny_tilts():
    pytest.importorskip("flint")
    # a delta enclosure [0.99..., 1] is informative although its upper end is 1 (the saddlepoint
    # said 0 here); and the lattice's renormalising tilt no longer takes a float log of an
    # underflowed number (was "math domain error", exit 2)
    res = delta(compose([(Laplace(0.007201760065679995), 4633)]), 0.33040970663583297)
    assert res.certified and res.lower > Decimal("0.99")
    eps = epsilon(compose([(RandomizedResponse(5009.465839703957), 736934692)]),
                  2.100306576706867e-06)
    assert math.isfinite(eps.epsilon) and eps.epsilon > 3e12
