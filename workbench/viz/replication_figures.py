"""Figures of the replication experiments (`workbench.replication`): lag by offered rate,
and each record's lag over the run."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from workbench.viz.figures import TEMPLATE

__all__ = ["lag_by_rate_figure", "lag_over_run_figure"]


def lag_by_rate_figure(rows: pd.DataFrame) -> go.Figure:
    """p50 and p99 replication lag against the offered rate, one marker per repeat and a line
    through the medians."""
    figure = go.Figure()
    for column, label in (("latency_p50_ms", "p50"), ("latency_p99_ms", "p99")):
        medians = rows.groupby("rate")[column].median()
        figure.add_trace(go.Scatter(x=medians.index, y=medians.values, name=f"{label} (median of repeats)"))
        figure.add_trace(
            go.Scatter(x=rows["rate"], y=rows[column], mode="markers", name=f"{label}, each run", opacity=0.5)
        )
    figure.update_layout(
        template=TEMPLATE,
        title="Replication lag a → b by offered rate",
        xaxis_title="records/s offered on a",
        yaxis_title="ms from the append on a to the append on b",
        xaxis_type="log",
        height=400,
    )
    return figure


def lag_over_run_figure(runs: Mapping[str, pd.DataFrame]) -> go.Figure:
    """Each record's lag against its append time on a, per run (the mapping's key names it)."""
    figure = go.Figure()
    for label, records in runs.items():
        arrived = records.dropna(subset=["lag_ms"])
        if arrived.empty:
            continue
        at_s = (arrived["a_ms"] - arrived["a_ms"].min()) / 1000
        figure.add_trace(go.Scattergl(x=at_s, y=arrived["lag_ms"], mode="markers", name=label, marker={"size": 3}))
    figure.update_layout(
        template=TEMPLATE,
        title="Each record's lag over the run",
        xaxis_title="seconds since the first append on a",
        yaxis_title="lag, ms",
        height=380,
    )
    return figure
