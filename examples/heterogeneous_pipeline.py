"""A heterogeneous pipeline: Gaussian statistics, DP-SGD training and (eps, delta)-DP queries.

Run:  python examples/heterogeneous_pipeline.py

The same composition is written once with the Python API and once as a TOML spec file (the format
``edgeworth epsilon --spec FILE`` reads), and both give the same estimate.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from numeric import ApproxDP, Gaussian, PoissonSubsampledGaussian, compose, epsilon, load_spec

SPEC = """
[[mechanism]]
type = "gaussian"
sigma = {gauss_sigma}
count = {gauss_count}

[[mechanism]]
type = "subsampled-gaussian"
sigma = 1.1
rate = 0.005
count = {sgd_steps}

[[mechanism]]
type = "approx-dp"
eps0 = 0.05
delta0 = 1e-8
count = {queries}
"""


def main(sgd_steps: int = 20_000, queries: int = 50, delta: float = 1e-5) -> dict[str, float]:
    gauss_sigma, gauss_count = 20.0, 10
    comp = compose([
        (Gaussian(gauss_sigma), gauss_count),
        (PoissonSubsampledGaussian(1.1, 0.005), sgd_steps),
        (ApproxDP(0.05, 1e-8), queries),
    ])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pipeline.toml"
        path.write_text(SPEC.format(gauss_sigma=gauss_sigma, gauss_count=gauss_count,
                                    sgd_steps=sgd_steps, queries=queries))
        from_spec = load_spec(path)
    out = {}
    for method in ("aea", "gdp", "clt"):
        a = epsilon(comp, delta, method)
        b = epsilon(from_spec, delta, method)
        out[method] = a.epsilon
        print(f"{method:<4} eps = {a.epsilon:.5f} (spec file: {b.epsilon:.5f}); estimate")
    print(f"composed delta part of the (eps, delta) queries: {comp.delta_part:.3e}")
    return out


if __name__ == "__main__":
    main()
