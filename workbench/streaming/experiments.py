"""The measurements notebook 09 runs: each returns tidy rows (and cleans up its topics).

Every experiment writes fresh topics, measures, and deletes them (the embedded broker
keeps everything in memory). Rates come from Spark's own progress: rows divided by the
`triggerExecution` time of the batches that read them, which leaves out the query's
start-up; the wall time including start-up is reported next to it.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from confluent_kafka import TopicPartition

from workbench import kafka
from workbench.stack import Stack
from workbench.streaming import kafka_source, to_pandas
from workbench.streaming.pipelines import device_windows, parse_readings, stopping, write_parquet
from workbench.streaming.progress import DURATIONS, progress_frame
from workbench.streaming.telemetry import Reading, device_topics, generate_readings, produce_readings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "consumer_ceiling",
    "ingest",
    "parallelism_sweep",
    "per_device_topics",
    "rate_limit_runs",
    "restart_check",
    "shuffle_sweep",
    "telemetry_topic",
    "trigger_latency",
    "warm_up",
]

#: Upper bound on waiting for a running query; a hang becomes an error, never a stuck cell.
PATIENCE_S = 180


@contextmanager
def telemetry_topic(
    stack: Stack, *, records: int, partitions: int, value_bytes: int | None = 200, devices: int = 100, seed: int = 0
) -> Iterator[str]:
    """A fresh topic holding `records` telemetry readings (JSON, padded to `value_bytes`); deleted after."""
    conf = stack.kafka_config("producer")
    name = f"spark-tele-{uuid.uuid4().hex[:8]}"
    stack.create_topics({name: partitions})
    try:
        seconds = max(1, records // devices)
        readings = generate_readings(devices=devices, seconds=seconds, seed=seed)[:records]
        produce_readings(conf, readings, name, value_bytes=value_bytes, settings={"linger.ms": 20})
        yield name
    finally:
        kafka.delete_topics(conf, [name])


def warm_up(spark: SparkSession, stack: Stack, work_dir: Path) -> None:
    """Run the source and the aggregation once, untimed, so measured runs start warm.

    The first query of a session starts Python workers and imports pyspark, pyarrow and
    confluent-kafka in them (3-4x slower than later runs). The first large read is still
    slower while the JVM compiles its hot paths (measured: the first 1 M-row read ran at
    60-70 % of the next ones after a 2,000-row warm-up), hence a second, larger read.
    """
    with telemetry_topic(stack, records=2_000, partitions=2) as topic:
        frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
        ingest(spark, frame, work_dir)
        ingest(spark, device_windows(parse_readings(frame)), work_dir)
    with telemetry_topic(stack, records=200_000, partitions=1) as topic:
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
    exec_s = float(busy["trigger_ms"].sum()) / 1000 if len(busy) else 0.0
    return {
        "sink": sink,
        "rows": rows,
        "batches": len(busy),
        "max_batch_rows": int(busy["rows"].max()) if len(busy) else 0,
        "exec_s": exec_s,
        "wall_s": wall,
        "rows_s": rows / exec_s if exec_s else 0.0,
        "wall_rows_s": rows / wall if wall else 0.0,
        "median_batch_ms": float(busy["trigger_ms"].median()) if len(busy) else 0.0,
    }, progress


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
    conf = stack.kafka_config("consumer")
    ends = kafka.end_offsets(conf, topic)
    starts = kafka.reported_offsets(conf, list(ends), "earliest")
    remaining = {tp: end for tp, end in ends.items() if end > starts[tp]}
    client = kafka.consumer(conf, settings=kafka.READER_SETTINGS)
    count, deadline = 0, time.monotonic() + PATIENCE_S
    started = time.perf_counter()
    try:
        client.assign([TopicPartition(t, p, starts[(t, p)]) for t, p in remaining])
        while remaining and time.monotonic() < deadline:
            with kafka.gc_paused(pause_gc):
                for message in client.consume(num_messages=10_000, timeout=0.5):
                    if message.error() is not None:
                        continue
                    count += 1
                    key = (message.topic(), message.partition())
                    if key in remaining and (message.offset() or 0) + 1 >= remaining[key]:
                        del remaining[key]
        seconds = time.perf_counter() - started
    finally:
        client.close()
    if remaining:
        raise TimeoutError(f"plain consumer did not reach the end of {sorted(remaining)} in {PATIENCE_S} s")
    sink = "plain consumer, GC paused" if pause_gc else "plain consumer"
    return {"sink": sink, "rows": count, "exec_s": seconds, "wall_s": seconds,
            "rows_s": count / seconds, "wall_rows_s": count / seconds}  # fmt: skip


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
) -> pd.DataFrame:
    """Rows/s by topic partitions (= Spark tasks), by sink, against the plain consumer.

    Call `warm_up` first, so no run pays for Python worker start-up. With
    `min_partitions`, the one-partition topic is also read split into that many tasks.
    """
    rows: list[dict[str, Any]] = []
    for count in partitions:
        with telemetry_topic(stack, records=records, partitions=count, value_bytes=value_bytes) as topic:
            variants: list[int | None] = [None]
            if min_partitions and count == min(partitions):
                variants.append(min_partitions)
            base = {"topic_partitions": count, "records": records, "value_bytes": value_bytes}
            for split in variants:
                options: dict[str, Any] = {"subscribe": topic, "startingOffsets": "earliest"}
                if split:
                    options["minPartitions"] = split
                tasks = kafka_source(spark, stack, streaming=False, **options).rdd.getNumPartitions()
                for sink in sinks:
                    measured, _ = ingest(spark, kafka_source(spark, stack, **options), work_dir, sink=sink)
                    rows.append({**base, "min_partitions": split, "spark_tasks": tasks, **measured})
            for pause_gc in (False, True):
                ceiling = consumer_ceiling(stack, topic, pause_gc=pause_gc)
                rows.append({**base, "min_partitions": None, "spark_tasks": 1, **ceiling})
    return pd.DataFrame(rows)


def rate_limit_runs(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    records: int,
    limits: Sequence[int | None],
    partitions: int = 4,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """AvailableNow with each `maxOffsetsPerTrigger`: batches, their sizes, rows/s.

    Returns the summary (one row per limit) and the per-batch progress of every run.
    """
    summary, batches = [], []
    with telemetry_topic(stack, records=records, partitions=partitions) as topic:
        for limit in limits:
            options: dict[str, Any] = {"subscribe": topic, "startingOffsets": "earliest"}
            if limit:
                options["maxOffsetsPerTrigger"] = limit
            measured, progress = ingest(spark, kafka_source(spark, stack, **options), work_dir)
            summary.append({"max_offsets_per_trigger": limit, "records": records, "topic_partitions": partitions,
                            **measured})  # fmt: skip
            busy = progress[progress["rows"] > 0].assign(max_offsets_per_trigger=limit or 0)
            batches.append(busy.assign(batch=range(len(busy))))
    return pd.DataFrame(summary), pd.concat(batches, ignore_index=True)


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
    run is a new query with a new checkpoint.
    """
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    rows = []
    try:
        with telemetry_topic(stack, records=records, partitions=partitions, value_bytes=None,
                             devices=devices) as topic:  # fmt: skip
            frame = device_windows(parse_readings(kafka_source(spark, stack, subscribe=topic,
                                                               startingOffsets="earliest")))  # fmt: skip
            for count in shuffle_partitions:
                spark.conf.set("spark.sql.shuffle.partitions", str(count))
                measured, _ = ingest(spark, frame, work_dir)
                rows.append({"shuffle_partitions": count, "records": records, "devices": devices, **measured})
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", str(previous))
    return pd.DataFrame(rows)


def trigger_latency(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    intervals: Sequence[str],
    rate: int,
    seconds: float,
    partitions: int = 4,
    on_query: Any = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Produce at `rate` records/s for `seconds` while a processing-time query reads; per interval.

    Each record's latency is measured as: the time from its Kafka timestamp to the start of
    the batch that read it (Spark's `current_timestamp()` in that batch), plus that batch's
    duration (rows become visible when the batch commits).

    Args:
        on_query: called with each running query (the notebook passes `viz.watch_query`);
            it should return when the producer is done.

    Returns:
        A summary row per interval (batches, median batch ms and of each of its phases,
        p50/p95/max latency ms) and the per-batch progress of every run.
    """
    from pyspark.sql import functions as F

    summary, batches = [], []
    conf = stack.kafka_config("producer")
    for interval in intervals:
        topic = f"spark-live-{uuid.uuid4().hex[:8]}"
        stack.create_topics({topic: partitions})
        table = f"latency_{uuid.uuid4().hex[:8]}"
        try:
            frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest").select(
                "partition", "offset", F.col("timestamp").alias("kafka_ts"), F.current_timestamp().alias("batch_ts")
            )
            writer = frame.writeStream.format("memory").queryName(table)
            query = writer.option("checkpointLocation", str(work_dir / table)).trigger(processingTime=interval).start()
            with stopping(query):
                total = int(rate * seconds)
                producer = threading.Thread(target=_produce_at_rate, args=(conf, topic, total, rate), daemon=True)
                producer.start()
                if on_query is not None:
                    on_query(query, lambda thread=producer: not thread.is_alive())
                producer.join(PATIENCE_S)
                _wait_rows(spark, query, table, total)
            progress = progress_frame(query)
            records = to_pandas(spark.table(table))
        finally:
            kafka.delete_topics(conf, [topic])
            shutil.rmtree(work_dir / table, ignore_errors=True)
        busy = progress[progress["rows"] > 0].sort_values("timestamp")
        latency = _latencies(records, busy)
        summary.append({
            "trigger": interval, "rate": rate, "seconds": seconds, "rows": len(records),
            "distinct_offsets": int(records[["partition", "offset"]].drop_duplicates().shape[0]),
            "batches": len(busy), "median_batch_ms": float(busy["trigger_ms"].median()),
            "latency_p50_ms": float(latency.quantile(0.5)), "latency_p95_ms": float(latency.quantile(0.95)),
            "latency_max_ms": float(latency.max()),
            **{f"median_{phase}_ms": float(busy[f"{phase}_ms"].median()) for phase in DURATIONS},
        })  # fmt: skip
        batches.append(busy.assign(trigger=interval))
    return pd.DataFrame(summary), pd.concat(batches, ignore_index=True)


def _produce_at_rate(conf: dict[str, Any], topic: str, total: int, rate: int) -> None:
    """Small bursts every 50 ms, so records carry timestamps spread over the run."""
    client = kafka.producer(conf, {"linger.ms": 5})
    started, sent, step = time.perf_counter(), 0, max(1, rate // 20)
    while sent < total:
        due = min(total, int((time.perf_counter() - started) * rate) + step)
        for i in range(sent, due):
            client.produce(topic, value=b'{"n":%d}' % i)
        client.poll(0)
        sent = due
        time.sleep(0.05)
    client.flush(60)


def _wait_rows(spark: SparkSession, query: Any, table: str, total: int) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while spark.table(table).count() < total:
        if query.exception() is not None:
            raise query.exception()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{table}: {spark.table(table).count()} of {total} rows after {PATIENCE_S:.0f} s")
        time.sleep(0.25)


def _latencies(records: pd.DataFrame, batches: pd.DataFrame) -> pd.Series:
    """Per record: batch start - Kafka timestamp + the duration of the batch that read it."""
    if records.empty or batches.empty:
        return pd.Series(dtype=float)
    frame = records.assign(batch_ts=pd.to_datetime(records["batch_ts"]).dt.tz_localize(None),
                           kafka_ts=pd.to_datetime(records["kafka_ts"]).dt.tz_localize(None))  # fmt: skip
    starts = batches[["timestamp", "trigger_ms"]].assign(timestamp=batches["timestamp"].dt.tz_localize(None))
    merged = pd.merge_asof(frame.sort_values("batch_ts"), starts.sort_values("timestamp"),
                           left_on="batch_ts", right_on="timestamp", direction="nearest")  # fmt: skip
    waited = (merged["batch_ts"] - merged["kafka_ts"]).dt.total_seconds() * 1000
    return waited.clip(lower=0) + merged["trigger_ms"]


def per_device_topics(
    spark: SparkSession, stack: Stack, work_dir: Path, *, devices: int, seconds: int, late_device: bool = True
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The same readings in one topic per device (read by `subscribePattern`) vs one shared topic.

    Returns the comparison (one row per layout: topics, Spark tasks, rows, rows/s) and the
    check that a device topic created while the query runs is picked up.
    """
    conf = stack.kafka_config("producer")
    prefix = f"spark-dev-{uuid.uuid4().hex[:6]}"
    mapping = device_topics(prefix, devices)
    shared = f"{prefix}-all"
    readings = generate_readings(devices=devices, seconds=seconds, seed=11)
    stack.create_topics({**dict.fromkeys(mapping.values(), 1), shared: 4})
    created = [*mapping.values(), shared]
    try:
        produce_readings(conf, readings, mapping)
        produce_readings(conf, readings, shared)
        rows = []
        pattern = f"{prefix}-device-.*"
        layouts: list[tuple[str, dict[str, Any]]] = [
            ("topic per device", {"subscribePattern": pattern}),
            ("one topic, 4 partitions", {"subscribe": shared}),
        ]
        for layout, options in layouts:
            frame = kafka_source(spark, stack, startingOffsets="earliest", **options)
            measured, _ = ingest(spark, frame, work_dir)
            tasks = kafka_source(spark, stack, streaming=False, **options).rdd.getNumPartitions()
            rows.append({"layout": layout, "topics": devices if "Pattern" in str(options) else 1,
                         "spark_tasks": tasks, **measured})  # fmt: skip
        pickup = _new_topic_pickup(spark, stack, work_dir, pattern, prefix, readings, created) if late_device else {}
    finally:
        kafka.delete_topics(conf, created)
    return pd.DataFrame(rows), pickup


def _new_topic_pickup(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    pattern: str,
    prefix: str,
    readings: list[Reading],
    created: list[str],
) -> dict[str, Any]:
    conf = stack.kafka_config("producer")
    table = f"pickup_{uuid.uuid4().hex[:8]}"
    frame = kafka_source(spark, stack, subscribePattern=pattern, startingOffsets="earliest")
    query = frame.writeStream.format("memory").queryName(table).option(
        "checkpointLocation", str(work_dir / table)).trigger(processingTime="500 milliseconds").start()  # fmt: skip
    before = len(readings)
    with stopping(query):
        _wait_rows(spark, query, table, before)
        newcomer = f"{prefix}-device-new"
        stack.create_topics({newcomer: 1})
        created.append(newcomer)
        late = generate_readings(devices=1, seconds=50, seed=12)
        produce_readings(conf, late, newcomer)
        _wait_rows(spark, query, table, before + len(late))
        counts = to_pandas(spark.table(table).groupBy("topic").count())
    shutil.rmtree(work_dir / table, ignore_errors=True)
    return {"topics_before": len(created) - 2, "new_topic": newcomer, "new_topic_rows_produced": len(late),
            "new_topic_rows_read": int(counts.loc[counts["topic"] == newcomer, "count"].sum()),
            "rows_read": int(counts["count"].sum()), "rows_produced": before + len(late)}  # fmt: skip


def restart_check(
    spark: SparkSession, stack: Stack, work_dir: Path, *, first: int, second: int, partitions: int = 4
) -> dict[str, Any]:
    """Stop a running ingestion mid-stream, produce more, restart from its checkpoint; count.

    The first run reads `first` records in batches of a quarter of them (processing-time
    trigger) and is stopped after two batches; then `second` more are produced and an
    AvailableNow run resumes from the checkpoint. The parquet output must hold every
    (partition, offset) exactly once.
    """
    conf = stack.kafka_config("producer")
    topic = f"spark-restart-{uuid.uuid4().hex[:8]}"
    output, checkpoint = work_dir / f"{topic}-out", work_dir / f"{topic}-checkpoint"
    stack.create_topics({topic: partitions})
    try:
        readings = generate_readings(devices=50, seconds=(first + second) // 50 + 1, seed=5)
        produce_readings(conf, readings[:first], topic)
        columns = parse_readings(
            kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger=first // 4)
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
        kafka.delete_topics(conf, [topic])
        shutil.rmtree(checkpoint, ignore_errors=True)
