"""Running a query over a fresh telemetry topic to its end, and timing it by Spark's progress.

Every Spark measurement stands on these: a topic written for the run and deleted after
(`telemetry_topic`, so no run leaves its data on the broker), one AvailableNow
run into a sink whose rate is rows over the `triggerExecution` of the batches that read
them, which leaves out the query's start-up (`ingest`; the wall time including start-up
is reported next to it), a session warmed up first (`warm_up`, `bench_session`), and the
measures as a contract row (`spark_row`).
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.errors import BenchError
from workbench.measure.contract import NOT_MEASURED, result_row
from workbench.stack import Stack
from workbench.streaming import connector_name, installed_spark_version, kafka_source
from workbench.streaming.pipelines import device_windows, parse_readings
from workbench.streaming.progress import progress_frame
from workbench.streaming.telemetry import generate_readings, produce_readings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "HOT_PATH_RECORDS",
    "PATIENCE_S",
    "WARMED_CONF",
    "active_connector",
    "bench_session",
    "ingest",
    "spark_row",
    "telemetry_topic",
    "wait_rows",
    "warm_up",
]


#: Upper bound on waiting for a running query; a hang becomes an error, never a stuck cell.
PATIENCE_S = 180
#: Rows of the read that lets the JVM compile the source's hot paths before measured runs
#: that read a quarter as many or more (`warm_up`).
HOT_PATH_RECORDS = 200_000


@contextmanager
def telemetry_topic(
    stack: Stack,
    *,
    records: int,
    partitions: int,
    value_bytes: int | None = 200,
    devices: int = 100,
    seed: int = 0,
    prefix: str = "spark-tele",
) -> Iterator[str]:
    """A fresh topic holding `records` telemetry readings (JSON, padded to `value_bytes`); deleted after."""
    conf = stack.kafka_config("producer")
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with stack.temporary_topics({name: partitions}, timeout=30.0):
        seconds = max(1, records // devices)
        readings = generate_readings(devices=devices, seconds=seconds, seed=seed)[:records]
        produce_readings(conf, readings, name, value_bytes=value_bytes, settings={"linger.ms": 20})
        yield name


def warm_up(spark: SparkSession, stack: Stack, work_dir: Path, *, largest_read: int = HOT_PATH_RECORDS) -> None:
    """Run the source and the aggregation once, untimed, so measured runs start warm.

    The first query of a session starts Python workers and imports pyspark, pyarrow and
    confluent-kafka in them (3-4x slower than later runs). The first large read is still
    slower while the JVM compiles its hot paths (measured: the first 1 M-row read ran at
    60-70 % of the next ones after a 2,000-row warm-up), hence a second read of
    `HOT_PATH_RECORDS` rows when the runs to come read a quarter of that or more from one
    topic (`largest_read`); below it, fixed costs dominate each point (a quick run, the
    report's smoke settings) and that read would cost more than all of them.
    """
    with telemetry_topic(stack, records=2_000, partitions=2) as topic:
        frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
        ingest(spark, frame, work_dir)
        ingest(spark, device_windows(parse_readings(frame)), work_dir)
    if largest_read < HOT_PATH_RECORDS // 4:
        return
    with telemetry_topic(stack, records=HOT_PATH_RECORDS, partitions=1) as topic:
        ingest(spark, kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest"), work_dir)


def ingest(
    spark: SparkSession,
    frame: DataFrame,
    work_dir: Path,
    *,
    sink: str = "noop",
    trigger: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Run `frame` into a sink until AvailableNow finishes; return its measures and progress.

    The measures: `records` read, `batches` that read any, `exec_s` (their summed
    `triggerExecution`), `msg_s` (records / `exec_s`), `wall_s` and `wall_msg_s` (start-up
    included), `median_batch_ms`; NaN where no batch read anything.

    `sink` is `noop` (read and drop: the source's own speed), `parquet` (files under
    `work_dir`, deleted afterwards) or `memory`.
    """
    checkpoint = work_dir / f"checkpoint-{uuid.uuid4().hex[:8]}"
    output = work_dir / f"out-{uuid.uuid4().hex[:8]}"
    writer = frame.writeStream.option("checkpointLocation", str(checkpoint))
    if sink == "parquet":
        writer = writer.format("parquet").option("path", str(output))
    elif sink == "memory":
        writer = writer.format("memory").queryName(f"ingest_{uuid.uuid4().hex[:8]}")
    else:
        writer = writer.format(sink)
    started = time.perf_counter()
    query = writer.trigger(**(trigger or {"availableNow": True})).start()
    try:
        query.awaitTermination(PATIENCE_S)
        if query.isActive:
            raise TimeoutError(f"query did not finish within {PATIENCE_S:.0f} s; last progress {query.lastProgress}")
        wall = time.perf_counter() - started
    finally:
        if query.isActive:
            query.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)
        shutil.rmtree(output, ignore_errors=True)
    progress = progress_frame(query)
    busy = progress[progress["rows"] > 0]
    rows = int(progress["rows"].sum())
    exec_s = float(busy["trigger_ms"].sum()) / 1000 if len(busy) else NOT_MEASURED
    return {
        "sink": sink,
        "records": rows,
        "batches": len(busy),
        "max_batch_rows": int(busy["rows"].max()) if len(busy) else 0,
        "exec_s": exec_s,
        "wall_s": wall,
        "msg_s": rows / exec_s if exec_s > 0 else NOT_MEASURED,
        "wall_msg_s": rows / wall if wall > 0 else NOT_MEASURED,
        "median_batch_ms": float(busy["trigger_ms"].median()) if len(busy) else NOT_MEASURED,
    }, progress


def wait_rows(spark: SparkSession, query: Any, table: str, total: int) -> None:
    """Until the memory table `table` holds `total` rows; the query's failure or a hang is an error."""
    deadline = time.monotonic() + PATIENCE_S
    while spark.table(table).count() < total:
        if query.exception() is not None:
            raise query.exception()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{table}: {spark.table(table).count()} of {total} rows after {PATIENCE_S:.0f} s")
        time.sleep(0.25)


def spark_row(
    stack: Stack,
    experiment: str,
    params: Mapping[str, Any],
    measured: Mapping[str, Any],
    *,
    value_bytes: int | None = None,
    resources: Mapping[str, float] | None = None,
    extra: Mapping[str, Any] | None = None,
    connector: str | None = None,
) -> dict[str, Any]:
    """A contract row (`workbench.measure.contract`) from `ingest`'s measures: `seconds` is `exec_s`.

    `mb_s` needs the padded record size (`value_bytes`); without it (unpadded JSON) it is NaN.
    The row names the Kafka source that read (`connector`: `kafka`, `workbench`, or `none`
    for a plain consumer; by default the one the active session reads with) among its
    parameters, so that a comparison never pairs one source's figures with the other's,
    and the Spark version beside them.
    """
    records = measured["records"]
    rest = {k: v for k, v in measured.items() if k not in ("records", "msg_s", "exec_s", *params)}
    return result_row(
        stack,
        experiment=experiment,
        params={**params, "connector": connector or active_connector(stack)},
        records=records,
        payload_bytes=records * value_bytes if value_bytes else NOT_MEASURED,
        seconds=measured["exec_s"],
        resources=resources,
        extra={**rest, **(extra or {}), "spark_version": installed_spark_version()},
    )


def active_connector(stack: Stack) -> str:
    """The Kafka source the active Spark session reads this stack's profile with."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise BenchError("no active Spark session: start one with streaming.spark_session(profile)")
    return connector_name(spark, stack.profile)


#: Set to "true" on a session `bench_session` has warmed up. The mark lives in the session's
#: own conf, not in a module global, so it goes with the session it describes.
WARMED_CONF = "workbench.bench.warmedUp"


def bench_session(stack: Stack) -> tuple[SparkSession, Path]:
    """The active Spark session (or a new one for the profile), warmed up once, and a work folder."""
    from pyspark.sql import SparkSession

    from workbench.streaming.session import spark_session

    spark = SparkSession.getActiveSession() or spark_session(stack.profile, app_name="workbench-bench")
    work = stack.profile.path(stack.profile.data_dir) / "lake" / "bench"
    work.mkdir(parents=True, exist_ok=True)
    if (
        spark.conf.get(WARMED_CONF, "false") != "true"
    ):  # the first query starts Python workers: keep it out of every row
        with telemetry_topic(stack, records=2_000, partitions=1) as topic:
            ingest(spark, kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest"), work)
        spark.conf.set(WARMED_CONF, "true")
    return spark, work
