"""Plotly figure builders and ipywidgets panels shared by the notebooks.

Figures render live in JupyterLab (the plotly mimetype) and, in a report, as HTML that
loads the report's own copy of plotly.js, so an HTML report opens offline.
"""

from workbench.viz.figures import (
    bars,
    before_after,
    configure_renderers,
    latency_vs_load,
    live_throughput,
    throughput_over_time,
    throughput_vs,
)
from workbench.viz.numbers import format_number
from workbench.viz.widgets import control, panel

__all__ = [
    "bars",
    "before_after",
    "configure_renderers",
    "control",
    "format_number",
    "latency_vs_load",
    "live_throughput",
    "panel",
    "throughput_over_time",
    "throughput_vs",
]
