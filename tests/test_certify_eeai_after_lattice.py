"""Without a time budget, ``certified`` runs the lattice before the EEAI and skips the EEAI
after a narrow lattice interval (its per-mechanism moments were most of the CPU for many noise
levels, issue 16); Chernoff still runs, and the numbers are those of every method intersected."""

from __future__ import annotations

import pytest

pytest.importorskip("flint")

from certify.bound import Bound, Endpoint
from certify.combine import (
    EEAI_AFTER_LATTICE,
    UNTIMED_ORDER,
    certified_epsilon,
    skip_reason,
)
from numeric.mechanisms import Laplace, PoissonSubsampledGaussian

_SKIPPED = "not applicable: eeai (not run: the lattice interval is already"


def test_untimed_order_puts_the_lattice_before_the_eeai():
    assert UNTIMED_ORDER.index("lattice") < UNTIMED_ORDER.index("eeai")
    assert UNTIMED_ORDER.index("lattice") < UNTIMED_ORDER.index("chernoff")
    assert 0 < EEAI_AFTER_LATTICE <= 1e-2


def test_heterogeneous_dp_sgd_skips_the_eeai_and_keeps_every_number():
    comp = [(PoissonSubsampledGaussian(0.8 + 0.2 * i, 0.01), 100) for i in range(6)]
    untimed = certified_epsilon(comp, 1e-5)
    assert any(w.startswith(_SKIPPED) for w in untimed.warnings), untimed.warnings
    everything = certified_epsilon(comp, 1e-5, time_budget=600)  # the EEAI runs first here
    assert not any(w.startswith(_SKIPPED) for w in everything.warnings)
    assert (untimed.lower, untimed.upper) == (everything.lower, everything.upper)


def _bound(lower: float, upper: float) -> Bound:
    """An epsilon interval with exactly these float ends (dyadic, so exact Endpoints)."""
    def ep(x: float) -> Endpoint:
        man, den = x.as_integer_ratio()  # den is a power of two
        return Endpoint(man, -(den.bit_length() - 1))
    return Bound("epsilon", ep(lower), ep(upper), "lattice-test", "lattice", 64)


@pytest.mark.parametrize(("lower", "upper", "timed", "runs"), [
    (1.0, 1.0 + 2.0**-20, False, False),  # narrow: skipped without a budget
    (1.0, 1.0 + 2.0**-20, True, True),  # under a budget the EEAI ran before the lattice anyway
    (1.0, 1.5, False, True),  # a wide lattice interval: the EEAI may tighten it
    (0.0, 1.0, False, True),
])
def test_the_eeai_runs_unless_the_lattice_is_narrow(lower, upper, timed, runs):
    results = {"lattice": _bound(lower, upper)}
    assert (skip_reason("eeai", results, timed) is None) == runs
    assert skip_reason("chernoff", results, timed) is None  # Chernoff always runs
    assert skip_reason("eeai", {}, False) is None  # no lattice (refused or not applicable)


def test_chernoff_still_runs_and_still_wins_pure_dp_ends():
    # measured: Laplace(0.5) x 10 at delta 1e-5, Chernoff at a large order gives the upper end
    # (19.990190...) below the lattice's (19.991185...); skipping it would widen the interval
    b = certified_epsilon([(Laplace(0.5), 10)], 1e-5)
    assert b.upper_method.startswith("chernoff")
    assert any(w.startswith(_SKIPPED) for w in b.warnings)
    assert b.lower_mpf <= b.upper_mpf
