"""One time axis: producer rate, consumer lag, consumer rate, Spark's batches and latency, stacked.

A slow pipeline shows itself as one story across several series: the producer goes above
what the consumer takes, the lag climbs, the consumer reads at its ceiling, Spark's batches
fill up, and each record waits longer. Drawn on one shared x-axis (seconds since the run's
start), the rows are read top to bottom at any instant. The burst, when there is one, is
shaded across every row.

`time_axis_figure` draws a finished run (`BurstRun.series()` gives its arguments; a report
shows this static figure). `live_time_axis` is the same story while it happens: a plotly
`FigureWidget` in JupyterLab, fed by a `LagSampler`'s readings, the way `live_throughput`
follows a `ThroughputMeter`. A report has no widget manager to drive it (its saved widget
state is dropped, see `report._slim`), so a notebook draws the static figure after the run.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.viz.figures import TEMPLATE

__all__ = ["BURST_COLOR", "MAX_LIVE_POINTS", "latency_bins", "live_time_axis", "time_axis_figure"]

#: The shading of the burst window, on every row.
BURST_COLOR = "#f6ad55"
#: Points a live trace keeps (the latest); older ones leave the chart, not the sampler.
MAX_LIVE_POINTS = 5_000
#: Latency samples are drawn as percentiles per time bin; at most this many bins.
_MAX_BINS = 400

_TITLES = {
    "producer": "producer (records/s)",
    "lag": "consumer lag (records)",
    "consumer": "consumer (records/s)",
    "batches": "Spark batch duration (ms)",
    "latency": "end-to-end latency (ms)",
}


def time_axis_figure(
    *,
    producer: pd.DataFrame | None = None,
    offered: pd.DataFrame | None = None,
    lag: pd.DataFrame | None = None,
    consumer: pd.DataFrame | None = None,
    batches: pd.DataFrame | None = None,
    latency: pd.DataFrame | None = None,
    burst: tuple[float, float] | None = None,
    per_partition: bool = False,
    latency_bin_s: float | None = None,
    title: str = "One time axis: producer, lag, consumer",
) -> go.Figure:
    """Rows on one shared x-axis, each drawn when its series is given.

    Args:
        producer: `t`, `achieved_msg_s` (and `offered_msg_s`, used when `offered` is not given).
        offered: the offered rate as a step line, `t`, `offered_msg_s` (`RateSchedule.frame`).
        lag: a sampler's rows (`t`, `topic`, `partition`, `lag`); the total is drawn, and
            each partition's too with `per_partition`.
        consumer: `t`, `msg_s`: records the consumer read per second.
        batches: Spark's micro-batches, `t`, `t_end`, `duration_ms`, `input_msg_s`,
            `processed_msg_s`: a bar per batch across its span, and Spark's own input and
            processing rates in the consumer's row.
        latency: per record, `t` (when it was sent or due) and `latency_ms`; drawn as p50,
            p99 and max per time bin (`latency_bin_s`, 0.25 s by default; at most 400 bins
            over the span), so a million records make a light figure.
        burst: (start, end) of the burst, shaded on every row.
        per_partition: a lag line per partition besides the total.

    Raises:
        ValueError: no series given.

    Usage: `time_axis_figure(**run.series(), per_partition=True)`.
    """
    rows = _rows(producer, offered, lag, consumer, batches, latency)
    if not rows:
        raise ValueError("time_axis_figure needs at least one series (producer, lag, consumer, batches, latency)")
    figure = make_subplots(
        rows=len(rows),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.045,
        subplot_titles=[_TITLES[r] for r in rows],
    )
    at = {name: index + 1 for index, name in enumerate(rows)}
    if "producer" in at:
        _producer_traces(figure, at["producer"], producer, offered)
    if "lag" in at and lag is not None:
        _lag_traces(figure, at["lag"], lag, per_partition)
    if "consumer" in at:
        _consumer_traces(figure, at["consumer"], consumer, batches)
    if "batches" in at and batches is not None:
        _batch_traces(figure, at["batches"], batches)
    if "latency" in at and latency is not None:
        _latency_traces(figure, at["latency"], latency, latency_bin_s)
    _finish(figure, len(rows), burst, title)
    return figure


def _rows(
    producer: pd.DataFrame | None,
    offered: pd.DataFrame | None,
    lag: pd.DataFrame | None,
    consumer: pd.DataFrame | None,
    batches: pd.DataFrame | None,
    latency: pd.DataFrame | None,
) -> list[str]:
    spark = batches is not None and not batches.empty
    present = {
        "producer": producer is not None or offered is not None,
        "lag": lag is not None,
        "consumer": consumer is not None or spark,
        "batches": spark,
        "latency": latency is not None,
    }
    return [name for name in _TITLES if present[name]]


def _producer_traces(figure: go.Figure, row: int, producer: pd.DataFrame | None, offered: pd.DataFrame | None) -> None:
    if offered is None and producer is not None and "offered_msg_s" in producer:
        offered = producer[["t", "offered_msg_s"]]
    if offered is not None:
        figure.add_trace(
            go.Scatter(x=offered["t"], y=offered["offered_msg_s"], mode="lines", name="offered", line={"dash": "dash"}),
            row=row,
            col=1,
        )
    if producer is not None:
        figure.add_trace(
            go.Scatter(x=producer["t"], y=producer["achieved_msg_s"], mode="lines", name="achieved"), row=row, col=1
        )


def _lag_traces(figure: go.Figure, row: int, lag: pd.DataFrame, per_partition: bool) -> None:
    total = lag.groupby("t", sort=True)["lag"].sum()
    figure.add_trace(
        go.Scatter(x=total.index, y=total.to_numpy(), mode="lines", name="lag (total)", line={"width": 3}),
        row=row,
        col=1,
    )
    if per_partition:
        one_topic = lag["topic"].nunique() == 1
        for (topic, partition), part in lag.groupby(["topic", "partition"], sort=True):
            figure.add_trace(
                go.Scatter(x=part["t"], y=part["lag"], mode="lines", name=_label((topic, partition), one_topic)),
                row=row,
                col=1,
            )


def _consumer_traces(figure: go.Figure, row: int, consumer: pd.DataFrame | None, batches: pd.DataFrame | None) -> None:
    if consumer is not None:
        figure.add_trace(
            go.Scatter(x=consumer["t"], y=consumer["msg_s"], mode="lines", name="consumed"), row=row, col=1
        )
    if batches is not None and not batches.empty:
        for column, name in (("input_msg_s", "Spark input rows/s"), ("processed_msg_s", "Spark processing rows/s")):
            figure.add_trace(
                go.Scatter(x=batches["t_end"], y=batches[column], mode="lines+markers", name=name), row=row, col=1
            )


def _batch_traces(figure: go.Figure, row: int, batches: pd.DataFrame) -> None:
    span = (batches["t_end"] - batches["t"]).clip(lower=0.02)
    figure.add_trace(
        go.Bar(
            x=batches["t"] + span / 2,
            y=batches["duration_ms"],
            width=span,
            name="batch duration",
            marker_color="#4a5568",
        ),
        row=row,
        col=1,
    )


def _latency_traces(figure: go.Figure, row: int, latency: pd.DataFrame, bin_s: float | None) -> None:
    binned = latency_bins(latency, bin_s)
    for column, name in (("p50", "latency p50"), ("p99", "latency p99"), ("max", "latency max")):
        figure.add_trace(
            go.Scatter(x=binned["t"], y=binned[column], mode="lines", name=name, line={"dash": _DASH[column]}),
            row=row,
            col=1,
        )


_DASH = {"p50": "solid", "p99": "dash", "max": "dot"}


def latency_bins(latency: pd.DataFrame, bin_s: float | None = None) -> pd.DataFrame:
    """Latency samples (`t`, `latency_ms`) as p50, p99 and max per time bin, `t` the bin's middle."""
    if latency.empty:
        return pd.DataFrame(columns=["t", "p50", "p99", "max"])
    t = latency["t"].to_numpy(dtype=float)
    span = float(t.max() - t.min())
    # The last sample sits on the last bin's edge: span / (bins - 1) keeps it within the bins.
    width = max(bin_s if bin_s and bin_s > 0 else 0.25, span / (_MAX_BINS - 1))
    start = float(t.min())
    keys = np.floor((t - start) / width)
    grouped = latency.assign(bin=keys).groupby("bin", sort=True)["latency_ms"]
    frame = grouped.quantile([0.5, 0.99]).unstack()
    frame.columns = ["p50", "p99"]
    frame["max"] = grouped.max()
    frame["t"] = start + (frame.index.to_numpy() + 0.5) * width
    return frame.reset_index(drop=True)[["t", "p50", "p99", "max"]]


def _finish(figure: Any, rows: int, burst: tuple[float, float] | None, title: str) -> None:
    if burst is not None:
        figure.add_vrect(
            x0=burst[0], x1=burst[1], row="all", col=1, fillcolor=BURST_COLOR, opacity=0.18, line_width=0, layer="below"
        )
        figure.add_annotation(
            x=(burst[0] + burst[1]) / 2, y=1.0, xref="x", yref="paper", text="burst", showarrow=False, yshift=8
        )
    figure.update_xaxes(title_text="seconds since the start", row=rows, col=1)
    figure.update_layout(title=title, template=TEMPLATE, height=170 * rows + 130, hovermode="x unified")


def live_time_axis(
    *,
    burst: tuple[float, float] | None = None,
    offered: Callable[[float], float] | None = None,
    per_partition: bool = False,
    max_points: int = MAX_LIVE_POINTS,
    title: str = "Live: producer, lag, consumer (true end offsets and positions)",
) -> tuple[go.FigureWidget, Callable[[Any], None]]:
    """A `FigureWidget` of three rows on one time axis, and the callback that adds a lag reading.

    The rows: records landing per second (the log ends) against the offered rate, the lag
    (total, and per partition with `per_partition`), and the records the consumer read per
    second (its positions). The callback takes anything with `t`, `ends` and `positions`
    (`{partition: offset}`), as a `LagSampler` gives its `on_sample`; it is called from the
    sampler's thread. Each trace keeps its latest `max_points` points (the sampler keeps
    them all), and is redrawn from numpy arrays: plotly validates a list point by point,
    10 ms a trace at 5,000 points against 0.4 ms for an array.

    Args:
        burst: (start, end) shaded on every row.
        offered: the offered rate at a time (`RateSchedule.rate_at`), drawn beside what landed.

    Usage:
        chart, on_sample = live_time_axis(burst=plan.burst_window, offered=plan.schedule().rate_at)
        display(chart)
        run = lag_burst_run(stack, plan, on_sample=on_sample)
    """
    figure = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=("producer: landed (records/s)", _TITLES["lag"], _TITLES["consumer"]),
    )
    names = [("offered", 1), ("landed", 1), ("lag (total)", 2), ("consumed", 3)]
    for name, row in names:
        line = {"dash": "dash"} if name == "offered" else {}
        figure.add_trace(go.Scatter(x=[], y=[], mode="lines", name=name, line=line), row=row, col=1)
    _finish(figure, 3, burst, title)
    widget = go.FigureWidget(figure)
    series: dict[str, tuple[deque[float], deque[float]]] = {}
    partitions: dict[Any, int] = {}
    previous: list[Any] = []

    def points(name: str) -> tuple[deque[float], deque[float]]:
        return series.setdefault(name, (deque(maxlen=max_points), deque(maxlen=max_points)))

    def add(tick: Any) -> None:
        ends: Mapping[Any, int] = tick.ends
        positions: Mapping[Any, int] = tick.positions
        lags = {p: max(end - positions.get(p, 0), 0) for p, end in ends.items()}
        _append(points("lag (total)"), tick.t, float(sum(lags.values())))
        if previous:
            before = previous[0]
            seconds = tick.t - before.t
            if seconds > 0:
                _append(points("landed"), tick.t, (sum(ends.values()) - sum(before.ends.values())) / seconds)
                consumed = sum(positions.values()) - sum(before.positions.values())
                _append(points("consumed"), tick.t, consumed / seconds)
        previous[:] = [tick]
        if offered is not None:
            _append(points("offered"), tick.t, offered(tick.t))
        with widget.batch_update():
            if per_partition:
                for partition, value in lags.items():
                    if partition not in partitions:
                        name = _label(partition, len({_topic(p) for p in lags}) == 1)
                        widget.add_trace(go.Scatter(x=[], y=[], mode="lines", name=name), row=2, col=1)
                        partitions[partition] = len(widget.data) - 1
                    _append(points(f"p{partitions[partition]}"), tick.t, float(value))
            for index, trace in enumerate(widget.data):
                key = trace.name if index < len(names) else f"p{index}"
                if key in series:
                    xs, ys = series[key]
                    trace.x, trace.y = np.fromiter(xs, float, len(xs)), np.fromiter(ys, float, len(ys))

    return widget, add


def _label(partition: Any, one_topic: bool) -> str:
    """`lag p3` when every partition is of one topic, else `lag orders[3]`."""
    if not isinstance(partition, tuple):
        return f"lag {partition}"
    return f"lag p{partition[1]}" if one_topic else f"lag {partition[0]}[{partition[1]}]"


def _topic(partition: Any) -> Any:
    return partition[0] if isinstance(partition, tuple) else None


def _append(points: tuple[deque[float], deque[float]], t: float, value: float) -> None:
    points[0].append(t)
    points[1].append(value)
