"""A certified query that stops short of its width target says which time budget would reach
the next level, and the query commands take that budget (``--time-budget``), issue 16."""

from __future__ import annotations

import json
import math
import re

import pytest

pytest.importorskip("flint")

from lattice_contract import dyadic_epsilon_bound

import certify.lattice_target as lt
from certify.lattice_target import EVALS_PER_SECOND, LEVELS
from numeric.cli import main
from numeric.mechanisms import PoissonSubsampledGaussian

_HINT = re.compile(r"a time budget of about (\d+) s would allow it")




@pytest.mark.parametrize("several", [False, True])
@pytest.mark.parametrize("spent", [10_000, 200_000])
def test_the_hinted_budget_affords_the_next_level(several, spent):
    b = dyadic_epsilon_bound(4.4, 4.8)  # far from a 1e-4 width: the ladder wants to go up
    evals = 50_000
    got, why = lt._next_level(0, b, 1e-4, evals, spent, float(spent), None, several)
    assert got is None and "time budget affords no finer grid" in why
    seconds = int(_HINT.search(why).group(1))
    # the budget the hint names buys the next level, and one second less does not
    nxt, none = lt._next_level(0, b, 1e-4, evals, spent, seconds * EVALS_PER_SECOND, None,
                               several)
    assert nxt is not None and none is None
    short, _ = lt._next_level(0, b, 1e-4, evals, spent, (seconds - 1) * EVALS_PER_SECOND, None,
                              several)
    assert short is None


def test_following_the_hint_reaches_a_finer_level(monkeypatch):
    # six distinct noise levels; a work budget that affords only the coarsest level
    comp = [(PoissonSubsampledGaussian(0.8 + 0.15 * i, 0.01), 100) for i in range(6)]
    monkeypatch.setattr(lt, "DEFAULT_EVALUATIONS", 5_000)
    first = lt.target_epsilon_interval(comp, 1e-5)
    hint = [w for w in first.warnings if "would allow it" in w]
    assert hint, first.warnings
    seconds = int(_HINT.search(hint[0]).group(1))
    from certify.budget import time_budget

    with time_budget(seconds):
        again = lt.target_epsilon_interval(comp, 1e-5)
    res0, res1 = first.inputs["resolution"], again.inputs["resolution"]
    assert LEVELS.index(lt.Resolution(res1["single"], res1["composed"])) > LEVELS.index(
        lt.Resolution(res0["single"], res0["composed"]))
    assert again.lower_mpf <= first.upper_mpf and first.lower_mpf <= again.upper_mpf
    assert again.upper_mpf - again.lower_mpf < first.upper_mpf - first.lower_mpf


def test_query_commands_take_a_time_budget(capsys):
    argv = ["epsilon", "--mechanism", "laplace", "--scale", "1", "--steps", "20",
            "--delta", "1e-5", "--method", "certified", "--time-budget", "30", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"]["options"]["time_budget"] == 30.0
    assert float(out["lower"]) <= float(out["upper"]) and math.isfinite(float(out["upper"]))


@pytest.mark.parametrize(("method", "value", "says"), [
    ("saddlepoint", "5", "--time-budget: method 'saddlepoint' takes no time budget"),
    ("certified", "-1", "time_budget must be a positive number of seconds"),
    ("certified", "0", "time_budget must be a positive number of seconds"),
    ("certified", "nan", "--time-budget must be finite"),
])
def test_bad_time_budgets_are_refused_by_name(capsys, method, value, says):
    argv = ["epsilon", "--mechanism", "laplace", "--scale", "1", "--steps", "20",
            "--delta", "1e-5", "--method", method, "--time-budget", value]
    assert main(argv) == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(("method", "value", "says"), [
    ("saddlepoint", "1e-3", "--rel-width: method 'saddlepoint' takes no requested width"),
    ("exact", "1e-3", "--rel-width: method 'exact' takes no requested width"),
    ("auto", "1e-3", "method 'auto' takes no requested width (methods that do: certified)"),
    ("certified", "nan", "--rel-width must be finite"),
    ("certified", "2", "rel_width must be a number in (0, 1)"),
])
def test_bad_or_ignored_rel_widths_are_refused_by_name(capsys, method, value, says):
    """--rel-width is refused where the method would ignore it (as --time-budget is), and bad
    values are refused by name."""
    argv = ["epsilon", "--mechanism", "laplace", "--scale", "1", "--steps", "20",
            "--delta", "1e-5", "--method", method, "--rel-width", value]
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_query_commands_take_a_rel_width(capsys):
    argv = ["epsilon", "--mechanism", "laplace", "--scale", "1", "--steps", "20",
            "--delta", "1e-5", "--method", "certified", "--rel-width", "1e-3", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"]["options"]["rel_width"] == 1e-3
