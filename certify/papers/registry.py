r"""The papers ``edgeworth check`` knows, and how their checks are run.

:data:`PAPERS` maps a paper's short name to the module holding its checks. Each module exposes
``checks(quick: bool) -> list[CheckRow]``; it is imported only when that paper is checked, so a
missing module (a paper whose toolkit part has not landed yet) or one that raises
:class:`numeric.errors.NotApplicable` gives a row saying so instead of breaking the command.

Inside a paper module, :func:`guarded` runs one check so that an exception in it becomes an
*error row* (``details["error"]``) and the other checks still run. :func:`run_paper` reports
whether every check ran; the CLI exits 1 only when one did not (whatever the verdicts).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from numeric.errors import NotApplicable

from .rows import CheckRow

__all__ = ["PAPERS", "PaperResult", "error_row", "guarded", "paper_names", "run_paper"]

#: name -> (module path, one-line description)
PAPERS: dict[str, tuple[str, str]] = {
    "gdp": ("certify.papers.gdp_paper",
            "Dong, Roth, Su, Gaussian differential privacy, JRSS-B 2022, Section 3.3"),
    "edgeworth": ("certify.papers.edgeworth_paper",
                  "Wang, Gao, Zhang, Shen, Su, the Edgeworth accountant, arXiv:2206.04236"),
    "shuffle": ("certify.papers.shuffle_paper",
                "van Dijk, Ertan, DP-SGD with shuffling, arXiv:2605.06259 (+ EvD-26a/b)"),
}


def paper_names() -> tuple[str, ...]:
    """The registered paper names, in registration order."""
    return tuple(PAPERS)


def error_row(claim: str, source: str, exc: BaseException) -> CheckRow:
    """The row of a check that could not run (``details["error"]`` holds the reason)."""
    msg = f"{type(exc).__name__}: {exc}"
    return CheckRow(
        claim=claim, paper_value=None, our_value=None, method="estimate", holds=None,
        source=source, undecided=f"the check could not run ({msg}); fixing that would decide it",
        details={"error": msg},
    )


def guarded(claim: str, source: str, fn: Callable[[], list[CheckRow] | CheckRow]) -> list[CheckRow]:
    """Run one check; an exception becomes an error row instead of aborting the paper.

    Args:
        claim: What the check is about (used only for the error row).
        source: The paper location (used only for the error row).
        fn: Computes the row(s).

    Returns:
        The rows ``fn`` returned, or one error row.
    """
    try:
        out = fn()
    except Exception as exc:  # a failing check must not hide the others
        return [error_row(claim, source, exc)]
    return [out] if isinstance(out, CheckRow) else list(out)


@dataclass(frozen=True)
class PaperResult:
    """The rows of one paper, whether every check ran, and the wall time in seconds."""

    paper: str
    rows: list[CheckRow] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def errors(self) -> list[CheckRow]:
        """Rows of checks that could not run."""
        return [r for r in self.rows if "error" in r.details]

    @property
    def all_ran(self) -> bool:
        """True when every check of the paper ran (verdicts may be anything)."""
        return not self.errors


def run_paper(name: str, quick: bool = False) -> PaperResult:
    """Import the paper's module and run its checks.

    Args:
        name: A key of :data:`PAPERS`.
        quick: Small parameters (the whole registry in < 15 s).

    Returns:
        The paper's rows; a missing module or NotApplicable gives one error row saying so.

    Raises:
        ValueError: for an unknown paper name.
    """
    if name not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)} or all, got {name!r}")
    module, title = PAPERS[name]
    t0 = time.perf_counter()
    try:
        mod = importlib.import_module(module)
        rows = mod.checks(quick=quick)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            exc = NotApplicable(f"{module} is not in this version of the toolkit")
        rows = [error_row(f"{name}: the checks of {title}", module, exc)]
    except NotApplicable as exc:
        rows = [error_row(f"{name}: the checks of {title}", module, exc)]
    except Exception as exc:  # reported as a check that could not run
        rows = [error_row(f"{name}: the checks of {title}", module, exc)]
    return PaperResult(name, list(rows), time.perf_counter() - t0)
