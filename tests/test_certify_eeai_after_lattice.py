"""Without a time budget, ``certified`` runs the lattice before the EEAI and Chernoff and, for
many distinct terms, skips both after a narrow lattice interval (the EEAI's per-mechanism
moments were most of the CPU for many noise levels, Chernoff's objective ~10 s at 1000 levels,
issue 16); for fewer terms both still run (Chernoff wins pure-DP upper ends there)."""

from __future__ import annotations

import pytest

pytest.importorskip("flint")

from lattice_contract import dyadic_epsilon_bound

from certify.combine import (
    CERTIFIED_METHODS,
    EEAI_AFTER_LATTICE,
    EEAI_SKIP_TERMS,
    UNTIMED_ORDER,
    certified_epsilon,
    skip_reason,
)
from numeric.mechanisms import Laplace, PoissonSubsampledGaussian

_SKIPPED = "not applicable: eeai (not run: the lattice interval is already"
_SKIPPED_CHERNOFF = "not applicable: chernoff (not run: the lattice interval is already"


def test_untimed_order_puts_the_lattice_before_the_eeai():
    assert UNTIMED_ORDER.index("lattice") < UNTIMED_ORDER.index("eeai")
    assert UNTIMED_ORDER.index("lattice") < UNTIMED_ORDER.index("chernoff")
    assert 0 < EEAI_AFTER_LATTICE <= 1e-2


def test_heterogeneous_dp_sgd_skips_the_eeai_and_keeps_every_number():
    n = EEAI_SKIP_TERMS
    comp = [(PoissonSubsampledGaussian(0.8 + 1.2 * i / (n - 1), 0.01), 100) for i in range(n)]
    untimed = certified_epsilon(comp, 1e-5)
    assert any(w.startswith(_SKIPPED) for w in untimed.warnings), untimed.warnings
    assert any(w.startswith(_SKIPPED_CHERNOFF) for w in untimed.warnings), untimed.warnings
    everything = certified_epsilon(comp, 1e-5, time_budget=600)  # both run first here
    assert not any(w.startswith((_SKIPPED, _SKIPPED_CHERNOFF)) for w in everything.warnings)
    assert (untimed.lower, untimed.upper) == (everything.lower, everything.upper)




@pytest.mark.parametrize(("lower", "upper", "timed", "terms", "runs"), [
    (1.0, 1.0 + 2.0**-20, False, EEAI_SKIP_TERMS, False),  # narrow, many terms: skipped
    (1.0, 1.0 + 2.0**-20, False, EEAI_SKIP_TERMS - 1, True),  # few terms: the EEAI is cheap
    (1.0, 1.0 + 2.0**-20, True, 1000, True),  # under a budget it ran before the lattice anyway
    (1.0, 1.5, False, 1000, True),  # a wide lattice interval: the EEAI may tighten it
    (0.0, 1.0, False, 1000, True),
])
def test_the_eeai_runs_unless_the_lattice_is_narrow(lower, upper, timed, terms, runs):
    method = {m.name: m for m in CERTIFIED_METHODS}
    results = {"lattice": dyadic_epsilon_bound(lower, upper)}
    assert (skip_reason(method["eeai"], results, timed, terms) is None) == runs
    assert (skip_reason(method["chernoff"], results, timed, terms) is None) == runs
    # no lattice (refused, not applicable)
    assert skip_reason(method["eeai"], {}, False, terms) is None
    assert skip_reason(method["chernoff"], {}, False, terms) is None


def test_chernoff_still_runs_for_few_terms_and_still_wins_pure_dp_ends():
    # measured: Laplace(0.5) x 10 at delta 1e-5, Chernoff at a large order gives the upper end
    # (19.990190...) below the lattice's (19.991185...); skipping it would widen the interval
    b = certified_epsilon([(Laplace(0.5), 10)], 1e-5)
    assert b.upper_method.startswith("chernoff")
    assert not any(w.startswith(_SKIPPED) for w in b.warnings)  # one term: the EEAI ran
    assert b.lower_mpf <= b.upper_mpf
