"""Extreme parameter ranges (issue 12): small sigma for the subsampled Gaussian, huge step
counts, tiny delta, and clean CLI output at the extremes."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_derive_cli_short_timeout_keeps_stderr_clean():
    """`edgeworth derive laplace --order 2 --timeout 1e-9`: the quadrature fallback is reported on
    stdout ("warning:" lines), not as a Python warning with a file path on stderr (issue 12)."""
    pytest.importorskip("sympy")
    code = ("import sys; from numeric.cli import main; "
            "sys.exit(main(['derive', 'laplace', '--order', '2', '--timeout', '1e-9']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "warning: some cumulants were computed by mpmath quadrature" in proc.stdout
    # Laplace pair, closed form E_P[L] = -(mu - 1 + e^{-mu}) = -e^{-1} at mu = 1
    assert "kappa_1: X = -0.367879441171442" in proc.stdout
