"""Figure builders: one function per kind of chart the notebooks draw."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["bars", "configure_renderers"]

TEMPLATE = "plotly_white"


def configure_renderers() -> None:
    """JupyterLab's mimetype renderer plus embedded plotly.js for offline HTML reports."""
    pio.renderers.default = "plotly_mimetype+notebook"
    pio.templates.default = TEMPLATE


def bars(
    frame: pd.DataFrame,
    x: str,
    y: str,
    *,
    title: str,
    y_title: str | None = None,
    text_format: str = ",.0f",
    color: str | None = None,
    order: Sequence[str] | None = None,
) -> go.Figure:
    """A bar per row of `frame`, values written on the bars."""
    data = frame if order is None else frame.set_index(x).loc[list(order)].reset_index()
    figure = go.Figure(
        go.Bar(
            x=data[x],
            y=data[y],
            text=[format(v, text_format) for v in data[y]],
            textposition="auto",
            marker_color=color,
        )
    )
    figure.update_layout(title=title, yaxis_title=y_title or y, xaxis_title=None, template=TEMPLATE)
    return figure
