"""A standing fuzz of valid inputs (issue: "No valid input crashes, hangs, exhausts memory or
gets a silently wrong number").

Hypothesis draws valid compositions of the built-in mechanisms, queries and methods; each call
runs in a persistent worker subprocess capped at 2 GiB and 60 s (``benchmarks/fuzz_run.py``,
which also holds the oracle and runs the big, seeded campaign). The default test asks the cheap
methods through the API and the CLI; the slow tests add ``auto`` and the checked subset, where
the ``certified`` method is the reference.
"""

from __future__ import annotations

import math
import random
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import fuzz_run as fr

from numeric.mechanisms import MECHANISMS

# no shrinking: a failing draw is already a one-line reproducer, and shrinking re-runs draws that
# may each take the 60 s cap
_SETTINGS = {"derandomize": True, "deadline": None, "database": None,
             "suppress_health_check": list(HealthCheck),
             "phases": (Phase.explicit, Phase.reuse, Phase.generate)}


# edge-seeking draws (Hypothesis' own random, biased to the ends of every range) and draws spread
# like the big run's (a seeded random.Random)
_RNG = st.one_of(st.randoms(use_true_random=False), st.integers(0, 2**64 - 1).map(random.Random))


@pytest.fixture(scope="module")
def worker():
    w = fr.Worker()
    yield w
    w.close()


def test_every_builtin_mechanism_is_drawn():
    builtin = {name for name, e in MECHANISMS.items()
               if e.cls.__module__.startswith("numeric.mechanisms.")}
    assert builtin <= set(fr.SAMPLERS), sorted(builtin - set(fr.SAMPLERS))


def test_oracle_flags_what_it_should():
    call = {"terms": [], "query": "epsilon", "x": 1e-5, "method": "auto", "via": "api"}
    assert fr.violations(call, {"outcome": "exception", "message": "boom"}) == ["exception"]
    assert fr.violations(call, {"outcome": "answer", "value": float("nan")}) == ["nan"]
    assert fr.violations(call, {"outcome": "answer", "value": 1.0, "estimate": True,
                                "method_used": "aea", "warnings": []}) == [
        "auto-unwarned-estimate"]
    assert fr.violations(call, {"outcome": "answer", "value": 1.0, "estimate": True,
                                "method_used": "saddlepoint", "warnings": [],
                                "diagnostics": []}) == []
    cli = {"status": 1, "stdout": "", "stderr": "edgeworth: error: a\nb\n"}
    assert fr.violations(call, {"outcome": "cli-1", "cli": cli}) == ["cli-stderr"]
    ref = {"lower": "2", "upper": "3"}
    assert fr.compare(call, {"outcome": "answer", "value": 1.5, "warnings": []}, ref)[0].startswith(
        "silent-wrong under by 0.25")
    assert fr.findings(fr.compare(call, {"outcome": "answer", "value": 1.5, "warnings": ["w"]},
                                  ref)) == []
    assert fr.compare(call, {"outcome": "answer", "value": 3.01, "warnings": []}, ref) == []
    # a float answer is judged against the interval rounded outward to binary64
    assert fr.off_interval(0.0, Decimal("1e-400000"), Decimal("2e-400000")) == ("in", 0.0)
    assert fr.off_interval(0.1, Decimal("0.1"), Decimal("0.1")) == ("in", 0.0)
    assert fr.off_interval(math.inf, Decimal(1), Decimal("Infinity")) == ("in", 0.0)


def _run(worker, rng, methods, vias):
    call = fr.make_draw(rng, methods, vias)
    rec, bad = fr.check_call(worker, call)
    assert not fr.findings(bad), f"{fr.repro(call)} -> {bad}: {rec}"


@settings(max_examples=200, **_SETTINGS)
@given(rng=_RNG)
def test_fuzz_cheap_methods(worker, rng):
    _run(worker, rng, fr.CHEAP_METHODS, (("api", 80), ("cli", 17), ("cli-proc", 3)))


@pytest.mark.slow
@settings(max_examples=600, **_SETTINGS)
@given(rng=_RNG)
def test_fuzz_all_methods(worker, rng):
    _run(worker, rng, fr.ALL_METHODS, (("api", 80), ("cli", 15), ("cli-proc", 5)))


@pytest.mark.slow
@settings(max_examples=40, **_SETTINGS)
@given(rng=_RNG)
def test_fuzz_checked_against_certified(worker, rng):
    item = fr.run_checked(worker, fr.make_draw(rng))
    bad = [(fr.repro(call), b, rec.get("value")) for call, rec, bads in item["calls"]
           for b in fr.findings(bads)]
    assert not bad, bad
