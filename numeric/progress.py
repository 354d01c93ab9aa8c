r"""Progress of long computations on a terminal: a no-op unless a front end turns it on.

Library code marks its long loops; nothing is shown unless the caller (the ``edgeworth``
command line, when stderr is a terminal and neither ``--json`` nor ``--quiet`` was given) opened
an :func:`enabled` block::

    from numeric.progress import progress, report

    with progress(total=len(stages), desc="certified") as bar:
        for stage in stages:
            bar.describe(f"certified: {stage.name}")
            run(stage)
            bar.report()          # one step done

    # deep inside a loop that has no handle (e.g. the lattice's squarings):
    with progress(total=m.bit_length(), desc="lattice squarings"):
        for bit in range(m.bit_length()):
            ...
            report()              # advances the innermost open block

The protocol is three calls: :func:`progress` (a context manager: a block with a ``total`` --
None when unknown -- and a description), the handle's :meth:`Progress.report` /
:meth:`Progress.describe`, and the module-level :func:`report` for code that cannot hold the
handle. Outside an :func:`enabled` block every call costs a context-variable lookup and shows
nothing, so library results and output are never changed by it; progress goes to the stream
given to :func:`enabled` (stderr), never to stdout.

Display: tqdm (a core dependency: small, pure Python, no dependencies of its own, widely used
and maintained), imported only when a bar is shown. A bar appears only once its block has run
for ``delay`` seconds (1 s by default; the environment variable ``EDGEWORTH_PROGRESS_DELAY``
overrides it, e.g. 0 in tests), so quick commands print nothing; it is removed when its block
ends (``leave=False``), so a finished command leaves only its answer on the terminal. Blocks
nest (e.g. certified stages, and the lattice squarings inside one): each open block is a bar.
The state lives in :class:`contextvars.ContextVar` s, so concurrent callers do not share it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["DEFAULT_DELAY", "Progress", "enabled", "is_enabled", "progress", "report"]

DEFAULT_DELAY = 1.0
"""Seconds a block runs before its bar is shown."""


@dataclass(frozen=True)
class _Sink:
    stream: TextIO
    delay: float


@dataclass
class Progress:
    """The handle of one :func:`progress` block (inactive: every call does nothing)."""

    bar: Any = None
    done: int = field(default=0)

    def report(self, step: int = 1) -> None:
        """``step`` more units of the block's total are done."""
        self.done += step
        if self.bar is not None:
            self.bar.update(step)

    def describe(self, text: str) -> None:
        """Replace the block's description (e.g. the stage now running)."""
        if self.bar is not None:
            self.bar.set_description_str(text, refresh=False)


_SINK: ContextVar[_Sink | None] = ContextVar("edgeworth_progress_sink", default=None)
_OPEN: ContextVar[tuple[Progress, ...]] = ContextVar("edgeworth_progress_open", default=())


def _delay(default: float) -> float:
    text = os.environ.get("EDGEWORTH_PROGRESS_DELAY")
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        return default
    return value if value >= 0.0 else default


@contextmanager
def enabled(stream: TextIO, delay: float = DEFAULT_DELAY) -> Iterator[None]:
    """Show the progress of blocks opened inside this one on ``stream`` (a terminal).

    Args:
        stream: Where the bars go (the command line passes ``sys.stderr``).
        delay: Seconds a block runs before its bar appears (``EDGEWORTH_PROGRESS_DELAY``
            overrides it).
    """
    token = _SINK.set(_Sink(stream, _delay(delay)))
    try:
        yield
    finally:
        _SINK.reset(token)


def is_enabled() -> bool:
    """True inside an :func:`enabled` block."""
    return _SINK.get() is not None


@contextmanager
def progress(total: int | None, desc: str) -> Iterator[Progress]:
    """A block of work of ``total`` steps (None: unknown), shown as a bar when enabled.

    Args:
        total: Number of :meth:`Progress.report` steps expected, or None.
        desc: Short description ("certified", "lattice squarings", "calibrate").

    Yields:
        The block's :class:`Progress` handle (also reachable through :func:`report`).
    """
    sink = _SINK.get()
    bar = None
    if sink is not None:
        from tqdm import tqdm  # only when a bar can be shown: imports stay light

        bar = tqdm(total=total, desc=desc, file=sink.stream, delay=sink.delay, leave=False,
                   dynamic_ncols=True, position=len(_OPEN.get()))
    handle = Progress(bar)
    token = _OPEN.set((*_OPEN.get(), handle))
    try:
        yield handle
    finally:
        _OPEN.reset(token)
        if bar is not None:
            bar.close()


def report(step: int = 1) -> None:
    """Advance the innermost open :func:`progress` block by ``step`` (nothing if none is open)."""
    open_blocks = _OPEN.get()
    if open_blocks:
        open_blocks[-1].report(step)
