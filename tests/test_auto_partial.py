"""auto: never an eps below a proven lower end (fuzz seed 4711: an AEA estimate 1.36 was
returned, with a warning, where the certified lattice had proven eps >= 21.1 but found no finite
upper end). The oracle is the policy stated in numeric/auto.py's docstring, checked against a
certified plug-in whose answer is a real certify Bound with an infinite upper end."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

pytest.importorskip("flint")

from certify.bound import Bound
from certify.engine import Endpoint
from numeric import auto as auto_module
from numeric.auto import auto_epsilon
from numeric.errors import NotApplicable
from numeric.mechanisms import Laplace, PoissonSubsampledGaussian

COMP = [(Laplace(1.0), 3), (PoissonSubsampledGaussian(0.8, 0.3), 2)]  # no exact method


class _HalfOpen:
    """A certified plug-in proving eps >= lower and nothing above (upper end infinite)."""

    options = ("time_budget",)

    def __init__(self, lower: float) -> None:
        man, den = lower.as_integer_ratio()
        self.bound = Bound("epsilon", Endpoint(man, -(den.bit_length() - 1)), Endpoint(inf=1),
                           "test-lower", "none", 64)

    def _fn(self, comp, x, **options):
        return self.bound

    delta_fn = epsilon_fn = _fn


def _no_saddlepoint(*args, **kwargs):
    raise NotApplicable("saddlepoint: switched off for this test")


@pytest.fixture
def estimate_only(monkeypatch):
    monkeypatch.setattr(auto_module, "saddlepoint_epsilon", _no_saddlepoint)


def test_an_estimate_below_the_proven_lower_end_is_not_returned(monkeypatch, estimate_only):
    aea = auto_module.aea_epsilon(COMP, 1e-5)
    lower = 2.0 * aea.epsilon + 1.0  # proven (by the fake plug-in) far above the estimate
    monkeypatch.setattr(auto_module, "get_method", lambda name, required=True: _HalfOpen(lower))
    res = auto_epsilon(COMP, 1e-5)
    assert res.certified and not res.estimate and res.method == "certified"
    assert res.epsilon == math.inf and res.upper == Decimal("Infinity")
    assert res.lower == Decimal(lower)  # the exact binary value the plug-in proved
    assert "under-reports" in res.warnings[0] and "below the certified lower end" in res.warnings[0]
    assert res.details["rejected_estimate"]["epsilon"] == pytest.approx(aea.epsilon, rel=1e-12)


def test_an_estimate_above_the_proven_lower_end_is_kept(monkeypatch, estimate_only):
    aea = auto_module.aea_epsilon(COMP, 1e-5)
    lower = 0.5 * aea.epsilon
    monkeypatch.setattr(auto_module, "get_method", lambda name, required=True: _HalfOpen(lower))
    res = auto_epsilon(COMP, 1e-5)
    assert res.estimate and not res.certified and res.method == "aea"
    assert res.epsilon == pytest.approx(aea.epsilon, rel=1e-12)
    assert any("vacuous enclosure" in t for t in res.details["tried"])
