r"""The lattice's exact product step in FLINT polynomials against a Kronecker product of numpy
words (issue 16: would another integer representation of the masses pay?).

Run:  python benchmarks/bench_kronecker.py

One step of the certified lattice's squarings (:func:`certify.lattice_grid.mul_cut_rescale`):
the exact square of a mass sequence (B-bit fixed point), the safe cut of its ends and the
coefficient-wise ceiling of :math:`c / 2^B`. Two ways, the same integers (checked):

1. ``fmpz_poly`` (what the lattice does): FLINT's product, the exact cut sums, ``ceil_div_pow2``;
2. Kronecker substitution by hand: the masses as a numpy ``uint64`` array, packed into one big
   integer with byte-aligned slots of :math:`2B + \log_2 n + 1` bits, one FLINT ``fmpz``
   product, unpacked with numpy, the ceiling taken on the 64-bit words (vectorized: a shift, an
   or, a compare). The cut is left out of this column, which only flatters it.

Also printed: the conversions between the two representations (a lattice kept in FLINT that
called the second way for its products would pay them on every product). Best of 7, CPU
seconds of one core, Gaussian-shaped masses.
"""

from __future__ import annotations

import time

import numpy as np
from flint import fmpz, fmpz_poly

from certify.intpoly import ceil_div_pow2
from certify.lattice_grid import cut_sums


def _best(fn, repeat: int = 7) -> float:
    out = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out = min(out, time.process_time() - t0)
    return out


def _pack(words: np.ndarray, slot_bytes: int) -> fmpz:
    """One integer holding ``words[i]`` at bit ``8 * slot_bytes * i`` (little-endian)."""
    buf = np.zeros((words.size, slot_bytes), dtype=np.uint8)
    buf[:, :8] = words.view(np.uint8).reshape(words.size, 8)
    return fmpz(int.from_bytes(buf.tobytes(), "little"))


def kronecker_square_ceil(words: np.ndarray, bits: int) -> np.ndarray:
    r"""Coefficient-wise :math:`\lceil c_k / 2^{bits} \rceil` of the exact square of the
    sequence ``words`` (``bits`` < 64, the words summing to at most 2^bits), by one big-integer
    product."""
    n = 2 * words.size - 1
    slot_bytes = (2 * bits + words.size.bit_length() + 1 + 7) // 8
    if slot_bytes > 24:
        raise ValueError(f"bits={bits} needs slots over 24 bytes (three words)")
    packed = _pack(words, slot_bytes)
    raw = int(packed * packed).to_bytes(n * slot_bytes, "little")
    limbs = np.zeros((n, 24), dtype=np.uint8)
    limbs[:, :slot_bytes] = np.frombuffer(raw, dtype=np.uint8).reshape(n, slot_bytes)
    lo, hi, top = limbs.view(np.uint64).reshape(n, 3).T
    if top.any() or (hi >> np.uint64(bits)).any():  # c < 2^(64 + bits): masses sum to 2^bits
        raise ArithmeticError("a product coefficient above 2^(64 + bits)")
    shift = np.uint64(bits)
    floor = (lo >> shift) | (hi << np.uint64(64 - bits))
    return floor + ((lo & np.uint64((1 << bits) - 1)) != 0)


def _fmpz_poly_step(p: fmpz_poly, bits: int) -> fmpz_poly:
    prod = p * p
    low, top, _, _ = cut_sums(prod, 1 << bits)
    if top + 1 < prod.length():
        prod = prod.truncate(top + 1)
    if low > 0:
        prod = prod.right_shift(low)
    return ceil_div_pow2(prod, bits)


def _row(n: int, bits: int) -> str:
    """One table row: both ways on n Gaussian-shaped masses at ``bits``, checked equal."""
    x = np.exp(-0.5 * ((np.arange(n) - n / 2) / (n / 6)) ** 2)
    words = (x / x.sum() * 2.0 ** bits).astype(np.uint64)
    poly = fmpz_poly(words.tolist())
    want = np.array([int(c) for c in ceil_div_pow2(poly * poly, bits).coeffs()], dtype=np.uint64)
    got = kronecker_square_ceil(words, bits)
    if not np.array_equal(want, got[:want.size]) or got[want.size:].any():
        raise ArithmeticError(f"the two ways differ at n={n}, B={bits}")
    packed = _pack(words, (2 * bits + n.bit_length() + 1 + 7) // 8)
    t_poly = _best(lambda: _fmpz_poly_step(poly, bits))
    t_kron = _best(lambda: kronecker_square_ceil(words, bits))
    t_prod = _best(lambda: packed * packed)
    t_out = _best(lambda: np.array([int(c) for c in poly.coeffs()], dtype=np.uint64))
    t_in = _best(lambda: fmpz_poly(words.tolist()))
    return (f"{n:>7} {bits:>3} {1e3 * t_poly:15.3f} {1e3 * t_kron:16.3f} {1e3 * t_prod:15.3f} "
            f"{1e3 * t_out:12.3f} {1e3 * t_in:12.3f}")


def main() -> None:
    print("exact square + cut + ceiling of one mass sequence (ms, best of 7, one core)")
    print(f"{'n':>7} {'B':>3} {'fmpz_poly step':>15} {'Kronecker/numpy':>16} "
          f"{'of it: product':>15} {'poly->numpy':>12} {'numpy->poly':>12}")
    for n, bits in ((1600, 60), (4000, 60), (20000, 60)):
        print(_row(n, bits))


if __name__ == "__main__":
    main()
