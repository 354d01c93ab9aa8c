"""Figures: trade-off curves, privacy profiles and eps-vs-steps, with certified bands.

The points are computed without matplotlib (:mod:`numeric.plotting.points`); drawing needs the
``plot`` extra (:mod:`numeric.plotting.draw`, imported lazily). What a band of finitely many
certified intervals proves is argued in :mod:`numeric.plotting.bands`.

Example::

    from numeric import Gaussian, compose
    from numeric.plotting import tradeoff_data, save_figure
    data = tradeoff_data([compose([(Gaussian(1.0), 4)])], mus=[1.0], certified=True)
    save_figure(data, "tradeoff.png")
"""

from __future__ import annotations

from .bands import delta_staircase, steps_staircase, tradeoff_band
from .points import FigureData, Series, delta_data, steps_data, tradeoff_data

__all__ = ["FigureData", "Series", "delta_data", "delta_staircase", "save_figure",
           "steps_data", "steps_staircase", "tradeoff_band", "tradeoff_data"]


def save_figure(data: FigureData, path):
    """Draw ``data`` to ``path`` (PNG/SVG/PDF by suffix); needs the ``plot`` extra."""
    from .draw import save_figure as _save

    return _save(data, path)
