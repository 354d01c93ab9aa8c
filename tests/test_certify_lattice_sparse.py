"""The exact banded square of sparse single-step blocks (certify.intpoly.square_sparse_tail).

Oracle: FLINT's dense product ``p * p`` (exact integer arithmetic, an independent code path);
the banded square must equal it coefficient for coefficient on every shape it accepts, and
fall back to it on the others. The shapes are those of the adaptive single-step lattice at
rate 0.001 (issue 16): a dense head with geometric bands, a long final band of points 4096
units apart and up to four stray points after it, or the mirror image (an initial band).
"""

from __future__ import annotations

import random

import pytest

flint = pytest.importorskip("flint")
fmpz_poly = flint.fmpz_poly

from certify.intpoly import far_band, square_sparse_tail  # noqa: E402


def _block(rng: random.Random, head: int, gap: int, count: int, strays: int,
           bits: int = 80) -> list[int]:
    """A dense head of ``head`` units with geometric bands, ``count`` points ``gap`` apart
    after it, then ``strays`` points at an odd spacing (the adaptive lattice's last points)."""
    idx = list(range(0, head // 4))  # dense run
    i = head // 4
    g = 2
    while i < head:
        idx.append(i)
        i += g
        if len(idx) % 16 == 0:
            g *= 2
    start = head + (-head) % gap
    idx += [start + gap * k for k in range(count)]
    last = idx[-1]
    idx += [last + 2823 * (s + 1) for s in range(strays)]
    cs = [0] * (idx[-1] + 1)
    for j in idx:
        cs[j] = rng.getrandbits(rng.randint(1, bits)) or 1
    return cs


@pytest.mark.parametrize("strays", [0, 1, 2, 4])
@pytest.mark.parametrize("gap", [64, 4096, 8192])
def test_final_band_square_is_exact(strays: int, gap: int) -> None:
    rng = random.Random(1000 * strays + gap)
    cs = _block(rng, head=20_000, gap=gap, count=12 if gap > 1000 else 60, strays=strays)
    p = fmpz_poly(cs)
    nz = [i for i, c in enumerate(cs) if c]
    band = far_band(nz)
    assert band is not None and band[0] > 0 and band[1] == gap  # the banded path is taken
    assert square_sparse_tail(p) == p * p


@pytest.mark.parametrize("gap", [64, 8192])
def test_initial_band_square_is_exact(gap: int) -> None:
    rng = random.Random(gap)
    cs = _block(rng, head=20_000, gap=gap, count=12 if gap > 1000 else 60, strays=0)[::-1]
    p = fmpz_poly(cs)
    nz = [i for i, c in enumerate(cs) if c]
    band = far_band(nz)
    assert band is not None and band[0] == 0 and band[1] == gap
    assert square_sparse_tail(p) == p * p


def test_nested_bands_and_zero_head() -> None:
    rng = random.Random(7)
    # a head that itself has a far band, and a block whose head is empty (band from index 0)
    inner = _block(rng, head=5_000, gap=512, count=70, strays=1)
    cs = inner + [0] * (4096 - len(inner) % 4096)
    cs += [0] * 4095
    for _ in range(10):
        cs += [rng.getrandbits(60) + 1] + [0] * 4095
    cs = cs[:len(cs) - 4095]
    p = fmpz_poly(cs)
    assert far_band([i for i, c in enumerate(cs) if c]) is not None
    assert square_sparse_tail(p) == p * p
    band = [0] * 70_000
    for k in range(0, 70_000, 1000):
        band[k] = rng.getrandbits(70) + 1
    q = fmpz_poly(band)
    assert square_sparse_tail(q) == q * q


def test_fallbacks_are_the_dense_square() -> None:
    rng = random.Random(3)
    dense = fmpz_poly([rng.getrandbits(80) for _ in range(40_000)])
    assert square_sparse_tail(dense) == dense * dense
    short = fmpz_poly(_block(rng, head=2_000, gap=256, count=20, strays=2))
    assert short.length() < 1 << 15
    assert square_sparse_tail(short) == short * short
    # sparse but irregular (no run of equal gaps): no band, dense square
    cs = [0] * 50_000
    for k in rng.sample(range(50_000), 300):
        cs[k] = rng.getrandbits(40) + 1
    cs[-1] = 1
    p = fmpz_poly(cs)
    assert far_band([i for i, c in enumerate(cs) if c]) is None
    assert square_sparse_tail(p) == p * p
    assert square_sparse_tail(fmpz_poly(0)) == fmpz_poly(0)


def test_random_shapes_exact() -> None:
    rng = random.Random(11)
    for trial in range(4):
        head = rng.randint(1, 30_000)
        gap = rng.choice([64, 100, 1000, 2048])
        cs = _block(rng, head=head, gap=gap, count=rng.randint(8, 20),
                    strays=rng.randint(0, 4), bits=rng.choice([8, 64, 160]))
        if trial % 2:
            cs = cs[::-1]
        p = fmpz_poly(cs)
        assert square_sparse_tail(p) == p * p, trial
