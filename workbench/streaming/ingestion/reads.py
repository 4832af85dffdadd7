"""Reading a topic by partitions, sink and source options: the `spark_ingest` experiment.

One point is one read of a fresh topic, by Spark (AvailableNow into a sink) or by the
plain consumer (the ceiling), as a contract row. The sweeps notebook 09 runs (partitions
and sinks, `maxOffsetsPerTrigger`) are points over one topic each.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.errors import BenchError
from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack
from workbench.streaming import Connector, connector_name, kafka_source
from workbench.streaming.ingestion.ceiling import consumer_ceiling
from workbench.streaming.ingestion.runs import bench_session, ingest, spark_row, telemetry_topic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["PLAIN_SINKS", "SINKS", "parallelism_sweep", "rate_limit_runs", "spark_ingest"]


#: Readers `spark_ingest` compares: Spark's sinks, and one plain consumer (the ceiling).
PLAIN_SINKS = ("plain consumer", "plain consumer, GC paused")


SINKS = ("noop", "parquet", "memory", *PLAIN_SINKS)


def _read_point(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    topic: str,
    params: dict[str, Any],
    connector: Connector | None = None,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """One measured read of `topic` as `params` say (see `spark_ingest`): its row and progress."""
    sink = params["sink"]
    if sink in PLAIN_SINKS:
        with ResourceMonitor(stack.services) as monitor:
            measured = consumer_ceiling(stack, topic, pause_gc=sink == PLAIN_SINKS[1])
        tasks, progress, connector_label = 1, pd.DataFrame(), "none"
    else:
        options = _source_options(topic, params)
        tasks = kafka_source(spark, stack, streaming=False, connector=connector, **options).rdd.getNumPartitions()
        with ResourceMonitor(stack.services, spark=True) as monitor:
            frame = kafka_source(spark, stack, connector=connector, **options)
            measured, progress = ingest(spark, frame, work_dir, sink=sink)
        connector_label = connector_name(spark, stack.profile, connector)
    row = spark_row(
        stack,
        "spark_ingest",
        params,
        measured,
        value_bytes=params["value_bytes"],
        resources=monitor.columns(),
        extra={"spark_tasks": tasks},
        connector=connector_label,
    )
    return row, progress


def _source_options(topic: str, params: dict[str, Any]) -> dict[str, Any]:
    """The Kafka source's options for `params`: the whole topic, split and rate-limited only when asked."""
    options: dict[str, Any] = {"subscribe": topic, "startingOffsets": "earliest"}
    if params["min_partitions"]:
        options["minPartitions"] = params["min_partitions"]
    if params["max_offsets_per_trigger"]:
        options["maxOffsetsPerTrigger"] = params["max_offsets_per_trigger"]
    return options


def _ingest_params(
    records: int,
    topic_partitions: int,
    value_bytes: int,
    sink: str = "noop",
    min_partitions: int | None = None,
    max_offsets_per_trigger: int | None = None,
) -> dict[str, Any]:
    return {
        "topic_partitions": topic_partitions,
        "records": records,
        "value_bytes": value_bytes,
        "sink": sink,
        "min_partitions": min_partitions,
        "max_offsets_per_trigger": max_offsets_per_trigger,
    }


def parallelism_sweep(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    records: int,
    partitions: Sequence[int] = (1, 2, 4),
    min_partitions: int | None = 8,
    sinks: Sequence[str] = ("noop", "parquet"),
    value_bytes: int = 200,
    connectors: Sequence[Connector | None] = (None,),
) -> pd.DataFrame:
    """msg/s by topic partitions (= Spark tasks), by sink, against the plain consumer: `spark_ingest` rows.

    Call `warm_up` first, so no run pays for Python worker start-up. With
    `min_partitions`, the one-partition topic is also read split into that many tasks.
    `connectors` are the sources to read with (`kafka`, `workbench`; None: the profile's):
    the first reads every point, the others the unsplit noop read of each topic, one
    after the other over the same topic (enough to compare the sources themselves).
    """
    rows: list[dict[str, Any]] = []
    for count in partitions:
        with telemetry_topic(stack, records=records, partitions=count, value_bytes=value_bytes) as topic:
            variants: list[int | None] = [None]
            if min_partitions and count == min(partitions):
                variants.append(min_partitions)
            for split in variants:
                for sink in sinks:
                    params = _ingest_params(records, count, value_bytes, sink, split)
                    for n, connector in enumerate(connectors):
                        if n and (sink != "noop" or split):  # the others: the plain noop read only
                            continue
                        rows.append(_read_point(spark, stack, work_dir, topic, params, connector)[0])
            for sink in PLAIN_SINKS:
                rows.append(
                    _read_point(spark, stack, work_dir, topic, _ingest_params(records, count, value_bytes, sink))[0]
                )
    return pd.DataFrame(rows)


def rate_limit_runs(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    records: int,
    limits: Sequence[int | None],
    partitions: int = 4,
    value_bytes: int = 200,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """AvailableNow with each `maxOffsetsPerTrigger`: batches, their sizes, msg/s (`spark_ingest` rows).

    Returns the summary (one row per limit) and the per-batch progress of every run.
    """
    summary, batches = [], []
    with telemetry_topic(stack, records=records, partitions=partitions, value_bytes=value_bytes) as topic:
        for limit in limits:
            params = _ingest_params(records, partitions, value_bytes, max_offsets_per_trigger=limit)
            row, progress = _read_point(spark, stack, work_dir, topic, params)
            summary.append(row)
            busy = progress[progress["rows"] > 0].assign(max_offsets_per_trigger=limit or 0)
            batches.append(busy.assign(batch=range(len(busy))))
    return pd.DataFrame(summary), pd.concat(batches, ignore_index=True)


def spark_ingest(
    stack: Stack,
    *,
    records: int = 200_000,
    topic_partitions: int = 1,
    value_bytes: int = 200,
    sink: str = "noop",
    min_partitions: int | None = None,
    max_offsets_per_trigger: int | None = None,
    connector: Connector | None = None,
    topic_prefix: str = "spark-tele",
) -> dict[str, Any]:
    """Read a fresh telemetry topic once with Spark (AvailableNow) or one plain consumer; one row.

    Args:
        records: readings in the topic, padded to `value_bytes`.
        topic_partitions: its partitions (one Spark task each, unless `min_partitions`).
        sink: `noop`, `parquet`, `memory`, or `plain consumer` / `plain consumer, GC paused`
            (no Spark: the ceiling of a reader in this process).
        min_partitions, max_offsets_per_trigger: the source options, when set.
        connector: `kafka` (Spark's) or `workbench` (ours) instead of the profile's choice.

    Raises:
        BenchError: an unknown sink.

    Usage: `sweep("spark_ingest", {"topic_partitions": [1, 2, 4]}, repeat=3)`.
    """
    if sink not in SINKS:
        raise BenchError(f"sink must be one of {list(SINKS)}, got {sink!r}")
    spark, work = bench_session(stack)
    params = _ingest_params(records, topic_partitions, value_bytes, sink, min_partitions, max_offsets_per_trigger)
    with telemetry_topic(
        stack, records=records, partitions=topic_partitions, value_bytes=value_bytes, prefix=topic_prefix
    ) as topic:
        return _read_point(spark, stack, work, topic, params, connector)[0]
