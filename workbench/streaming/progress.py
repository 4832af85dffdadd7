"""A streaming query's progress as a table (`viz.progress_figure` draws it; `viz.watch_query`
follows a running query).

Spark reports one progress event per micro-batch: rows, rates, where the trigger's time
went (`latestOffset`, `queryPlanning`, `addBatch`, `walCommit`, `commitOffsets`) and,
through the source's `reportLatestOffset`, how far the batch's end is from the log end.
`progress_frame` turns those events into one tidy row per batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

__all__ = ["DURATIONS", "offsets_behind", "progress_frame"]

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
                "input_msg_s": float(data.get("inputRowsPerSecond") or 0.0),
                "processed_msg_s": float(data.get("processedRowsPerSecond") or 0.0),
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
