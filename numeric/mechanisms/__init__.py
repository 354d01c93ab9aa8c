"""Built-in mechanisms (dominating pairs) and the mechanism registry.

Layer: numeric (numpy/scipy only). Each mechanism lives in its own module and registers itself.
"""

from .base import (
    DIRECTION_PQ,
    DIRECTION_QP,
    MECHANISMS,
    Mechanism,
    MechanismEntry,
    PLLRCumulants,
    register_mechanism,
)
from .gaussian import Gaussian
from .laplace import Laplace
from .random_allocation import RandomAllocation
from .randomized_response import ApproxDP, RandomizedResponse
from .subsampled_gaussian import PoissonSubsampledGaussian

__all__ = [
    "DIRECTION_PQ",
    "DIRECTION_QP",
    "MECHANISMS",
    "ApproxDP",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "MechanismEntry",
    "PLLRCumulants",
    "PoissonSubsampledGaussian",
    "RandomAllocation",
    "RandomizedResponse",
    "register_mechanism",
]
