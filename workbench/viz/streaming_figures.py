"""Figures of a streaming query's progress: where each trigger's time went, live or afterwards."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.streaming.progress import DURATIONS, progress_frame
from workbench.viz.figures import TEMPLATE

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

__all__ = ["follow_query", "progress_figure", "watch_query"]


def progress_figure(frame: pd.DataFrame, *, title: str = "Streaming query progress") -> go.Figure:
    """Rows per second (input and processed) over batches, and where each trigger's time went."""
    figure = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=("rows / s", "trigger time by phase (ms)"),
    )
    x = frame["batch_id"] if len(frame) else []
    for column, name in (("input_msg_s", "input rows/s"), ("processed_msg_s", "processed rows/s")):
        figure.add_trace(go.Scatter(x=x, y=frame.get(column, []), mode="lines+markers", name=name), row=1, col=1)
    for phase in DURATIONS:
        figure.add_trace(go.Bar(x=x, y=frame.get(f"{phase}_ms", []), name=phase), row=2, col=1)
    figure.update_layout(title=title, barmode="stack", template=TEMPLATE, height=520, xaxis2_title="batch")
    return figure


def watch_query(
    query: StreamingQuery,
    *,
    until: Callable[[], bool] | None = None,
    timeout_s: float = 60.0,
    every_s: float = 1.0,
    title: str = "Streaming query progress",
) -> pd.DataFrame:
    """Redraw `progress_figure` every `every_s` while the query runs, in the notebook.

    Returns when the query stops, `until()` is true, or after `timeout_s` (the query
    keeps running; stop it yourself). The figure left in the cell is the final one.

    Raises:
        the query's own exception, if it failed.
    """
    from IPython.display import display

    handle = display(progress_figure(progress_frame(query), title=title), display_id=True)
    deadline = time.monotonic() + timeout_s
    while query.isActive and time.monotonic() < deadline and not (until and until()):
        time.sleep(every_s)
        if handle is not None:
            handle.update(progress_figure(progress_frame(query), title=title))
    if query.exception() is not None:
        raise query.exception()  # type: ignore[misc]
    frame = progress_frame(query)
    if handle is not None:
        handle.update(progress_figure(frame, title=title))
    return frame


def follow_query(*, timeout_s: float = 60.0, title: str = "Streaming query progress") -> Callable[..., None]:
    """A callback `(query, done)` that watches a query until `done()`: what an experiment's
    `on_query` takes, so the notebook shows the query live while the experiment drives it.

    Usage: `experiments.trigger_latency(..., on_query=viz.follow_query(timeout_s=70))`.
    """

    def follow(query: StreamingQuery, done: Callable[[], bool]) -> None:
        watch_query(query, until=done, timeout_s=timeout_s, title=title)

    return follow
