"""Plotly figure builders shared by the notebooks.

Figures render live in JupyterLab (the plotly mimetype) and, in a report, as HTML with
plotly.js embedded, so an HTML report opens offline.
"""

from workbench.viz.figures import bars, configure_renderers

__all__ = ["bars", "configure_renderers"]
