"""Whether a restart from the checkpoint loses or duplicates records: `spark_restart`, a check, not a speed."""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import kafka
from workbench.measure.contract import result_row
from workbench.measure.failures import check_complete
from workbench.stack import Stack
from workbench.streaming import Connector, connector_name, installed_spark_version, kafka_source
from workbench.streaming.ingestion.runs import PATIENCE_S, bench_session
from workbench.streaming.pipelines import parse_readings, stopping, write_parquet
from workbench.streaming.telemetry import generate_readings, produce_readings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["check_restarts", "restart_check", "restart_exact", "spark_restart"]


def restart_check(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    first: int,
    second: int,
    partitions: int = 4,
    connector: Connector | None = None,
) -> dict[str, Any]:
    """Stop a running ingestion mid-stream, produce more, restart from its checkpoint; count.

    The first run reads `first` records in batches of a quarter of them (processing-time
    trigger) and is stopped after two batches; then `second` more are produced and an
    AvailableNow run resumes from the checkpoint. The parquet output must hold every
    (partition, offset) exactly once. `connector` reads with Spark's (`kafka`) or the
    workbench's source instead of the profile's choice.
    """
    conf = stack.kafka_config("producer")
    topic = f"spark-restart-{uuid.uuid4().hex[:8]}"
    output, checkpoint = work_dir / f"{topic}-out", work_dir / f"{topic}-checkpoint"
    with stack.temporary_topics({topic: partitions}, timeout=30.0):
        try:
            readings = generate_readings(devices=50, seconds=(first + second) // 50 + 1, seed=5)
            produce_readings(conf, readings[:first], topic)
            columns = parse_readings(
                kafka_source(
                    spark,
                    stack,
                    connector=connector,
                    subscribe=topic,
                    startingOffsets="earliest",
                    maxOffsetsPerTrigger=first // 4,
                )
            ).select("device_id", "seq", "event_time", "partition", "offset")
            query = write_parquet(columns, output, checkpoint, trigger={"processingTime": "500 milliseconds"})
            # Stopping mid-batch aborts that batch's write job, and Spark logs the interruption
            # as an error with a stack trace; it is the point of the experiment, not a fault.
            spark.sparkContext.setLogLevel("OFF")
            try:
                with stopping(query):
                    deadline = time.monotonic() + PATIENCE_S
                    while len([p for p in query.recentProgress if p["numInputRows"]]) < 2:
                        if query.exception() is not None or time.monotonic() > deadline:
                            raise RuntimeError(f"first run did not commit two batches: {query.exception()}")
                        time.sleep(0.1)
            finally:
                spark.sparkContext.setLogLevel("ERROR")
            landed_first = spark.read.parquet(str(output)).count()
            produce_readings(conf, readings[first : first + second], topic)
            with stopping(write_parquet(columns, output, checkpoint)) as resumed:
                resumed.awaitTermination(PATIENCE_S)
            result = spark.read.parquet(str(output))
            ends = kafka.end_offsets(conf, topic)
            return {
                "produced": first + second,
                "landed_before_stop": landed_first,
                "rows": result.count(),
                "distinct_offsets": result.select("partition", "offset").distinct().count(),
                "log_records": sum(ends.values()),
                "distinct_readings": result.select("device_id", "seq").distinct().count(),
            }
        finally:
            shutil.rmtree(checkpoint, ignore_errors=True)


def spark_restart(
    stack: Stack,
    *,
    first: int = 40_000,
    second: int = 20_000,
    topic_partitions: int = 4,
    connector: Connector | None = None,
    topic_prefix: str = "",
) -> dict[str, Any]:
    """`restart_check` as a row: `records` produced and the counts that show nothing lost or twice.

    A correctness check rather than a speed: its rates and latencies are NaN (not measured);
    `exact` is True when output rows, distinct offsets, log records and produced all agree.
    `topic_prefix` is unused (the check names its own topic).
    """
    spark, work = bench_session(stack)
    counts = restart_check(
        spark, stack, work, first=first, second=second, partitions=topic_partitions, connector=connector
    )
    exact = counts["rows"] == counts["distinct_offsets"] == counts["log_records"] == counts["produced"]
    params = {
        "first": first,
        "second": second,
        "topic_partitions": topic_partitions,
        "connector": connector_name(spark, stack.profile, connector),
    }
    extra = {**counts, "exact": exact, "spark_version": installed_spark_version()}
    return result_row(stack, experiment="spark_restart", params=params, records=counts["produced"], extra=extra)


def restart_exact(check: Mapping[str, Any]) -> bool:
    """A `restart_check` result that lost and doubled nothing: as many output rows as distinct
    offsets, as records in the log and as records produced."""
    return bool(check["rows"] == check["distinct_offsets"] == check["log_records"] == check["produced"])


def check_restarts(checks: Mapping[str, Mapping[str, Any]], stack: Stack | None = None) -> None:
    """Pass when every `restart_check` result (by connector) is exact (`restart_exact`).

    Raises:
        DeliveryError: each count that is not the records produced (output rows, distinct
            offsets, records in the log), by connector, and the likely cause of a shortfall.

    Usage: `check_restarts({"kafka": restart_check(...)}, stack)`.
    """
    counted = ("rows", "distinct_offsets", "log_records")
    counts = {f"{name} {count}": check[count] for name, check in checks.items() for count in counted}
    produced = {f"{name} {count}": check["produced"] for name, check in checks.items() for count in counted}
    check_complete(counts, produced, what="records after the restart", stack=stack)
