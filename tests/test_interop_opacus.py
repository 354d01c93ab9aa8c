"""Opacus drop-ins: certify.interop.opacus.CertifiedAccountant and the labelled estimate
numeric.interop.opacus.EstimateAccountant (history merging, state dict, refusals)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("flint", reason="the certified accountant needs python-flint (certify extra)")

from certify.interop.opacus import CertifiedAccountant
from numeric.interop.opacus import EstimateAccountant


def test_history_merges_like_opacus_rdp():
    acc = CertifiedAccountant()
    for nm, q in [(1.0, 1.0)] * 3 + [(2.0, 1.0)] + [(1.0, 1.0)] * 2:
        acc.step(noise_multiplier=nm, sample_rate=q)
    assert acc.history == [(1.0, 1.0, 3), (2.0, 1.0, 1), (1.0, 1.0, 2)]
    assert len(acc) == 3 and acc.num_steps == 6
    assert CertifiedAccountant.mechanism() == "edgeworth-certified"


def test_get_epsilon_is_certified_upper_end():
    acc = CertifiedAccountant()
    assert acc.get_epsilon(1e-5) == 0.0  # nothing recorded, as Opacus
    for _ in range(50):
        acc.step(noise_multiplier=2.0, sample_rate=1.0)  # rate 1: the Gaussian, exact
    eps = acc.get_epsilon(1e-5, alphas=[2, 4])  # Opacus's accuracy keywords are ignored
    b = acc.last_bound
    assert b.upper_method.startswith("exact") and float(b.upper_mpf) <= eps
    assert eps == pytest.approx(float(b.lower_mpf), rel=1e-12)
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(0.0)
    with pytest.raises(ValueError, match="bogus"):
        acc.get_epsilon(1e-5, bogus=1)


def test_zero_noise_is_non_private_and_zero_rate_free():
    acc = CertifiedAccountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.0)
    assert acc.get_epsilon(1e-5) == 0.0
    acc.step(noise_multiplier=0.0, sample_rate=0.5)
    assert acc.get_epsilon(1e-5) == math.inf


def test_bad_steps():
    acc = CertifiedAccountant()
    with pytest.raises(ValueError, match="noise_multiplier"):
        acc.step(noise_multiplier=-1.0, sample_rate=0.1)
    with pytest.raises(ValueError, match="sample_rate"):
        acc.step(noise_multiplier=1.0, sample_rate=1.5)
    with pytest.raises(TypeError):
        acc.step(1.0, 0.1)  # keyword-only, as Opacus


def test_state_dict_round_trip_and_refusals():
    acc = CertifiedAccountant()
    acc.step(noise_multiplier=1.5, sample_rate=1.0)
    acc.step(noise_multiplier=1.5, sample_rate=1.0)
    sd = acc.state_dict()
    assert sd["history"] == [(1.5, 1.0, 2)] and sd["mechanism"] == "edgeworth-certified"
    other = CertifiedAccountant()
    other.load_state_dict(sd)
    assert other.history == acc.history and other.get_epsilon(1e-5) == acc.get_epsilon(1e-5)
    with pytest.raises(ValueError, match="mechanism"):
        EstimateAccountant().load_state_dict(sd)
    for bad in ({}, {"history": []}, {"mechanism": "edgeworth-certified"},
                {"history": [(1.0, 0.1)], "mechanism": "edgeworth-certified"}):
        with pytest.raises(ValueError):
            CertifiedAccountant().load_state_dict(bad)


def test_estimate_accountant_warns_and_labels():
    acc = EstimateAccountant()
    for _ in range(10):
        acc.step(noise_multiplier=2.0, sample_rate=1.0)
    with pytest.warns(UserWarning, match="estimates"):
        e = acc.get_epsilon(1e-5)
    assert e.warnings[0].startswith("EstimateAccountant returns estimates")
    cert = CertifiedAccountant()
    cert.load_state_dict({**acc.state_dict(), "mechanism": "edgeworth-certified"})
    assert float(e) == pytest.approx(cert.get_epsilon(1e-5), rel=1e-9)


def test_optimizer_hook():
    acc = CertifiedAccountant()

    class Optim:
        noise_multiplier, accumulated_iterations = 1.0, 2

    hook = acc.get_optimizer_hook_fn(sample_rate=0.01)
    hook(Optim())
    hook(Optim())
    assert acc.history == [(1.0, 0.02, 2)]


def test_subclasses_opacus_when_installed():
    opacus = pytest.importorskip(
        "opacus", reason="opacus is not installed (it needs torch); the drop-in works without it")
    assert isinstance(CertifiedAccountant(), opacus.accountants.IAccountant)
    assert isinstance(EstimateAccountant(), opacus.accountants.IAccountant)
