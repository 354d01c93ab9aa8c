"""Random allocation (numeric.shuffle): exact one-epoch values, composition, bounds, CLI.

Oracles: the exact one-epoch TV values of the project's source notes for VDE/EvD-26 (copied
here: sigma = 1: M = 2, 10, 100 -> 0.2978, 0.1520, 0.0514; sigma = 2: 0.1440, 0.0665, 0.0212;
sigma = 0.5: M = 10, 100 -> 0.4036, 0.1879), the Gaussian closed forms at M = 1, mpmath
quadrature at 30 digits for M = 2 (the inner lognormal expectation in closed form), Monte Carlo
with fixed seeds (tolerances of 5 standard errors), and the worked example of van Dijk and Ertan
(arXiv:2605.06259: sigma = 1, delta = 0.01 needs M ~ 1.136e6; N ~ 1.14e7 at batch 10).
"""

from __future__ import annotations

import json
import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from numeric.cli import main
from numeric.errors import NotApplicable
from numeric.mechanisms import RandomAllocation
from numeric.shuffle import hooks
from numeric.shuffle.api import shuffle_delta, shuffle_epsilon, shuffle_tv
from numeric.shuffle.bounds import (
    chi_square_tv,
    edgeworth_cdf,
    edgeworth_scaling,
    edgeworth_tv,
    gdp_mu,
    impossibility,
    theorem_4_1,
    theorem_4_1_delta,
)
from numeric.shuffle.compose import composed_loss
from numeric.shuffle.exact import delta_one_epoch, tradeoff_one_epoch, tv_one_epoch
from numeric.shuffle.law import one_epoch_law
from numeric.shuffle.plan import compare_poisson, sigma_required

# ------------------------------------------------------------------ exact one-epoch values


@pytest.mark.parametrize(("sigma", "rounds", "want"), [
    pytest.param(1.0, 2, 0.2978, marks=pytest.mark.slow), (1.0, 10, 0.1520), (1.0, 100, 0.0514),
    (2.0, 2, 0.1440), (2.0, 10, 0.0665), (2.0, 100, 0.0212),
    (0.5, 100, 0.1879),
])
def test_tv_reference_values(sigma, rounds, want):
    r = tv_one_epoch(sigma, rounds)
    assert r.value == pytest.approx(want, abs=5e-5)  # 4 decimals in the reference
    assert r.accuracy < 1e-6 * r.value


@pytest.mark.parametrize("sigma", [0.7, 1.0, 3.0])
def test_rounds_one_is_the_gaussian(sigma):
    mu = 1.0 / sigma
    assert tv_one_epoch(sigma, 1).value == pytest.approx(2 * ndtr(mu / 2) - 1, rel=1e-14)
    c = RandomAllocation(sigma, 1).pllr_cumulants(3)
    assert c.x == pytest.approx((-mu * mu / 2, mu * mu, 0.0))
    assert c.y == pytest.approx((mu * mu / 2, mu * mu, 0.0))
    for eps in (0.0, 0.5):
        want = ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)
        for order in ("P||Q", "Q||P"):
            assert delta_one_epoch(sigma, 1, eps, order).value == pytest.approx(want, rel=1e-12)


def _mp_m2(sigma: float, kind: str, kappa: float) -> float:
    """M = 2 by mpmath at 30 digits: E (S/2 - kappa)_+ ('up') or E (kappa - S/2)_+ ('down'),
    integrating Y1 with the closed-form lognormal call/put for Y2."""
    mp.mp.dps = 30
    s = mp.mpf(1) / sigma
    m = -s * s / 2

    def call(b):  # E (Y - b)_+
        if b <= 0:
            return 1 - b
        return mp.ncdf((m + s * s - mp.log(b)) / s) - b * mp.ncdf((m - mp.log(b)) / s)

    def put(c):  # E (c - Y)_+
        if c <= 0:
            return mp.mpf(0)
        return c * mp.ncdf((mp.log(c) - m) / s) - mp.ncdf((mp.log(c) - m - s * s) / s)

    def f(z):
        y1 = mp.exp(z)
        dens = mp.npdf(z, m, s)
        b = 2 * kappa - y1
        return (call(b) if kind == "up" else put(b)) * dens

    cut = mp.log(2 * kappa)
    val = mp.quad(f, [m - 14 * s, cut, m + 14 * s]) if cut < m + 14 * s else mp.quad(
        f, [m - 14 * s, m + 14 * s])
    return float(val / 2)


@pytest.mark.parametrize("sigma", [pytest.param(1.0, marks=pytest.mark.slow), 2.0])
def test_m2_against_mpmath(sigma):
    assert tv_one_epoch(sigma, 2).value == pytest.approx(_mp_m2(sigma, "up", 1.0), rel=1e-8)
    eps = 0.3
    d_pq = _mp_m2(sigma, "up", math.exp(eps))
    d_qp = math.exp(eps) * _mp_m2(sigma, "down", math.exp(-eps))
    assert delta_one_epoch(sigma, 2, eps, "P||Q").value == pytest.approx(d_pq, rel=1e-8)
    assert delta_one_epoch(sigma, 2, eps, "Q||P").value == pytest.approx(d_qp, rel=1e-8)


def _mc_ratio(sigma: float, rounds: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, rounds))
    return np.exp(x / sigma - 0.5 / sigma**2).mean(axis=1)  # S/M under H0


@pytest.mark.parametrize(("sigma", "rounds"), [(2.0, 10), (1.0, 30)])
def test_monte_carlo_one_epoch(sigma, rounds):
    r = _mc_ratio(sigma, rounds, 200_000, seed=14)
    eps = 0.1
    samples = {
        "tv": 0.5 * np.abs(r - 1.0),
        "P||Q": np.maximum(r - math.exp(eps), 0.0),
        "Q||P": np.maximum(1.0 - math.exp(eps) * r, 0.0),
    }
    got = {"tv": tv_one_epoch(sigma, rounds).value,
           "P||Q": delta_one_epoch(sigma, rounds, eps, "P||Q").value,
           "Q||P": delta_one_epoch(sigma, rounds, eps, "Q||P").value}
    for key, x in samples.items():
        se = x.std() / math.sqrt(x.size)
        assert abs(got[key] - x.mean()) < 5 * se, (key, got[key], x.mean(), se)


def test_both_orders_agree_at_zero_and_swap_identity():
    sigma, rounds = 1.5, 40
    tv = tv_one_epoch(sigma, rounds).value
    for order in ("P||Q", "Q||P"):
        assert delta_one_epoch(sigma, rounds, 0.0, order).value == pytest.approx(tv, rel=1e-10)
    # swap identity: delta_QP(eps) = 1 - e^eps + e^eps delta_PQ(-eps), with delta_PQ(-eps) =
    # E(S/M - e^-eps)_+ computed here from the CDF form: beta + alpha relations of the law
    law = one_epoch_law(sigma, rounds, 1.0)
    eps = 0.2
    k = math.exp(-eps)
    a, _ = law.mad(np.array([k]))
    d_pq_neg = 0.5 * (a[0] + 1.0 - k)
    want = 1.0 - math.exp(eps) + math.exp(eps) * d_pq_neg
    assert delta_one_epoch(sigma, rounds, eps, "Q||P").value == pytest.approx(want, rel=1e-9)


def test_tradeoff_curve_properties():
    sigma, rounds = 1.0, 50
    alpha = np.linspace(0.0005, 0.9995, 41)
    f, acc = tradeoff_one_epoch(sigma, rounds, alpha)
    assert acc < 1e-9
    assert np.all(f <= 1.0 - alpha + 1e-12) and np.all(f >= 0.0)
    assert np.all(np.diff(f) < 0.0)  # decreasing
    assert np.all(np.diff(f, 2) > -1e-9)  # convex
    # sup_a (1 - a - f(a)) = TV, attained at a = P(S/M > 1)
    law = one_epoch_law(sigma, rounds, 1.0)
    a_star = 1.0 - float(law.cdf(np.array([1.0]))[0][0])
    f_star, _ = tradeoff_one_epoch(sigma, rounds, [a_star])
    tv = tv_one_epoch(sigma, rounds).value
    assert 1.0 - a_star - f_star[0] == pytest.approx(tv, rel=1e-8)
    assert np.all(1.0 - alpha - f <= tv + 1e-12)
    # f lies above every f_{eps, delta(eps)} (P = H0 order)
    for eps in (0.1, 0.3):
        d = delta_one_epoch(sigma, rounds, eps, "P||Q").value
        lower = np.maximum(0.0, np.maximum(1 - d - math.exp(eps) * alpha,
                                           math.exp(-eps) * (1 - d - alpha)))
        assert np.all(f >= lower - 1e-10)
    # Monte Carlo: beta at the threshold kappa = 1.1 equals E_H0[S/M; S/M <= kappa]
    r = _mc_ratio(sigma, rounds, 200_000, seed=3)
    a_mc = float(np.mean(r > 1.1))
    b_mc = r * (r <= 1.1)
    f_mc, _ = tradeoff_one_epoch(sigma, rounds, [a_mc])
    assert abs(f_mc[0] - b_mc.mean()) < 5 * b_mc.std() / math.sqrt(r.size) + 0.01 * 0.002


def test_mechanism_cumulants_monte_carlo():
    mech = RandomAllocation(2.0, 100)
    c = mech.pllr_cumulants(2)
    r = _mc_ratio(2.0, 100, 200_000, seed=7)
    lx = np.log(r)
    se = lx.std() / math.sqrt(lx.size)
    assert abs(c.x[0] - lx.mean()) < 5 * se
    assert abs(c.y[0] - np.mean(r * lx)) < 5 * np.std(r * lx) / math.sqrt(lx.size)
    assert c.x[1] == pytest.approx(lx.var(), rel=0.02)
    assert mech.clt_mu_squared() == pytest.approx(math.expm1(0.25) / 100)


# ------------------------------------------------------------------ E epochs


def test_composition_one_epoch_matches_exact():
    comp = composed_loss(2.0, 1000, 1)
    for eps in (0.0, 0.02, 0.05):
        for order in ("P||Q", "Q||P"):
            got, acc = comp.delta(eps, order)
            want = delta_one_epoch(2.0, 1000, eps, order).value
            assert got == pytest.approx(want, rel=1e-4)
            assert abs(got - want) <= acc + 1e-12


def test_composition_monte_carlo_three_epochs():
    sigma, rounds, epochs, eps = 2.0, 100, 3, 0.1
    rng = np.random.default_rng(5)
    n = 200_000
    lr = np.ones(n)
    for _ in range(epochs):
        x = rng.standard_normal((n, rounds))
        lr *= np.exp(x / sigma - 0.5 / sigma**2).mean(axis=1)
    res = shuffle_delta(sigma, rounds, epochs, eps)
    pq = np.maximum(lr - math.exp(eps), 0.0)
    qp = np.maximum(1.0 - math.exp(eps) * lr, 0.0)
    for order, x in (("P||Q", pq), ("Q||P", qp)):
        se = x.std() / math.sqrt(n)
        assert abs(res.per_direction[order] - x.mean()) < 5 * se + res.details["accuracy"]


def test_epsilon_result_and_refinement():
    res = shuffle_epsilon(2.0, 1000, 20, 1e-5, cells_per_sd=100)
    fine = shuffle_epsilon(2.0, 1000, 20, 1e-5, cells_per_sd=200)
    assert res.estimate and res.method == "shuffle-fft-estimate"  # E > 1: an FFT estimate
    assert set(res.per_direction) == {"P||Q", "Q||P"}
    assert abs(res.epsilon - fine.epsilon) <= res.details["accuracy"]
    assert fine.details["accuracy"] < 1e-4 * fine.epsilon
    # E epochs of one round: the Gaussian with mu = sqrt(E)/sigma
    g = shuffle_epsilon(3.0, 1, 9, 1e-5)
    from numeric.gdp import epsilon_mu

    assert g.epsilon == pytest.approx(epsilon_mu(1.0, 1e-5), rel=1e-10)


# ------------------------------------------------------------------ bounds and planner


def test_theorem_4_1_worked_example():
    # van Dijk and Ertan's worked example: sigma = 1, delta = 0.01 -> M ~ 1.136e6
    t = theorem_4_1(1.0, 1_136_000)
    assert t["tv"] == pytest.approx(0.01, rel=2e-4) and t["in_regime"]
    assert "reconstructed" in t["status"]
    assert not theorem_4_1(0.5, 100)["in_regime"]  # sigma < sqrt(3 / ln M)
    # E = 100 epochs at batch 10: N ~ 1e11 (the paper's order of magnitude): (1 - d1)^100 = 0.99
    d1 = 1 - 0.99 ** (1 / 100)
    m100 = math.ceil((theorem_4_1_delta(1.0) / d1) ** 2)  # delta_1 = K / sqrt(M)
    assert 10 * m100 == pytest.approx(1.125e11, rel=1e-3)
    assert theorem_4_1(1.0, m100, 100)["tv"] == pytest.approx(0.01, rel=1e-5)


def test_closed_forms():
    v = math.e - 1
    assert chi_square_tv(1.0, 1000, 3)["tv"] == pytest.approx(
        0.5 * math.sqrt((1 + v / 1000) ** 3 - 1), rel=1e-12)
    assert gdp_mu(1.0, 1000, 10) == pytest.approx(math.sqrt(10 * v / 1000), rel=1e-12)
    assert not impossibility(0.3, 1000)["applies"]  # threshold 1/sqrt(2 ln 1000) = 0.269
    imp = impossibility(0.25, 1000)
    assert imp["applies"] and imp["threshold"] == pytest.approx(1 / math.sqrt(2 * math.log(1000)))
    assert imp["tv_lower"] == pytest.approx(0.5 * (1 - 1 / math.sqrt(4 * math.pi
                                                                     * math.log(1000))))
    exact = tv_one_epoch(1.0, 1000).value
    assert chi_square_tv(1.0, 1000)["tv"] >= exact  # a rigorous bound
    assert edgeworth_tv(1.0, 1000) == pytest.approx(exact, rel=2e-3)
    assert edgeworth_cdf(2.0, 10**4, 1.0) == pytest.approx(0.5, abs=0.01)
    sc = edgeworth_scaling(1.0, 2.0)  # E = 4 M: mu = 2 sqrt(v)
    assert sc["mu"] == pytest.approx(2 * math.sqrt(v), rel=1e-14)
    assert sc["tv_limit"] == pytest.approx(2 * ndtr(math.sqrt(v)) - 1, rel=1e-14)


def test_sigma_required():
    res = sigma_required(1000, 0.1, methods=("chi_square", "theorem_4_1", "exact"))
    # chi-square: sqrt(v / M) / 2 = 0.1 -> v = 40 -> sigma = 1 / sqrt(log 41)
    assert res["chi_square"]["sigma"] == pytest.approx(1 / math.sqrt(math.log(41)), rel=2e-4)
    assert theorem_4_1(res["theorem_4_1"]["sigma"], 1000)["tv"] == pytest.approx(0.1, rel=1e-3)
    s_exact = res["exact"]["sigma"]
    assert s_exact < res["chi_square"]["sigma"]
    assert tv_one_epoch(s_exact, 1000).value <= 0.1 < tv_one_epoch(s_exact * 0.999, 1000).value
    # Thm 4.1's delta_1 >= 2 B sqrt(3) / sqrt(M) = 0.052 at M = 1000 for every sigma
    assert sigma_required(1000, 0.05, methods=("theorem_4_1",))["theorem_4_1"]["sigma"] is None
    with pytest.raises(ValueError, match="methods"):
        sigma_required(1000, 0.05, methods=("magic",))


def test_compare_poisson_row():
    row = compare_poisson(2.0, 10, 10_000, 2, 1e-5, method="saddlepoint")
    assert row["rounds"] == 1000 and row["steps"] == 2000
    assert row["poisson_epsilon"] > 0 and row["shuffle_epsilon"] > 0
    with pytest.raises(ValueError, match="multiple"):
        compare_poisson(2.0, 7, 10_000, 2, 1e-5)


# ------------------------------------------------------------------ CLI


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_tv_json(capsys):
    rc, out, err = _run(capsys, "shuffle", "tv", "--sigma", "1", "--rounds", "100", "--json")
    assert rc == 0, err
    obj = json.loads(out)
    assert {"inputs", "method", "tv", "tv_accuracy", "bounds"} <= set(obj)
    assert set(obj["bounds"]) == {"theorem_4_1", "chi_square", "gdp"}
    assert obj["tv"] == pytest.approx(0.0514, abs=5e-5)
    assert "tv_lower" not in obj


def test_cli_epsilon_json_like_edgeworth_epsilon(capsys):
    rc, out, err = _run(capsys, "shuffle", "epsilon", "--sigma", "2", "--rounds", "1000",
                        "--epochs", "5", "--delta", "1e-5", "--json")
    assert rc == 0, err
    obj = json.loads(out)
    for key in ("epsilon", "infinite", "delta", "method", "estimate", "direction",
                "per_direction", "warnings", "details", "inputs", "certified"):
        assert key in obj
    assert obj["estimate"] is True and obj["epsilon"] > 0


@pytest.mark.slow
def test_cli_plan_json(capsys):
    rc, out, err = _run(capsys, "shuffle", "plan", "--sigma", "1", "--delta", "0.01",
                        "--batch-size", "10", "--json")
    assert rc == 0, err
    obj = json.loads(out)
    for key in ("theorem_4_1", "chi_square", "exact"):
        assert {"rounds", "dataset_size"} <= set(obj[key])
    assert obj["theorem_4_1"]["rounds"] == pytest.approx(1.136e6, rel=2e-3)
    assert obj["theorem_4_1"]["dataset_size"] == pytest.approx(1.14e7, rel=5e-3)
    assert obj["exact"]["rounds"] == pytest.approx(2.7e3, rel=0.02)
    assert obj["exact"]["rounds"] < obj["chi_square"]["rounds"] < obj["theorem_4_1"]["rounds"]


def test_cli_certified_without_and_with_provider(capsys, monkeypatch):
    monkeypatch.setattr(hooks, "_PROVIDERS", [])
    monkeypatch.setattr(hooks, "load_plugins", lambda: None)
    rc, _, err = _run(capsys, "shuffle", "tv", "--sigma", "1", "--rounds", "10", "--method",
                      "certified")
    assert rc == 1 and "certified shuffle bounds need the certify extra" in err

    class FakeBound:
        def __init__(self, lo, hi):
            self.lower, self.upper = lo, hi

    hooks.register_certified_shuffle(lambda s, m, e: FakeBound(0.15, 0.16),
                                      lambda s, m, e, eps, o: FakeBound(1e-6, 2e-6))
    rc, out, err = _run(capsys, "shuffle", "tv", "--sigma", "1", "--rounds", "10", "--method",
                        "certified", "--json")
    assert rc == 0, err
    obj = json.loads(out)
    assert (obj["tv"], obj["tv_lower"], obj["tv_upper"]) == (0.16, 0.15, 0.16)


def test_cli_plan_json_shape(capsys):
    rc, out, err = _run(capsys, "shuffle", "plan", "--sigma", "3", "--delta", "0.2", "--json")
    assert rc == 0, err
    obj = json.loads(out)
    for key in ("theorem_4_1", "chi_square", "exact"):
        assert {"rounds", "dataset_size"} <= set(obj[key])
    assert obj["exact"]["rounds"] <= obj["chi_square"]["rounds"]
    assert tv_one_epoch(3.0, obj["exact"]["rounds"]).value <= 0.2
    assert obj["exact"]["rounds"] == 1  # M = 1: the Gaussian, TV = 2 Phi(1/6) - 1 = 0.132


def test_bound_ends_reads_float_or_decimal_ends():
    class Floats:
        lower, upper = 0.25, 0.5

    class Decimals:  # a Bound whose ends do not convert to float: read to_dict()
        lower = upper = object()

        def to_dict(self):
            return {"lower": "0.1", "upper": None}

    assert hooks.bound_ends(Floats()) == (0.25, 0.5)
    lo, hi = hooks.bound_ends(Decimals())
    assert lo < 0.1 and lo == math.nextafter(0.1, 0.0) and hi == math.inf


@pytest.mark.parametrize("argv", [
    ("tv", "--sigma", "0", "--rounds", "10"),
    ("tv", "--sigma", "nan", "--rounds", "10"),
    ("tv", "--sigma", "1", "--rounds", "0"),
    ("tv", "--sigma", "1", "--rounds", "2.5"),
    ("tv", "--sigma", "1", "--rounds", "10", "--method", "magic"),
    ("epsilon", "--sigma", "1", "--rounds", "10", "--epochs", "2", "--delta", "1.5"),
    ("plan", "--sigma", "1", "--delta", "0"),
])
def test_cli_bad_input_exit_2(capsys, argv):
    rc, out, err = _run(capsys, "shuffle", *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1


def test_bad_input_value_errors():
    for bad in (0.0, -1.0, math.nan, math.inf, 0.01):
        with pytest.raises(ValueError, match="sigma"):
            tv_one_epoch(bad, 10)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="rounds"):
            RandomAllocation(1.0, bad)
    with pytest.raises(ValueError, match="eps"):
        delta_one_epoch(1.0, 10, -0.1)
    with pytest.raises(ValueError, match="order"):
        delta_one_epoch(1.0, 10, 0.1, "Q|P")
    with pytest.raises(ValueError, match="alpha"):
        tradeoff_one_epoch(1.0, 10, [0.0])
    with pytest.raises(ValueError, match="epochs"):
        shuffle_tv(1.0, 10, 0)
    with pytest.raises(NotApplicable):
        tv_one_epoch(0.3, 2)  # the lognormal tail is too heavy for the Fourier rule
