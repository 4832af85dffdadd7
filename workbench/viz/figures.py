"""Figure builders: one function per kind of chart the notebooks draw.

Each takes a tidy results table (one row per run, as the bench generators return) and
column names, so the same builder draws any experiment. Repeated runs of a point are
drawn as their median with a min-max error bar: the spread is part of the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

__all__ = [
    "PERCENTILES",
    "TEMPLATE",
    "bars",
    "before_after",
    "configure_renderers",
    "latency_vs_load",
    "live_throughput",
    "throughput_over_time",
    "throughput_vs",
]

TEMPLATE = "plotly_white"
PERCENTILES = {"latency_p50_ms": "p50", "latency_p95_ms": "p95", "latency_p99_ms": "p99", "latency_max_ms": "max"}


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


def _summary(frame: pd.DataFrame, x: str, y: str, color: str | None) -> pd.DataFrame:
    """Median and min/max of `y` per (color, x): repeats collapse into one point with a bar."""
    keys = [k for k in (color, x) if k]
    grouped = frame.groupby(keys, dropna=False, sort=True)[y]
    return grouped.agg(median="median", low="min", high="max").reset_index()


def throughput_vs(
    frame: pd.DataFrame,
    x: str,
    y: str = "msg_s",
    *,
    color: str | None = None,
    title: str = "",
    log_x: bool = True,
    log_y: bool = False,
    x_title: str | None = None,
    y_title: str | None = None,
) -> go.Figure:
    """Throughput (or any metric) against a parameter; one line per `color` value.

    Log axes by default on x, because the knobs that matter (records per call, batch
    size, record size) span orders of magnitude.

    Usage: `throughput_vs(rows, "records_per_call", color="session_reuse")`.
    """
    figure = go.Figure()
    summary = _summary(frame, x, y, color)
    groups = summary.groupby(color, dropna=False, sort=True) if color else [(None, summary)]
    for label, part in groups:
        part = part.sort_values(x)
        figure.add_trace(
            go.Scatter(
                x=part[x],
                y=part["median"],
                mode="lines+markers",
                name=f"{color}={label}" if color else y,
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": part["high"] - part["median"],
                    "arrayminus": part["median"] - part["low"],
                },
            )
        )
    figure.update_layout(
        title=title or f"{y} vs {x}",
        xaxis_title=x_title or x,
        yaxis_title=y_title or y,
        template=TEMPLATE,
        xaxis_type="log" if log_x else None,
        yaxis_type="log" if log_y else None,
        showlegend=bool(color),
    )
    if log_x:
        figure.update_xaxes(**_measured_ticks(summary[x]))
    return figure


#: Up to this many distinct values, a log axis is labelled at the values measured.
_MAX_TICKS = 12


def _measured_ticks(values: pd.Series) -> dict[str, Any]:
    """Tick labels at the swept values (1, 10, 100, 500) on a log axis, or nothing to change.

    Plotly's own log ticks label the minor digits of the decade its padding reaches below the
    first point, so a sweep starting at 1 showed a stray "8 9" left of it.
    """
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    distinct = sorted(v for v in set(numbers.tolist()) if v > 0)
    if not distinct or len(distinct) > _MAX_TICKS or len(distinct) != len(set(values.dropna().tolist())):
        return {}
    from workbench.numbers import format_number

    return {"tickmode": "array", "tickvals": distinct, "ticktext": [format_number(v) for v in distinct]}


def latency_vs_load(
    frame: pd.DataFrame,
    x: str = "offered_msg_s",
    *,
    percentiles: Sequence[str] = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms"),
    color: str | None = None,
    title: str = "Latency percentiles vs offered load",
    log_y: bool = True,
) -> go.Figure:
    """Latency percentiles (ms) against load; a line per percentile (and per `color` value)."""
    figure = go.Figure()
    groups = frame.groupby(color, dropna=False, sort=True) if color else [(None, frame)]
    dashes = ["solid", "dash", "dot", "dashdot"]
    for gi, (label, part) in enumerate(groups):
        for column in percentiles:
            summary = part.groupby(x, sort=True)[column].median().reset_index()
            name = PERCENTILES.get(column, column) + (f" {color}={label}" if color else "")
            figure.add_trace(
                go.Scatter(
                    x=summary[x],
                    y=summary[column],
                    mode="lines+markers",
                    name=name,
                    line={"dash": dashes[gi % len(dashes)]},
                )
            )
    figure.update_layout(
        title=title, xaxis_title=x, yaxis_title="latency (ms)", template=TEMPLATE, yaxis_type="log" if log_y else None
    )
    return figure


def throughput_over_time(
    frame: pd.DataFrame,
    *,
    t: str = "t",
    y: str = "msg_s",
    color: str | None = None,
    title: str = "Throughput over time",
    y_title: str = "records / s",
) -> go.Figure:
    """A rate time series (a `ThroughputMeter.frame()`, or timelines), a line per `color` value."""
    figure = go.Figure()
    groups = frame.groupby(color, dropna=False, sort=False) if color else [(None, frame)]
    for label, part in groups:
        figure.add_trace(go.Scatter(x=part[t], y=part[y], mode="lines", name=str(label) if color else y))
    figure.update_layout(
        title=title, xaxis_title="seconds", yaxis_title=y_title, template=TEMPLATE, showlegend=bool(color)
    )
    return figure


def live_throughput(
    *, title: str = "Records landing per second (true end offsets)"
) -> tuple[go.FigureWidget, Callable[[Any], None]]:
    """A plotly `FigureWidget`, and the callback that adds one meter sample to it.

    The figure knows nothing of meters: hand the callback to whatever samples a rate
    (`ThroughputMeter(on_sample=...)`; anything with `t` and `msg_s`). It is called from
    the sampling thread; in a report (no live front end) the final state is saved.

    Usage:
        chart, on_sample = live_throughput()
        meter = ThroughputMeter(conf, [topic], interval=0.5, on_sample=on_sample)
        display(chart)
        with meter: run_load()
    """
    widget = go.FigureWidget(go.Scatter(x=[], y=[], mode="lines+markers", name="msg/s"))
    # No axes until the first reading: an empty plotly chart draws axes from -1 to 6.
    widget.update_layout(
        title=title,
        xaxis_title="seconds",
        yaxis_title="records / s",
        template=TEMPLATE,
        xaxis={"visible": False, "rangemode": "tozero"},
        yaxis={"visible": False, "rangemode": "tozero"},
        annotations=[
            {
                "text": "waiting for the first reading",
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
            }
        ],
    )
    seconds: list[float] = []
    rates: list[float] = []

    def add(sample: Any) -> None:
        if not _plotted(seconds, sample.t):
            return
        seconds.append(sample.t)
        rates.append(sample.msg_s)
        with widget.batch_update():
            widget.data[0].x = list(seconds)
            widget.data[0].y = list(rates)
            if len(seconds) == 1:
                widget.update_layout(xaxis_visible=True, yaxis_visible=True)
                widget.layout.annotations = ()  # update_layout would merge, not clear

    return widget, add


def _plotted(seconds: Sequence[float], t: float) -> bool:
    """Whether a reading at `t` goes on a live rate chart after readings at `seconds`.

    A meter's closing reading comes a few milliseconds after its last sample (it is taken
    when the load ends, not on the interval): a rate over so short a span is noise, often 0,
    and drew a vertical drop at the end that read as "throughput fell to zero". A reading
    that covers less than half of the interval before it is left off the chart (the meter's
    own samples and totals keep it).
    """
    if len(seconds) < 2:
        return True
    return t - seconds[-1] >= 0.5 * (seconds[-1] - seconds[-2])


def before_after(
    before: float,
    after: float,
    *,
    labels: tuple[str, str] = ("before", "after"),
    title: str,
    y_title: str = "records / s",
    text_format: str = ",.0f",
) -> go.Figure:
    """Two bars with the ratio after/before written above them (e.g. "4.20x" as a multiplication sign)."""
    figure = go.Figure(
        go.Bar(
            x=list(labels),
            y=[before, after],
            text=[format(before, text_format), format(after, text_format)],
            textposition="auto",
            marker_color=["#9aa5b1", "#2b6cb0"],
        )
    )
    ratio = after / before if before else float("nan")
    figure.add_annotation(
        x=labels[1],
        y=max(before, after),
        text=f"<b>{ratio:.2f}×</b>",  # noqa: RUF001 (the multiplication sign is meant)
        showarrow=False,
        yshift=18,
        font={"size": 16},
    )
    figure.update_layout(title=title, yaxis_title=y_title, template=TEMPLATE, yaxis_range=[0, max(before, after) * 1.2])
    return figure
