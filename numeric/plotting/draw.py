"""Drawing a :class:`~numeric.plotting.points.FigureData` with matplotlib (the ``plot`` extra).

matplotlib is imported only here and only when a figure is drawn; without it the error says
which extra to install. No pyplot (no global backend state): a ``matplotlib.figure.Figure`` is
rendered by the Agg canvas, so this works headless.

Styles: exact curves solid, estimates dashed and labelled "estimate", reference curves (G_mu,
f_{eps,delta}) dotted, certified bands shaded; a band that proves only its lower end is drawn as
a hatched region above that end, labelled "certified lower bound only".
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np

from .points import FigureData

__all__ = ["FORMATS", "check_output", "require_matplotlib", "save_figure"]

FORMATS = (".png", ".svg", ".pdf")
"""The output formats, chosen by the file suffix."""


def require_matplotlib():
    """Import matplotlib's Figure and Agg canvas, or raise ImportError naming the extra."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("needs the plot extra: pip install '.[plot]'") from None
    return Figure, FigureCanvasAgg


def check_output(path: str | os.PathLike) -> Path:
    """The output path, if its suffix names a supported format.

    Raises:
        ValueError: if the suffix is not .png, .svg or .pdf.
    """
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise ValueError(f"--output must end in {', '.join(FORMATS)}, got {str(path)!r}")
    return p


def save_figure(data: FigureData, path: str | os.PathLike) -> Path:
    """Draw ``data`` and write it to ``path`` (PNG, SVG or PDF by suffix).

    Args:
        data: The figure's points (:mod:`numeric.plotting.points`).
        path: Output file; its suffix chooses the format.

    Returns:
        The path written.

    Raises:
        ValueError: for an unsupported suffix. ImportError: without matplotlib.
    """
    out = check_output(path)
    Figure, FigureCanvasAgg = require_matplotlib()
    fig = Figure(figsize=(7.5, 6.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colors = {}
    palette = [f"C{i}" for i in range(10)]
    for s in data.series:
        base = s.label.split(" (")[0].split(": certified")[0]
        color = colors.setdefault(base, palette[len(colors) % len(palette)])
        x = np.asarray(s.x, dtype=float)
        if s.kind == "certified":
            lo = np.asarray(s.lower, dtype=float)
            if data.yscale == "log":
                lo = np.where(lo > 0, lo, np.nan)
            if s.upper:
                hi = np.asarray(s.upper, dtype=float)
                ax.fill_between(x, lo, hi, color=color, alpha=0.3, linewidth=0,
                                label=f"{s.label}, proven")
            else:
                ax.plot(x, lo, color=color, linewidth=1.0,
                        label=f"{s.label}: certified lower bound only")
            continue
        style = {"exact": "-", "estimate": "--", "reference": ":"}.get(s.kind, "-")
        label = s.label if s.kind != "estimate" or "estimate" in s.label else \
            f"{s.label} (estimate)"
        y = np.asarray(s.y, dtype=float)
        if data.yscale == "log":
            y = np.where(y > 0, y, np.nan)
        ax.plot(x, y, style, color=color, linewidth=1.4, label=label)
    ax.set_xscale(data.xscale)
    ax.set_yscale(data.yscale)
    if data.kind == "tradeoff":
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
        ax.set_aspect("equal")
    ax.set_xlabel(data.xlabel)
    ax.set_ylabel(data.ylabel)
    ax.set_title(data.title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    caption = "\n".join(textwrap.wrap(data.caption, 110))
    fig.text(0.5, -0.01, caption, ha="center", va="top", fontsize=7)
    fig.savefig(out, format=out.suffix.lower()[1:], bbox_inches="tight")
    return out
