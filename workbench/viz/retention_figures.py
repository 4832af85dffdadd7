"""Figures of the retention experiments (`workbench.retention`): a log's start and end over
time, how long records lived against `retention.ms`, a compacted log's stale records and
tombstones over time, and replay against reading live."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.viz.figures import TEMPLATE

__all__ = ["compaction_figure", "log_over_time_figure", "replay_figure", "survival_figure"]


def log_over_time_figure(logs: Mapping[str, pd.DataFrame], *, title: str = "The log over time") -> go.Figure:
    """Per run (the mapping's key names it): the log's end (what was written) and its start
    (what retention deleted) on the left axis, the segments on disk on the right."""
    figure = make_subplots(specs=[[{"secondary_y": True}]])
    for label, log in logs.items():
        if log.empty:
            continue
        figure.add_trace(
            go.Scatter(x=log["at_s"], y=log["end_offset"], name=f"{label}: end", mode="lines", line={"dash": "dot"})
        )
        figure.add_trace(go.Scatter(x=log["at_s"], y=log["start_offset"], name=f"{label}: log start", mode="lines"))
        if log["segments"].notna().any():
            figure.add_trace(
                go.Scatter(
                    x=log["at_s"],
                    y=log["segments"],
                    name=f"{label}: segments",
                    mode="lines",
                    line={"width": 1},
                    opacity=0.5,
                ),
                secondary_y=True,
            )
    figure.update_xaxes(title_text="seconds since the first write")
    figure.update_yaxes(title_text="offset", secondary_y=False)
    figure.update_yaxes(title_text="segment files", secondary_y=True, rangemode="tozero")
    figure.update_layout(template=TEMPLATE, title=title, height=420)
    return figure


def survival_figure(records: Mapping[str, pd.DataFrame], retention_s: float) -> go.Figure:
    """How long each record lived before retention deleted it, per run, against `retention.ms`."""
    figure = go.Figure()
    for label, frame in records.items():
        lived = frame["survived_s"].dropna()
        figure.add_trace(go.Histogram(x=lived, name=label, opacity=0.6, nbinsx=40))
    figure.add_vline(x=retention_s, line_dash="dash", annotation_text=f"retention.ms = {retention_s:g} s")
    figure.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        title="How long each record lived",
        xaxis_title="seconds from its write to its deletion",
        yaxis_title="records",
        height=380,
    )
    return figure


def compaction_figure(scans: Mapping[str, pd.DataFrame], keys: int) -> go.Figure:
    """Per run: the records in the log and the stale ones among them over time (left), the
    tombstones still visible (right), with the key count a fully compacted log holds."""
    figure = make_subplots(
        rows=1, cols=2, subplot_titles=("records in the log", "tombstones a reader still sees"), horizontal_spacing=0.1
    )
    for label, frame in scans.items():
        figure.add_trace(go.Scatter(x=frame["at_s"], y=frame["records"], name=f"{label}: records", mode="lines"), 1, 1)
        figure.add_trace(
            go.Scatter(x=frame["at_s"], y=frame["stale"], name=f"{label}: stale", mode="lines", line={"dash": "dot"}),
            1,
            1,
        )
        figure.add_trace(
            go.Scatter(
                x=frame["at_s"], y=frame["tombstones"], name=f"{label}: tombstones", mode="lines", line={"shape": "hv"}
            ),
            1,
            2,
        )
    figure.add_hline(y=keys, line_dash="dash", annotation_text=f"{keys} keys", row=1, col=1)
    figure.update_xaxes(title_text="seconds since the first write")
    figure.update_layout(template=TEMPLATE, title="What compaction leaves, over time", height=420)
    return figure


def replay_figure(rows: pd.DataFrame) -> go.Figure:
    """Records/s of each replay (by rewind target and path) beside reading along with the writes."""
    label = rows["through"].astype(str) + ": " + rows["to"].astype(str)
    figure = go.Figure()
    figure.add_trace(go.Bar(x=label, y=rows["msg_s"], name="replay", text=[f"{v:,.0f}" for v in rows["msg_s"]]))
    figure.add_trace(
        go.Bar(x=label, y=rows["live_msg_s"], name="reading live", text=[f"{v:,.0f}" for v in rows["live_msg_s"]])
    )
    figure.update_layout(
        template=TEMPLATE, barmode="group", title="Replay against reading live", yaxis_title="records / s", height=380
    )
    return figure
