r"""Certified bounds for random allocation ("shuffled" DP-SGD): one epoch and E epochs.

The pair (van Dijk and Ertan, arXiv:2605.06259, Sec. 3): one epoch of M rounds; P = H0 all
rounds N(0, 1), Q = H1 one uniformly random round N(1/sigma, 1); likelihood ratio S/M with
S = sum of M i.i.d. lognormals :math:`Y = e^{X/\sigma - 1/(2\sigma^2)}`, X ~ N(0, 1) under P.

* :mod:`certify.shuffle.law`: the law of S enclosed in convex order (an upper and a lower
  fixed-point lattice law), built by M-fold convolution with re-gridding;
* :mod:`certify.shuffle.one_epoch`: certified delta(eps) in both pair orders and TV = delta(0);
* :mod:`certify.shuffle.step`: the one-epoch pair as a lattice step (multi-epoch upper end through
  the connect-the-dots lattice of :mod:`certify.lattice`);
* :mod:`certify.shuffle.multi_epoch`: E epochs, both ends, and the numeric hook's providers.

The proofs are in each module's docstring; docs/shuffle-certified.md summarizes them in words.
"""

from __future__ import annotations

__all__: list[str] = []
