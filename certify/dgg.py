r"""Derumigny-Girard-Guyonvarch bounds on the distance to the first-order Edgeworth expansion.

Derumigny, Girard, Guyonvarch, *Explicit non-asymptotic bounds for the distance to the
first-order Edgeworth expansion*, Sankhya A 86 (2024) 261-336, arXiv:2101.05780 (DGG):

* :func:`dgg_moment_bound`: Theorem 2.1 with Appendix Theorems A.2 (non-i.i.d.) and A.3
  (i.i.d.), moment conditions only, rate n^{-1/2};
* :func:`dgg_continuity_bound_iid`: Theorem 3.1 with Appendix Theorem A.5 (i.i.d., rate 1/n)
  under a characteristic-function condition.

Both are implemented from the project's transcription (DGG's appendices (docs/math.md section 3)),
which reproduces the authors' reference implementation (R package BoundEdgeworth) to 10 digits but
has not been checked line by line against the paper (certify/DGG_VERIFICATION.md). All arithmetic is
Arb ball arithmetic; the callers (:mod:`certify.eeai_bounds`) use the upper end of the returned
ball.
"""

from __future__ import annotations

from flint import arb

from .engine import UndecidableError
from .special import upper_end

__all__ = [
    "CPSI",
    "T1_STAR",
    "ball_min",
    "dgg_continuity_bound_iid",
    "dgg_continuity_bound_noniid",
    "dgg_moment_bound",
]

CPSI = "1.0253"
"""DGG's constant C_psi (DGG's appendices)."""
_CHI1 = "0.09916191"
T1_STAR = "0.6359658"
"""DGG's t_1^* (DGG's appendices)."""


def _a(x) -> arb:
    return x if isinstance(x, arb) else arb(x)


_GAMMA_ASYMPTOTIC = 512


def _gamma_upper(s, x: arb) -> arb:
    r"""Upper incomplete gamma Gamma(s, x), for real s <= 2.

    For large x (where Arb's evaluation is slow and the value negligible) the enclosure is
    :math:`[0, x^{s-1}e^{-x}/(1 - (s-1)/x)]` (s > 1) or :math:`[0, x^{s-1}e^{-x}]` (s <= 1),
    from :math:`\Gamma(s, x) = x^{s-1}e^{-x}\int_0^\infty (1 + u/x)^{s-1}e^{-u}du` and
    :math:`(1 + u/x)^{s-1} \le e^{(s-1)u/x}`.
    """
    s, x = _a(s), _a(x)
    if x > _GAMMA_ASYMPTOTIC:
        head = (-x).exp() * (x.log() * (s - 1)).exp()
        if s > 1:
            head = head / (1 - (s - 1) / x)
        return arb(0).union(upper_end(head))
    return x.gamma_upper(s)


def _gamma_star(s: arb, x: arb, kind: int) -> arb:
    r"""gamma*(s, x) = int_0^x |v|^{s-1} e^{-v} dv (DGG, Appendix C), s in {3/2, 2}.

    For x < 0 it is :math:`-\int_0^{|x|} u^{s-1} e^u du`: with y = |x|, -((y - 1)e^y + 1) for
    s = 2 and :math:`-(\sqrt y e^y - (\sqrt\pi/2)\operatorname{erfi}(\sqrt y))` for s = 3/2.
    """
    if x > 0:
        return x.gamma_lower(s)
    if x.is_zero():
        return arb(0)
    if not x < 0:
        raise UndecidableError(f"sign of {x} undecided in gamma*")
    y = -x
    if kind == 4:
        return -((y - 1) * y.exp() + 1)
    return -(y.sqrt() * y.exp() - arb.pi().sqrt() / 2 * y.sqrt().erfi())


def ball_min(a: arb, b: arb) -> arb:
    """min of two balls; undecided overlaps give a ball containing both candidates' min."""
    if a < b:
        return a
    if a >= b:
        return b
    return arb(min(a.lower(), b.lower())).union(arb(min(a.upper(), b.upper())))


def _dgg_common(n: arb, K4: arb, lam: arb, eps: arb, skew: int) -> dict[str, arb]:
    """The auxiliary quantities P1, e1, P2, e2, e3, Rbar_inid, Rbar_iid of DGG's appendices."""
    pi = arb.pi()
    cpsi = arb(CPSI)
    al = abs(lam)
    sq2 = arb(2).sqrt()
    D = (1 - 3 * eps) ** 2
    P1 = (144 + 48 * eps + 4 * eps**2) / 576 + skew * (
        96 * (2 * eps).sqrt() + 32 * eps + 16 * sq2 * eps * eps.sqrt()) / 576
    e1 = (eps**2 * (arb(1) / 6 + 2 * P1 / D)).exp()
    kn = K4 / n
    P2 = 48 * eps * kn.sqrt() + 4 * eps**2 * kn + skew * (
        96 * (2 * eps).sqrt() * al / (K4 * n).root(4)
        + 32 * eps * lam * lam / (K4 * n).sqrt()
        + 16 * sq2 * K4.root(4) * al * eps * eps.sqrt() / (n * n.sqrt()).sqrt())
    e2 = (eps**2 * (arb(1) / 6 + 1 / (2 * D) + 2 * P2 / (576 * D))).exp()
    e3 = (eps**2 / 6 + eps**2 / (4 * D)).exp()
    g72 = (arb(7) / 2).gamma()
    g92 = (arb(9) / 2).gamma()
    p52 = 4 * sq2  # 2^{5/2}
    p72 = 8 * sq2  # 2^{7/2}
    r_inid = (cpsi / (48 * pi * D) * kn * kn.sqrt() * 48
              + cpsi / (1152 * pi * D) * kn**2 * 384
              + cpsi * e1 / (2 * pi) * kn**2 * (arb(1) / 24 + P1 / (2 * D)) ** 2 * 384
              + skew * (cpsi / (12 * pi * D) * kn * kn.root(4) * p52 * g72
                        + cpsi / (72 * pi * D) * kn * kn.sqrt() * 48
                        + cpsi / (144 * pi * D) * kn * kn.root(4) ** 3 * p72 * g92
                        + cpsi * e1 / (6 * pi) * al * K4 / (n * n.sqrt())
                        * (arb(1) / 24 + P1 / (2 * D)) * 384))
    B = K4 / 12 + 1 / (4 * D) + P2 / (576 * D)
    r_iid = (cpsi / (2 * pi * D) * K4 / (24 * n**2) * 48
             + cpsi / (2 * pi * D) * K4**2 / (576 * n**3) * 384
             + cpsi / pi * e2 / (8 * n**2) * B * 384
             + skew * (cpsi / (2 * pi * D) * al / (6 * n * n.sqrt()) * sq2
                       * (arb(3) / 2).gamma()
                       + cpsi / (2 * pi * D) * lam * lam / (36 * n**2) * 48
                       + cpsi / (2 * pi * D) * K4 * al / (72 * n**2 * n.sqrt()) * p72 * g92
                       + cpsi / pi * e2 * al / (12 * n * n.sqrt()) * B * p72 * g92))
    return {"D": D, "P1": P1, "e1": e1, "P2": P2, "e2": e2, "e3": e3, "r_inid": r_inid,
            "r_iid": r_iid}


def dgg_moment_bound(
    n: int,
    K4,
    K3,
    K3tilde,
    lambda3,
    *,
    iid: bool,
    skewed: bool = True,
    eps="0.1",
) -> arb:
    r"""DGG moment-only bound on sup_x |P(S_n <= x) - Phi(x) - lambda3/(6 sqrt n)(1-x^2)phi(x)|.

    Derumigny, Girard, Guyonvarch (Sankhya A 2024, arXiv:2101.05780), Theorem 2.1 with Appendix
    Theorems A.2 (non-i.i.d.) and A.3 (i.i.d.); rate n^{-1/2}, moment conditions only:

    .. math::

        \delta_n = \frac{0.1995\tilde K_3}{\sqrt n}
          + \frac{0.031\tilde K_3^2 + 0.327 K_4 (\frac1{12} + \frac1{4(1-3\epsilon)^2})}{n}
          + \frac{0.054|\lambda_3|\tilde K_3 + 0.037\, e_{3|1}\lambda_3^2}{n} + r_{1,n},

    with the remainder r_{1,n} and auxiliary functions transcribed in the DGG appendices
    (docs/math.md section 3). The bound is **not monotone in every argument** (e.g. it can decrease
    as K3tilde grows, see certify/DGG_VERIFICATION.md): pass Arb balls that *contain* the true
    moments (as the EEAI does), not mere upper bounds; the upper end of the resulting ball is then a
    valid D.

    Args:
        n: Number of summands.
        K4: Ball containing (1/n) sum E X_i^4 / Bbar_n^4.
        K3: Ball containing (1/n) sum E|X_i|^3 / Bbar_n^3.
        K3tilde: Ball containing K3 + (1/n) sum E|X_i| sigma_i^2 / Bbar_n^3.
        lambda3: (1/n) sum E X_i^3 / Bbar_n^3 (its modulus enters).
        iid: Identically distributed summands (Theorem A.3) or not (Theorem A.2).
        skewed: False only if every summand has zero skewness.
        eps: Free parameter in (0, 1/3).

    Returns:
        An Arb ball containing the bound's value (use its upper end).
    """
    n_a, K4, K3, K3t, lam, eps = (_a(n), _a(K4), _a(K3), _a(K3tilde), _a(lambda3), _a(eps))
    if not (eps > 0 and eps < arb(1) / 3):
        raise ValueError("the DGG parameter eps must lie in (0, 1/3)")
    skew, lam, al, pi, cpsi, c, D, sn = _prologue(n_a, K4, lam, eps, skewed)
    c0 = (arb("14.1961") + arb("67.0415")) * K3t**4 / (16 * pi**4 * n_a**2)
    g = ball_min((2 * eps).sqrt() * (n_a / K4).root(4), 2 * sn / K3t)
    h = arb(3) / 2
    hi = 2 * sn / K3t
    if iid:
        if skewed:
            r1 = (c0 + arb("4.3394") * al * K3t**3 / (8 * pi**3 * n_a**2) + c["r_iid"]
                  + arb("1.306") * (c["e2"] - c["e3"]) * lam * lam / (36 * n_a)
                  + al * (_gamma_upper(h, g) - _gamma_upper(h, hi)) / sn
                  + cpsi * 4 * arb(2).sqrt() * K3 / (3 * pi * sn)
                  * (_gamma_upper(h, g**2 / 8) - _gamma_upper(h, n_a / (2 * K3t**2))))
        else:
            r1 = (c0 + c["r_iid"] + 16 * cpsi * K4 / (3 * pi * n_a)
                  * (_gamma_upper(2, g**2 / 8) - _gamma_upper(2, n_a / (2 * K3t**2))))
    else:
        delta = (1 - 4 * arb(_CHI1) - (K4 / n_a).sqrt()) / 2
        m = ball_min(eps * (n_a / K4).sqrt(), 2 * n_a / K3t**2)

        def brace(p: int) -> arb:
            s = arb(p) / 2
            return (abs(delta) ** (-s) / 2
                    * abs(_gamma_star(s, 4 * delta * n_a / K3t**2, p)
                          - _gamma_star(s, 2 * delta * m, p)))

        if skewed:
            r1 = (c0 + arb("4.3394") * al * K3t**3 / (8 * pi**3 * n_a**2) + c["r_inid"]
                  + al * (_gamma_upper(h, g) - _gamma_upper(h, hi)) / sn
                  + cpsi * K3 * brace(3) / (6 * pi * sn))
        else:
            r1 = c0 + c["r_inid"] + cpsi * K4 * brace(4) / (6 * pi * n_a)
    return (arb("0.1995") * K3t / sn
            + (arb("0.031") * K3t**2 + arb("0.327") * K4 * (arb(1) / 12 + 1 / (4 * D))) / n_a
            + skew * (arb("0.054") * al * K3t
                      + arb("0.037") * (c["e3"] if iid else c["e1"]) * lam * lam) / n_a
            + r1)


def _prologue(n_a: arb, K4: arb, lam: arb, eps: arb, skewed: bool):
    """The terms every DGG bound starts from: the skew switch (0 or 1), lambda_3 (0 for unskewed
    summands), |lambda_3|, pi, C_psi, :func:`_dgg_common` and its D, sqrt(n)."""
    skew = 1 if skewed else 0
    if not skewed:
        lam = arb(0)
    c = _dgg_common(n_a, K4, lam, eps, skew)
    return skew, lam, abs(lam), arb.pi(), arb(CPSI), c, c["D"], n_a.sqrt()


def _cf_terms(n_a: arb, K3t: arb, al: arb) -> tuple[arb, arb, arb, arb, arb]:
    """c1..c4 and J of DGG's Theorem 3.1 remainders r_{2,n} (appendix, shared by A.4 and A.5)."""
    pi = arb.pi()
    cpsi = arb(CPSI)
    t1 = arb(T1_STAR)
    sn = n_a.sqrt()
    c1 = arb("1.2533") * K3t**4 / (16 * pi**4 * n_a**2)
    c2 = arb("0.3334") * K3t**4 * al / (16 * pi**4 * n_a**2 * sn)
    c3 = arb("14.1961") * K3t**16 / ((2 * pi) ** 16 * n_a**8)
    c4 = arb("4.3394") * K3t**12 * al / ((2 * pi) ** 12 * n_a**6 * sn)
    T = 16 * pi**4 * n_a**2 / K3t**4
    sc = 1 - 4 * pi * arb(_CHI1) * t1

    def e1(x: arb) -> arb:
        return _gamma_upper(0, x)

    J = (cpsi / pi * abs(e1(ball_min(T.sqrt(), T**2) * sc / (2 * pi**2))
                         - e1(ball_min(t1**2 * T.sqrt(), T**2 / pi**2) * sc / 2))
         + cpsi / pi * abs(e1(ball_min(T.sqrt(), T**2) / (2 * pi**2)) - e1(T**2 / (2 * pi**2))))
    return c1, c2, c3, c4, J


def dgg_continuity_bound_iid(
    n: int,
    K4,
    K3,
    K3tilde,
    lambda3,
    kappa,
    *,
    skewed: bool = True,
    eps="0.1",
) -> arb:
    r"""DGG bound under the characteristic-function condition, i.i.d. case (rate n^{-1}).

    Derumigny, Girard, Guyonvarch (arXiv:2101.05780), Theorem 3.1 with Appendix Theorem A.5
    (transcribed from DGG's appendices): valid when
    :math:`\kappa \ge \sup_{|t| \ge 2 t_1^* \pi / \tilde K_3} |E e^{i t X_1/\sigma}|`.
    The EEAI's ``dgg-cf`` candidate uses it with kappa certified from an absolutely continuous
    PLLR component (:func:`certify.eeai_bounds.characteristic_kappa`).

    Args:
        n, K4, K3, K3tilde, lambda3: As in :func:`dgg_moment_bound`.
        kappa: Certified bound kappa < 1 on the characteristic function (see above).
        skewed: False only if every summand is unskewed.
        eps: Free parameter in (0, 1/3).

    Returns:
        An Arb ball containing the bound's value.
    """
    n_a, K4, K3, K3t, lam, kap, eps = (_a(n), _a(K4), _a(K3), _a(K3tilde), _a(lambda3),
                                       _a(kappa), _a(eps))
    skew, lam, al, pi, cpsi, c, D, sn = _prologue(n_a, K4, lam, eps, skewed)
    t1 = arb(T1_STAR)
    c1, c2, c3, c4, J = _cf_terms(n_a, K3t, al)
    h = arb(3) / 2
    u1 = 16 * pi**3 * n_a**2 / K3t**4
    l1 = ball_min((2 * eps).sqrt() * (n_a / K4).root(4), u1)
    u2 = 32 * pi**6 * n_a**4 / K3t**8
    l2 = ball_min(eps * (n_a / (16 * K4)).sqrt(), u2)
    if skewed:
        r2 = (c1 + c2 + c3 + c4 + al * (_gamma_upper(h, l1) - _gamma_upper(h, u1)) / sn
              + c["r_iid"]
              + cpsi * 4 * arb(2).sqrt() * K3 / (3 * pi * sn)
              * (_gamma_upper(h, l2) - _gamma_upper(h, u2))
              + arb("1.306") * (c["e2"] - c["e3"]) * lam * lam / (36 * n_a) + J)
    else:
        u = 32 * pi**6 * n_a**4 / K3**8
        lo = ball_min(eps * (n_a / (16 * K4)).sqrt(), u)
        r2 = (c1 + c3 + c["r_iid"]
              + 16 * cpsi * K3 * abs(_gamma_upper(2, u) - _gamma_upper(2, lo)) / (3 * pi * n_a)
              + J)
    a_n = ball_min(2 * t1 * pi * sn / K3t, 16 * pi**3 * n_a**2 / K3t**4)
    b_n = 16 * pi**4 * n_a**2 / K3t**4
    s_n = cpsi / pi * kap ** n_a * (b_n / a_n).log()
    return (arb("0.327") * K4 * (arb(1) / 12 + 1 / (4 * D)) / n_a
            + skew * arb("0.037") * c["e3"] * lam * lam / n_a + r2 + s_n)



def dgg_continuity_bound_noniid(
    n: int,
    K4,
    K3,
    K3tilde,
    lambda3,
    C0,
    p,
    *,
    skewed: bool = True,
    eps="0.1",
    r_package_sn: bool = False,
) -> arb:
    r"""DGG bound under a density-smoothness condition, non-i.i.d. case (rate n^{-1}).

    Derumigny, Girard, Guyonvarch (Sankhya A 2024, arXiv:2101.05780), Theorem 3.1 with Appendix
    Theorem A.4 (transcribed in DGG's appendices as recorded in the project; see
    certify/DGG_VERIFICATION.md for what was checked). The condition replacing the i.i.d.
    characteristic-function bound kappa is :math:`|f_{S_n}(u)| \le C_0 u^{-p}` for
    :math:`u > a_n` (f_{S_n} the characteristic function of the standardized sum). Then

    .. math::

        \delta_n = \frac{0.327 K_4(\frac1{12} + \frac1{4(1-3\epsilon)^2})}{n}
          + \frac{0.037\,e_{1,n}\lambda_3^2}{n} + r_{2,n}^{inid} + S_n,\qquad
        S_n = \frac{C_\psi}{\pi}\int_{a_n}^{b_n} \frac{C_0 u^{-p}}{u}\,du
            = \frac{C_\psi C_0}{\pi}\,\frac{a_n^{-p} - b_n^{-p}}{p},

    with :math:`a_n = \min(2t_1^*\pi\sqrt n/\tilde K_3,\ 16\pi^3 n^2/\tilde K_3^4)`,
    :math:`b_n = 16\pi^4 n^2/\tilde K_3^4`, and

    .. math::

        r_{2,n}^{inid,skew} = c_1 + c_2 + c_3 + c_4
          + |\lambda_3|\,|\Gamma(3/2, u_1) - \Gamma(3/2, l_1)|/\sqrt n + \bar R_n^{inid}
          + C_\psi K_3\{\cdot\}_{3}/(6\pi\sqrt n) + J,\qquad
        r_{2,n}^{inid,noskew} = c_1 + c_3 + \bar R_n^{inid} + C_\psi K_4\{\cdot\}_{4}/(6\pi n) + J,

    :math:`\{\cdot\}_q = \tfrac12|\Delta|^{-q/2}\,|\gamma^*(q/2, 2^8\pi^6\Delta n^4/\tilde K_3^8)
    - \gamma^*(q/2, \Delta\min(2\epsilon\sqrt{n/K_4}, 2^8\pi^6 n^4/\tilde K_3^8))|`,
    :math:`\Delta = (1 - 4\chi_1 - \sqrt{K_4/n})/2`, :math:`u_1 = 16\pi^3n^2/\tilde K_3^4`,
    :math:`l_1 = \min(\sqrt{2\epsilon}(n/K_4)^{1/4}, u_1)`; c_1..c_4, J as in the i.i.d. case.

    The authors' R package (BoundEdgeworth) evaluates S_n **without the factor 1/p** (conservative
    for p >= 1, too small for p < 1); ``r_package_sn=True`` reproduces it (to compare with the
    package's published values), the default is the integral itself. Proof of the default: for
    u in [a_n, b_n] the condition gives |f_{S_n}(u)|/u <= C_0 u^{-p-1}, whose integral is the
    expression above; every other term is evaluated in Arb ball arithmetic on ball inputs, so
    the upper end of the returned ball bounds the theorem's delta_n at the enclosed moments.

    Args:
        n, K4, K3, K3tilde, lambda3: As in :func:`dgg_moment_bound` (balls containing the moments).
        C0: The constant of the smoothness condition (> 0).
        p: Its exponent (> 0).
        skewed: False only if every summand is unskewed.
        eps: Free parameter in (0, 1/3).
        r_package_sn: Omit the 1/p in S_n as the R package does (comparison only).

    Returns:
        An Arb ball containing the bound's value (use its upper end).

    Raises:
        ValueError: for eps outside (0, 1/3), C0 <= 0 or p <= 0.
        UndecidableError: when Delta's sign (the gamma* branch) cannot be decided.
    """
    n_a, K4, K3, K3t, lam, C0, p, eps = (_a(n), _a(K4), _a(K3), _a(K3tilde), _a(lambda3),
                                         _a(C0), _a(p), _a(eps))
    if not (eps > 0 and eps < arb(1) / 3):
        raise ValueError("the DGG parameter eps must lie in (0, 1/3)")
    if not (C0 > 0):
        raise ValueError(f"C0 must be > 0, got {C0}")
    if not (p > 0):
        raise ValueError(f"p must be > 0, got {p}")
    skew, lam, al, pi, cpsi, c, D, sn = _prologue(n_a, K4, lam, eps, skewed)
    t1 = arb(T1_STAR)
    c1, c2, c3, c4, J = _cf_terms(n_a, K3t, al)
    delta = (1 - 4 * arb(_CHI1) - (K4 / n_a).sqrt()) / 2
    top = 256 * pi**6 * n_a**4 / K3t**8

    def brace(q: int) -> arb:
        s = arb(q) / 2
        return (abs(delta) ** (-s) / 2
                * abs(_gamma_star(s, delta * top, q)
                      - _gamma_star(s, delta * ball_min(2 * eps * (n_a / K4).sqrt(), top), q)))

    if skewed:
        h = arb(3) / 2
        u1 = 16 * pi**3 * n_a**2 / K3t**4
        l1 = ball_min((2 * eps).sqrt() * (n_a / K4).root(4), u1)
        r2 = (c1 + c2 + c3 + c4 + al * abs(_gamma_upper(h, u1) - _gamma_upper(h, l1)) / sn
              + c["r_inid"] + cpsi * K3 * brace(3) / (6 * pi * sn) + J)
    else:
        r2 = c1 + c3 + c["r_inid"] + cpsi * K4 * brace(4) / (6 * pi * n_a) + J
    a_n = ball_min(2 * t1 * pi * sn / K3t, 16 * pi**3 * n_a**2 / K3t**4)
    b_n = 16 * pi**4 * n_a**2 / K3t**4
    s_n = cpsi / pi * C0 * ((-p * a_n.log()).exp() - (-p * b_n.log()).exp())
    if not r_package_sn:
        s_n = s_n / p
    return (arb("0.327") * K4 * (arb(1) / 12 + 1 / (4 * D)) / n_a
            + skew * arb("0.037") * c["e1"] * lam * lam / n_a + r2 + s_n)
