"""Tests for numeric.pure_dp: exact KOV composition of (eps0, 0)-DP (randomized response)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numeric.pure_dp import (
    _RandomizedResponseComposition,
    pure_dp_delta,
    pure_dp_epsilon,
    pure_dp_log_delta,
)

REL = 1e-10

# Reference values copied from shared/reference/fdp_reference.csv, mpmath dps80/120, exact
# rationals; computed independently of this code.
# case hom_pure: (quantity, eps0, n = k, argument (eps for "delta", delta for "eps"), value);
# eps0 "1/sqrt(k)" means 1/sqrt(n).
HOM_PURE = [
    ("delta", "0.1", 1, 0.5, 0.0),
    ("delta", "0.1", 1, 2.0, 0.0),
    ("eps", "0.1", 1, 1e-6, 0.0999980951607677589420076825704652031613569912),
    ("delta", "1", 1, 0.5, 0.287649136644967924921710342930131993098100096),
    ("delta", "1", 1, 2.0, 0.0),
    ("eps", "1", 1, 1e-6, 0.999998632119623280621744033362042415665548351),
    ("delta", "1/sqrt(k)", 1, 0.5, 0.287649136644967924921710342930131993098100096),
    ("delta", "1/sqrt(k)", 1, 2.0, 0.0),
    ("eps", "1/sqrt(k)", 1, 1e-6, 0.999998632119623280621744033362042415665548351),
    ("delta", "0.1", 2, 0.5, 0.0),
    ("delta", "0.1", 2, 2.0, 0.0),
    ("eps", "0.1", 2, 1e-6, 0.199996371587828170616215715568122143149420697),
    ("delta", "1", 2, 0.5, 0.415195479812190797450430570380116433644028388),
    ("delta", "1", 2, 2.0, 0.0),
    ("eps", "1", 2, 1e-6, 1.99999812890408392163086627286897213259644283),
    ("delta", "1/sqrt(k)", 2, 0.5, 0.268775221292891582881678587683237232069072081),
    ("delta", "1/sqrt(k)", 2, 2.0, 0.0),
    ("eps", "1/sqrt(k)", 2, 1e-6, 1.41421133311649303345550005547985664519864205),
    ("delta", "0.1", 5, 0.5, 0.0),
    ("delta", "0.1", 5, 2.0, 0.0),
    ("eps", "0.1", 5, 1e-6, 0.499974921877828855199259953621720291633197531),
    ("delta", "1", 5, 0.5, 0.670254010426166731649240743038245390021825751),
    ("delta", "1", 5, 2.0, 0.441211438279549411977455098541057017168077711),
    ("eps", "1", 5, 1e-6, 4.99999521105166966051529981432303129413824539),
    ("delta", "1/sqrt(k)", 5, 0.5, 0.223174847852972423881807825029987103491974436),
    ("delta", "1/sqrt(k)", 5, 2.0, 0.0177561655865752645624490199306647851844213984),
    ("eps", "1/sqrt(k)", 5, 1e-6, 2.23605613517631080193653988919152389290298794),
    ("delta", "0.1", 10, 0.5, 0.00992962691738885253205714409470794586927606281),
    ("delta", "0.1", 10, 2.0, 0.0),
    ("eps", "0.1", 10, 1e-6, 0.999370905721758724696716960420517918984184878),
    ("delta", "1", 10, 0.5, 0.851314762442753616635991878747383707225717646),
    ("delta", "1", 10, 2.0, 0.689536771546200018724122611363775334426268765),
    ("eps", "1", 10, 1e-6, 9.99997706582073261902520787796039740276839485),
    ("delta", "1/sqrt(k)", 10, 0.5, 0.240798330545307031645261781330244676602347347),
    ("delta", "1/sqrt(k)", 10, 2.0, 0.0154442385819703617835572868999499815484886718),
    ("eps", "1/sqrt(k)", 10, 1e-6, 3.16203902523628715823197468248051738552819868),
    ("delta", "0.1", 50, 0.5, 0.124778281434003678558994268170793074633382415),
    ("delta", "0.1", 50, 2.0, 0.00102138074484149673312253820685150858087923158),
    ("eps", "0.1", 50, 1e-6, 3.17290273401918965260691312773925701011096015),
    ("delta", "1", 50, 0.5, 0.999344078692688435968744348791802385462389138),
    ("delta", "1", 50, 2.0, 0.998522255805191393819341188368230520159405568),
    ("eps", "1", 50, 1e-6, 47.6494010573494588738174472340714730195103017),
    ("delta", "1/sqrt(k)", 50, 0.5, 0.239012823169080357809451290857158302350293127),
    ("delta", "1/sqrt(k)", 50, 2.0, 0.0196423042832321258624322619135863894948907203),
    ("eps", "1/sqrt(k)", 50, 1e-6, 4.68195394309657169176935205926948325832948350),
    ("delta", "0.1", 100, 0.5, 0.239254236956648904433806019953062918718270695),
    ("delta", "0.1", 100, 2.0, 0.0201401784281915318428452236506527239263660313),
    ("eps", "0.1", 100, 1e-6, 4.77456758810798615328594816746971255173960426),
    ("delta", "1", 100, 0.5, 0.999998816786717464340234251409697730360344989),
    ("delta", "1", 100, 2.0, 0.999997300243241751595791237632664058073428215),
    ("eps", "1", 100, 1e-6, 83.5307016784836119773965574926492251224023846),
    ("delta", "1/sqrt(k)", 100, 0.5, 0.239254236956648904433806019953062918718270695),
    ("delta", "1/sqrt(k)", 100, 2.0, 0.0201401784281915318428452236506527239263660313),
    ("eps", "1/sqrt(k)", 100, 1e-6, 4.77456758810798615328594816746971255173960426),
    ("delta", "0.1", 1000, 0.5, 0.855064155033484895842239131549305167736245726),
    ("delta", "0.1", 1000, 2.0, 0.728990790298729430969883230373460982722550143),
    ("eps", "0.1", 1000, 1e-6, 19.3446714479930436725190906089696254285700920),
    ("delta", "1", 1000, 0.5, 1.00000000000000000000000000000000000000000000),
    ("delta", "1", 1000, 2.0, 1.00000000000000000000000000000000000000000000),
    ("eps", "1", 1000, 1e-6, 591.079650454238977678081970136694099950723880),
    ("delta", "1/sqrt(k)", 1000, 0.5, 0.238374082710944502623373660104254351904355626),
    ("delta", "1/sqrt(k)", 1000, 2.0, 0.0209068423655810499775946242149199613506834255),
    ("eps", "1/sqrt(k)", 1000, 1e-6, 4.87466786239694171374867392123758973177776891),
]

# case exact_rational, homogeneous rows: (eps_i, count, eps, exact delta).
EXACT_RATIONAL = [
    (math.log(2.0), 2, 0.0, 1 / 3),
    (math.log(2.0), 5, math.log(2.0), 10 / 27),
    (math.log(2.0), 10, math.log(4.0), 9460 / 19683),
    (math.log(1.5), 10, math.log(2.0), 2935801 / 9765625),
    (math.log1p(0.1), 100, math.log(3.0), 0.0945721041407327742901169489324851102553240454),
]

FIG5_EPS0 = 1 / math.sqrt(10)
# case fig5 / fig5_curve, n = 10, eps0 = 1/sqrt(10): (delta, eps_exact_composition).
FIG5_EPS = [
    (1e-3, 2.88967273935981121240934495430976391917933761),
    (1e-1, 1.15164132390342976623471403355689022275906874),
    (3e-2, 1.78334640432207363530790545260429576146685517),
    (1e-2, 2.24854806672892713202018207810742518577992620),
    (1e-4, 3.13812773803814032263877532526165397206443306),
    (1e-5, 3.15988874436948513822914857968474042369566915),
    (1e-6, 3.16203902523628715823197468248051738552819868),
    (1e-8, 3.16227527410092225990251856105594271605009444),
    (1e-10, 3.16227763630773294317961645092347127907387406),
]
# case fig5: delta_exact at eps = eps_gdp(mu=1, delta=1e-3).
FIG5_DELTA = (
    3.13867054858293920858075477000320084916774930,
    9.77787585271081579597738656869678044499797047e-5,
)


def _eps0(spec: str, n: int) -> float:
    return 1 / math.sqrt(n) if spec == "1/sqrt(k)" else float(spec)


def _rel(got: float, want: float) -> float:
    return abs(got - want) / abs(want)


@pytest.mark.parametrize(("quantity", "eps0", "n", "arg", "want"), HOM_PURE)
def test_hom_pure_reference(quantity: str, eps0: str, n: int, arg: float, want: float) -> None:
    e0 = _eps0(eps0, n)
    if quantity == "delta":
        got = pure_dp_delta(e0, n, arg)
        if want == 0.0:
            assert got == 0.0
            assert pure_dp_log_delta(e0, n, arg) == -math.inf
        else:
            assert _rel(got, want) < REL
            assert _rel(math.exp(pure_dp_log_delta(e0, n, arg)), want) < REL
    else:
        assert _rel(pure_dp_epsilon(e0, n, arg), want) < REL


@pytest.mark.parametrize(("eps0", "n", "eps", "want"), EXACT_RATIONAL)
def test_exact_rational(eps0: float, n: int, eps: float, want: float) -> None:
    assert _rel(pure_dp_delta(eps0, n, eps), want) < REL


@pytest.mark.parametrize(("delta", "want"), FIG5_EPS)
def test_fig5_epsilon(delta: float, want: float) -> None:
    assert _rel(pure_dp_epsilon(FIG5_EPS0, 10, delta), want) < REL


def test_fig5_delta_at_gdp_epsilon() -> None:
    eps, want = FIG5_DELTA
    assert _rel(pure_dp_delta(FIG5_EPS0, 10, eps), want) < REL


# --- independent high-precision oracle at n = 10^6 ----------------------------------------


def _oracle_delta(eps0: float, n: int, eps: float) -> mpmath.mpf:
    """KOV sum at 40 digits: exact loggamma start, pmf ratio recurrence, stop when negligible."""
    with mpmath.workdps(40):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(eps)
        q = 1 / (1 + mpmath.exp(-e0))
        ratio = mpmath.exp(e0)  # q / (1 - q)
        j = int(mpmath.floor((n + e / e0) / 2)) + 1
        while (2 * j - n) * e0 <= e:
            j += 1
        while j > 0 and (2 * (j - 1) - n) * e0 > e:
            j -= 1
        mode = int(mpmath.floor((n + 1) * q))
        log_pmf = (
            mpmath.loggamma(n + 1)
            - mpmath.loggamma(j + 1)
            - mpmath.loggamma(n - j + 1)
            + j * mpmath.log(q)
            + (n - j) * mpmath.log(1 - q)
        )
        pmf = mpmath.exp(log_pmf)
        lik = mpmath.exp(e - (2 * j - n) * e0)  # e^{eps - s_j}
        step = mpmath.exp(-2 * e0)
        total = mpmath.mpf(0)
        while j <= n:
            total += pmf * (1 - lik)
            if j > mode and pmf < total * mpmath.mpf(10) ** -45:
                break
            pmf *= mpmath.mpf(n - j) / (j + 1) * ratio
            lik *= step
            j += 1
        return total


@pytest.mark.parametrize("eps", [4.4, 4.3817])
def test_large_n_matches_mpmath_oracle(eps: float) -> None:
    eps0, n = 1e-3, 10**6
    want = _oracle_delta(eps0, n, eps)
    got = pure_dp_delta(eps0, n, eps)
    assert 1e-6 < got < 1e-4
    assert abs(got - want) / want < 1e-9
    assert abs(pure_dp_log_delta(eps0, n, eps) - mpmath.log(want)) < 1e-9


def test_large_n_epsilon_against_oracle() -> None:
    eps0, n, delta = 1e-3, 10**6, 1e-5
    eps = pure_dp_epsilon(eps0, n, delta)
    assert abs(_oracle_delta(eps0, n, eps) - delta) / delta < 1e-9


def test_loader_log_pmf_against_mpmath() -> None:
    n, eps0 = 10**6, 0.7
    comp = _RandomizedResponseComposition(eps0, n)
    sd = math.sqrt(n * comp.q * comp.qc)
    js = np.array([0, 1, n - 1, n, *(round(comp.mean + k * sd) for k in (-20, -3, 0, 2, 15))])
    got = comp.log_pmf(js)
    with mpmath.workdps(40):
        q = 1 / (1 + mpmath.exp(-mpmath.mpf(eps0)))
        for j, g in zip(js.tolist(), got, strict=True):
            want = (
                mpmath.loggamma(n + 1)
                - mpmath.loggamma(j + 1)
                - mpmath.loggamma(n - j + 1)
                + j * mpmath.log(q)
                + (n - j) * mpmath.log(1 - q)
            )
            assert abs(g - want) <= 1e-12 + 4e-16 * abs(want)


# --- structure and properties ---------------------------------------------------------------


def test_shapes_and_kinks() -> None:
    e0, n = 0.3, 7
    grid = np.array([[0.0, 0.3], [0.9, 2.1]])
    out = pure_dp_delta(e0, n, grid)
    assert isinstance(out, np.ndarray) and out.shape == grid.shape
    assert isinstance(pure_dp_delta(e0, n, 0.3), float)
    assert pure_dp_delta(e0, n, n * e0) == 0.0  # at and beyond the last lattice point
    assert pure_dp_delta(e0, n, 1e6) == 0.0
    assert pure_dp_epsilon(e0, n, 0.999) == 0.0  # delta(0) <= delta
    assert pure_dp_epsilon(e0, n, 1e-300) <= n * e0


@settings(max_examples=60, deadline=None)
@given(
    eps0=st.floats(1e-3, 3.0),
    n=st.integers(1, 3000),
    e1=st.floats(0.0, 40.0),
    e2=st.floats(0.0, 40.0),
)
def test_delta_non_increasing(eps0: float, n: int, e1: float, e2: float) -> None:
    lo, hi = sorted((e1, e2))
    d_lo, d_hi = pure_dp_delta(eps0, n, np.array([lo, hi]))
    assert d_lo >= d_hi * (1.0 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(eps0=st.floats(1e-3, 3.0), n=st.integers(1, 5000), delta=st.floats(1e-12, 0.5))
def test_round_trip(eps0: float, n: int, delta: float) -> None:
    eps = pure_dp_epsilon(eps0, n, delta)
    if eps == 0.0:
        assert pure_dp_delta(eps0, n, 0.0) <= delta
        return
    # The root is within a few ulps: delta crosses the target across [eps - 4ulp, eps + 4ulp].
    pad = 4 * math.ulp(eps)
    below, above = pure_dp_delta(eps0, n, np.array([max(eps - pad, 0.0), eps + pad]))
    assert below >= delta * (1 - 1e-9)
    assert above <= delta * (1 + 1e-9)


@pytest.mark.parametrize(("eps0", "n"), [(FIG5_EPS0, 10), (0.05, 400), (1e-3, 10**6)])
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-9])
def test_round_trip_well_conditioned(eps0: float, n: int, delta: float) -> None:
    eps = pure_dp_epsilon(eps0, n, delta)
    assert eps > 0.0
    assert _rel(pure_dp_delta(eps0, n, eps), delta) < 1e-9


@settings(max_examples=80, deadline=None)
@given(
    eps0=st.floats(1e-6, 50.0),
    n=st.integers(1, 10**5),
    eps=st.floats(0.0, 1e4),
    delta=st.floats(1e-300, 0.999999),
)
def test_valid_inputs_give_finite_values(eps0: float, n: int, eps: float, delta: float) -> None:
    d = pure_dp_delta(eps0, n, eps)
    assert math.isfinite(d) and 0.0 <= d <= 1.0
    ld = pure_dp_log_delta(eps0, n, eps)
    assert ld <= 0.0 and not math.isnan(ld)
    e = pure_dp_epsilon(eps0, n, delta)
    assert math.isfinite(e) and 0.0 <= e <= n * eps0 * (1 + 1e-15)


# --- validation -------------------------------------------------------------------------------

BAD_EPS0 = [math.nan, math.inf, -math.inf, 0.0, -1.0, True, "1"]
BAD_N = [0, 2.5, True, -1, math.nan, 10**15 + 1, "3"]
BAD_EPS = [-1.0, -1e-300, math.nan, math.inf]
BAD_DELTA = [0.0, 1.0, math.nan, -0.1, 1.5, math.inf]


@pytest.mark.parametrize("eps0", BAD_EPS0)
def test_bad_eps0(eps0: object) -> None:
    with pytest.raises(ValueError, match="eps0"):
        pure_dp_delta(eps0, 5, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="eps0"):
        pure_dp_epsilon(eps0, 5, 1e-3)  # type: ignore[arg-type]


@pytest.mark.parametrize("n", BAD_N)
def test_bad_n(n: object) -> None:
    with pytest.raises(ValueError, match="n must"):
        pure_dp_delta(0.1, n, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must"):
        pure_dp_epsilon(0.1, n, 1e-3)  # type: ignore[arg-type]


@pytest.mark.parametrize("eps", BAD_EPS)
def test_bad_eps(eps: float) -> None:
    with pytest.raises(ValueError, match="eps"):
        pure_dp_delta(0.1, 5, eps)
    with pytest.raises(ValueError, match="eps"):
        pure_dp_log_delta(0.1, 5, np.array([0.5, eps]))


@pytest.mark.parametrize("delta", BAD_DELTA)
def test_bad_delta(delta: float) -> None:
    with pytest.raises(ValueError, match="delta"):
        pure_dp_epsilon(0.1, 5, delta)
