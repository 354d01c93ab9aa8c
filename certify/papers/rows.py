"""The verdict row every paper check returns (``edgeworth check``).

A check compares one claim of a paper with what this toolkit computes. ``holds`` is a verdict
only when the comparison is decided by an exact value or a certified interval; an estimate, or a
certified interval too wide to decide, gives ``holds=None`` and ``undecided`` says what would
decide it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["METHODS", "CheckRow"]

METHODS = ("exact", "certified", "estimate")


@dataclass(frozen=True)
class CheckRow:
    """One checked claim.

    Args:
        claim: The statement checked, in words (e.g. ``"sup |f_10 - G_1| < 0.013"``).
        paper_value: What the paper states (a number, a string such as ``"< 0.013"``, or None).
        our_value: What this toolkit computes: a number, a ``[lower, upper]`` pair for a
            certified interval, or a string (exact rationals print as ``"p/q"``).
        method: ``"exact"``, ``"certified"`` or ``"estimate"``.
        holds: True or False when decided; None when undecided.
        source: Equation, theorem or figure, and ``"read"`` (the statement was read in the paper)
            or ``"reconstructed"``, e.g. ``"Dong-Roth-Su 2022, Eq. (11); read"``.
        undecided: When ``holds`` is None, what would decide it.
        details: Optional extra numbers (full precision) for the JSON output.

    Raises:
        ValueError: on a method outside :data:`METHODS`, a non-bool ``holds``, an empty claim or
            source, an estimate given a verdict, or an undecided row with no ``undecided`` text.
    """

    claim: str
    paper_value: Any
    our_value: Any
    method: str
    holds: bool | None
    source: str
    undecided: str = ""
    details: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.holds is not None and not isinstance(self.holds, bool):
            raise ValueError(f"holds must be True, False or None, got {self.holds!r}")
        if not (isinstance(self.claim, str) and self.claim.strip()):
            raise ValueError(f"claim must be a non-empty string, got {self.claim!r}")
        if not (isinstance(self.source, str) and self.source.strip()):
            raise ValueError(f"source must be a non-empty string, got {self.source!r}")
        if self.method == "estimate" and self.holds is not None:
            raise ValueError("an estimate cannot decide a claim: holds must be None")
        if self.holds is None and not self.undecided.strip():
            raise ValueError("an undecided row must say what would decide it (undecided=...)")
        for name in ("paper_value", "our_value"):
            v = getattr(self, name)
            if isinstance(v, float) and not math.isfinite(v) and not math.isinf(v):
                raise ValueError(f"{name} is NaN")

    def to_dict(self) -> dict:
        """The JSON row: keys claim, paper_value, our_value, method, holds, source (+ extras)."""
        row = {
            "claim": self.claim, "paper_value": self.paper_value, "our_value": self.our_value,
            "method": self.method, "holds": self.holds, "source": self.source,
        }
        if self.undecided:
            row["undecided"] = self.undecided
        if self.details:
            row["details"] = self.details
        return row
