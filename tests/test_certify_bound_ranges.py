"""A certified Bound keeps delta in [0, 1] and eps >= 0 (issue 12 fuzz, seed 2026: a one-epoch
random-allocation delta came out as [-2^-30, 1 + 2^-30], reported as delta > 1)."""

from __future__ import annotations

import pytest

pytest.importorskip("flint")

from certify.bound import Bound
from certify.engine import Endpoint


def _bound(quantity: str, lo: Endpoint, hi: Endpoint) -> Bound:
    return Bound(quantity, lo, hi, "m", "m", 53)


def test_outward_rounded_delta_ends_are_clipped_to_the_unit_interval():
    b = _bound("delta", Endpoint(-1, -30), Endpoint(2**30 + 1, -30))
    assert b.lower_mpf == 0 and b.upper_mpf == 1
    assert b.value == 1.0 and b.lower_value == 0.0
    assert b.vacuous


def test_epsilon_lower_end_is_clipped_at_zero_and_upper_kept():
    b = _bound("epsilon", Endpoint(-3, -4), Endpoint(5, 0))
    assert b.lower_mpf == 0 and b.upper_mpf == 5
    inf = _bound("epsilon", Endpoint(inf=-1), Endpoint(inf=1))
    assert inf.lower_mpf == 0 and not inf.upper.is_finite


def test_ends_inside_the_range_are_untouched():
    lo, hi = Endpoint(3, -10), Endpoint(7, -3)
    for q in ("delta", "epsilon"):
        b = _bound(q, lo, hi)
        assert b.lower == lo and b.upper == hi


def test_an_empty_enclosure_is_still_refused():
    with pytest.raises(ValueError, match="empty enclosure"):
        _bound("delta", Endpoint(1, 0), Endpoint(1, -1))


@pytest.mark.parametrize("direction", ["P||Q", "Q||P"])
def test_fuzz_draw_one_epoch_shuffle_delta_stays_in_unit_interval(direction):
    from certify.shuffle.multi_epoch import delta_bound

    b = delta_bound(0.07941462401752893, 37787, 1, 0.00346918294139713, direction)
    assert 0 <= b.lower_mpf <= b.upper_mpf <= 1
