"""certify.exact: certified exact profiles bracket independent references.

Reference values are copied from ``shared/reference/fdp_reference.csv`` (cases ``gdp``,
``hom_pure``, ``exact_rational``, ``fig5``, ``fig5_curve``; mpmath dps80/120, the seed value also
Arb-certified) and docs/math.md section 2 (GDP Section 3.3 example). They are rounded to 45
significant digits, so a bound of relative width ~1e-30 (the default) must ``contain`` them
exactly; the 40-digit seed check instead compares against the reference's rounding interval.

Inputs are exact reals as the references define them: "0.1" is the decimal 1/10 (a ``str``), and
"1/sqrt(k)" is the exact real fed as ``ArbReal.sqrt(1/k)``, so every reference row is checked with
``Bound.contains`` and no float-rounding allowance. The float inputs of ``numeric`` mechanisms
(``RandomizedResponse(1/math.sqrt(k))``) differ from those reals by ~1e-17 relative; they are
checked separately at 1e-12 relative.

Property tests compare against an independent mpmath evaluation at 60+ digits (GDP closed form;
KOV sum from ``mpmath.binomial``; per-step pattern enumeration for heterogeneous pure DP).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

pytest.importorskip("flint")
mpmath = pytest.importorskip("mpmath")

from flint import arb, fmpq  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from certify.engine import UndecidableError  # noqa: E402
from certify.exact import (  # noqa: E402
    ArbReal,
    ExactComposition,
    RationalExp,
    exact_delta_bound,
    exact_delta_rational,
    exact_epsilon_bound,
    gaussian_dp,
    pure_dp,
)
from numeric import (  # noqa: E402
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
    exact_delta,
    exact_epsilon,
)

# --- fdp_reference.csv, case gdp (mpmath dps80/120) ------------------------------------------
GDP_DELTA = [  # (mu, eps, delta)
    ("0.5", "0", "0.197412651365847448481707583162067478564094962"),
    ("0.5", "0.5", "0.0524403232876696617118967162667797315442629826"),
    ("0.5", "1", "0.00682959498311457538423501287992687275002686298"),
    ("0.5", "2", "9.43916863494723375851126696403039436235339697e-6"),
    ("0.5", "3", "3.40091173567352882417679680914764582442486865e-10"),
    ("0.5", "5", "4.41544347029961926997758165125360610293024374e-24"),
    ("1", "0", "0.382924922548026207275409221216675479767204351"),
    ("1", "0.5", "0.238421708134876628318156163154351502445851583"),
    ("1", "1", "0.126936737506643945800829624757766880415080650"),
    ("1", "2", "0.0209236358211137314196037625870992252129365640"),
    ("1", "3", "0.00153718536940095484694386966631603964672769797"),
    ("1", "5", "5.79372169191949410420681779021892023246676625e-7"),
    ("2", "0", "0.682689492137085897170465091264075844955825933"),
    ("2", "0.5", "0.599185618533933263057772377499826908006133130"),
    ("2", "1", "0.509861660054670153076238845974442360182285001"),
    ("2", "2", "0.331897998776829393572850885970916301624016213"),
    ("2", "3", "0.183813076544472155970107270201436920715343970"),
    ("2", "5", "0.0322819847500728213517653066121381630656830463"),
    ("3", "0", "0.866385597462283867991011918040227840954209629"),
    ("3", "0.5", "0.829995809947690307776236147741597654183365955"),
    ("3", "1", "0.787600741360384533592877632288641971592663536"),
    ("3", "2", "0.685874165716049366422235851516575314295526862"),
    ("3", "3", "0.566737999092498363245516491418112400482548321"),
    ("3", "5", "0.319391879905888046157267402581139666569603228"),
]
GDP_EPS = [  # (mu, delta, eps)
    ("0.5", "1e-3", "1.35227624480255416741122589385836417123761774"),
    ("0.5", "1e-5", "1.99309140441511963114946158809144771458592767"),
    ("0.5", "1e-10", "3.09943033024319605064015941107396202749241334"),
    ("1", "1e-3", "3.13867054858293920858075477000320084916774930"),
    ("1", "1e-5", "4.37717809568122462765011629324201091315343852"),
    ("1", "1e-10", "6.54792406686495100581928943695883616839274506"),
    ("2", "1e-3", "7.58127992457011380973727684403818671780183391"),
    ("2", "1e-5", "9.99725614643430039654407369240370421467420725"),
    ("2", "1e-10", "14.2740896450780055649246896607895346990635600"),
    ("3", "1e-3", "13.0881791646282634373313165440980582791642969"),
    ("3", "1e-5", "16.6754944028281643190205936220838612148604048"),
    ("3", "1e-10", "23.0487284620061437871917933041373282294565812"),
]
# --- fdp_reference.csv, case hom_pure (KOV sum / segment inversion, mpmath dps80/120) ----------
HOM_PURE_DELTA = [  # (eps0, k = n, eps, delta)
    ("0.1", 1, "0.5", "0"),
    ("0.1", 1, "2", "0"),
    ("1", 1, "0.5", "0.287649136644967924921710342930131993098100096"),
    ("1", 1, "2", "0"),
    ("1/sqrt(k)", 1, "0.5", "0.287649136644967924921710342930131993098100096"),
    ("1/sqrt(k)", 1, "2", "0"),
    ("0.1", 2, "0.5", "0"),
    ("0.1", 2, "2", "0"),
    ("1", 2, "0.5", "0.415195479812190797450430570380116433644028388"),
    ("1", 2, "2", "0"),
    ("1/sqrt(k)", 2, "0.5", "0.268775221292891582881678587683237232069072081"),
    ("1/sqrt(k)", 2, "2", "0"),
    ("0.1", 5, "0.5", "0"),
    ("0.1", 5, "2", "0"),
    ("1", 5, "0.5", "0.670254010426166731649240743038245390021825751"),
    ("1", 5, "2", "0.441211438279549411977455098541057017168077711"),
    ("1/sqrt(k)", 5, "0.5", "0.223174847852972423881807825029987103491974436"),
    ("1/sqrt(k)", 5, "2", "0.0177561655865752645624490199306647851844213984"),
    ("0.1", 10, "0.5", "0.00992962691738885253205714409470794586927606281"),
    ("0.1", 10, "2", "0"),
    ("1", 10, "0.5", "0.851314762442753616635991878747383707225717646"),
    ("1", 10, "2", "0.689536771546200018724122611363775334426268765"),
    ("1/sqrt(k)", 10, "0.5", "0.240798330545307031645261781330244676602347347"),
    ("1/sqrt(k)", 10, "2", "0.0154442385819703617835572868999499815484886718"),
    ("0.1", 50, "0.5", "0.124778281434003678558994268170793074633382415"),
    ("0.1", 50, "2", "0.00102138074484149673312253820685150858087923158"),
    ("1", 50, "0.5", "0.999344078692688435968744348791802385462389138"),
    ("1", 50, "2", "0.998522255805191393819341188368230520159405568"),
    ("1/sqrt(k)", 50, "0.5", "0.239012823169080357809451290857158302350293127"),
    ("1/sqrt(k)", 50, "2", "0.0196423042832321258624322619135863894948907203"),
    ("0.1", 100, "0.5", "0.239254236956648904433806019953062918718270695"),
    ("0.1", 100, "2", "0.0201401784281915318428452236506527239263660313"),
    ("1", 100, "0.5", "0.999998816786717464340234251409697730360344989"),
    ("1", 100, "2", "0.999997300243241751595791237632664058073428215"),
    ("1/sqrt(k)", 100, "0.5", "0.239254236956648904433806019953062918718270695"),
    ("1/sqrt(k)", 100, "2", "0.0201401784281915318428452236506527239263660313"),
    ("0.1", 1000, "0.5", "0.855064155033484895842239131549305167736245726"),
    ("0.1", 1000, "2", "0.728990790298729430969883230373460982722550143"),
    ("1", 1000, "0.5", "1.00000000000000000000000000000000000000000000"),
    ("1", 1000, "2", "1.00000000000000000000000000000000000000000000"),
    ("1/sqrt(k)", 1000, "0.5", "0.238374082710944502623373660104254351904355626"),
    ("1/sqrt(k)", 1000, "2", "0.0209068423655810499775946242149199613506834255"),
]
HOM_PURE_EPS = [  # (eps0, k = n, delta, eps)
    ("0.1", 1, "1e-6", "0.0999980951607677589420076825704652031613569912"),
    ("1", 1, "1e-6", "0.999998632119623280621744033362042415665548351"),
    ("1/sqrt(k)", 1, "1e-6", "0.999998632119623280621744033362042415665548351"),
    ("0.1", 2, "1e-6", "0.199996371587828170616215715568122143149420697"),
    ("1", 2, "1e-6", "1.99999812890408392163086627286897213259644283"),
    ("1/sqrt(k)", 2, "1e-6", "1.41421133311649303345550005547985664519864205"),
    ("0.1", 5, "1e-6", "0.499974921877828855199259953621720291633197531"),
    ("1", 5, "1e-6", "4.99999521105166966051529981432303129413824539"),
    ("1/sqrt(k)", 5, "1e-6", "2.23605613517631080193653988919152389290298794"),
    ("0.1", 10, "1e-6", "0.999370905721758724696716960420517918984184878"),
    ("1", 10, "1e-6", "9.99997706582073261902520787796039740276839485"),
    ("1/sqrt(k)", 10, "1e-6", "3.16203902523628715823197468248051738552819868"),
    ("0.1", 50, "1e-6", "3.17290273401918965260691312773925701011096015"),
    ("1", 50, "1e-6", "47.6494010573494588738174472340714730195103017"),
    ("1/sqrt(k)", 50, "1e-6", "4.68195394309657169176935205926948325832948350"),
    ("0.1", 100, "1e-6", "4.77456758810798615328594816746971255173960426"),
    ("1", 100, "1e-6", "83.5307016784836119773965574926492251224023846"),
    ("1/sqrt(k)", 100, "1e-6", "4.77456758810798615328594816746971255173960426"),
    ("0.1", 1000, "1e-6", "19.3446714479930436725190906089696254285700920"),
    ("1", 1000, "1e-6", "591.079650454238977678081970136694099950723880"),
    ("1/sqrt(k)", 1000, "1e-6", "4.87466786239694171374867392123758973177776891"),
]
# --- fdp_reference.csv, case exact_rational (exact fractions; matches mpmath KOV/MV) ------------
EXACT_RATIONAL = [  # (eps = log s, [(t_i, m_i)], exact delta or None, 45-digit value)
    (1, [(2, 2)], Fraction(1, 3), "0.333333333333333333333333333333333333333333333"),
    (2, [(2, 5)], Fraction(10, 27), "0.370370370370370370370370370370370370370370370"),
    (4, [(2, 10)], Fraction(9460, 19683), "0.480617792003251536859218615048519026571152771"),
    (2, [(Fraction(3, 2), 10)], Fraction(2935801, 9765625),
     "0.300626022400000000000000000000000000000000000"),
    (3, [(Fraction(11, 10), 100)], None, "0.0945721041407327742901169489324851102553240454"),
    (2, [(2, 1), (3, 1), (Fraction(3, 2), 1)], Fraction(7, 20),
     "0.350000000000000000000000000000000000000000000"),
    (Fraction(3, 2), [(2, 1), (3, 1), (Fraction(5, 4), 2)], Fraction(29, 72),
     "0.402777777777777777777777777777777777777777778"),
]
# --- fdp_reference.csv, cases fig5 / fig5_curve: n = 10, eps0 = 1/sqrt(10); mu = 1 -------------
SEED = "2.88967273935981121240934495430976391917933761"  # eps_exact_composition at delta = 1e-3
# the same row's Arb-certified ball: 2.8896727393598112124093449543097639191793376141954 +/- 9e-90
SEED_50 = "2.8896727393598112124093449543097639191793376141954"
FIG5_EXACT_EPS = [  # (delta, eps_exact_composition)
    ("1e-1", "1.15164132390342976623471403355689022275906874"),
    ("3e-2", "1.78334640432207363530790545260429576146685517"),
    ("1e-2", "2.24854806672892713202018207810742518577992620"),
    ("1e-3", SEED),
    ("1e-4", "3.13812773803814032263877532526165397206443306"),
    ("1e-5", "3.15988874436948513822914857968474042369566915"),
    ("1e-6", "3.16203902523628715823197468248051738552819868"),
    ("1e-8", "3.16227527410092225990251856105594271605009444"),
    ("1e-10", "3.16227763630773294317961645092347127907387406"),
]
FIG5_GDP_EPS = [  # (delta, eps_gdp at mu = 1)
    ("1e-1", "1.16033385279161722839212831844609104871426498"),
    ("3e-2", "1.83039674881431450362351703523185933169874085"),
    ("1e-2", "2.31778904030405005692162642002744243652332383"),
    ("1e-4", "3.80443590933738602044254662952266770149040630"),
    ("1e-6", "4.88655411746221199637049944247495854008904737"),
    ("1e-8", "5.77609838289026830831310707341914947672456051"),
]
EPS_GDP_1E3 = "3.13867054858293920858075477000320084916774930"
DELTA_EXACT_AT_EPS_GDP = "9.77787585271081579597738656869678044499797047e-5"
DELTA_GDP_AT_SEED = "0.00213824702283743088697498596904011207810422880"


def _eps0(spec: str, k: int):
    """The exact real a reference row means by its eps0 string."""
    return ArbReal.sqrt(Fraction(1, k)) if spec == "1/sqrt(k)" else spec


def _tight(b, rel: float = 1e-25) -> bool:
    """The bound is informative: width <= rel * |upper| (or zero width)."""
    return b.width() <= rel * abs(float(b.upper_mpf)) or b.width() == 0.0


def _consistent(b, ref: str, digits: int) -> bool:
    """The bound meets [ref - u/2, ref + u/2], u = one unit in the reference's last digit."""
    with mpmath.workprec(400):
        r = mpmath.mpf(ref)
        u = mpmath.mpf(10) ** (mpmath.floor(mpmath.log10(abs(r))) - digits + 1)
        return bool(b.lower_mpf <= r + u / 2 and r - u / 2 <= b.upper_mpf)


# --- references --------------------------------------------------------------------------------


@pytest.mark.parametrize(("mu", "eps", "ref"), GDP_DELTA)
def test_gdp_delta_rows(mu, eps, ref):
    b = exact_delta_bound(gaussian_dp(mu), eps)
    assert b.contains(ref) and _tight(b)
    assert (b.lower_method, b.upper_method, b.quantity) == ("exact-gdp", "exact-gdp", "delta")
    assert any("Cor. 2.13" in a for a in b.assumptions)


@pytest.mark.parametrize(("mu", "delta", "ref"), GDP_EPS)
def test_gdp_eps_rows(mu, delta, ref):
    b = exact_epsilon_bound(gaussian_dp(mu), delta)
    assert b.contains(ref) and _tight(b, 1e-29) and not b.vacuous


@pytest.mark.parametrize(("eps0", "k", "eps", "ref"), HOM_PURE_DELTA)
def test_hom_pure_delta_rows(eps0, k, eps, ref):
    b = exact_delta_bound(pure_dp(_eps0(eps0, k), k), eps)
    assert b.contains(ref) and _tight(b)
    assert b.lower_method == "exact-binomial"
    if ref == "0":
        assert b.width() == 0.0


@pytest.mark.parametrize(("eps0", "k", "delta", "ref"), HOM_PURE_EPS)
def test_hom_pure_eps_rows(eps0, k, delta, ref):
    b = exact_epsilon_bound(pure_dp(_eps0(eps0, k), k), delta)
    assert b.contains(ref) and _tight(b, 1e-29)


@pytest.mark.parametrize("k", [2, 10, 1000])
def test_hom_pure_float_inputs(k):
    # RandomizedResponse(1/math.sqrt(k)) is the float nearest 1/sqrt(k), ~1e-17 relative off the
    # reference's exact real: the enclosure of the float problem agrees to 1e-12 relative.
    comp = [(RandomizedResponse(1 / math.sqrt(k)), k)]
    for eps, ref in [(r[2], r[3]) for r in HOM_PURE_DELTA if r[0] == "1/sqrt(k)" and r[1] == k]:
        b = exact_delta_bound(comp, float(eps))
        assert float(b.lower_mpf) == pytest.approx(float(ref), rel=1e-12, abs=1e-300)
    ref = next(r[3] for r in HOM_PURE_EPS if r[0] == "1/sqrt(k)" and r[1] == k)
    b = exact_epsilon_bound(comp, "1e-6")
    assert float(b.lower_mpf) == pytest.approx(float(ref), rel=1e-12)
    assert float(b.lower_mpf) == pytest.approx(exact_epsilon(comp, 1e-6).epsilon, rel=1e-9)


@pytest.mark.parametrize(("s", "terms", "exact", "ref"), EXACT_RATIONAL)
def test_exact_rational_rows(s, terms, exact, ref):
    comp = ExactComposition(pure=[(RationalExp(t), m) for t, m in terms])
    value = exact_delta_rational(comp, RationalExp(s))
    if exact is not None:
        assert value == exact
    else:  # the 260-character fraction: compare at 50 digits
        assert abs(value - Fraction(ref)) < Fraction(1, 10**46)
    b = exact_delta_bound(comp, RationalExp(s))
    assert b.contains(ref)
    with mpmath.workprec(400):
        exact_mpf = mpmath.mpf(value.numerator) / value.denominator
        assert b.lower_mpf <= exact_mpf <= b.upper_mpf
    assert b.inputs["exact_value"] == str(value)
    assert b.lower_method == ("exact-binomial" if len(terms) == 1 else "exact-enumeration")


def test_exact_rational_is_kov_polynomial():
    # KOV integer polynomial: delta(k eps0) (1+t)^n = sum_{2j-n>k} C(n,j) (t^j - t^(n-j+k))
    t, n, k = Fraction(3, 2), 12, 2
    poly = sum(math.comb(n, j) * (t**j - t ** (n - j + k)) for j in range(n + 1) if 2 * j - n > k)
    got = exact_delta_rational(pure_dp(RationalExp(t), n), RationalExp(t**k))
    assert got == poly / (1 + t) ** n


def test_seed_example_forty_digits():
    comp = pure_dp(ArbReal.sqrt(Fraction(1, 10)), 10)  # eps0 = 1/sqrt(10), the exact real
    b = exact_epsilon_bound(comp, "1e-3", rel_width=1e-41)  # delta = 1/1000 exactly
    assert b.width() < 1e-40 * float(b.lower_mpf)
    # A bound this tight is narrower than the 45-digit rounding of the reference: check that it
    # meets the reference's rounding interval (and the 50-digit Arb-certified mid's).
    assert _consistent(b, SEED, 45) and _consistent(b, SEED_50, 50)
    assert b.lower.decimal()[:42] == SEED[:42]
    # at the default width the 45-digit string lies inside the enclosure itself
    assert exact_epsilon_bound(comp, "1e-3").contains(SEED)


def test_seed_example_float_inputs():
    comp = [(RandomizedResponse(1 / math.sqrt(10)), 10)]
    b = exact_epsilon_bound(comp, 1e-3)  # float eps0 and float delta, as numeric sees them
    assert float(b.lower_mpf) == pytest.approx(float(SEED), rel=1e-13)


@pytest.mark.parametrize(("delta", "ref"), FIG5_EXACT_EPS)
def test_fig5_curve_exact(delta, ref):
    b = exact_epsilon_bound(pure_dp(ArbReal.sqrt(Fraction(1, 10)), 10), delta)
    assert b.contains(ref)


@pytest.mark.parametrize(("delta", "ref"), FIG5_GDP_EPS)
def test_fig5_curve_gdp(delta, ref):
    assert exact_epsilon_bound(gaussian_dp(1), delta).contains(ref)


def test_fig5_cross_deltas():
    seed_comp = pure_dp(ArbReal.sqrt(Fraction(1, 10)), 10)
    assert exact_delta_bound(seed_comp, EPS_GDP_1E3).contains(DELTA_EXACT_AT_EPS_GDP)
    assert exact_delta_bound(gaussian_dp(1), SEED).contains(DELTA_GDP_AT_SEED)


def test_section_3_3_approx_dp():
    # docs/math.md section 2 (GDP Section 3.3): 100 x (0.1, 1e-6)-DP, exact eps 3.14528 at 1e-3
    comp = [(ApproxDP(0.1, 1e-6), 100)]
    b = exact_epsilon_bound(comp, 1e-3)
    assert abs(float(b.lower_mpf) - 3.14528) < 5e-6 and _tight(b, 1e-29)
    assert any("Eq. 11-13" in a for a in b.assumptions)
    assert float(b.lower_mpf) == pytest.approx(exact_epsilon(comp, 1e-3).epsilon, rel=1e-10)
    d = exact_delta_bound(comp, 1.0)
    assert float(d.lower_mpf) == pytest.approx(exact_delta(comp, 1.0).delta, rel=1e-10)


# --- infinite / degenerate ends ----------------------------------------------------------------


def test_infinite_eps_below_delta_part():
    comp = [(ApproxDP(0.1, 1e-6), 100)]  # delta part 9.9995e-5
    b = exact_epsilon_bound(comp, 5e-5)
    assert not b.upper.is_finite and b.vacuous and b.warnings
    assert b.to_dict()["upper"] is None and b.to_dict()["upper_infinite"] is True


def test_delta_equal_to_delta_part():
    # Gaussian: delta_mu > 0 everywhere, so delta = d has no finite eps ...
    g = gaussian_dp(1) + pure_dp(0, 1, delta="1e-3")
    b = exact_epsilon_bound(g, "1e-3")
    assert not b.upper.is_finite and b.vacuous
    # ... pure DP reaches delta = d exactly at eps = n eps0 (the profile's support ends there)
    p = pure_dp("0.25", 4, delta="1e-3")
    d = 1 - (1 - Fraction(1, 1000)) ** 4
    b = exact_epsilon_bound(p, d)
    assert b.contains("1") and not b.vacuous and b.width() == 0.0
    assert exact_epsilon_bound(p, d * Fraction(999, 1000)).vacuous


def test_eps_zero_when_delta_large():
    b = exact_epsilon_bound(gaussian_dp("0.1"), "0.5")
    assert b.width() == 0.0 and b.contains(0)
    b = exact_epsilon_bound(pure_dp(RationalExp(2), 3), "0.9")
    assert b.width() == 0.0 and b.contains(0)


def test_irrational_lattice_tie_is_not_guessed():
    # eps = 4/sqrt(10) is exactly the support point s_7 of 10 x (1/sqrt(10))-DP: the comparison
    # s_7 > eps is undecidable at every precision, but that term is (1 - e^0)_+ = 0 on both
    # sides, so the enclosure takes its positive part on the ball instead of guessing a side.
    comp = pure_dp(ArbReal.sqrt(Fraction(1, 10)), 10)
    b = exact_delta_bound(comp, ArbReal(lambda: 4 * arb(fmpq(1, 10)).sqrt(), "4/sqrt(10)"))
    with mpmath.workdps(80):
        e0 = 1 / mpmath.sqrt(10)
        q = 1 / (1 + mpmath.exp(-e0))
        truth = sum(
            mpmath.binomial(10, j) * q**j * (1 - q) ** (10 - j) * -mpmath.expm1((14 - 2 * j) * e0)
            for j in range(8, 11)
        )
    assert _brackets(b, truth) and _tight(b)


def test_undecidable_support_order_raises_at_cap():
    # sqrt(2) and sqrt(8)/2 are the same real given as two ArbReals: the enumeration cannot
    # order their support points, and says so instead of guessing
    comp = pure_dp(ArbReal.sqrt(2)) + pure_dp(ArbReal(lambda: arb(8).sqrt() / 2, "sqrt(8)/2"))
    with pytest.raises(UndecidableError, match="precision cap"):
        exact_delta_bound(comp, 0.5)


def test_vacuous_delta():
    b = exact_delta_bound(pure_dp(1, 1000), "0.5")  # delta = 1 - O(1e-52): upper end is 1
    assert b.vacuous and b.upper_mpf == 1 and b.contains("1")
    assert not exact_delta_bound(gaussian_dp(1), 1).vacuous


# --- refusals and API --------------------------------------------------------------------------


def test_refusals():
    with pytest.raises(ValueError, match="PoissonSubsampledGaussian"):
        exact_delta_bound([(PoissonSubsampledGaussian(1.0, 0.01), 100)], 1.0)
    with pytest.raises(ValueError, match="PoissonSubsampledGaussian"):
        exact_epsilon_bound([(PoissonSubsampledGaussian(1.0, 0.01), 100)], 1e-5)
    with pytest.raises(ValueError, match="Laplace"):
        exact_delta_bound([(Laplace(1.0), 3)], 1.0)
    with pytest.raises(ValueError, match="mix of Gaussian and pure"):
        exact_delta_bound([(Gaussian(1.0), 1), (RandomizedResponse(1.0), 1)], 1.0)
    big = ExactComposition(pure=[(Fraction(1, 10 + i), 1) for i in range(19)])  # 2^19 classes
    with pytest.raises(ValueError, match="#P-hard"):
        exact_delta_bound(big, 1.0)
    with pytest.raises(ValueError, match="eps must be >= 0"):
        exact_delta_bound(gaussian_dp(1), -1.0)
    with pytest.raises(ValueError, match="delta must lie in"):
        exact_epsilon_bound(gaussian_dp(1), 1.5)
    with pytest.raises(ValueError, match="rational"):
        exact_delta_rational(gaussian_dp(1), RationalExp(2))


def test_numeric_compositions_match_float_layer():
    comp = [(Gaussian(sigma=2.0), 3), (Gaussian(sigma=0.5, sensitivity=0.25), 2)]
    for eps in (0.0, 0.7, 4.0):
        b = exact_delta_bound(comp, eps)
        assert float(b.lower_mpf) == pytest.approx(exact_delta(comp, eps).delta, rel=1e-12)
    het = [(RandomizedResponse(0.5), 3), (RandomizedResponse(0.25), 2), (ApproxDP(1.0, 1e-4), 1)]
    b = exact_delta_bound(het, 0.7)
    assert b.lower_method == "exact-enumeration" and _tight(b)


def test_input_forms_agree():
    # ("log", t) is RationalExp(t); a decimal str is exact; floats are their binary values
    a = exact_delta_rational(pure_dp(("log", Fraction(3, 2)), 6), ("log", 2))
    assert a == exact_delta_rational(pure_dp(RationalExp("1.5"), 6), RationalExp(2))
    b1 = exact_delta_bound(pure_dp("0.5", 6), "1.25")
    b2 = exact_delta_bound(pure_dp(0.5, 6), 1.25)
    assert b1.lower == b2.lower and b1.upper == b2.upper  # 0.5, 1.25 are dyadic


# --- hypothesis: soundness against independent mpmath oracles ----------------------------------

PROPS = settings(max_examples=60, deadline=None)


def _gdp_truth(mu, eps) -> mpmath.mpf:
    with mpmath.workdps(80):
        mu_, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / mu_ + mu_ / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu_ - mu_ / 2)


def _kov_truth(eps0, n: int, eps) -> mpmath.mpf:
    """KOV sum at 80 digits: first term from mpmath.binomial, then the exact ratio recurrence."""
    with mpmath.workdps(80):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(eps)
        q = 1 / (1 + mpmath.exp(-e0))
        j0 = next((j for j in range(n + 1) if (2 * j - n) * e0 > e), n + 1)
        if j0 > n:
            return mpmath.mpf(0)
        pmf = mpmath.binomial(n, j0) * q**j0 * (1 - q) ** (n - j0)
        ratio = q / (1 - q)
        total = mpmath.mpf(0)
        for j in range(j0, n + 1):
            total += pmf * -mpmath.expm1(e - (2 * j - n) * e0)
            pmf *= ratio * (n - j) / (j + 1)
        return total


def _enum_truth(steps: list[float], eps: float) -> mpmath.mpf:
    """Enumerate all 2^n per-step outcome patterns (no class merging) at 80 digits."""
    with mpmath.workdps(80):
        e = mpmath.mpf(eps)
        total = mpmath.mpf(0)
        for signs in itertools.product((1, -1), repeat=len(steps)):
            s = sum(sg * mpmath.mpf(x) for sg, x in zip(signs, steps, strict=True))
            if s > e:
                w = mpmath.mpf(1)
                for sg, x in zip(signs, steps, strict=True):
                    w *= 1 / (1 + mpmath.exp(-sg * mpmath.mpf(x)))
                total += w * -mpmath.expm1(e - s)
        return total


def _brackets(b, truth) -> bool:
    with mpmath.workprec(600):  # exact endpoints: compare without rounding them to 53 bits
        tol = abs(truth) * mpmath.mpf(10) ** -50  # the oracles carry >= 60 good digits
        return bool(b.lower_mpf - tol <= truth <= b.upper_mpf + tol)


@PROPS
@given(
    mu=st.one_of(st.floats(0.01, 30.0), st.sampled_from([0.01, 30.0])),
    eps=st.one_of(st.floats(0.0, 50.0), st.sampled_from([0.0, 50.0])),
)
def test_gdp_delta_brackets_truth(mu, eps):
    b = exact_delta_bound(gaussian_dp(mu), eps)
    assert _brackets(b, _gdp_truth(mu, eps)) and _tight(b)


@PROPS
@given(mu=st.floats(0.05, 10.0), exp10=st.floats(-12.0, -0.5))
def test_gdp_eps_brackets_and_bisection_property(mu, exp10):
    delta = 10.0**exp10
    b = exact_epsilon_bound(gaussian_dp(mu), delta, rel_width=1e-12)
    if b.lower_mpf == 0:
        assert _gdp_truth(mu, 0.0) <= delta
        return
    # delta(lo) > delta >= delta(hi), checked with the independent oracle at the exact ends
    assert _gdp_truth(mu, b.lower_mpf) > delta >= _gdp_truth(mu, b.upper_mpf)
    assert b.width() <= 1e-12 * float(b.lower_mpf)


@PROPS
@given(
    eps0=st.one_of(st.floats(0.01, 2.0), st.floats(2.0, 10.0)),
    n=st.integers(1, 400),
    eps=st.one_of(st.floats(0.0, 20.0), st.floats(20.0, 50.0)),
    delta0=st.sampled_from([0.0, 1e-6, 1e-3]),
)
def test_kov_delta_brackets_truth(eps0, n, eps, delta0):
    b = exact_delta_bound([(ApproxDP(eps0, delta0), n)], eps)
    with mpmath.workdps(80):  # GDP Eq. 12-13 on top of the KOV sum
        d = 1 - (1 - mpmath.mpf(delta0)) ** n
        truth = d + (1 - d) * _kov_truth(eps0, n, eps)
    assert _brackets(b, truth) and (_tight(b) or b.upper_mpf == 1)


@PROPS
@given(
    num=st.integers(2, 40),
    den=st.integers(1, 20),
    n=st.integers(1, 30),
    s_num=st.integers(1, 200),
    s_den=st.integers(1, 50),
)
def test_rational_kov_equals_direct_fraction_sum(num, den, n, s_num, s_den):
    t, s = Fraction(num, den), Fraction(s_num, s_den)
    if t <= 1 or s < 1:
        return
    direct = sum(  # the KOV sum term by term in Fractions (no grouping or suffix sums)
        Fraction(math.comb(n, j)) * t**j / (1 + t) ** n * (1 - s / t ** (2 * j - n))
        for j in range(n + 1)
        if t ** (2 * j - n) > s
    )
    assert exact_delta_rational(pure_dp(RationalExp(t), n), RationalExp(s)) == direct


@settings(max_examples=6, deadline=None)
@given(eps0=st.floats(0.001, 0.05), n=st.integers(5000, 10_000), z=st.floats(-1.0, 4.0))
def test_kov_delta_brackets_truth_large_n(eps0, n, z):
    eps = max(0.0, n * eps0 * math.tanh(eps0 / 2) + z * eps0 * math.sqrt(n))
    b = exact_delta_bound([(RandomizedResponse(eps0), n)], eps)
    assert _brackets(b, _kov_truth(eps0, n, eps)) and _tight(b)


@PROPS
@given(
    steps=st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.75, 1.0, 1.5]), min_size=2, max_size=8),
    eps=st.floats(0.0, 5.0),
)
def test_enumeration_brackets_truth(steps, eps):
    comp = [(RandomizedResponse(x), 1) for x in steps]
    b = exact_delta_bound(comp, eps)
    assert _brackets(b, _enum_truth(steps, eps)) and _tight(b)


@PROPS
@given(
    family=st.sampled_from(["gdp", "kov", "enum"]),
    p=st.floats(0.05, 3.0),
    eps=st.lists(st.floats(0.0, 12.0), min_size=2, max_size=4),
)
def test_delta_bounds_monotone_in_eps(family, p, eps):
    comp = {
        "gdp": gaussian_dp(p),
        "kov": pure_dp(p, 7, delta="1e-4"),
        "enum": pure_dp(p, 2) + pure_dp(RationalExp(3), 2),
    }[family]
    bounds = [exact_delta_bound(comp, e) for e in sorted(eps)]
    for b1, b2 in itertools.pairwise(bounds):
        assert b2.lower_mpf <= b1.upper_mpf  # delta(e1) >= delta(e2) for e1 <= e2
        assert 0 <= b2.lower_mpf and b1.upper_mpf <= 1


@PROPS
@given(eps0=st.floats(0.05, 1.5), n=st.integers(1, 60), exp10=st.floats(-9.0, -0.5))
def test_kov_eps_bisection_property(eps0, n, exp10):
    delta = 10.0**exp10
    b = exact_epsilon_bound([(RandomizedResponse(eps0), n)], delta)
    lo, hi = b.lower_mpf, b.upper_mpf
    if hi == 0:
        assert _kov_truth(eps0, n, 0) <= delta
        return
    # delta(lo) > delta >= delta(hi), checked with the independent oracle at the exact ends
    assert _kov_truth(eps0, n, lo) > delta >= _kov_truth(eps0, n, hi)
    assert b.width() <= 1e-30 * float(lo)
