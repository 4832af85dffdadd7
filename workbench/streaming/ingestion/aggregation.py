"""The windowed per-device aggregation under each `spark.sql.shuffle.partitions`: `spark_aggregate`.

The setting is read when a query starts and then fixed in its checkpoint, so every point
is a new query with a new checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack
from workbench.streaming import kafka_source
from workbench.streaming.ingestion.runs import bench_session, ingest, spark_row, telemetry_topic
from workbench.streaming.pipelines import device_windows, parse_readings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["shuffle_sweep", "spark_aggregate"]


def _aggregate_params(shuffle_partitions: int, records: int, devices: int, topic_partitions: int) -> dict[str, Any]:
    """A point's parameters as its row names them."""
    return {
        "shuffle_partitions": shuffle_partitions,
        "records": records,
        "devices": devices,
        "topic_partitions": topic_partitions,
    }


def _aggregate_point(
    spark: SparkSession, stack: Stack, work_dir: Path, frame: DataFrame, params: dict[str, Any]
) -> dict[str, Any]:
    """One run of the windowed aggregation under `params["shuffle_partitions"]` (a new query reads it)."""
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        spark.conf.set("spark.sql.shuffle.partitions", str(params["shuffle_partitions"]))
        with ResourceMonitor(stack.services, spark=True) as monitor:
            measured, _ = ingest(spark, frame, work_dir)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", str(previous))
    return spark_row(stack, "spark_aggregate", params, measured, resources=monitor.columns())


def _readings_frame(spark: SparkSession, stack: Stack, topic: str) -> DataFrame:
    source = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
    return device_windows(parse_readings(source))


def shuffle_sweep(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    records: int,
    shuffle_partitions: Sequence[int],
    partitions: int = 4,
    devices: int = 100,
) -> pd.DataFrame:
    """The windowed telemetry aggregation, AvailableNow, under each `spark.sql.shuffle.partitions`.

    The setting is read when a query starts (and then fixed in its checkpoint), so each
    run is a new query with a new checkpoint. Rows of `spark_aggregate`; `mb_s` is NaN
    (the readings are unpadded JSON of varying size).
    """
    rows = []
    with telemetry_topic(stack, records=records, partitions=partitions, value_bytes=None, devices=devices) as topic:
        frame = _readings_frame(spark, stack, topic)
        for count in shuffle_partitions:
            params = _aggregate_params(count, records, devices, partitions)
            rows.append(_aggregate_point(spark, stack, work_dir, frame, params))
    return pd.DataFrame(rows)


def spark_aggregate(
    stack: Stack,
    *,
    records: int = 200_000,
    shuffle_partitions: int = 4,
    topic_partitions: int = 4,
    devices: int = 100,
    topic_prefix: str = "spark-tele",
) -> dict[str, Any]:
    """The windowed per-device aggregation over a fresh topic under one shuffle setting; one row."""
    spark, work = bench_session(stack)
    params = _aggregate_params(shuffle_partitions, records, devices, topic_partitions)
    with telemetry_topic(
        stack, records=records, partitions=topic_partitions, value_bytes=None, devices=devices, prefix=topic_prefix
    ) as topic:
        return _aggregate_point(spark, stack, work, _readings_frame(spark, stack, topic), params)
