"""The rolling restart's figure: records/s read over the run, by group protocol, with each
proxy's restart marked (`workbench.bench.rolling_restart`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.viz.figures import TEMPLATE

__all__ = ["rolling_restart_figure"]


def rolling_restart_figure(timelines: Mapping[str, pd.DataFrame]) -> go.Figure:
    """One panel per run (the mapping's key names it, `RollingRestart.timeline()` its value):
    records/s written and read on one time axis, a dotted line at each restart."""
    labels = list(timelines)
    figure = make_subplots(rows=max(1, len(labels)), cols=1, shared_xaxes=True, subplot_titles=labels)
    for row, label in enumerate(labels, start=1):
        timeline = timelines[label]
        for column, name, dash in (("written_per_s", "written", "dot"), ("read_per_s", "read", "solid")):
            figure.add_trace(
                go.Scatter(
                    x=timeline["second"],
                    y=timeline[column],
                    name=f"{label}: {name}",
                    line={"dash": dash, "shape": "hv"},
                ),
                row=row,
                col=1,
            )
        for _, mark in timeline[timeline["restart"] != ""].iterrows():
            figure.add_vline(x=mark["second"], line_dash="dot", line_color="grey", row=row, col=1)
            figure.add_annotation(
                x=mark["second"], y=1, yref="y domain" if row == 1 else f"y{row} domain", text=mark["restart"],
                showarrow=False, xanchor="left", row=row, col=1,
            )  # fmt: skip
        figure.update_yaxes(title_text="records/s", row=row, col=1)
    figure.update_xaxes(title_text="seconds since the run began", row=len(labels), col=1)
    figure.update_layout(
        template=TEMPLATE,
        title="Records/s through a rolling restart of the proxies",
        height=260 * max(1, len(labels)) + 80,
    )
    return figure
