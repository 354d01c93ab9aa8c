r"""Directed rescaling of integer polynomials (the lattices' fixed-point masses).

The lattice measures (:mod:`certify.lattice_measure`, :mod:`certify.lattice_lower`,
:mod:`certify.shuffle`) hold masses as integers in units of :math:`2^{-B}`; a product of two
measures has units :math:`2^{-2B}` and is rescaled coefficient-wise, up (an upper end: every mass
rounded up) or down (a lower end). Masses are non-negative, so

.. math:: \lceil c / 2^B \rceil = \lfloor (c + 2^B - 1) / 2^B \rfloor, \qquad c \ge 0,

and python-flint's ``fmpz_poly // fmpz`` is the coefficient-wise floor for non-negative
coefficients. (It truncates toward zero, so the idiom ``-((-p) // d)`` is *not* a ceiling: for
``0 < c < d`` it gives 0. Found by the shuffle work; :func:`ceil_div_pow2` replaces it.)
"""

from __future__ import annotations

from flint import fmpz, fmpz_poly

__all__ = ["ceil_div_pow2", "decimate", "floor_div_pow2"]


def ceil_div_pow2(p: fmpz_poly, bits: int) -> fmpz_poly:
    r"""Coefficient-wise :math:`\lceil c / 2^{bits} \rceil` of a polynomial, coefficients >= 0.

    Args:
        p: Integer polynomial with non-negative coefficients (masses).
        bits: The shift, >= 0.

    Returns:
        The rescaled polynomial, every coefficient rounded up.
    """
    n = p.length()
    if n == 0 or bits == 0:
        return p
    d = fmpz(1 << bits)
    # the constant d - 1 is spread by a scalar product in C: a list of n big Python ints
    # converted one by one costs ~10x the rescaling itself (measured, n = 5000, bits = 80)
    return (p + fmpz_poly([1] * n) * (d - 1)) // d


def floor_div_pow2(p: fmpz_poly, bits: int) -> fmpz_poly:
    r"""Coefficient-wise :math:`\lfloor c / 2^{bits} \rfloor` of a polynomial, coefficients >= 0.

    Args:
        p: Integer polynomial with non-negative coefficients (masses).
        bits: The shift, >= 0.

    Returns:
        The rescaled polynomial, every coefficient rounded down.
    """
    if bits == 0:
        return p
    return p // fmpz(1 << bits)


def decimate(p: fmpz_poly, r: int, shift: int = 0) -> list[fmpz_poly]:
    r"""The ``r`` residue classes of the coefficients of :math:`x^{shift} p`.

    Args:
        p: Integer polynomial.
        r: Number of classes, >= 1.
        shift: Zero coefficients put in front, 0 <= shift < r.

    Returns:
        ``[P_0, ..., P_{r-1}]`` with :math:`P_j = \sum_J c_{rJ + j - shift} x^J` (coefficients of
        negative index are 0): exact, the same coefficients regrouped.

    Raises:
        ValueError: on r < 1 or a shift outside [0, r).
    """
    if not (isinstance(r, int) and r >= 1):
        raise ValueError(f"r must be an integer >= 1, got {r!r}")
    if not (isinstance(shift, int) and 0 <= shift < r):
        raise ValueError(f"shift must be an integer in [0, r), got {shift!r}")
    cs = [fmpz(0)] * shift + p.coeffs()
    return [fmpz_poly(cs[j::r]) for j in range(r)]
