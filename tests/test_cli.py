"""Tests of the ``edgeworth`` command line (:mod:`numeric.cli`).

Almost everything runs in-process through ``numeric.cli.main(argv)`` with stdout/stderr captured
by ``capsys``; one test runs ``python -m numeric.cli`` in a subprocess. The contract checked here:
valid queries exit 0 and print either two human-readable lines or exactly one JSON object with
no NaN/Infinity literals; every bad flag, value or spec file exits 2 with exactly one line on
stderr and no traceback, and nothing hangs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import warnings
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import pytest

import numeric
from numeric.cli import main
from numeric.mechanisms import MECHANISMS, RandomAllocation
from numeric.spec import MAX_SPEC_BYTES

ROOT = Path(__file__).resolve().parents[1]

# One valid flag set per registered mechanism, and the mechanism the flags describe.
MECH_ARGS: dict[str, tuple[list[str], numeric.Mechanism, int]] = {
    "gaussian": (["--sigma", "2", "--steps", "10"], numeric.Gaussian(2.0), 10),
    "laplace": (["--scale", "2", "--steps", "10"], numeric.Laplace(2.0), 10),
    "randomized-response": (
        ["--eps0", "0.3", "--steps", "20"], numeric.RandomizedResponse(0.3), 20,
    ),
    "subsampled-gaussian": (
        ["--sigma", "1", "--rate", "0.01", "--steps", "1000"],
        numeric.PoissonSubsampledGaussian(1.0, 0.01),
        1000,
    ),
    "approx-dp": (
        ["--eps0", "0.2", "--delta0", "1e-7", "--steps", "20"], numeric.ApproxDP(0.2, 1e-7), 20,
    ),
    "random-allocation": (  # rounds = 1: the Gaussian mechanism with mu = 1/sigma
        ["--sigma", "2", "--rounds", "1", "--steps", "10"], RandomAllocation(2.0, 1), 10,
    ),
}
METHODS = ("aea", "aea-ea", "gdp", "clt", "exact")
# Mechanisms for which the numeric layer has no exact method.
NO_EXACT = {"laplace", "subsampled-gaussian"}

QUERY = {"epsilon": ("--delta", "1e-5"), "delta": ("--eps", "1.0")}


# Warning categories the interpreter does not print by default.
_SILENT_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name!r} in CLI output")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit status, stdout, stderr).

    An exception escaping ``main`` (which the console script would print as a traceback with
    exit status 1) fails the test with a short message. Warnings raised during the call are
    appended to stderr as the interpreter would print them (pytest would otherwise swallow
    them), so "one line on stderr" means what a user sees.
    """
    escaped = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for quiet in _SILENT_BY_DEFAULT:
            warnings.simplefilter("ignore", quiet)
        try:
            rc = main(list(argv))
        except Exception as exc:
            escaped = f"{type(exc).__name__}: {str(exc)[:200]}"
    if escaped is not None:
        pytest.fail(f"main({list(argv)!r}) raised {escaped} instead of returning", pytrace=False)
    out, err = capsys.readouterr()
    err += "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in caught
    )
    return rc, out, err


def parse_one_json(out: str) -> dict:
    """stdout must be exactly one line holding one strict-JSON object."""
    lines = out.splitlines()
    assert len(lines) == 1, f"expected one JSON line, got {out!r}"
    obj = json.loads(out, parse_constant=_reject_constant)
    assert isinstance(obj, dict)
    return obj


def assert_usage_error(rc: int, out: str, err: str, *needles: str, status: int = 2) -> str:
    """Exit status 2 (bad input; ``status=1``: valid input a method cannot answer), nothing on
    stdout, one line on stderr naming the problem, no traceback."""
    assert rc == status, (rc, out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {err!r}"
    line = lines[0]
    assert line.startswith("edgeworth: error: "), line
    for needle in needles:
        assert needle.lower() in line.lower(), (needle, line)
    return line


@contextmanager
def no_hang(seconds: int = 30):
    """Fail instead of hanging forever (SIGALRM; POSIX only)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(signum, frame):
        raise TimeoutError(f"CLI call did not finish within {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_every_registered_mechanism_is_covered():
    assert set(MECH_ARGS) == set(MECHANISMS)


# --------------------------------------------------------------------------------------------
# demo
# --------------------------------------------------------------------------------------------


def test_demo_prints_aea_gdp_and_exact_rows(capsys):
    rc, out, err = run(capsys, "demo")
    assert rc == 0, err
    assert "Traceback" not in err
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        for i, tok in enumerate(parts):
            if tok == "ms" and i >= 2:
                rows[" ".join(parts[: i - 2])] = parts[i - 2]
                break
    for order in (0, 1, 2):
        assert f"AEA (Q-only Edgeworth) order {order}" in rows
    assert "AEA two-sided (EA paper) order 2" in rows
    assert "GDP (Thm 3.5 centring mu)" in rows
    assert "CLT (Bu et al. 2020 mu)" in rows
    assert "exact (binomial, KOV)" in rows
    # the certified row prints an interval "[lo, hi]" (when certify is installed), not a number
    certified = [k for k in rows if k.startswith("certified interval")]
    for k in certified:
        rows.pop(k)
    if certified:
        assert "vacuous" in out or "proven bound" in out
    for label, value in rows.items():
        v = float(value)  # "n/a" would fail here: every demo row must produce a number
        assert math.isfinite(v) and v > 0.0, (label, value)
    # The seed example's exact row is the API's exact answer.
    rr = numeric.compose([(numeric.RandomizedResponse(1 / math.sqrt(10)), 10)])
    want = numeric.epsilon(rr, 1e-3, "exact").epsilon
    assert float(rows["exact (binomial, KOV)"]) == pytest.approx(want, abs=1e-5)
    # Estimates are labelled as such.
    assert "estimate" in out.lower()


# --------------------------------------------------------------------------------------------
# epsilon / delta for every mechanism and method
# --------------------------------------------------------------------------------------------


def _applicable(mech: str, method: str) -> bool:
    return not (method == "exact" and mech in NO_EXACT)


MATRIX = [
    (query, mech, method)
    for query in ("epsilon", "delta")
    for mech in MECH_ARGS
    for method in METHODS
    if _applicable(mech, method)
]


@pytest.mark.parametrize(("query", "mech", "method"), MATRIX)
def test_query_json_every_mechanism_and_method(capsys, query, mech, method):
    flags, mechanism, steps = MECH_ARGS[mech]
    target_flag, target = QUERY[query]
    rc, out, err = run(
        capsys, query, "--mechanism", mech, *flags, target_flag, target, "--method", method,
        "--json",
    )
    assert rc == 0, err
    assert err == ""
    obj = parse_one_json(out)
    for key in (query, "method", "estimate", "direction", "warnings", "inputs"):
        assert key in obj, (key, obj)
    assert obj["method"] == method
    assert isinstance(obj["estimate"], bool)
    assert isinstance(obj["direction"], str) and obj["direction"]
    assert isinstance(obj["warnings"], list)
    assert all(isinstance(w, str) for w in obj["warnings"])
    inputs = obj["inputs"]
    assert inputs["mechanism"] == mech
    assert inputs["steps"] == steps
    value = obj[query]
    assert isinstance(value, float | int)
    comp = numeric.compose([(mechanism, steps)])
    if query == "epsilon":
        assert obj["infinite"] is False
        assert math.isfinite(value) and value >= 0.0
        assert inputs["delta"] == 1e-5
        want = numeric.epsilon(comp, 1e-5, method).epsilon
    else:
        assert 0.0 <= value <= 1.0
        assert inputs["eps"] == 1.0
        want = numeric.delta(comp, 1.0, method).delta
    assert value == pytest.approx(want, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("mech", sorted(MECH_ARGS))
@pytest.mark.parametrize("query", ["epsilon", "delta"])
def test_query_text_output(capsys, query, mech):
    flags, _, _ = MECH_ARGS[mech]
    target_flag, target = QUERY[query]
    rc, out, err = run(capsys, query, "--mechanism", mech, *flags, target_flag, target)
    assert rc == 0, err
    assert err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"{query} = ")
    float(lines[0].split()[2])  # the value is a number
    # the default method is auto: it names the method that answered and why it was chosen
    assert lines[1].strip().startswith("method: ")
    method = lines[1].split()[1].rstrip(";,")
    assert method in ("exact", "saddlepoint", "certified"), lines[1]
    assert lines[2].strip().startswith("chosen by auto: "), lines
    assert all(line.startswith("  warning: ") for line in lines[3:])


@pytest.mark.parametrize(
    ("mech", "method", "expected"),
    [
        ("gaussian", "exact", False),
        ("gaussian", "gdp", False),
        ("gaussian", "aea", False),
        ("randomized-response", "exact", False),
        ("subsampled-gaussian", "aea", True),
        ("subsampled-gaussian", "gdp", True),
        ("subsampled-gaussian", "clt", True),
    ],
)
@pytest.mark.parametrize("query", ["epsilon", "delta"])
def test_estimate_flag(capsys, query, mech, method, expected):
    flags, _, _ = MECH_ARGS[mech]
    target_flag, target = QUERY[query]
    rc, out, err = run(
        capsys, query, "--mechanism", mech, *flags, target_flag, target, "--method", method,
        "--json",
    )
    assert rc == 0, err
    assert parse_one_json(out)["estimate"] is expected


@pytest.mark.parametrize("method", METHODS)
def test_infinite_epsilon_is_null_with_flag(capsys, method):
    argv = [
        "epsilon", "--mechanism", "approx-dp", "--eps0", "0.1", "--delta0", "0.01",
        "--steps", "100", "--delta", "1e-3", "--method", method,
    ]
    rc, out, err = run(capsys, *argv, "--json")
    assert rc == 0, err
    obj = parse_one_json(out)
    assert obj["epsilon"] is None
    assert obj["infinite"] is True
    assert obj["warnings"], "an infinite epsilon must come with a warning"
    # Text mode says so in words.
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    assert out.splitlines()[0].startswith("epsilon = inf")


def test_finite_epsilon_has_infinite_false(capsys):
    rc, out, _ = run(
        capsys, "epsilon", "--mechanism", "approx-dp", "--eps0", "0.1", "--delta0", "1e-8",
        "--steps", "100", "--delta", "1e-3", "--json",
    )
    assert rc == 0
    obj = parse_one_json(out)
    assert obj["infinite"] is False
    assert obj["epsilon"] > 0.0


@pytest.mark.parametrize("query", ["epsilon", "delta"])
def test_exact_subsampled_gaussian_is_refused(capsys, query):
    target_flag, target = QUERY[query]
    rc, out, err = run(
        capsys, query, "--mechanism", "subsampled-gaussian", "--sigma", "1", "--rate", "0.01",
        "--steps", "100", target_flag, target, "--method", "exact",
    )
    # valid input that the named method cannot answer: exit 1, not the bad-input status 2
    assert_usage_error(rc, out, err, "exact", "PoissonSubsampledGaussian", status=1)


def test_exact_subsampled_gaussian_refused_with_json_too(capsys):
    rc, out, err = run(
        capsys, "epsilon", "--mechanism", "subsampled-gaussian", "--sigma", "1", "--rate",
        "0.01", "--steps", "100", "--delta", "1e-5", "--method", "exact", "--json",
    )
    assert_usage_error(rc, out, err, "exact", status=1)


@pytest.mark.parametrize("order", ["0", "1", "2"])
@pytest.mark.parametrize("method", ["aea", "aea-ea"])
def test_order_flag(capsys, method, order):
    rc, out, err = run(
        capsys, "epsilon", "--mechanism", "subsampled-gaussian", "--sigma", "1", "--rate",
        "0.01", "--steps", "1000", "--delta", "1e-5", "--method", method, "--order", order,
        "--json",
    )
    assert rc == 0, err
    obj = parse_one_json(out)
    assert obj["details"]["order"] == int(order)
    comp = numeric.compose([(numeric.PoissonSubsampledGaussian(1.0, 0.01), 1000)])
    want = numeric.epsilon(comp, 1e-5, method, order=int(order)).epsilon
    assert obj["epsilon"] == pytest.approx(want, rel=1e-12)


def test_steps_in_float_notation_is_accepted(capsys):
    base = ["epsilon", "--mechanism", "gaussian", "--sigma", "30", "--delta", "1e-5", "--json"]
    rc1, out1, _ = run(capsys, *base, "--steps", "1e4")
    rc2, out2, _ = run(capsys, *base, "--steps", "10000")
    assert rc1 == rc2 == 0
    assert parse_one_json(out1) == parse_one_json(out2)


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        # rate = 1 is inside (0, 1]: the subsampled Gaussian is then the Gaussian mechanism.
        (["epsilon", "--mechanism", "subsampled-gaussian", "--sigma", "1", "--rate", "1",
          "--steps", "10", "--delta", "1e-5"],
         lambda: numeric.epsilon_mu(math.sqrt(10), 1e-5)),
        (["epsilon", "--mechanism", "subsampled-gaussian", "--sigma", "2", "--rate", "1",
          "--steps", "10", "--delta", "1e-5"],
         lambda: numeric.epsilon_mu(math.sqrt(10) / 2, 1e-5)),
        # A huge but finite eps is valid; delta(eps) is then 0.
        (["delta", "--mechanism", "gaussian", "--sigma", "1", "--steps", "10", "--eps", "1e100"],
         lambda: 0.0),
        (["delta", "--mechanism", "gaussian", "--sigma", "1", "--steps", "10", "--eps", "1e100",
          "--method", "gdp"],
         lambda: 0.0),
    ],
    ids=["rate 1 sigma 1", "rate 1 sigma 2", "eps 1e100 aea", "eps 1e100 gdp"],
)
def test_boundary_values_are_valid(capsys, argv, want):
    rc, out, err = run(capsys, *argv, "--json")
    assert rc == 0, err
    assert err == ""
    obj = parse_one_json(out)
    assert obj[argv[0]] == pytest.approx(want(), rel=1e-9, abs=1e-300)


# --------------------------------------------------------------------------------------------
# bad flags and values
# --------------------------------------------------------------------------------------------

_G = ["--mechanism", "gaussian", "--sigma", "1", "--steps", "10"]
_SG = ["--mechanism", "subsampled-gaussian", "--sigma", "1", "--steps", "10"]

BAD_ARGV = {
    "sigma nan": (["epsilon", "--mechanism", "gaussian", "--sigma", "nan", "--steps", "10",
                   "--delta", "1e-5"], ("sigma",)),
    "sigma -1": (["epsilon", "--mechanism", "gaussian", "--sigma", "-1", "--steps", "10",
                  "--delta", "1e-5"], ("sigma",)),
    "sigma 0": (["epsilon", "--mechanism", "gaussian", "--sigma", "0", "--steps", "10",
                 "--delta", "1e-5"], ("sigma",)),
    "sigma inf": (["epsilon", "--mechanism", "gaussian", "--sigma", "inf", "--steps", "10",
                   "--delta", "1e-5"], ("sigma",)),
    "sigma abc": (["epsilon", "--mechanism", "gaussian", "--sigma", "abc", "--steps", "10",
                   "--delta", "1e-5"], ("sigma",)),
    "rate 1.5": (["epsilon", *_SG, "--rate", "1.5", "--delta", "1e-5"], ("rate",)),
    "rate 0": (["epsilon", *_SG, "--rate", "0", "--delta", "1e-5"], ("rate",)),
    "rate nan": (["epsilon", *_SG, "--rate", "nan", "--delta", "1e-5"], ("rate",)),
    "rate missing": (["epsilon", *_SG, "--delta", "1e-5"], ("rate",)),
    "delta 0": (["epsilon", *_G, "--delta", "0"], ("delta",)),
    "delta 1": (["epsilon", *_G, "--delta", "1"], ("delta",)),
    "delta nan": (["epsilon", *_G, "--delta", "nan"], ("delta",)),
    "delta -1e-5": (["epsilon", *_G, "--delta", "-1e-5"], ("delta",)),
    "delta inf": (["epsilon", *_G, "--delta", "inf"], ("delta",)),
    "delta missing": (["epsilon", *_G], ("delta",)),
    "eps nan": (["delta", *_G, "--eps", "nan"], ("eps",)),
    "eps -1": (["delta", *_G, "--eps", "-1"], ("eps",)),
    "eps inf": (["delta", *_G, "--eps", "inf"], ("eps",)),
    "steps 2.5": (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--steps", "2.5",
                   "--delta", "1e-5"], ("steps",)),
    "steps 0": (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--steps", "0",
                 "--delta", "1e-5"], ("steps",)),
    "steps -3": (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--steps", "-3",
                  "--delta", "1e-5"], ("steps",)),
    "steps abc": (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--steps", "abc",
                   "--delta", "1e-5"], ("steps",)),
    "steps inf": (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--steps", "inf",
                   "--delta", "1e-5"], ("steps",)),
    "steps 1e20": (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--steps", "1e20",
                    "--delta", "1e-5"], ("steps",)),
    "missing steps": (["epsilon", "--mechanism", "gaussian", "--sigma", "1",
                       "--delta", "1e-5"], ("steps",)),
    "unknown mechanism": (["epsilon", "--mechanism", "foo", "--sigma", "1", "--steps", "10",
                           "--delta", "1e-5"], ("mechanism", "foo")),
    "unknown method": (["epsilon", *_G, "--delta", "1e-5", "--method", "foo"],
                       ("method", "foo")),
    "no mechanism or spec": (["epsilon", "--delta", "1e-5"], ("mechanism", "spec")),
    "spec and mechanism": (["epsilon", "--spec", "x.toml", *_G, "--delta", "1e-5"],
                           ("spec", "mechanism")),
    "spec and steps": (["epsilon", "--spec", "x.toml", "--steps", "10", "--delta", "1e-5"],
                       ("spec",)),
    "unknown flag": (["epsilon", *_G, "--delta", "1e-5", "--bogus"], ("--bogus",)),
    "wrong flag for mechanism": (["epsilon", "--mechanism", "laplace", "--scale", "1",
                                  "--sigma", "3", "--steps", "10", "--delta", "1e-5"],
                                 ("sigma",)),
    "missing sigma": (["epsilon", "--mechanism", "gaussian", "--steps", "10",
                       "--delta", "1e-5"], ("sigma",)),
    "order 99": (["epsilon", *_G, "--delta", "1e-5", "--order", "99"], ("order",)),
    "order -1": (["epsilon", *_G, "--delta", "1e-5", "--order", "-1"], ("order",)),
    "order 2.5": (["epsilon", *_G, "--delta", "1e-5", "--order", "2.5"], ("order",)),
    "eps0 -1": (["epsilon", "--mechanism", "randomized-response", "--eps0", "-1",
                 "--steps", "10", "--delta", "1e-5"], ("eps",)),
    "delta0 1": (["epsilon", "--mechanism", "approx-dp", "--eps0", "0.1", "--delta0", "1",
                  "--steps", "10", "--delta", "1e-5"], ("delta",)),
    "scale 0": (["epsilon", "--mechanism", "laplace", "--scale", "0", "--steps", "10",
                 "--delta", "1e-5"], ("scale",)),
    "sensitivity -1": (["epsilon", "--mechanism", "gaussian", "--sigma", "1",
                        "--sensitivity", "-1", "--steps", "10", "--delta", "1e-5"],
                       ("sensitivity",)),
    "no subcommand": ([], ("command",)),
    "unknown subcommand": (["frobnicate"], ("frobnicate",)),
}


@pytest.mark.parametrize("case", sorted(BAD_ARGV))
def test_bad_flags_exit_2_with_one_line(capsys, case):
    argv, needles = BAD_ARGV[case]
    with no_hang():
        rc, out, err = run(capsys, *argv)
    assert_usage_error(rc, out, err, *needles)


@pytest.mark.parametrize("case", ["sigma nan", "delta 0", "steps abc", "unknown method"])
def test_bad_flags_with_json_still_one_stderr_line(capsys, case):
    argv, needles = BAD_ARGV[case]
    rc, out, err = run(capsys, *argv, "--json")
    assert_usage_error(rc, out, err, *needles)


# --------------------------------------------------------------------------------------------
# --spec FILE
# --------------------------------------------------------------------------------------------

SPEC_OK = """\
version = 1

[[mechanism]]
type = "gaussian"
sigma = 5.0
count = 10

[[mechanism]]
type = "subsampled-gaussian"
sigma = 1.0
rate = 0.01
count = 1000

[[mechanism]]
type = "approx-dp"
eps0 = 0.05
delta0 = 1e-7
count = 20
"""


def _spec_comp() -> numeric.Composition:
    return numeric.compose([
        (numeric.Gaussian(5.0), 10),
        (numeric.PoissonSubsampledGaussian(1.0, 0.01), 1000),
        (numeric.ApproxDP(0.05, 1e-7), 20),
    ])


@pytest.fixture
def spec_ok(tmp_path) -> Path:
    path = tmp_path / "ok.toml"
    path.write_text(SPEC_OK, encoding="utf-8")
    return path


@pytest.mark.parametrize("method", ["aea", "aea-ea", "gdp", "clt"])
def test_spec_epsilon_equals_api(capsys, spec_ok, method):
    rc, out, err = run(
        capsys, "epsilon", "--spec", str(spec_ok), "--delta", "1e-5", "--method", method,
        "--json",
    )
    assert rc == 0, err
    obj = parse_one_json(out)
    want = numeric.epsilon(_spec_comp(), 1e-5, method)
    assert obj["epsilon"] == want.epsilon
    assert obj["infinite"] is False
    assert obj["estimate"] is True
    assert obj["direction"] == want.direction
    assert obj["inputs"]["spec"] == str(spec_ok)
    assert obj["inputs"]["composition"] == _spec_comp().describe()
    assert obj["details"]["delta_part"] == pytest.approx(_spec_comp().delta_part, rel=1e-15)


def test_spec_delta_equals_api(capsys, spec_ok):
    rc, out, err = run(capsys, "delta", "--spec", str(spec_ok), "--eps", "2.0", "--json")
    assert rc == 0, err
    obj = parse_one_json(out)
    assert obj["delta"] == numeric.delta(_spec_comp(), 2.0).delta


def test_spec_text_output_matches_api(capsys, spec_ok):
    # a deterministic method: auto's certified answer here depends on how far the lattice gets
    # in its 3.5 s wall-clock budget, so under load the CLI and API runs could differ
    rc, out, err = run(capsys, "epsilon", "--spec", str(spec_ok), "--delta", "1e-5",
                       "--method", "saddlepoint")
    assert rc == 0, err
    value = float(out.splitlines()[0].split()[2])
    want = numeric.epsilon(_spec_comp(), 1e-5, method="saddlepoint").epsilon
    assert value == pytest.approx(want, rel=1e-9)


def test_spec_equals_parse_and_load_spec(spec_ok):
    loaded = numeric.load_spec(spec_ok)
    # the same binary64 parameters; the spec also records the decimals typed where they are not
    # exact doubles (certified methods use those), so compare with the record removed
    plain = tuple((dataclasses.replace(m, typed=()), c) for m, c in loaded.terms)
    assert numeric.compose(plain) == _spec_comp()
    typed = {type(m).__name__: dict(m.typed) for m, _ in loaded.terms}
    assert typed["Gaussian"] == {}  # 5.0 is an exact double: nothing to record
    assert Decimal(typed["ApproxDP"]["delta"]) == Decimal("1e-7")


def _mech_table(body: str) -> str:
    return "[[mechanism]]\n" + body


def _deep_array(depth: int) -> str:
    return "x = " + "[" * depth + "]" * depth + "\n" + _mech_table(
        'type = "gaussian"\nsigma = 1.0\ncount = 1\n'
    )


BAD_SPECS: dict[str, tuple[bytes | None, tuple[str, ...]]] = {
    "invalid toml": (b"x = [1,\n", ("malformed TOML",)),
    "unclosed table": (b"[[mechanism\ntype = 'gaussian'\n", ("malformed TOML",)),
    "binary garbage": (bytes(range(256)) * 8, ("malformed TOML",)),
    "nul bytes": (b"\x00" * 4096, ("malformed TOML",)),
    "unknown type": (_mech_table('type = "foo"\ncount = 1\n').encode(), ("type", "foo")),
    "missing type": (_mech_table("sigma = 1.0\ncount = 1\n").encode(), ("type",)),
    "missing count": (_mech_table('type = "gaussian"\nsigma = 1.0\n').encode(), ("count",)),
    "count -1": (_mech_table('type = "gaussian"\nsigma = 1.0\ncount = -1\n').encode(),
                 ("count",)),
    "count 0": (_mech_table('type = "gaussian"\nsigma = 1.0\ncount = 0\n').encode(),
                ("count",)),
    "count 1.5": (_mech_table('type = "gaussian"\nsigma = 1.0\ncount = 1.5\n').encode(),
                  ("count",)),
    "count string": (_mech_table('type = "gaussian"\nsigma = 1.0\ncount = "10"\n').encode(),
                     ("count",)),
    "count bool": (_mech_table('type = "gaussian"\nsigma = 1.0\ncount = true\n').encode(),
                   ("count",)),
    "count huge": (_mech_table('type = "gaussian"\nsigma = 1.0\ncount = 10000000000000000\n')
                   .encode(), ("count",)),
    "count inf": (_mech_table('type = "gaussian"\nsigma = 1.0\ncount = inf\n').encode(),
                  ("count",)),
    "sigma string": (_mech_table('type = "gaussian"\nsigma = "abc"\ncount = 1\n').encode(),
                     ("sigma",)),
    "sigma bool": (_mech_table('type = "gaussian"\nsigma = true\ncount = 1\n').encode(),
                   ("sigma",)),
    "sigma array": (_mech_table('type = "gaussian"\nsigma = [1.0]\ncount = 1\n').encode(),
                    ("sigma",)),
    "sigma nan": (_mech_table('type = "gaussian"\nsigma = nan\ncount = 1\n').encode(),
                  ("sigma",)),
    "sigma -inf": (_mech_table('type = "gaussian"\nsigma = -inf\ncount = 1\n').encode(),
                   ("sigma",)),
    "sigma 0": (_mech_table('type = "gaussian"\nsigma = 0\ncount = 1\n').encode(), ("sigma",)),
    "rate 2": (_mech_table('type = "subsampled-gaussian"\nsigma = 1.0\nrate = 2.0\ncount = 1\n')
               .encode(), ("rate",)),
    "missing param": (_mech_table('type = "subsampled-gaussian"\nsigma = 1.0\ncount = 1\n')
                      .encode(), ("rate",)),
    "unknown param": (_mech_table('type = "gaussian"\nsigma = 1.0\nfoo = 1.0\ncount = 1\n')
                      .encode(), ("foo",)),
    "extra top-level key": (
        ("extra = 1\n" + _mech_table('type = "gaussian"\nsigma = 1.0\ncount = 1\n')).encode(),
        ("top-level", "extra"),
    ),
    "bad version": (
        ("version = 2\n" + _mech_table('type = "gaussian"\nsigma = 1.0\ncount = 1\n')).encode(),
        ("version",),
    ),
    "mechanism not an array": (b'[mechanism]\ntype = "gaussian"\nsigma = 1.0\ncount = 1\n',
                               ("mechanism",)),
    "empty file": (b"", ("mechanism",)),
    "only comments": (b"# nothing here\n", ("mechanism",)),
    "too many tables": (
        _mech_table('type = "gaussian"\nsigma = 1.0\ncount = 1\n').encode() * 10_001,
        ("at most",),
    ),
    "over 1 MiB": (b"# " + b"x" * MAX_SPEC_BYTES + b"\n", ("too large",)),
    "deeply nested array": (_deep_array(5_000).encode(), ("malformed",)),
    "nonexistent path": (None, ("cannot read",)),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_malformed_spec_exits_2_with_one_line(capsys, tmp_path, case):
    content, needles = BAD_SPECS[case]
    path = tmp_path / "spec.toml"
    if content is not None:
        path.write_bytes(content)
    with no_hang():
        rc, out, err = run(capsys, "epsilon", "--spec", str(path), "--delta", "1e-5")
    line = assert_usage_error(rc, out, err, *needles)
    assert str(path) in line  # the message names the file


def test_spec_directory_exits_2(capsys, tmp_path):
    with no_hang():
        rc, out, err = run(capsys, "epsilon", "--spec", str(tmp_path), "--delta", "1e-5")
    assert_usage_error(rc, out, err, "cannot read")


@pytest.mark.parametrize("case", ["invalid toml", "unknown type", "count -1"])
def test_malformed_spec_delta_query_and_json(capsys, tmp_path, case):
    content, needles = BAD_SPECS[case]
    path = tmp_path / "spec.toml"
    path.write_bytes(content)
    rc, out, err = run(capsys, "delta", "--spec", str(path), "--eps", "1", "--json")
    assert_usage_error(rc, out, err, *needles)


# --------------------------------------------------------------------------------------------
# the real entry point, in a subprocess
# --------------------------------------------------------------------------------------------


def test_python_dash_m_subprocess():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "numeric.cli"]
    ok = subprocess.run(
        [*cmd, "epsilon", "--mechanism", "gaussian", "--sigma", "2", "--steps", "10",
         "--delta", "1e-5", "--method", "exact", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert ok.returncode == 0, ok.stderr
    obj = parse_one_json(ok.stdout)
    comp = numeric.compose([(numeric.Gaussian(2.0), 10)])
    assert obj["epsilon"] == numeric.exact_epsilon(comp, 1e-5).epsilon
    assert obj["estimate"] is False
    bad = subprocess.run(
        [*cmd, "epsilon", "--mechanism", "gaussian", "--sigma", "nan", "--steps", "10",
         "--delta", "1e-5"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert_usage_error(bad.returncode, bad.stdout, bad.stderr, "sigma")
