"""Time limits never kill the process: a too-short limit falls back to flagged quadrature, a bad one
is a clean ValueError, and no SIGALRM escapes the guarded block (exit status 142 / -SIGALRM)."""

from __future__ import annotations

import math
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("sympy")

from derive.builtins import LAPLACE
from derive.mechanism import QuadratureFallbackWarning
from derive.timelimit import (
    MIN_SECONDS,
    TimeLimitExceeded,
    attempt,
    check_timeout,
    time_limit,
    timer_running,
)

ROOT = Path(__file__).resolve().parent.parent
SIGNAL_DEATHS = {-signal.SIGALRM, 128 + signal.SIGALRM}
needs_timers = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                  reason="no interval timers on this platform")


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)
    assert proc.returncode not in SIGNAL_DEATHS, proc.stderr[-2000:]
    assert "TimeLimitExceeded" not in proc.stderr and "_TimeoutError" not in proc.stderr
    return proc


@needs_timers
def test_cli_tiny_timeout_falls_back_to_quadrature():
    proc = _run("-m", "numeric.cli", "derive", "laplace", "--order", "2", "--timeout", "1e-9")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "mpmath quadrature" in proc.stdout
    # kappa_1(X) = 1 - mu - e^-mu at mu = 1 (docs/math.md section 4), now by quadrature
    assert "-0.367879441171442" in proc.stdout


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_cli_bad_timeout_is_a_clean_error(value):
    proc = _run("-m", "numeric.cli", "derive", "laplace", "--order", "2", "--timeout", value)
    assert proc.returncode == 2
    assert "symbolic_timeout must be > 0" in proc.stderr
    assert "Traceback" not in proc.stderr


@needs_timers
def test_derive_tiny_timeout_in_a_subprocess():
    code = (
        "import warnings\n"
        "from derive.builtins import LAPLACE\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    d = LAPLACE.derive(2, symbolic_timeout=1e-5)\n"
        "print('closed', d.closed_form, 'warned', any('quadrature' in str(x.message) for x in w))\n"
        "res = LAPLACE.cumulants(2, mu=1.0, symbolic_timeout=1e-5)\n"
        "print('kappa1', float(res.x[0]))\n"
        "import time; time.sleep(0.3)  # a stray repeating alarm would kill the process here\n"
    )
    proc = _run("-c", code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "closed False warned True" in proc.stdout
    kappa1 = float(proc.stdout.split("kappa1")[1])
    assert kappa1 == pytest.approx(-math.exp(-1.0), rel=1e-14)


@needs_timers
def test_tiny_limits_never_fire_outside_the_block():
    """Limits of 1 ns (clamped to 1 ms) around work of about that length: the alarm lands
    before, inside and after the block; it must be caught inside or ignored, and no timer may
    be left running."""
    code = (
        "import signal, time\n"
        "from derive.timelimit import TimeLimitExceeded, time_limit\n"
        "before = signal.getsignal(signal.SIGALRM)\n"
        "hits = 0\n"
        "for i in range(400):\n"
        "    try:\n"
        "        with time_limit(1e-9):\n"
        "            sum(range(5000 * (i % 7)))\n"
        "    except TimeLimitExceeded:\n"
        "        hits += 1\n"
        "    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0\n"
        "    assert signal.getsignal(signal.SIGALRM) is before\n"
        "time.sleep(0.3)\n"
        "print('ok', hits)\n"
    )
    proc = _run("-c", code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("ok")


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, math.nan, True, "1"])
def test_bad_timeouts_are_value_errors(bad):
    with pytest.raises(ValueError, match="symbolic_timeout"):
        LAPLACE.derive(2, symbolic_timeout=bad)
    with pytest.raises(ValueError, match="seconds"):
        time_limit(bad)


def test_check_timeout_accepts_none_inf_and_positive():
    assert check_timeout("t", None) is None
    assert check_timeout("t", math.inf) == math.inf
    assert check_timeout("t", 2) == 2.0


@needs_timers
def test_unlimited_and_nested_limits():
    with time_limit(math.inf):
        assert not timer_running()
    with time_limit(5.0):
        assert timer_running()
        with time_limit(1e-9):  # runs under the enclosing limit: no new timer, no early alarm
            total = sum(range(200000))
        assert total > 0 and timer_running()
    assert not timer_running()


@needs_timers
def test_attempt_returns_none_on_timeout_and_reraises_an_enclosing_one():
    import time

    def spin():
        t0 = time.monotonic()
        while time.monotonic() < t0 + 2:
            pass
        return "done"

    assert attempt(spin, MIN_SECONDS) is None
    assert attempt(lambda: 1 / 0) is None
    with pytest.raises(TimeLimitExceeded), time_limit(0.02):
        attempt(spin, 10.0)  # the enclosing limit's timeout is not swallowed
    assert not timer_running()


def test_tiny_timeout_in_process_gives_the_quadrature_values():
    """In this process too: every sympy integral times out, the numbers come from quadrature and
    agree with the closed forms."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QuadratureFallbackWarning)
        res = LAPLACE.cumulants(2, mu=0.5, symbolic_timeout=2e-9)
        ref = LAPLACE.cumulants(2, mu=0.5)
    assert res.used_quadrature
    for a, b in zip(res.floats()[0], ref.floats()[0], strict=True):
        assert a == pytest.approx(b, rel=1e-14)
