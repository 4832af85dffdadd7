"""Figures of the topic experiments: each knows the columns of one experiment's tidy rows
(`workbench.topics.count_cost`, `read_cost`, `sizing`, `growth`) and draws them in the workbench's look."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.topics.sizing import PartitionPlan
from workbench.viz.figures import TEMPLATE

__all__ = [
    "capacity_figure",
    "device_read_figure",
    "group_join_figure",
    "growth_figure",
    "partition_plan_figure",
    "topic_count_figure",
]


def topic_count_figure(frame: pd.DataFrame) -> go.Figure:
    """Four panels against the topic count N: creation, metadata, produce rate, group join."""
    data = frame.sort_values("topics")
    figure = make_subplots(
        rows=2,
        cols=2,
        subplot_titles=(
            "creating N topics (ms per topic)",
            "full Metadata response (KB)",
            "one producer, records spread over N (msg/s)",
            "group join with a regex over N topics (s)",
        ),
        horizontal_spacing=0.12,
        vertical_spacing=0.18,
    )
    n = data["topics"]
    figure.add_trace(
        go.Scatter(x=n, y=data["create_per_topic_ms"], name="create, per topic", mode="lines+markers"), 1, 1
    )
    if data["metadata_bytes"].notna().any():
        figure.add_trace(
            go.Scatter(x=n, y=data["metadata_bytes"] / 1e3, name="metadata size", mode="lines+markers"), 1, 2
        )
    figure.add_trace(go.Scatter(x=n, y=data["topics_msg_s"], name="N topics x 1 partition", mode="lines+markers"), 2, 1)
    figure.add_trace(
        go.Scatter(x=n, y=data["partitions_msg_s"], name="1 topic x N partitions", mode="lines+markers"), 2, 1
    )
    if "join_s" in data:
        figure.add_trace(go.Scatter(x=n, y=data["join_s"], name="join", mode="lines+markers"), 2, 2)
    figure.update_xaxes(type="log", title_text="N")
    figure.update_layout(template=TEMPLATE, height=620, title="What the number of topics costs on this broker")
    return figure


def growth_figure(
    rows: Sequence[dict[str, Any]] | pd.DataFrame, live: Sequence[dict[str, Any]] | pd.DataFrame | None = None
) -> go.Figure:
    """Computed share of keys that move per partition change, next to the ideal `1 - min/lcm`.

    `live` (rows of `topics.live_growth.measure_growth`) adds what the broker showed for the
    changes it grew, one more bar per change.
    """
    data = pd.DataFrame(rows)
    labels = [f"{o} → {n}" for o, n in zip(data["old_partitions"], data["new_partitions"], strict=True)]
    figure = go.Figure()
    for partitioner, part in data.groupby("partitioner", sort=False):
        part_labels = [f"{o} → {n}" for o, n in zip(part["old_partitions"], part["new_partitions"], strict=True)]
        figure.add_trace(
            go.Bar(
                x=part_labels,
                y=part["moved_fraction"],
                name=f"computed ({partitioner})",
                text=[f"{v:.1%}" for v in part["moved_fraction"]],
                textposition="auto",
            )
        )
    measured = pd.DataFrame(live) if live is not None and len(live) else None
    if measured is not None:
        for partitioner, part in measured.groupby("partitioner", sort=False):
            part_labels = [f"{o} → {n}" for o, n in zip(part["old_partitions"], part["new_partitions"], strict=True)]
            shares = part["moved_fraction"]
            keys = f", {int(part['keys'].iloc[0]):,} keys" if "keys" in part else ""
            figure.add_trace(
                go.Bar(
                    x=part_labels,
                    y=shares,
                    name=f"on the broker ({partitioner}{keys})",
                    text=[f"{v:.1%}" for v in shares],
                    textposition="auto",
                )
            )
    ideal = data.drop_duplicates(["old_partitions", "new_partitions"])
    figure.add_trace(
        go.Scatter(
            x=[f"{o} → {n}" for o, n in zip(ideal["old_partitions"], ideal["new_partitions"], strict=True)],
            y=ideal["expected_fraction"],
            name="ideal hash: 1 - min/lcm",
            mode="markers",
            marker={"symbol": "line-ew-open", "size": 40, "line": {"width": 3}},
        )
    )
    figure.update_layout(
        template=TEMPLATE,
        title=f"Keys that change partition when the topic grows ({int(data['keys'].iloc[0]):,} keys)",
        yaxis={"title": "share of keys moved", "tickformat": ".0%", "range": [0, 1]},
        xaxis={
            "title": "partitions before → after",
            "categoryorder": "array",
            "categoryarray": list(dict.fromkeys(labels)),
        },
        barmode="group",
    )
    return figure


def group_join_figure(frame: pd.DataFrame) -> go.Figure:
    """Seconds per group moment (first join, second join, leave), a bar per protocol.

    Each bar is the median of the runs that completed (`outcome` "joined"), with a
    min-max error bar; a protocol with no completed run has no bars.
    """
    from workbench.topics.group_join import JOINED, PHASES

    joined = frame[frame["outcome"] == JOINED]
    figure = go.Figure()
    for protocol, part in joined.groupby("protocol", sort=False):
        columns = list(PHASES)
        median = part[columns].median()
        low, high = part[columns].min(), part[columns].max()
        figure.add_trace(
            go.Bar(
                x=list(PHASES.values()),
                y=median.values,
                name=f"group.protocol={protocol}",
                text=[f"{v:.2f} s" for v in median.values],
                textposition="auto",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (high - median).values,
                    "arrayminus": (median - low).values,
                },
            )
        )
    runs = joined.groupby("protocol").size()
    shown = ", ".join(f"{p}: {n}" for p, n in runs.items()) or "none completed"
    figure.update_layout(
        template=TEMPLATE,
        barmode="group",
        title=f"Consumer group: join, rebalance, leave (median and range of runs; {shown})",
        yaxis_title="seconds",
    )
    return figure


def device_read_figure(frame: pd.DataFrame) -> go.Figure:
    """Records read and seconds taken to get one device's history, per method, as data grows."""
    figure = make_subplots(rows=1, cols=2, subplot_titles=("records read to get one device", "seconds"))
    for method, part in frame.groupby("method", sort=False):
        part = part.sort_values("records_per_device")
        x = part["records_per_device"]
        figure.add_trace(
            go.Scatter(x=x, y=part["scanned"], name=str(method), mode="lines+markers", legendgroup=str(method)), 1, 1
        )
        figure.add_trace(
            go.Scatter(
                x=x,
                y=part["seconds"],
                name=str(method),
                mode="lines+markers",
                legendgroup=str(method),
                showlegend=False,
            ),
            1,
            2,
        )
    figure.update_xaxes(type="log", title_text="records per device")
    figure.update_yaxes(type="log", row=1, col=1)
    figure.update_layout(template=TEMPLATE, height=420, title="Reading one device's history")
    return figure


def capacity_figure(frame: pd.DataFrame, x: str = "partitions") -> go.Figure:
    """Capacity estimates against a swept quantity (log-log), one panel per estimate."""
    panels = [
        ("file_handles_per_broker", "open files per broker"),
        ("replication_latency_ms", "replication-added latency (ms)"),
        ("unavailability_s", "unclean failure: unavailable (s)"),
        ("producer_buffer_bytes", "producer buffer (MB)"),
    ]
    figure = make_subplots(rows=2, cols=2, subplot_titles=[t for _, t in panels], vertical_spacing=0.18)
    for i, (column, title) in enumerate(panels):
        scale = 1e-6 if column.endswith("_bytes") else 1.0
        figure.add_trace(
            go.Scatter(x=frame[x], y=frame[column] * scale, name=title, mode="lines+markers"), i // 2 + 1, i % 2 + 1
        )
    figure.update_xaxes(type="log", title_text=x.replace("_", " "))
    figure.update_yaxes(type="log")
    figure.update_layout(template=TEMPLATE, height=620, showlegend=False, title="What the partition count costs")
    return figure


def partition_plan_figure(plan: PartitionPlan, unit: str = "") -> go.Figure:
    """The partitions each side needs, the minimum and the recommendation with margin."""
    names = ["for produce", "for consume", "minimum", "with margin"]
    values = [plan.for_produce, plan.for_consume, plan.minimum, plan.recommended]
    colors = ["#636efa", "#00cc96", "#444444", "#ef553b"]
    figure = go.Figure(
        go.Bar(x=names, y=values, text=[f"{v:,}" for v in values], textposition="auto", marker_color=colors)
    )
    target = f"{plan.target:,.4g} {unit}".strip()
    figure.update_layout(template=TEMPLATE, title=f"Partitions for {target}", yaxis_title="partitions")
    return figure
