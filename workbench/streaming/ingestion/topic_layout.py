"""One topic per device (read by `subscribePattern`) against one shared topic: `spark_topic_layout`,
and whether a device topic created while the query runs is picked up.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.errors import BenchError
from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack, TemporaryTopics
from workbench.streaming import kafka_source, to_pandas
from workbench.streaming.ingestion.runs import bench_session, ingest, spark_row, wait_rows
from workbench.streaming.pipelines import stopping
from workbench.streaming.telemetry import Reading, generate_readings, produce_readings
from workbench.topics.strategies import TopicPerDevice, device_ids

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["LAYOUTS", "layout_sentence", "per_device_topics", "spark_topic_layout"]


#: The layouts `spark_topic_layout` reads the same readings from.
LAYOUTS = ("topic per device", "one topic, 4 partitions")


def _layout_point(
    spark: SparkSession, stack: Stack, work_dir: Path, params: dict[str, Any], options: dict[str, Any]
) -> dict[str, Any]:
    frame = kafka_source(spark, stack, startingOffsets="earliest", **options)
    with ResourceMonitor(stack.services) as monitor:
        measured, _ = ingest(spark, frame, work_dir)
    tasks = kafka_source(spark, stack, streaming=False, **options).rdd.getNumPartitions()
    topics = params["devices"] if params["layout"] == LAYOUTS[0] else 1
    return spark_row(
        stack,
        "spark_topic_layout",
        params,
        measured,
        resources=monitor.columns(),
        extra={"topics": topics, "spark_tasks": tasks},
    )


def _layouts(prefix: str) -> tuple[TopicPerDevice, str]:
    """The two layouts: topics `<prefix>-<device id>`, and one shared topic outside their pattern."""
    return TopicPerDevice(f"{prefix}-"), f"{prefix}.all"


def _layout_options(per_device: TopicPerDevice, shared: str, layout: str) -> dict[str, str]:
    return per_device.spark_options() if layout == LAYOUTS[0] else {"subscribe": shared}


def per_device_topics(
    spark: SparkSession, stack: Stack, work_dir: Path, *, devices: int, seconds: int, late_device: bool = True
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The same readings in one topic per device (read by `subscribePattern`) vs one shared topic.

    Returns the comparison (one `spark_topic_layout` row per layout: topics, Spark tasks,
    records, msg/s) and the check that a device topic created while the query runs is picked up.
    """
    conf = stack.kafka_config("producer")
    per_device, shared = _layouts(f"spark-dev-{uuid.uuid4().hex[:6]}")
    readings = generate_readings(devices=devices, seconds=seconds, seed=11)
    with stack.temporary_topics({**per_device.topics(device_ids(devices)), shared: 4}, timeout=30.0) as created:
        produce_readings(conf, readings, per_device)
        produce_readings(conf, readings, shared)
        rows = []
        for layout in LAYOUTS:
            params = {"layout": layout, "devices": devices, "readings_seconds": seconds}
            rows.append(_layout_point(spark, stack, work_dir, params, _layout_options(per_device, shared, layout)))
        pickup = _new_topic_pickup(spark, stack, work_dir, per_device, readings, created) if late_device else {}
    return pd.DataFrame(rows), pickup


def _new_topic_pickup(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    per_device: TopicPerDevice,
    readings: list[Reading],
    created: TemporaryTopics,
) -> dict[str, Any]:
    conf = stack.kafka_config("producer")
    table = f"pickup_{uuid.uuid4().hex[:8]}"
    options: dict[str, Any] = {**per_device.spark_options(), "startingOffsets": "earliest"}
    frame = kafka_source(spark, stack, **options)
    query = (
        frame.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(work_dir / table))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    before = len(readings)
    with stopping(query):
        wait_rows(spark, query, table, before)
        newcomer = per_device.topic_for("device-new")
        created.create({newcomer: 1})
        late = generate_readings(devices=1, seconds=50, seed=12)
        produce_readings(conf, late, newcomer)
        wait_rows(spark, query, table, before + len(late))
        counts = to_pandas(spark.table(table).groupBy("topic").count())
    shutil.rmtree(work_dir / table, ignore_errors=True)
    return {
        "topics_before": len(created.names) - 2,
        "new_topic": newcomer,
        "new_topic_rows_produced": len(late),
        "new_topic_rows_read": int(counts.loc[counts["topic"] == newcomer, "count"].sum()),
        "rows_read": int(counts["count"].sum()),
        "rows_produced": before + len(late),
    }


def spark_topic_layout(
    stack: Stack,
    *,
    layout: str = LAYOUTS[0],
    devices: int = 12,
    readings_seconds: int = 500,
    topic_prefix: str = "spark-dev",
) -> dict[str, Any]:
    """The same readings read from one topic per device (by pattern) or one shared topic; one row.

    Raises:
        BenchError: an unknown layout.
    """
    if layout not in LAYOUTS:
        raise BenchError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")
    spark, work = bench_session(stack)
    conf = stack.kafka_config("producer")
    per_device, shared = _layouts(f"{topic_prefix}-{uuid.uuid4().hex[:6]}")
    readings = generate_readings(devices=devices, seconds=readings_seconds, seed=11)
    topics = per_device.topics(device_ids(devices)) if layout == LAYOUTS[0] else {shared: 4}
    with stack.temporary_topics(topics, timeout=30.0):
        produce_readings(conf, readings, per_device if layout == LAYOUTS[0] else shared)
        params = {"layout": layout, "devices": devices, "readings_seconds": readings_seconds}
        return _layout_point(spark, stack, work, params, _layout_options(per_device, shared, layout))


def layout_sentence(layouts: pd.DataFrame, pickup: Mapping[str, Any]) -> str:
    """Notebook 09's reading of `per_device_topics`: tasks and rows/s of one topic per
    device against the shared topic, and whether the device topic made mid-stream was read."""
    per_device, shared = layouts.set_index("layout").iloc[0], layouts.set_index("layout").iloc[1]
    return (
        f"- {int(per_device.topics)} device topics meant {int(per_device.spark_tasks)} tasks per batch against "
        f"{int(shared.spark_tasks)} for the shared topic; rows/s: {per_device.msg_s:,.0f} vs {shared.msg_s:,.0f} "
        f"({per_device.msg_s / shared.msg_s:.2f}x).\n"
        f"- The device topic created mid-stream was read in full: {pickup['new_topic_rows_read']} of "
        f"{pickup['new_topic_rows_produced']} rows; all {pickup['rows_read']:,} of {pickup['rows_produced']:,} "
        "readings arrived."
    )
