"""The ceiling a Spark read is held against: one plain consumer in this process, and the
source's own reader without Spark.

Read together they split a Spark read's cost: the plain consumer does the least a reader
can (count records), the reader alone adds building Arrow batches, and Spark adds the
hand-over to the JVM and each batch's planning.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench import kafka
from workbench.measure.contract import NOT_MEASURED
from workbench.measure.resources import ResourceMonitor
from workbench.stack import Stack
from workbench.streaming import kafka_source
from workbench.streaming.ingestion.runs import PATIENCE_S, ingest, telemetry_topic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["consumer_ceiling", "reader_alone", "source_vs_ceiling"]


def consumer_ceiling(stack: Stack, topic: str, *, pause_gc: bool = False) -> dict[str, Any]:
    """One plain confluent-kafka consumer in this process reading the whole topic: the ceiling.

    It does the least a reader can: assign every partition at its first offset, take
    records in batches of 10,000 and count them, up to the true end offsets. Nothing is
    decoded or converted, which is what Spark's source must do on top. It uses the same
    librdkafka settings as the source's readers (`kafka.READER_SETTINGS`).

    `pause_gc` holds the garbage collector during each batch, as the source's readers do
    (`kafka.gc_paused`): without it, the collector takes most of a plain consumer's time
    at high rates; with it, the ceiling shows what the source could still gain.
    """
    read = kafka.timed_read(stack.kafka_config("consumer"), topic, pause_gc=pause_gc, timeout=PATIENCE_S)
    count, seconds = read.records, read.seconds
    sink = "plain consumer, GC paused" if pause_gc else "plain consumer"
    rate = count / seconds if seconds > 0 else NOT_MEASURED
    return {
        "sink": sink,
        "records": count,
        "batches": NOT_MEASURED,
        "max_batch_rows": NOT_MEASURED,
        "exec_s": seconds,
        "wall_s": seconds,
        "msg_s": rate,
        "wall_msg_s": rate,
        "median_batch_ms": NOT_MEASURED,
    }


def reader_alone(stack: Stack, topic: str) -> dict[str, Any]:
    """The source's own `read_ranges` over every partition of `topic`, in this process, without Spark.

    Read against `consumer_ceiling` it shows what building Arrow batches costs; read
    against the Spark rate, what the hand-over to the JVM and the batch's planning cost.
    One consumer reads every partition, as the ceiling's does (a consumer per partition
    in turn timed each one's creation and first fetch too).
    """
    from workbench.streaming import source_options
    from workbench.streaming.offsets import OffsetRange
    from workbench.streaming.options import parse_options
    from workbench.streaming.range_reader import read_ranges
    from workbench.streaming.source import kafka_schema

    options = parse_options(source_options(stack, subscribe=topic, startingOffsets="earliest"), streaming=False)
    plan = kafka.record_ranges(stack.kafka_config("consumer"), topic)
    schema, count = kafka_schema(), 0
    ranges = [OffsetRange(name, partition, start, end) for (name, partition), (start, end) in plan.items()]
    started = time.perf_counter()
    for batch in read_ranges(options, sorted(ranges), schema):
        count += batch.num_rows
    seconds = time.perf_counter() - started
    return {"records": count, "msg_s": count / seconds if seconds > 0 else NOT_MEASURED}


def source_vs_ceiling(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    records: int = 1_000_000,
    partitions: Sequence[int] = (1, 2, 4),
    repeats: int = 3,
    value_bytes: int = 200,
) -> pd.DataFrame:
    """The Spark source (noop sink) as a share of its ceiling, the plain consumer with the GC paused.

    For each partition count one topic is written, then read `repeats` times in turn by
    the ceiling (`consumer_ceiling(pause_gc=True)`), the source through Spark
    (AvailableNow, one task per partition) and the source's reader alone in this process
    (`reader_alone`): same topic, same records, one after the other, so the ratio holds
    even where the machine's load moves the rates. Call `warm_up` first.

    Returns:
        One row per repeat: `ceiling_msg_s`, `spark_msg_s` (rows / triggerExecution),
        `reader_msg_s`, `ratio` (Spark / ceiling), `reader_ratio`, `spark_tasks`, the
        rows each read (all must equal `records`), the CPU seconds of the Spark read by
        process (`spark_jvm_cpu_s`, `spark_python_cpu_s`, `broker_cpu_s`) and the 1-minute
        load average before the repeat.
    """
    rows: list[dict[str, Any]] = []
    for count in partitions:
        with telemetry_topic(stack, records=records, partitions=count, value_bytes=value_bytes) as topic:
            frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
            tasks = kafka_source(
                spark, stack, streaming=False, subscribe=topic, startingOffsets="earliest"
            ).rdd.getNumPartitions()
            for repeat in range(repeats):
                load = os.getloadavg()[0]
                ceiling = consumer_ceiling(stack, topic, pause_gc=True)
                with ResourceMonitor(stack.services, spark=True) as monitor:
                    measured, _ = ingest(spark, frame, work_dir)
                alone = reader_alone(stack, topic)
                cpu = monitor.columns()
                rows.append(
                    {
                        "topic_partitions": count,
                        "repeat": repeat,
                        "records": records,
                        "spark_tasks": tasks,
                        "ceiling_msg_s": ceiling["msg_s"],
                        "spark_msg_s": measured["msg_s"],
                        "reader_msg_s": alone["msg_s"],
                        "ratio": measured["msg_s"] / ceiling["msg_s"],
                        "reader_ratio": alone["msg_s"] / ceiling["msg_s"],
                        "ceiling_rows": ceiling["records"],
                        "spark_rows": measured["records"],
                        "reader_rows": alone["records"],
                        "median_batch_ms": measured["median_batch_ms"],
                        **{column: cpu[column] for column in ("spark_jvm_cpu_s", "spark_python_cpu_s", "broker_cpu_s")},
                        "load_1m": load,
                    }
                )
    return pd.DataFrame(rows)
