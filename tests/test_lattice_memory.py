"""Peak memory of the certified lattice (issue 16): the owned product-and-rescale and the
up-front memory budget of :mod:`certify.lattice_target`.

Oracles: the cut and the rescaling are recomputed from their definitions on Python integers
(exact sums, ceiling / floor division); the level span is checked against the single-step
sequences the lattice actually builds; the budgeted refinement against the unbudgeted one.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("flint")

from flint import fmpz_poly

import certify.lattice_memory as lmem
import certify.lattice_target as lt
from certify.lattice_adaptive import adaptive_lower
from certify.lattice_grid import cut_rescale, mul_cut_rescale
from numeric.composition import compose
from numeric.errors import BudgetExceeded, NotApplicable
from numeric.mechanisms import PoissonSubsampledGaussian


def _reference(a: list[int], b: list[int], bits: int, up: bool, exact_ceiling: bool = False
               ) -> tuple[int, list[int], int, int]:
    """cut_rescale's definition on Python integers: top = smallest K with sum_{j>K} c_j <= tau,
    low = largest L <= top with sum_{j<L} c_j <= tau, tau = 2^(B + max(0, B - 64)); kept
    coefficients rescaled by 2^-B (floor, plus one unit each when up: at least the ceiling; the
    ceiling itself with exact_ceiling) and cut sums rescaled by 2^-B (ceiling when up, else
    floor)."""
    c = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            c[i + j] += x * y
    tau = 1 << (bits + max(0, bits - 64))
    top = next(k for k in range(len(c)) if sum(c[k + 1:]) <= tau)
    low = max(k for k in range(top + 1) if sum(c[:k]) <= tau)
    d = 1 << bits

    def rs(v: int) -> int:
        return -((-v) // d) if up else v // d

    kept = [(rs(v) if exact_ceiling else v // d + (1 if up else 0)) for v in c[low:top + 1]]
    while kept and kept[-1] == 0:
        kept.pop()
    return low, kept, rs(sum(c[top + 1:])), rs(sum(c[:low]))


@pytest.mark.parametrize("exact_ceiling", [False, True])
@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_mul_cut_rescale_matches_definition(seed: int, up: bool, exact_ceiling: bool) -> None:
    rng = random.Random(seed)
    bits = 80
    # masses of a law (units 2^-B) with a light, sparse tail at both ends: cuts do happen
    def law(n: int) -> list[int]:
        out = [rng.getrandbits(rng.choice((8, 30, 79))) if rng.random() < 0.6 else 0
               for _ in range(n)]
        out[0] = out[0] or 1
        out[-1] = out[-1] or 1
        return out

    a, b = law(rng.randint(1, 60)), law(rng.randint(1, 60))
    want = _reference(a, b, bits, up, exact_ceiling)
    got = mul_cut_rescale(fmpz_poly(a), fmpz_poly(b), bits, up, exact_ceiling=exact_ceiling)
    assert (got[0], [int(v) for v in got[1].coeffs()], int(got[2]), int(got[3])) == want
    old = cut_rescale(fmpz_poly(a) * fmpz_poly(b), bits, up, exact_ceiling)
    assert old[0] == got[0] and old[1] == got[1] and old[2:] == got[2:]


def _comp(q: float = 0.01, s: float = 1.0, m: int = 100):
    return compose([(PoissonSubsampledGaussian(s, q), m)])


def test_level_span_is_the_single_step_length() -> None:
    comp = _comp()
    res = lt.LEVELS[4]
    for d in comp.directions:
        terms, total = lt.lattice_terms(comp, d)
        (step, _), = terms
        _, unit, idx, _, tails = lt._term_points(step, total, res, 80, 1.0)
        low = adaptive_lower(step, idx, unit, 80, 1, d, tails)
        assert low.q.offset == idx[0]
        assert idx[-1] - idx[0] + 1 <= lmem.level_span(comp, res)
    spans = [lmem.level_span(comp, r) for r in lt.LEVELS]
    assert spans == sorted(spans)  # the finer the level, the longer the blocks
    assert lmem.level_memory_mib(comp, lt.LEVELS[-1]) > lmem.level_memory_mib(comp, lt.LEVELS[0])


def test_memory_budget_stops_refinement(monkeypatch: pytest.MonkeyPatch) -> None:
    comp = [(PoissonSubsampledGaussian(1.0, 0.01), 100)]
    c = compose(comp)
    free = lt.target_epsilon_interval(comp, 1e-5)
    fin = free.inputs["resolution"]
    assert lt.LEVELS.index(lt.Resolution(fin["single"], fin["composed"])) > 4
    assert not any("memory budget" in w for w in free.warnings)
    cap = lmem.level_memory_mib(c, lt.LEVELS[2])
    monkeypatch.setattr(lmem, "MEMORY_BUDGET_MIB", cap)
    capped = lt.target_epsilon_interval(comp, 1e-5)
    res = capped.inputs["resolution"]
    level = lt.LEVELS.index(lt.Resolution(res["single"], res["composed"]))
    assert level <= 2
    assert lmem.level_memory_mib(c, lt.LEVELS[level + 1]) > cap  # it stopped for memory only
    assert any("memory budget" in w for w in capped.warnings)
    # a coarser final level: a wider interval (both are proven, so they intersect)
    assert capped.lower_mpf <= free.upper_mpf and free.lower_mpf <= capped.upper_mpf
    assert capped.upper_mpf - capped.lower_mpf > free.upper_mpf - free.lower_mpf


def test_memory_budget_refuses_coarsest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmem, "MEMORY_BUDGET_MIB", 1.0)
    with pytest.raises(BudgetExceeded, match="memory budget of 1 MiB") as info:
        lt.target_epsilon_interval([(PoissonSubsampledGaussian(1.0, 0.01), 100)], 1e-5)
    assert isinstance(info.value, NotApplicable)
