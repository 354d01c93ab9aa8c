r"""Shuffled / random-allocation DP-SGD: one epoch of M rounds as a dominating pair.

Layer: numeric (numpy/scipy only). See docs/shuffle.md. The pair (van Dijk and Ertan,
arXiv:2605.06259): H0 = N(0, I_M); H1 = one uniformly random round shifted by 1/sigma. The
likelihood ratio is S/M with S a sum of M i.i.d. lognormals (mean 1).
"""

from .hooks import CERTIFY_EXTRA_MESSAGE, certified_shuffle, register_certified_shuffle

__all__ = ["CERTIFY_EXTRA_MESSAGE", "certified_shuffle", "register_certified_shuffle"]
