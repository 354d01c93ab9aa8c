"""Fuzz findings shared by several test modules (inputs and their independent references)."""

from __future__ import annotations

from numeric.mechanisms import ApproxDP, RandomizedResponse

# Fuzz draw 391 (seed 4242): 8 approx-DP steps and one randomized response at order 1. The
# series of orders 0 and 1 needs no l_4, so l_4 = -1.27 went unflagged, the lattice note alone
# added "diagnostics fired" to the warnings while details["diagnostics"] stayed empty, and auto
# accepted 0.1615 (11% low). Reference: 1 - (1 - d0)^8 (1 - delta_pure), delta_pure by a
# binomial enumeration of the 9 x 2 privacy-loss atoms in mpmath at 50 digits:
# 0.18199616346396414942...
DRAW_391 = [(ApproxDP(0.0674189781237784, 5.668045708132865e-06), 8),
            (RandomizedResponse(0.37643948645442393), 1)]
EPS_391 = 0.013569967082818307
REF_391 = 0.18199616346396414942
