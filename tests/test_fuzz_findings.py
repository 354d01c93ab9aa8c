"""Regression tests for the findings of the fuzz campaigns (issue 12: "No valid input crashes,
hangs, exhausts memory or gets a silently wrong number"). Each reproduces one fuzz draw exactly;
reference values come from independent oracles (mpmath, closed forms), copied here with their
source.
"""

from __future__ import annotations

import math

import pytest

import numeric
from numeric.composition import compose
from numeric.mechanisms import ApproxDP, RandomizedResponse
from numeric.saddlepoint import saddlepoint_delta


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# (a) fuzz draw 391 (seed 4242): 8 approx-DP steps and one randomized response at order 1. The
# series of orders 0 and 1 needs no l_4, so l_4 = -1.27 went unflagged, the lattice note alone
# added "diagnostics fired" to the warnings while details["diagnostics"] stayed empty, and auto
# accepted 0.1615 (11% low). Reference: 1 - (1 - d0)^8 (1 - delta_pure), delta_pure by a
# binomial enumeration of the 9 x 2 privacy-loss atoms in mpmath at 50 digits:
# 0.18199616346396414942...
_DRAW_391 = [(ApproxDP(0.0674189781237784, 5.668045708132865e-06), 8),
             (RandomizedResponse(0.37643948645442393), 1)]
_EPS_391 = 0.013569967082818307
_REF_391 = 0.18199616346396414942


@pytest.mark.parametrize("order", [0, 1, 2])
def test_auto_refuses_a_saddlepoint_whose_diagnostics_fired(order):
    sp = saddlepoint_delta(compose(_DRAW_391), _EPS_391, order=order)
    assert sp.details["diagnostics"], sp.warnings  # l_4 is checked at every order
    assert any("l4=" in w for w in sp.details["diagnostics"])
    res = numeric.delta(compose(_DRAW_391), _EPS_391, order=order)
    assert res.method != "saddlepoint"
    assert _rel(res.delta, _REF_391) < 1e-9


def test_lattice_note_alone_is_not_a_fired_diagnostic():
    # a long randomized-response + approx-DP composition (no exact method: two eps0), where
    # the tilted law is close to normal: only the lattice note, and no "diagnostics fired"
    comp = compose([(RandomizedResponse(0.05), 2000), (ApproxDP(0.07, 1e-9), 1000)])
    sp = saddlepoint_delta(comp, 1.0)
    assert sp.details["diagnostics"] == []
    assert any("purely atomic" in w for w in sp.warnings)
    assert not any(w.startswith("diagnostics fired") for w in sp.warnings)
    assert math.isfinite(sp.delta)
