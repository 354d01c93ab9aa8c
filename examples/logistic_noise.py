r"""Logistic noise: a mechanism no peer library ships, derived from its density alone.

Run:  python examples/logistic_noise.py [--mu 0.2] [--steps 100] [--delta 1e-5]

P = Logistic(0, 1), Q = Logistic(mu, 1) with density p(x) = e^{-x} / (1 + e^{-x})^2 and
mu = sensitivity / scale. The PLLR L = mu + 2 log(1 + e^{-x}) - 2 log(1 + e^{mu - x}) is bounded
by mu, so the mechanism is mu-pure-DP. derive finds kappa_1 = 2 - mu coth(mu/2) (= -KL) in closed
form and computes the higher cumulants by mpmath quadrature, saying so. The AEA and GDP epsilons
printed are *estimates*, not bounds; so is the saddlepoint epsilon, from the compiled mechanism's
numeric CGF (``mech.cgf_batch``, log-space quadrature of the densities). With the
``certify`` extra installed the example also prints a *certified* eps interval: derive proves L
monotone in x and finds the CDFs in closed form, so the lattice method of certify.lattice
encloses the composition (a proof, not an estimate).
"""

from __future__ import annotations

import argparse

import sympy as sp

from derive.compile import compile_mechanism
from derive.mechanism import DensityMechanism, Parameter
from numeric import compose, epsilon

x, mu = sp.symbols("x mu", real=True)
p = sp.exp(-x) / (1 + sp.exp(-x)) ** 2
LOGISTIC = DensityMechanism(
    "logistic", x, p, p.subs(x, x - mu),
    params=(Parameter(mu, default=1.0, typical=(0.05, 5.0)),),
    description="Logistic noise, P = Logistic(0, 1), Q = Logistic(mu, 1).",
)


def main(mu: float = 0.2, steps: int = 100, delta: float = 1e-5,
         symbolic_timeout: float = 10.0) -> dict[str, object]:
    mech = compile_mechanism(LOGISTIC, mu=mu, symbolic_timeout=symbolic_timeout)
    comp = compose([(mech, steps)])
    aea, gdp = epsilon(comp, delta, "aea", order=2), epsilon(comp, delta, "gdp")
    res = mech.derived()
    print(f"{steps} x {mech!r}, delta={delta:g}; symmetric={mech.symmetric}")
    for k, (v, how) in enumerate(zip(res.x, res.provenance_x, strict=True), start=1):
        print(f"  kappa_{k}(X) = {float(v): .12g}   ({how})")
    print(f"  AEA order 2 eps = {aea.epsilon:.5f}  (estimate)")
    print(f"  GDP eps         = {gdp.epsilon:.5f}  (estimate)")
    out = {"aea": aea.epsilon, "gdp": gdp.epsilon, "cumulants_x": res.floats()[0],
           "cumulants_y": res.floats()[1], "provenance": res.provenance_x}
    try:
        sad = epsilon(comp, delta, "saddlepoint")
    except ValueError as exc:  # NotApplicable (a ValueError), e.g. a diverging CGF
        print(f"  saddlepoint     : not available ({exc})")
    else:
        out["saddlepoint"] = sad.epsilon
        print(f"  saddlepoint eps = {sad.epsilon:.5f}  (estimate)")
    try:
        from certify.lattice import lattice_epsilon_interval
    except ImportError:  # certify extra not installed
        return out
    cert = lattice_epsilon_interval(comp, delta)
    out["certified"] = (float(cert.lower_mpf), float(cert.upper_mpf))
    print(f"  certified eps in [{out['certified'][0]:.6f}, {out['certified'][1]:.6f}]  "
          f"({cert.upper_method}; proven)")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mu", type=float, default=0.2)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--delta", type=float, default=1e-5)
    a = ap.parse_args()
    main(a.mu, a.steps, a.delta)
