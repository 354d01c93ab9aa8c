"""Hostile files cost no more than a clear error (issue 12, "Numbers to reach": every hostile
certificate or spec is rejected in < 1 s and < 100 MB).

Each case is a file a user could be handed: a spec (``edgeworth epsilon --spec``) or a
certificate (``edgeworth verify``), malformed or with crafted numbers (and, for certificates, the
hash recomputed, as anyone can). The CLI must exit 2 with one line on stderr; the time is the
wall clock of that call and the memory the peak of Python's allocator (numpy included) under
:mod:`tracemalloc`, measured on a second run so that the first run's imports do not count.
"""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from pathlib import Path

import pytest

pytest.importorskip("flint")

from certify.certificate import canonical_hash
from numeric.cli import main

TIME_LIMIT = 1.0  # seconds
MEMORY_LIMIT = 100 << 20  # bytes

_GAUSS = '[[mechanism]]\ntype = "gaussian"\nsigma = 2.0\ncount = 4\n'


def _table(body: str) -> str:
    return "[[mechanism]]\n" + body


HOSTILE_SPECS: dict[str, bytes] = {
    "sigma 1e-999999999": _table('type = "gaussian"\nsigma = 1e-999999999\ncount = 1\n').encode(),
    "sigma 1e999999999": _table('type = "gaussian"\nsigma = 1e999999999\ncount = 1\n').encode(),
    "sigma of 30000 digits": _table(
        'type = "gaussian"\nsigma = 0.' + "3" * 30_000 + "\ncount = 1\n").encode(),
    "count of 400 digits": _table(
        'type = "gaussian"\nsigma = 1.0\ncount = ' + "9" * 400 + "\n").encode(),
    "count of 5000 digits": _table(
        'type = "gaussian"\nsigma = 1.0\ncount = ' + "9" * 5000 + "\n").encode(),
    "eps0 1e400 steps 1e15": _table(
        'type = "randomized-response"\neps0 = 1e400\ncount = 1000000000000000\n').encode(),
    "binary garbage": bytes(range(256)) * 8,
    "deeply nested array": ("x = " + "[" * 5000 + "]" * 5000 + "\n" + _GAUSS).encode(),
    "over 1 MiB": b"# " + b"x" * (1 << 20) + b"\n",
    "10001 tables": _GAUSS.encode() * 10_001,
}


def _certificate(tmp_path: Path) -> dict:
    spec = tmp_path / "g.toml"
    spec.write_text(_GAUSS)
    out = tmp_path / "good.json"
    assert main(["certify", "--spec", str(spec), "--delta", "1e-5", "--out", str(out)]) == 0
    return json.loads(out.read_text())


def _rehashed(cert: dict) -> bytes:
    cert["hash"] = {"algorithm": "sha256", "value": canonical_hash(cert)}
    return json.dumps(cert).encode()


def _hostile_certificates(good: dict) -> dict[str, bytes]:
    def claim(lower, upper) -> bytes:
        c = json.loads(json.dumps(good))
        c["claim"]["lower"], c["claim"]["upper"] = lower, upper
        return _rehashed(c)

    def spec_number(value) -> bytes:
        c = json.loads(json.dumps(good))
        c["inputs"]["spec"]["mechanism"][0]["sigma"] = value
        return _rehashed(c)

    return {
        "claim upper 1e-999999999": claim("0", "1e-999999999"),
        "claim lower 1e999999999": claim("1e999999999", None),
        "claim of 30000 digits": claim("9" * 30_000, None),
        "claim both ends null": claim(None, None),
        "input sigma 1e-999999999": spec_number("1e-999999999"),
        "input sigma of 30000 digits": spec_number("0." + "3" * 30_000),
        "nested 100000 deep": b"[" * 100_000 + b"]" * 100_000,
        "NaN": b'{"format": "edgeworth-certificate/1", "x": NaN}',
        "over 1 MiB": b" " * (1 << 21) + b"{}",
        "garbage": b"\x00\xff\xfe garbage",
    }


def _measure(argv: list[str]) -> tuple[int, float, int]:
    main(argv)  # warm: imports and caches are not the file's cost
    t0 = time.perf_counter()
    rc = main(argv)
    elapsed = time.perf_counter() - t0
    tracemalloc.start()
    try:
        main(argv)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return rc, elapsed, peak


def _check(capsys, argv: list[str]) -> None:
    rc, elapsed, peak = _measure(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 3 and len(set(err.splitlines())) == 1, err  # 3 runs, 1 line
    assert elapsed < TIME_LIMIT, elapsed
    assert peak < MEMORY_LIMIT, peak


@pytest.mark.parametrize("case", sorted(HOSTILE_SPECS))
def test_hostile_spec_is_cheap(capsys, tmp_path, case):
    path = tmp_path / "spec.toml"
    path.write_bytes(HOSTILE_SPECS[case])
    _check(capsys, ["epsilon", "--spec", str(path), "--delta", "1e-5"])


def test_hostile_spec_fifo_is_cheap(capsys, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "spec.toml"
    os.mkfifo(path)
    _check(capsys, ["epsilon", "--spec", str(path), "--delta", "1e-5"])


def test_hostile_certificates_are_cheap(capsys, tmp_path):
    good = _certificate(tmp_path)
    capsys.readouterr()
    for case, content in _hostile_certificates(good).items():
        path = tmp_path / "cert.json"
        path.write_bytes(content)
        try:
            _check(capsys, ["verify", str(path)])
        except AssertionError as exc:
            raise AssertionError(f"{case}: {exc}") from None
