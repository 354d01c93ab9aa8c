"""numeric.progress: silent by default; bars on a terminal from the command line only.

The command-line tests run ``python -m numeric.cli`` with stderr on a pseudo-terminal (pty, with
a window size as a real terminal has) and ``EDGEWORTH_PROGRESS_DELAY=0`` (bars without the 1 s
delay), and compare stdout with a run whose stderr is a pipe.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from numeric import progress as prog

ROOT = Path(__file__).resolve().parent.parent
pty = pytest.importorskip("pty", reason="pseudo-terminals need a POSIX system")


def test_blocks_are_silent_and_inert_unless_enabled():
    assert not prog.is_enabled()
    with prog.progress(3, "demo") as bar:
        assert bar.bar is None
        bar.report()
        bar.describe("demo: stage")
        prog.report(2)
    assert bar.done == 3
    prog.report()  # no open block: nothing happens


def test_enabled_block_draws_on_its_stream(monkeypatch):
    monkeypatch.setenv("EDGEWORTH_PROGRESS_DELAY", "0")
    out = io.StringIO()
    with prog.enabled(out):
        assert prog.is_enabled()
        with prog.progress(4, "demo") as bar:
            bar.describe("demo: stage two")
            for _ in range(4):
                prog.report()
    assert not prog.is_enabled()
    text = out.getvalue()
    assert "demo" in text and "0/4" in text
    assert text.endswith("\r")  # the bar removes itself (leave=False)


def test_delay_keeps_quick_blocks_off_the_screen():
    out = io.StringIO()
    with prog.enabled(out, delay=60.0), prog.progress(2, "quick") as bar:
        bar.report(2)
    assert out.getvalue() == ""


def test_report_advances_the_innermost_block(monkeypatch):
    monkeypatch.setenv("EDGEWORTH_PROGRESS_DELAY", "0")
    out = io.StringIO()
    with prog.enabled(out), prog.progress(2, "outer") as outer:
        with prog.progress(5, "inner") as inner:
            prog.report(3)
        prog.report()
    assert (outer.done, inner.done) == (1, 3)
    assert "outer" in out.getvalue() and "inner" in out.getvalue()


def test_bad_delay_in_the_environment_falls_back(monkeypatch):
    monkeypatch.setenv("EDGEWORTH_PROGRESS_DELAY", "soon")
    out = io.StringIO()
    with prog.enabled(out, delay=60.0), prog.progress(1, "x") as bar:
        bar.report()
    assert out.getvalue() == ""


def _run(args: list[str], tty: bool) -> tuple[int, str, str]:
    """Run the CLI; stderr on a pty (tty=True, 100 columns) or a pipe. (status, stdout, err)."""
    import fcntl
    import struct
    import termios

    env = {**os.environ, "EDGEWORTH_PROGRESS_DELAY": "0"}
    cmd = [sys.executable, "-m", "numeric.cli", *args]
    if not tty:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
                           check=False)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out, _ = p.communicate(timeout=120)
    os.close(master)
    return p.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


QUERY = ["epsilon", "--mechanism", "laplace", "--scale", "10", "--steps", "20", "--delta",
         "1e-5", "--method", "certified"]


def test_cli_shows_progress_on_a_terminal_and_keeps_stdout():
    pytest.importorskip("flint", reason="the certified method needs python-flint")
    status, out_tty, err_tty = _run(QUERY, tty=True)
    assert status == 0
    assert "certified" in err_tty and "%|" in err_tty  # a tqdm bar with its stage
    status, out_pipe, err_pipe = _run(QUERY, tty=False)
    assert status == 0
    assert err_pipe == ""  # piped: silent
    assert out_tty == out_pipe


@pytest.mark.parametrize("flag", ["--json", "--quiet"])
def test_cli_json_and_quiet_are_silent_on_a_terminal(flag):
    pytest.importorskip("flint", reason="the certified method needs python-flint")
    status, out_tty, err_tty = _run([*QUERY, flag], tty=True)
    assert status == 0
    assert err_tty == ""
    if flag == "--json":
        assert json.loads(out_tty)["upper"] is not None


def test_calibrate_shows_its_evaluations_on_a_terminal():
    args = ["calibrate", "--target-eps", "2", "--delta", "1e-5", "--rate", "0.01", "--steps",
            "1000", "--method", "saddlepoint"]
    status, out_tty, err_tty = _run(args, tty=True)
    assert status == 0
    assert "calibrate sigma (saddlepoint)" in err_tty
    assert out_tty.startswith("sigma = ")
