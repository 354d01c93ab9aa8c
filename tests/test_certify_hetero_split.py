"""certify.lattice_hetero with fine-core / coarse-tail laws (HETERO_SPLIT_TAILS): soundness of
the split multi-exponentiation against exact cases.

Oracles (independent of the code under test): exact integer convolution of the single-step
lattice measures (Python integers, hockey-stick curves in mpmath at 40 digits) for the split
multi-exponentiation itself; the GDP closed form in mpmath for compositions of Gaussians with
distinct noise levels, mu = sqrt(sum_i c_i / sigma_i^2) (Dong, Roth, Su 2022, Cor. 2.13 and
3.3; a Poisson-subsampled Gaussian at rate 1 is the Gaussian). The splits are forced (a small
MIN_SPAN and a large split mass) so that the coarse tails really carry mass.
"""

from __future__ import annotations

import math
import random

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from flint import arb, fmpz_poly  # noqa: E402
from lattice_contract import exact_hockey_stick, exact_lattice_composition, gdp_delta  # noqa: E402

from certify import lattice_hetero, lattice_split, lattice_target  # noqa: E402
from certify.engine import workprec  # noqa: E402
from certify.lattice_adaptive import Resolution  # noqa: E402
from certify.lattice_hetero import hetero_ops, multi_power  # noqa: E402
from certify.lattice_measure import LatticePLD  # noqa: E402
from certify.lattice_split import SplitPLD, split_ops, split_upper  # noqa: E402
from numeric.composition import compose  # noqa: E402
from numeric.mechanisms import PoissonSubsampledGaussian  # noqa: E402

BITS = 80


def _random_step(rng: random.Random, h: float) -> LatticePLD:
    n = rng.randint(2, 12)
    cuts = sorted(rng.randrange(1, 1 << BITS) for _ in range(n - 1))
    masses = [b - a for a, b in zip([0, *cuts], [*cuts, 1 << BITS], strict=True)]
    # a few atoms far out with small mass: they go to the coarse tails
    far = [0] * rng.randint(5, 40) + [rng.randrange(1 << 50)]
    masses[-1] -= far[-1]
    return LatticePLD(h, BITS, rng.randint(-6, 3), fmpz_poly(masses + far), 0, 1, "P||Q",
                      n + 1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("per_sigma", [2, 64])
def test_split_multi_power_dominates_the_exact_composition(seed, per_sigma, monkeypatch):
    monkeypatch.setattr(lattice_split, "MIN_SPAN", 2)  # split every law
    rng = random.Random(100 + seed)
    h = 2.0**-5
    steps = [_random_step(rng, h) for _ in range(rng.randint(2, 4))]
    counts = [rng.randint(1, 5) for _ in steps]
    tail_mass = 1e-3
    leaves = [split_upper(s, ratio=4, tail_mass=tail_mass) for s in steps]
    assert any(x.tail.coeffs.length() for x in leaves)  # the coarse tails are used
    out = multi_power([(x, c, 0.01 * (i + 1)) for i, (x, c) in
                       enumerate(zip(leaves, counts, strict=True))], per_sigma,
                      split_ops(tail_mass))
    assert isinstance(out, SplitPLD) and out.count == sum(counts)
    assert out.total >= 1 << BITS  # mass only rounded up
    law, total = exact_lattice_composition(list(zip(steps, counts, strict=True)))
    with mp.workdps(40), workprec(200):
        for eps in (-0.3, 0.0, 0.05, 0.2, 0.5, 1.0, 2.0):
            want = exact_hockey_stick(law, total, mp.mpf(eps), BITS)
            got = out.delta_upper(arb(eps))
            assert mp.mpf(got.upper().str(40, radius=False)) >= want * (1 - mp.mpf(10) ** -30)


def test_hetero_ops_are_the_split_ones_by_default():
    up, low = hetero_ops(1e-10)
    assert lattice_hetero.HETERO_SPLIT_TAILS
    assert up is not lattice_hetero.UPPER_OPS and low is not lattice_hetero.LOWER_OPS_RENORM


def test_hetero_ops_reject_a_bad_tail_mass():
    with pytest.raises(ValueError, match="tail_mass"):
        hetero_ops(0.7)


# --- end to end: rate-1 subsampled Gaussians (GDP) with forced splits -----------------------

SIGMAS = (0.9, 1.2, 1.6, 2.5)
COUNTS = (3, 6, 2, 5)
MU = math.sqrt(sum(c / s**2 for s, c in zip(SIGMAS, COUNTS, strict=True)))  # GDP Cor. 3.3


def _comp():
    return [(PoissonSubsampledGaussian(s, 1.0), c) for s, c in zip(SIGMAS, COUNTS, strict=True)]


def _force_split(monkeypatch, tail_mass: float) -> None:
    monkeypatch.setattr(lattice_hetero, "HETERO_MIN_SPAN", 256)
    monkeypatch.setattr(lattice_target, "tail_mass_for", lambda delta: tail_mass)


@pytest.mark.parametrize("tail_mass", [1e-9, 1e-3])
def test_forced_split_blocks_carry_tails_and_bracket_gdp(tail_mass, monkeypatch):
    _force_split(monkeypatch, tail_mass)
    comp = compose(_comp())
    d = comp.directions[0]
    one_term = tail_mass / lattice_hetero.HETERO_TAIL_SCALE  # _law_multi scales it up
    up, low, _ = lattice_target._law_multi(comp, Resolution(8, 16), BITS, d, True, True,
                                          one_term)
    assert isinstance(up, SplitPLD) and up.tail.coeffs.length() > 0
    assert low.tail is not None and low.tail.q.coeffs.length() > 0
    with workprec(200):
        for eps in (0.5, 2.0, 4.0):
            want = gdp_delta(MU, eps)
            hi = mp.mpf(up.delta_upper(arb(eps)).upper().str(40, radius=False))
            lo = mp.mpf(low.delta_lower(arb(eps))[0].lower().str(40, radius=False))
            assert lo <= want <= hi
            assert hi - lo <= 0.05 * want  # tight as well as sound at this coarse level


def test_forced_split_epsilon_interval_brackets_gdp(monkeypatch):
    _force_split(monkeypatch, 1e-4)
    b = lattice_target.target_epsilon_interval(_comp(), 1e-6, rel_width=1e-3)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert gdp_delta(MU, lo) >= 1e-6 >= gdp_delta(MU, hi)
    assert hi - lo <= 1e-3 * hi


@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_forced_split_delta_interval_brackets_gdp(eps, monkeypatch):
    _force_split(monkeypatch, 1e-4)
    b = lattice_target.target_delta_interval(_comp(), eps, rel_width=1e-3)
    want = gdp_delta(MU, eps)
    assert b.lower_mpf <= want <= b.upper_mpf
    assert b.upper_mpf - b.lower_mpf <= 1e-3 * b.upper_mpf


def test_split_and_one_lattice_intervals_agree_on_subsampled_dp_sgd(monkeypatch):
    """Both are certified enclosures of the same eps: they must intersect (rate 0.01, three
    noise levels x 50 steps; the split laws at their default split mass)."""
    comp = [(PoissonSubsampledGaussian(s, 0.01), 50) for s in (0.8, 1.1, 1.5)]
    split = lattice_target.target_epsilon_interval(comp, 1e-5, rel_width=1e-3)
    monkeypatch.setattr(lattice_hetero, "HETERO_SPLIT_TAILS", False)
    lattice_target._term_points.cache_clear()
    one = lattice_target.target_epsilon_interval(comp, 1e-5, rel_width=1e-3)
    assert split.lower_mpf <= one.upper_mpf and one.lower_mpf <= split.upper_mpf
    assert split.upper_mpf - split.lower_mpf <= 1e-3 * split.upper_mpf
