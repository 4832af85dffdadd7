"""The device-telemetry pipeline: parse, watermark, aggregate per device and window, sink.

    readings = parse_readings(kafka_df)                       # explicit schema, no inference
    windows = device_windows(readings, window="10 seconds", watermark="20 seconds")
    with stopping(write_parquet(windows, path, checkpoint, trigger={"availableNow": True})) as q:
        q.awaitTermination()

Append mode with a watermark means a window is written once, when the watermark passes
its end, and readings arriving after that are dropped. `expected_windows` computes the
same result with pandas from the generated readings, batch by batch, so a test (or a
sceptical reader) can check the Spark output against it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.streaming.telemetry import Reading

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

__all__ = [
    "READING_SCHEMA",
    "WINDOW_COLUMNS",
    "device_windows",
    "expected_windows",
    "parse_readings",
    "stopping",
    "write_memory",
    "write_parquet",
]

#: The JSON readings' schema, given explicitly: inference would need a pass over the data
#: and could change type when one reading happens to lack a field.
READING_SCHEMA = "device_id STRING, event_ms BIGINT, seq BIGINT, temperature DOUBLE, humidity DOUBLE, battery DOUBLE"

#: Columns of `device_windows` output, in order.
WINDOW_COLUMNS = [
    "device_id",
    "window_start",
    "window_end",
    "readings",
    "avg_temperature",
    "min_temperature",
    "max_temperature",
    "min_battery",
]


def parse_readings(kafka_frame: DataFrame) -> DataFrame:
    """JSON values → typed columns, with `event_time` and the record's Kafka coordinates.

    Malformed values become rows with null fields (Spark's PERMISSIVE JSON mode) rather
    than failing the stream; filter on `device_id IS NULL` to count them.
    """
    from pyspark.sql import functions as F

    parsed = F.from_json(F.col("value").cast("string"), READING_SCHEMA)
    return kafka_frame.select(
        parsed.alias("r"), "topic", "partition", "offset", F.col("timestamp").alias("kafka_timestamp")
    ).select(
        "r.*",
        F.timestamp_millis(F.col("r.event_ms")).alias("event_time"),
        "topic",
        "partition",
        "offset",
        "kafka_timestamp",
    )


def device_windows(readings: DataFrame, *, window: str = "10 seconds", watermark: str = "20 seconds") -> DataFrame:
    """Per device and tumbling event-time window: count, temperature avg/min/max, lowest battery.

    Args:
        readings: from `parse_readings`.
        window: window length (Spark interval string).
        watermark: how late a reading may arrive and still count.
    """
    from pyspark.sql import functions as F

    grouped = readings.withWatermark("event_time", watermark).groupBy(
        F.window("event_time", window).alias("window"), "device_id"
    )
    return grouped.agg(
        F.count(F.lit(1)).alias("readings"),
        F.avg("temperature").alias("avg_temperature"),
        F.min("temperature").alias("min_temperature"),
        F.max("temperature").alias("max_temperature"),
        F.min("battery").alias("min_battery"),
    ).select(
        "device_id",
        F.col("window.start").alias("window_start"),
        F.col("window.end").alias("window_end"),
        *WINDOW_COLUMNS[3:],
    )


def write_parquet(
    frame: DataFrame,
    path: str | Path,
    checkpoint: str | Path,
    *,
    trigger: Mapping[str, Any] | None = None,
    query_name: str | None = None,
) -> StreamingQuery:
    """Start appending `frame` to parquet files under `path`, checkpointed in `checkpoint`.

    The file sink records committed files in `path/_spark_metadata`; read the result with
    `spark.read.parquet(path)`, which honours that log, so a batch interrupted by a stop
    is never seen twice. `trigger` is `DataStreamWriter.trigger`'s keywords:
    `{"availableNow": True}` (default) or `{"processingTime": "1 second"}`.
    """
    writer = frame.writeStream.format("parquet").outputMode("append").option("path", str(path))
    writer = writer.option("checkpointLocation", str(checkpoint)).trigger(**(trigger or {"availableNow": True}))
    return (writer.queryName(query_name) if query_name else writer).start()


def write_memory(
    frame: DataFrame,
    name: str,
    *,
    trigger: Mapping[str, Any] | None = None,
    checkpoint: str | Path | None = None,
    output_mode: str = "append",
) -> StreamingQuery:
    """Start writing `frame` to the in-memory table `name` (`spark.table(name)`), for notebooks."""
    writer = frame.writeStream.format("memory").queryName(name).outputMode(output_mode)
    if checkpoint is not None:
        writer = writer.option("checkpointLocation", str(checkpoint))
    return writer.trigger(**(trigger or {"availableNow": True})).start()


@contextmanager
def stopping(query: StreamingQuery) -> Iterator[StreamingQuery]:
    """Stop the query when the block ends, even when a cell is interrupted."""
    try:
        yield query
    finally:
        if query.isActive:
            query.stop()


def expected_windows(
    batches: Sequence[Sequence[Reading]], *, window_ms: int = 10_000, watermark_ms: int = 20_000
) -> pd.DataFrame:
    """What `device_windows` in append mode outputs for readings delivered in these micro-batches.

    Spark's rules for one stateful operator, reproduced: the watermark of batch N is the
    largest event time seen in batches before N minus the delay (never decreasing);
    batch N drops a reading whose window ended at or before batch N-1's watermark
    (it is late), and emits, then forgets, every window that ended at or before batch
    N's own watermark. Include the empty batches Spark ran (they emit windows too).

    Returns:
        The emitted windows, columns as `device_id`, `window_start`, `window_end` (UTC
        timestamps), then the aggregates; sorted by device and window.
    """
    state: dict[tuple[str, int], list[Reading]] = {}
    emitted: list[dict[str, Any]] = []
    watermark = previous = 0
    max_event: int | None = None
    for batch in batches:
        for reading in batch:
            start = reading["event_ms"] - reading["event_ms"] % window_ms
            if start + window_ms <= previous:
                continue  # late: its window was already closed
            state.setdefault((reading["device_id"], start), []).append(reading)
        for key in sorted(k for k in state if k[1] + window_ms <= watermark):
            emitted.append(_window_row(key, state.pop(key), window_ms))
        if batch:
            newest = max(r["event_ms"] for r in batch)
            max_event = newest if max_event is None else max(max_event, newest)
        previous = watermark
        if max_event is not None:
            watermark = max(watermark, max_event - watermark_ms)
    frame = pd.DataFrame(emitted, columns=WINDOW_COLUMNS)
    for column in ("window_start", "window_end"):
        frame[column] = pd.to_datetime(frame[column], unit="ms", utc=True)
    return frame.sort_values(["device_id", "window_start"]).reset_index(drop=True)


def _window_row(key: tuple[str, int], readings: list[Reading], window_ms: int) -> dict[str, Any]:
    temperatures = [r["temperature"] for r in readings]
    return {
        "device_id": key[0],
        "window_start": key[1],
        "window_end": key[1] + window_ms,
        "readings": len(readings),
        "avg_temperature": sum(temperatures) / len(temperatures),
        "min_temperature": min(temperatures),
        "max_temperature": max(temperatures),
        "min_battery": min(r["battery"] for r in readings),
    }
