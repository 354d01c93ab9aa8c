r"""The saddlepoint (tilted-Edgeworth) accountant -- an *estimate*, never a bound.

Exact identity (exponential tilting; Daniels, *Saddlepoint approximations in statistics*, Ann.
Math. Statist. 25, 1954; the saddle-point accountant of Alghamdi, Gomez, Asoodeh, Calmon,
Kosut, Sankar, arXiv:2208.09595, 2022). Let S be the composed PLLR under Q (docs/math.md section 1)
with cumulant generating function :math:`K(t) = \log E_Q e^{tS} = \sum_i m_i K_i(t)`. For any
real t where K is finite, with the tilted law :math:`dQ_t = e^{tS - K(t)} dQ` and
:math:`Z = S - \varepsilon`,

.. math::

    \delta(\varepsilon) = E_Q\bigl[(1 - e^{\varepsilon - S})_+\bigr]
        = e^{K(t) - t\varepsilon}\, E_t\bigl[w_t(Z)\bigr], \qquad
    w_t(z) = e^{-tz}\,(1 - e^{-z})_+ .

Choosing t at the saddlepoint :math:`K'(t) = \varepsilon` centres the tilted law at Z = 0. Its
variance is :math:`s^2 = K''(t)` and its standardized cumulants are
:math:`l_j = K^{(j)}(t)/s^j`. Replacing the law of Z/s by its order-r Edgeworth density
:math:`\varphi(y)[1 + \sum_k c_k He_k(y)]` (Hall, *The Bootstrap and Edgeworth Expansion*, 1992,
Section 2.2; the coefficients c_k come from :func:`numeric.edgeworth.series_coefficients` with
l_j in place of lambda_j; r = 2 gives c_3 = l_3/6, c_4 = l_4/24, c_6 = l_3^2/72) gives

.. math::

    \delta_r(\varepsilon) = e^{K(t) - t\varepsilon}
        \Bigl[D_0 + \sum_k c_k D_k\Bigr],\qquad
    D_k = J_k(a_1) - J_k(a_2),\quad a_1 = ts,\ a_2 = (t+1)s,

    J_k(a) = \int_0^\infty e^{-ay}\varphi(y) He_k(y)\,dy .

The CGF K and its derivatives come from each mechanism
(:meth:`~numeric.mechanisms.Mechanism.cgf_batch`; the formulas are in the mechanism modules),
composed by :mod:`numeric.cgf`; the integrals J_k and D_k from :mod:`numeric.tilted_integrals`
(a recursion for small a, Gauss-Laguerre for a >= 3, the difference D_k taken directly where it
would cancel, negative tilts t in (-1, 0) -- eps below the mean of S -- with the factor
e^{a_1^2/2} carried in log space). At order 0 the method is exact for Gaussian compositions (the
tilted law of a Gaussian is Gaussian).

eps(delta): t parametrizes eps = K'(t) monotonically, so eps(delta) is a 1-D root find in t of
:math:`g(t) = \log\delta_r(t) - \log\delta`. Per pair order: the tilt t_0 of eps = 0
(K'(t_0) = 0, in [-1, 0]); a bracket t_hi from the sequence 1, 3, 7, ..., 2 t_hi + 1 (the first
t_hi with g(t_hi) < 0 and g(2 t_hi + 1) < 0); a 10-point grid scan on [t_0, t_hi] that counts
the down-crossings (more than one root is flagged; the largest is reported); and a safeguarded
Newton refinement on the last sign change (narrowed by the guess tilts of closed-form CGFs,
below, that fall inside that grid cell), started from the root of the cubic Hermite
interpolant of g on the cell (with,
where the two slopes differ by more than a factor 10, the delta Newton step from the lower end
as a second start) and using the analytic slope

.. math::

    \frac{d}{dt}\log\delta_r = -t K''(t) + \frac{F'(t)}{F(t)},\qquad
    F = D_0 + \sum_k c_k D_k,\qquad
    F' = \sum_k c_k' D_k + \sum_{k \ge 0} c_k\Bigl[-(D_{k+1} + k D_{k-1})\,a_1'
        + \bigl(J_{k+1}(a_2) + k J_{k-1}(a_2)\bigr)\,s'\Bigr],

with c_0 = 1, :math:`s' = K'''/(2s)`, :math:`a_1' = s + t s'` (from
:math:`\partial_a J_k(a) = -(J_{k+1}(a) + k J_{k-1}(a))`, since y He_k = He_{k+1} + k He_{k-1}),
:math:`l_j' = K^{(j+1)}/s^j - j l_j s'/s` and c_k' by a central difference of the coefficient
map along l'. The slope only steers the iteration: each Newton batch evaluates the step for
g and the step for :math:`\psi = \delta_r/\delta - 1` (which stays smooth where the factor
F approaches or crosses 0 and log delta_r does not), plus the bisection point when the bracket
stops halving; the bracket keeps its largest sign change. The root is where g itself vanishes
(|g| <= 1e-13, or a Newton step below 1e-11 relative), or -- without evaluating it -- one small
step (below 1e-4 relative in t) from the best point when two estimates of that step agree to
1e-10 relative in t and in eps: the two Newton steps, or an inverse quintic Hermite
interpolant t(g) through the best point and its nearest evaluated neighbours on either side
and the two inverse cubic ones through the best point and one neighbour
(:mod:`numeric.saddlepoint.refine`); eps there is the Taylor polynomial
:math:`K' + K''h + K'''h^2/2 + K''''h^3/6` (h the step) at the best point. A pair order
whose best point fails the diagnostics and whose bracket lies below the other order's final
eps (so the reported max cannot depend on it) is bisected to a 1e-2 relative eps bracket and
stops there, with a warning naming the bracket (its per-direction value carries that
precision only). Both pair orders are accounted for (for the swapped pair, K_S(t) =
K(-1-t)); the max is reported with its direction. Delta parts of ApproxDP terms enter exactly
through GDP Eq. 13, delta = d + (1 - d) delta_pure.

Evaluation: every stage evaluates a *batch* of tilts at once, vectorized over t (the CGF
quadrature, the integrals D_k and the series coefficients; batches of a few tilts do the
per-tilt arithmetic in Python floats, where numpy's per-call overhead would dominate), and the
two pair orders (and, in :func:`saddlepoint_delta`, all eps values) are solved in lockstep, so
one batch serves every search that is still running. The first batch holds the bracket
candidates up to the root guessed by a normal approximation (the root of
:math:`-v t^2/2 - \log(\sqrt{2\pi v}\,t(t+1)) = \log\delta`, v = K''(t_0); where it was
checked, outside the one-big-step regime, the guess was within -7% .. +11% of the root) and
the grids of the one or two bracket ends t_hi it makes likely; when the bracket scan confirms
one of them the grid batch is saved. No grids are guessed beyond t = 63 or in the one-big-step
regime (sum(rate * m) < 10 for Poisson-subsampled steps), where the guess can be off by a factor
50. For closed-form CGFs (new tilts cost no quadrature) five tilts at 0.8 .. 1.2 times the
guess join the first batch: they narrow the grid cell of the root where the grid is coarse
against 1/s (large m). A well-behaved query then takes two batches (bracket and grid, one
refinement step), whatever m is; the bracket, grid and root are exactly those described above,
whether or not they were guessed.

Caching: data that depends on neither m nor delta (the CGF rows at every tilt evaluated, and
the eps = 0 tilt t_0 with K''(t_0) of each pair order, keyed by the mechanisms
and their count *proportions* since K_S/m does not depend on m) is kept in the per-mechanism
cache of :mod:`numeric.cgf`, and the points evaluated for a composition (keyed by its terms
with their counts, and the order) in the same cache, so a query for another delta on the same
composition reuses its grid and bracket points. It holds exact values, not interpolants, so
cached and uncached results agree to rounding; ``cache=False`` bypasses it and
:func:`clear_cgf_cache` empties it (and the mechanisms' own quadrature tables, e.g. the
subsampled Gaussian's rule, which hold exact t-independent node values and are shared by every
query).

Diagnostics (always computed; warnings and ``details``; :mod:`numeric.saddlepoint.diagnostics`):
|l_3| > 0.2 or |l_4| > 0.1 at the saddlepoint, relative disagreement above 1e-3 between orders r
and r - 1 (and, at orders 0 and 1, between orders r and 2), a lattice error estimate
:math:`(h/s)^2/12` above 1e-3 when every term's PLLR has atoms of spacing up to h, for eps(delta)
either delta error moving eps by more than 2e-3 relative (through
:math:`\partial_\varepsilon \log\delta_r`;
:func:`~numeric.saddlepoint.diagnostics.accuracy_diagnostics`), more than one root, a
non-positive tilted-Edgeworth factor (for a scalar eps in delta(eps): NotApplicable), and -- by
regime rather
than by value -- a composition of Poisson-subsampled mechanisms whose expected number of sampled
steps sum(rate * m) is below 10 (the bimodal "one big step" regime, where the benchmark's
certified references are too wide to establish the estimate's accuracy). They fire where the
tilted law is far from normal. The method then does *not* fall back to another method; the
``auto`` method (:mod:`numeric.auto`) falls back to a certified or exact answer.

Where it cannot answer -- a mechanism without a CGF ("use aea"), or a query whose tilted law
degenerates to a point mass (K'' underflows to 0, as for one or a few two-point steps far in
their tail) or whose target is never bracketed -- it raises
:class:`~numeric.errors.NotApplicable` (so ``auto`` can fall through to another method).

Modules: :mod:`~numeric.saddlepoint.points` (the estimate and its slope at a batch of tilts),
:mod:`~numeric.saddlepoint.driver` (the lockstep driver), :mod:`~numeric.saddlepoint.search`
(eps = 0 tilt, bracket and grid), :mod:`~numeric.saddlepoint.refine` (the root refinement),
:mod:`~numeric.saddlepoint.diagnostics` and :mod:`~numeric.saddlepoint.api` (the entry points).
The saddlepoint imports neither :mod:`numeric.methods` nor :mod:`numeric.auto`.
"""

from ..cgf import clear_cgf_cache, pllr_cgf
from .api import saddlepoint_delta, saddlepoint_epsilon

__all__ = ["clear_cgf_cache", "pllr_cgf", "saddlepoint_delta", "saddlepoint_epsilon"]
