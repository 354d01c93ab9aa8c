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

__all__ = ["ceil_div_pow2", "floor_div_pow2"]


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
    d = 1 << bits
    # the constant d - 1 in every coefficient: a small-integer list scaled in FLINT (building
    # the list of n big integers in Python took as long as the division)
    return (p + fmpz_poly([1] * n) * fmpz(d - 1)) // fmpz(d)


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
