"""Noise calibration (numeric.calibrate): the round trip (the returned sigma meets the target,
sigma * (1 - 2 tol) does not), estimates labelled, bad input, the CLI handler."""

from __future__ import annotations

import json

import pytest

from numeric.calibrate import (
    calibrate_noise,
    calibrate_rate,
    calibrate_steps,
    register_command,
    upper_epsilon,
)
from numeric.mechanisms import PoissonSubsampledGaussian
from numeric.methods import epsilon


def _upper(method, sigma, rate, steps, delta):
    return upper_epsilon(epsilon([(PoissonSubsampledGaussian(sigma, rate), steps)], delta,
                                 method))[0]


def test_certified_round_trip_gaussian():
    pytest.importorskip("flint", reason="certified needs python-flint (certify extra)")
    c = calibrate_noise(2.0, 1e-5, 1.0, 100, tol=1e-3)  # rate 1: the Gaussian, exact GDP
    assert c.method == "certified" and not c.estimate and c.satisfied
    assert c.lower is not None and c.upper is not None and float(c.upper) <= 2.0
    assert _upper("certified", c.sigma, 1.0, 100, 1e-5) <= 2.0
    assert _upper("certified", c.sigma * (1 - 2e-3), 1.0, 100, 1e-5) > 2.0
    assert c.to_dict()["sigma"] == c.sigma


def test_estimate_variants_are_labelled():
    c = calibrate_noise(2.0, 1e-5, 0.01, 10_000, method="saddlepoint", tol=1e-3)
    assert c.estimate and c.method == "saddlepoint" and c.satisfied
    assert _upper("saddlepoint", c.sigma * (1 - 2e-3), 0.01, 10_000, 1e-5) > 2.0
    s = calibrate_steps(2.0, 1e-5, 0.01, 1.0, method="saddlepoint")
    assert s.estimate and _upper("saddlepoint", 1.0, 0.01, s.steps, 1e-5) <= 2.0
    assert _upper("saddlepoint", 1.0, 0.01, s.steps + 1, 1e-5) > 2.0
    r = calibrate_rate(2.0, 1e-5, 1.0, 1000, method="saddlepoint")
    assert r.estimate and _upper("saddlepoint", 1.0, r.rate, 1000, 1e-5) <= 2.0
    assert _upper("saddlepoint", 1.0, r.rate * (1 + 2e-3), 1000, 1e-5) > 2.0


@pytest.mark.parametrize("kwargs, name", [
    ({"target_eps": -1.0}, "target_eps"), ({"delta": 1.0}, "delta"), ({"rate": 0.0}, "rate"),
    ({"steps": 0}, "steps"), ({"tol": 0.5}, "tol"), ({"method": "nope"}, "method"),
])
def test_bad_input(kwargs, name):
    args = {"target_eps": 1.0, "delta": 1e-5, "rate": 0.01, "steps": 100, **kwargs}
    method = args.pop("method", "saddlepoint")
    tol = args.pop("tol", 1e-3)
    with pytest.raises(ValueError, match=name):
        calibrate_noise(**args, method=method, tol=tol)


def test_cli_handler(capsys):
    pytest.importorskip("flint", reason="certified needs python-flint (certify extra)")
    import argparse

    parser = argparse.ArgumentParser()
    register_command(parser.add_subparsers())
    args = parser.parse_args(["calibrate", "--target-eps", "2", "--delta", "1e-5", "--rate", "1",
                              "--steps", "100", "--json"])
    assert args.handler(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "certified" and out["sigma"] > 0
    assert float(out["upper"]) <= 2.0 and float(out["lower"]) <= float(out["upper"])
    bad = parser.parse_args(["calibrate", "--target-eps", "x", "--delta", "1e-5", "--rate", "1",
                             "--steps", "100"])
    with pytest.raises(ValueError, match="--target-eps"):
        bad.handler(bad)


@pytest.mark.slow
def test_certified_round_trip_dpsgd():
    pytest.importorskip("flint", reason="certified needs python-flint (certify extra)")
    c = calibrate_noise(2.0, 1e-5, 0.05, 50, tol=1e-2)
    assert c.satisfied and not c.estimate
    assert _upper("certified", c.sigma * (1 - 2e-2), 0.05, 50, 1e-5) > 2.0
