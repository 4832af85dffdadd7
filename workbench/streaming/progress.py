"""A streaming query's progress as a table, and as a plot that can follow a running query.

Spark reports one progress event per micro-batch: rows, rates, where the trigger's time
went (`latestOffset`, `queryPlanning`, `addBatch`, `walCommit`, `commitOffsets`) and,
through the source's `reportLatestOffset`, how far the batch's end is from the log end.
`progress_frame` turns those events into one tidy row per batch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

__all__ = ["DURATIONS", "offsets_behind", "progress_figure", "progress_frame", "watch"]

#: Parts of a trigger, in the order they happen, as Spark names them in `durationMs`.
DURATIONS = ["latestOffset", "queryPlanning", "getBatch", "addBatch", "walCommit", "commitOffsets"]


def offsets_behind(end: Any, latest: Any) -> int | None:
    """Records between a batch's end offsets and the log end it saw (summed over partitions)."""
    end_map, latest_map = _offsets(end), _offsets(latest)
    if end_map is None or latest_map is None:
        return None
    return sum(max(offset - end_map.get(tp, 0), 0) for tp, offset in latest_map.items())


def _offsets(value: Any) -> dict[tuple[str, str], int] | None:
    if value is None:
        return None
    data = json.loads(value) if isinstance(value, str) else value
    if not isinstance(data, Mapping):
        return None
    return {(t, p): int(o) for t, parts in data.items() if isinstance(parts, Mapping) for p, o in parts.items()}


def progress_frame(source: StreamingQuery | Iterable[Any]) -> pd.DataFrame:
    """One row per micro-batch: rows, rates, durations (ms), offsets behind, watermark.

    Args:
        source: a query (its `recentProgress`, the last 100 batches by default) or
            progress events (dicts or Spark's progress objects).

    Usage: `progress_frame(query)[["batch_id", "rows", "trigger_ms"]]`.
    """
    events = source.recentProgress if hasattr(source, "recentProgress") else source
    rows = []
    for event in events:
        data = _as_dict(event)
        durations = data.get("durationMs") or {}
        sources = data.get("sources") or []
        behind = [offsets_behind(s.get("endOffset"), s.get("latestOffset")) for s in sources]
        rows.append(
            {
                "batch_id": data.get("batchId"),
                "timestamp": pd.Timestamp(data["timestamp"]) if data.get("timestamp") else pd.NaT,
                "rows": int(data.get("numInputRows") or 0),
                "input_rows_s": float(data.get("inputRowsPerSecond") or 0.0),
                "processed_rows_s": float(data.get("processedRowsPerSecond") or 0.0),
                "trigger_ms": int(durations.get("triggerExecution", 0)),
                **{f"{name}_ms": int(durations.get(name, 0)) for name in DURATIONS},
                "offsets_behind": sum(b for b in behind if b is not None)
                if any(b is not None for b in behind)
                else None,
                "watermark": (data.get("eventTime") or {}).get("watermark"),
            }
        )
    return pd.DataFrame(rows)


def _as_dict(event: Any) -> dict[str, Any]:
    if hasattr(event, "json"):  # pyspark's StreamingQueryProgress: its JSON is the whole event
        text = event.json
        return dict(json.loads(text() if callable(text) else text))
    if isinstance(event, Mapping):
        return dict(event)
    raise TypeError(f"not a progress event: {event!r}")


def progress_figure(frame: pd.DataFrame, *, title: str = "Streaming query progress") -> go.Figure:
    """Rows per second (input and processed) over batches, and where each trigger's time went."""
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                           subplot_titles=("rows / s", "trigger time by phase (ms)"))  # fmt: skip
    x = frame["batch_id"] if len(frame) else []
    for column, name in (("input_rows_s", "input rows/s"), ("processed_rows_s", "processed rows/s")):
        figure.add_trace(go.Scatter(x=x, y=frame.get(column, []), mode="lines+markers", name=name), row=1, col=1)
    for phase in DURATIONS:
        figure.add_trace(go.Bar(x=x, y=frame.get(f"{phase}_ms", []), name=phase), row=2, col=1)
    figure.update_layout(title=title, barmode="stack", template="plotly_white", height=520,
                         xaxis2_title="batch")  # fmt: skip
    return figure


def watch(
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
