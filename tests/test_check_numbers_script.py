"""benchmarks/check_numbers_unchanged.py: encoding, grid, comparison verdicts, a tiny recording."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load():
    path = ROOT / "benchmarks" / "check_numbers_unchanged.py"
    spec = importlib.util.spec_from_file_location("check_numbers_unchanged", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve the module's annotations through it
    spec.loader.exec_module(mod)
    return mod


cnu = _load()


@dataclass(frozen=True)
class _Point:
    man: int
    exp: int


def test_encode_is_exact_and_generic():
    assert cnu.encode(0.1) == "f:0.1"
    assert cnu.encode(-0.0) == "f:-0.0"
    assert cnu.encode(math.inf) == "f:inf"
    assert cnu.encode(math.nan) == "f:nan"
    assert cnu.encode(np.float64(1) / 3) == "f:" + repr(1 / 3)
    assert cnu.encode(np.array([0.5, 2.0])) == ["f:0.5", "f:2.0"]
    assert cnu.encode(np.array(0.25)) == "f:0.25"
    assert cnu.encode((True, 3, None, "P||Q")) == [True, 3, None, "P||Q"]
    assert cnu.encode({"a": _Point(5, -2)}) == {"a": {"__type__": "_Point", "man": 5, "exp": -2}}
    assert cnu.encode(object()).startswith("repr:")


def test_grid_quick_is_a_subset_with_unique_ids():
    full, quick = cnu.build_grid(False), cnu.build_grid(True)
    ids = [c.id for c in full]
    assert len(ids) == len(set(ids))
    assert {c.id for c in quick} <= set(ids)
    certified = [c for c in full if c.method == "certified"]
    assert len(certified) == 2 * len(cnu.CERTIFIED_CASES)
    groups = cnu._groups(full)
    assert all(g[0].cold and not any(c.cold for c in g[1:]) for g in groups)
    assert any(len(g) > 1 for g in groups)  # the warm sequences


def _answer(eps: float, warnings=("w",), method="aea", kind="numeric.results.EpsilonResult"):
    d = {"epsilon": cnu.encode(eps), "method": method, "direction": "P||Q",
         "warnings": list(warnings), "details": {"order": 2}}
    return {"outcome": "answer", "type": kind, "float": cnu.encode(eps), "dict": d,
            "fields": copy.deepcopy(d), "pywarnings": []}


def _raise(message="no", kind="numeric.errors.NotApplicable"):
    return {"outcome": "exception", "type": kind, "bases": ["ValueError"], "message": message,
            "pywarnings": []}


def _rec(**results):
    return {"meta": {"commit": "x", "grid": "test"}, "results": results}


def _verdict(old, new, **kw):
    lines: list[str] = []
    code = cnu.compare(_rec(**old), _rec(**new), write=lines.append, **kw)
    return code, "\n".join(lines)


def test_identical_recordings_pass():
    recs = {"a": _answer(1.5), "b": _raise()}
    assert _verdict(recs, copy.deepcopy(recs))[0] == 0


def test_one_ulp_fails_and_is_shown_exactly():
    code, out = _verdict({"a": _answer(1.5)}, {"a": _answer(math.nextafter(1.5, 2.0))})
    assert code == 1
    assert "NUMBERS THAT DIFFER" in out and "0x1.8000000000001p+0" in out


def test_texts_labels_and_types_are_informational():
    old = {"a": _answer(1.5)}
    new = {"a": _answer(1.5, warnings=("other text", "more"), method="aea2",
                        kind="numeric.result_types.EpsilonResult")}
    code, out = _verdict(old, new)
    assert code == 0
    assert "WARNING AND OTHER TEXTS" in out and "RESULT TYPES, METHOD LABELS" in out
    code, out = _verdict({"a": _raise("m1", "builtins.ValueError")}, {"a": _raise("m2")})
    assert code == 0 and "RESULT TYPES" in out


def test_answer_and_exception():
    code, out = _verdict({"a": _raise()}, {"a": _answer(2.0)})
    assert code == 0 and "RAISED IN OLD, ANSWERS IN NEW" in out
    assert _verdict({"a": _answer(2.0)}, {"a": _raise()})[0] == 1
    assert _verdict({"a": _answer(2.0)}, {"a": _raise()}, allow_new_exceptions=True)[0] == 0


def test_exact_decimals_direction_and_missing_numbers():
    old = _answer(1.0)
    old["dict"]["upper"] = "0.71804185589769531361525878310203552246093750"
    new = copy.deepcopy(old)
    new["dict"]["upper"] = "0.71804185589769531361525878310203552246093751"
    assert _verdict({"a": old}, {"a": new})[0] == 1
    new = copy.deepcopy(old)
    new["dict"]["direction"] = "Q||P"
    assert _verdict({"a": old}, {"a": new})[0] == 1
    new = copy.deepcopy(old)
    del new["dict"]["upper"]  # a public number vanished
    assert _verdict({"a": old}, {"a": new})[0] == 1
    new = copy.deepcopy(old)
    del new["fields"]["details"]  # a raw field vanished, to_dict unchanged: informational
    new["dict"]["added"] = "f:3.0"
    code, out = _verdict({"a": old}, {"a": new})
    assert code == 0 and "FIELDS ADDED" in out


def test_missing_and_added_cases():
    assert _verdict({"a": _answer(1.0), "b": _answer(2.0)}, {"a": _answer(1.0)})[0] == 1
    code, out = _verdict({"a": _answer(1.0)}, {"a": _answer(1.0), "b": _answer(2.0)})
    assert code == 0 and "CASES ONLY IN NEW" in out


def test_record_and_compare_a_tiny_grid(tmp_path, capsys):
    out = tmp_path / "rec.json"
    cnu.record(out, quick=True, root=ROOT, only="Gaussian(sigma=1.0)x10 :: epsilon(delta=1e-05)")
    data = json.loads(out.read_text())
    results = data["results"]
    assert results and all("Gaussian(sigma=1.0)x10 :: " in k for k in results)
    exact = results["Gaussian(sigma=1.0)x10 :: epsilon(delta=1e-05) :: exact"]
    assert exact["outcome"] == "answer" and exact["float"].startswith("f:")
    assert data["meta"]["cache_clearers"]
    assert cnu.main(["compare", str(out), str(out)]) == 0
    assert "no number differs" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--ref"], ["compare", "only-one.json"]])
def test_usage_errors_exit_2(argv):
    with pytest.raises(SystemExit) as info:
        cnu.main(argv)
    assert info.value.code == 2
