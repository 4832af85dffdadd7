"""The measurements notebook 09 runs: each returns tidy rows (and cleans up its topics).

Every experiment writes fresh topics, measures, and deletes them (the embedded broker
keeps everything in memory). Rates come from Spark's own progress: rows divided by the
`triggerExecution` time of the batches that read them, which leaves out the query's
start-up; the wall time including start-up is reported next to it.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench import kafka
from workbench.kafka.producing import Outgoing, enqueue
from workbench.stack import Stack, TemporaryTopics
from workbench.streaming import kafka_source, to_pandas
from workbench.streaming.pipelines import device_windows, parse_readings, stopping, write_parquet
from workbench.streaming.progress import DURATIONS, progress_frame
from workbench.streaming.telemetry import Reading, generate_readings, produce_readings
from workbench.topics.strategies import TopicPerDevice, device_ids

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "LAYOUTS",
    "PLAIN_SINKS",
    "SINKS",
    "bench_session",
    "consumer_ceiling",
    "cpu_per_row",
    "cpu_sentence",
    "ingest",
    "parallelism_sweep",
    "per_device_topics",
    "rate_limit_runs",
    "reader_alone",
    "real_time_refusal",
    "restart_check",
    "shuffle_sweep",
    "source_vs_ceiling",
    "spark_aggregate",
    "spark_ingest",
    "spark_restart",
    "spark_row",
    "spark_topic_layout",
    "spark_trigger_latency",
    "telemetry_topic",
    "trigger_floor",
    "trigger_latency",
    "warm_up",
]

#: Upper bound on waiting for a running query; a hang becomes an error, never a stuck cell.
_PATIENCE_S = 180
#: "Not measured" (no batch read anything, nothing timed): never 0.0, which would be a measurement.
_NAN = float("nan")


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


def warm_up(spark: SparkSession, stack: Stack, work_dir: Path, *, compile_hot_paths: bool = True) -> None:
    """Run the source and the aggregation once, untimed, so measured runs start warm.

    The first query of a session starts Python workers and imports pyspark, pyarrow and
    confluent-kafka in them (3-4x slower than later runs). The first large read is still
    slower while the JVM compiles its hot paths (measured: the first 1 M-row read ran at
    60-70 % of the next ones after a 2,000-row warm-up), hence a second, larger read,
    which a quick run (thousands of rows per point, dominated by fixed costs) skips with
    `compile_hot_paths=False`.
    """
    with telemetry_topic(stack, records=2_000, partitions=2) as topic:
        frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
        ingest(spark, frame, work_dir)
        ingest(spark, device_windows(parse_readings(frame)), work_dir)
    if not compile_hot_paths:
        return
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
        query.awaitTermination(_PATIENCE_S)
        if query.isActive:
            raise TimeoutError(f"query did not finish within {_PATIENCE_S:.0f} s; last progress {query.lastProgress}")
        wall = time.perf_counter() - started
    finally:
        if query.isActive:
            query.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)
        shutil.rmtree(output, ignore_errors=True)
    progress = progress_frame(query)
    busy = progress[progress["rows"] > 0]
    rows = int(progress["rows"].sum())
    exec_s = float(busy["trigger_ms"].sum()) / 1000 if len(busy) else _NAN
    return {
        "sink": sink,
        "records": rows,
        "batches": len(busy),
        "max_batch_rows": int(busy["rows"].max()) if len(busy) else 0,
        "exec_s": exec_s,
        "wall_s": wall,
        "msg_s": rows / exec_s if exec_s > 0 else _NAN,
        "wall_msg_s": rows / wall if wall > 0 else _NAN,
        "median_batch_ms": float(busy["trigger_ms"].median()) if len(busy) else _NAN,
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
    read = kafka.timed_read(stack.kafka_config("consumer"), topic, pause_gc=pause_gc, timeout=_PATIENCE_S)
    count, seconds = read.records, read.seconds
    sink = "plain consumer, GC paused" if pause_gc else "plain consumer"
    rate = count / seconds if seconds > 0 else _NAN
    return {"sink": sink, "records": count, "batches": _NAN, "max_batch_rows": _NAN, "exec_s": seconds,
            "wall_s": seconds, "msg_s": rate, "wall_msg_s": rate, "median_batch_ms": _NAN}  # fmt: skip


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
    from workbench.streaming.source import kafka_schema, read_ranges

    options = parse_options(source_options(stack, subscribe=topic, startingOffsets="earliest"), streaming=False)
    plan = kafka.record_ranges(stack.kafka_config("consumer"), topic)
    schema, count = kafka_schema(), 0
    ranges = [OffsetRange(name, partition, start, end) for (name, partition), (start, end) in plan.items()]
    started = time.perf_counter()
    for batch in read_ranges(options, sorted(ranges), schema):
        count += batch.num_rows
    seconds = time.perf_counter() - started
    return {"records": count, "msg_s": count / seconds if seconds > 0 else _NAN}


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
    from workbench.measure.resources import ResourceMonitor

    rows: list[dict[str, Any]] = []
    for count in partitions:
        with telemetry_topic(stack, records=records, partitions=count, value_bytes=value_bytes) as topic:
            frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
            tasks = kafka_source(spark, stack, streaming=False, subscribe=topic,
                                 startingOffsets="earliest").rdd.getNumPartitions()  # fmt: skip
            for repeat in range(repeats):
                load = os.getloadavg()[0]
                ceiling = consumer_ceiling(stack, topic, pause_gc=True)
                with ResourceMonitor(stack.services, spark=True) as monitor:
                    measured, _ = ingest(spark, frame, work_dir)
                alone = reader_alone(stack, topic)
                cpu = monitor.columns()
                rows.append({
                    "topic_partitions": count, "repeat": repeat, "records": records, "spark_tasks": tasks,
                    "ceiling_msg_s": ceiling["msg_s"], "spark_msg_s": measured["msg_s"], "reader_msg_s": alone["msg_s"],
                    "ratio": measured["msg_s"] / ceiling["msg_s"], "reader_ratio": alone["msg_s"] / ceiling["msg_s"],
                    "ceiling_rows": ceiling["records"], "spark_rows": measured["records"],
                    "reader_rows": alone["records"], "median_batch_ms": measured["median_batch_ms"],
                    **{column: cpu[column] for column in ("spark_jvm_cpu_s", "spark_python_cpu_s", "broker_cpu_s")},
                    "load_1m": load,
                })  # fmt: skip
    return pd.DataFrame(rows)


#: Readers `spark_ingest` compares: Spark's sinks, and one plain consumer (the ceiling).
PLAIN_SINKS = ("plain consumer", "plain consumer, GC paused")
SINKS = ("noop", "parquet", "memory", *PLAIN_SINKS)


def spark_row(
    stack: Stack,
    experiment: str,
    params: Mapping[str, Any],
    measured: Mapping[str, Any],
    *,
    value_bytes: int | None = None,
    resources: Mapping[str, float] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A contract row (`workbench.measure.contract`) from `ingest`'s measures: `seconds` is `exec_s`.

    `mb_s` needs the padded record size (`value_bytes`); without it (unpadded JSON) it is NaN.
    """
    from workbench.measure.contract import result_row

    records = measured["records"]
    rest = {k: v for k, v in measured.items() if k not in ("records", "msg_s", "exec_s", *params)}
    return result_row(stack, experiment=experiment, params=params, records=records,
                      payload_bytes=records * value_bytes if value_bytes else _NAN, seconds=measured["exec_s"],
                      resources=resources, extra={**rest, **(extra or {})})  # fmt: skip


def _read_point(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    topic: str,
    params: dict[str, Any],
) -> tuple[dict[str, Any], pd.DataFrame]:
    """One measured read of `topic` as `params` say (see `spark_ingest`): its row and progress."""
    from workbench.measure.resources import ResourceMonitor

    sink = params["sink"]
    if sink in PLAIN_SINKS:
        with ResourceMonitor(stack.services) as monitor:
            measured = consumer_ceiling(stack, topic, pause_gc=sink == PLAIN_SINKS[1])
        row = spark_row(stack, "spark_ingest", params, measured, value_bytes=params["value_bytes"],
                        resources=monitor.columns(), extra={"spark_tasks": 1})  # fmt: skip
        return row, pd.DataFrame()
    options: dict[str, Any] = {"subscribe": topic, "startingOffsets": "earliest"}
    if params["min_partitions"]:
        options["minPartitions"] = params["min_partitions"]
    if params["max_offsets_per_trigger"]:
        options["maxOffsetsPerTrigger"] = params["max_offsets_per_trigger"]
    tasks = kafka_source(spark, stack, streaming=False, **options).rdd.getNumPartitions()
    with ResourceMonitor(stack.services, spark=True) as monitor:
        measured, progress = ingest(spark, kafka_source(spark, stack, **options), work_dir, sink=sink)
    row = spark_row(stack, "spark_ingest", params, measured, value_bytes=params["value_bytes"],
                    resources=monitor.columns(), extra={"spark_tasks": tasks})  # fmt: skip
    return row, progress


def _ingest_params(
    records: int,
    topic_partitions: int,
    value_bytes: int,
    sink: str = "noop",
    min_partitions: int | None = None,
    max_offsets_per_trigger: int | None = None,
) -> dict[str, Any]:
    return {"topic_partitions": topic_partitions, "records": records, "value_bytes": value_bytes, "sink": sink,
            "min_partitions": min_partitions, "max_offsets_per_trigger": max_offsets_per_trigger}  # fmt: skip


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
    """msg/s by topic partitions (= Spark tasks), by sink, against the plain consumer: `spark_ingest` rows.

    Call `warm_up` first, so no run pays for Python worker start-up. With
    `min_partitions`, the one-partition topic is also read split into that many tasks.
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
                    rows.append(_read_point(spark, stack, work_dir, topic, params)[0])
            for sink in PLAIN_SINKS:
                rows.append(_read_point(spark, stack, work_dir, topic, _ingest_params(records, count, value_bytes,
                                                                                      sink))[0])  # fmt: skip
    return pd.DataFrame(rows)


#: The processes a read is charged with, by the column of their CPU seconds.
_SPARK_READ_CPU = {
    "spark_jvm_cpu_s": "Spark JVM",
    "spark_python_cpu_s": "Spark Python workers",
    "broker_cpu_s": "broker",
}
_PLAIN_READ_CPU = {"client_cpu_s": "plain consumer", "broker_cpu_s": "broker"}


def cpu_per_row(sweep: pd.DataFrame) -> pd.DataFrame:
    """Where the CPU of each read in a `parallelism_sweep` went: µs of CPU per row, by process.

    Why a Spark read falls short of one plain consumer on the same machine: the consumer
    pays librdkafka and the broker; Spark's read pays those in its Python workers, plus the
    JVM's work on every row, on the same cores. `cores_busy` is the CPU of all of them over
    the read's wall time, both taken over the query's whole life (start and stop included).
    NaN where a process was not measured (no broker on a cluster the workbench did not start).

    Returns:
        One row per read (`sink`, `topic_partitions`, `min_partitions`), a column per process
        in µs of CPU per row, `total` (their sum) and `cores_busy`.
    """
    lines = []
    for read in sweep.to_dict("records"):
        processes = _PLAIN_READ_CPU if read["sink"] in PLAIN_SINKS else _SPARK_READ_CPU
        rows, cpu = read["records"], {name: read.get(column, _NAN) for column, name in processes.items()}
        measured = [seconds for seconds in cpu.values() if seconds == seconds]
        lines.append({
            "sink": read["sink"], "topic_partitions": read["topic_partitions"],
            "min_partitions": read.get("min_partitions"),
            **{name: seconds / rows * 1e6 if rows else _NAN for name, seconds in cpu.items()},
            "total": sum(measured) / rows * 1e6 if measured and rows else _NAN,
            "cores_busy": sum(measured) / read["wall_s"] if measured and read["wall_s"] > 0 else _NAN,
        })  # fmt: skip
    return pd.DataFrame(lines)


def cpu_sentence(cpu: pd.DataFrame, cores: int | None = None) -> str:
    """One Markdown sentence from `cpu_per_row`: a Spark noop read against the GC-paused plain
    consumer on the fewest partitions, µs of CPU per row by process, on how many of the
    machine's `cores` (default: all of this one's)."""
    cores = cores or os.cpu_count() or 1
    spark = cpu[(cpu.sink == "noop") & cpu.min_partitions.isna()]
    plain = cpu[cpu.sink == PLAIN_SINKS[1]]
    if spark.empty or plain.empty:
        return "No noop read and GC-paused plain read to compare CPU with."
    fewest = spark.topic_partitions.min()
    ours, theirs = spark[spark.topic_partitions == fewest].iloc[0], plain[plain.topic_partitions == fewest].iloc[0]

    def parts(row: pd.Series, names: Sequence[str]) -> str:
        return ", ".join(f"{name} {row[name]:.2f}" for name in names if row[name] == row[name])

    return (
        f"Per row ({fewest} partition{'s' if fewest > 1 else ''}), Spark's read cost **{ours.total:.2f} µs of CPU** "
        f"({parts(ours, list(_SPARK_READ_CPU.values()))}), **{ours.total / theirs.total:.1f}x** the plain consumer's "
        f"{theirs.total:.2f} µs ({parts(theirs, list(_PLAIN_READ_CPU.values()))}), on the same {cores} cores; "
        f"over the query's life, start and stop included, it kept {ours.cores_busy:.1f} of them busy."
    )


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


def _aggregate_point(
    spark: SparkSession, stack: Stack, work_dir: Path, frame: DataFrame, params: dict[str, Any]
) -> dict[str, Any]:
    """One run of the windowed aggregation under `params["shuffle_partitions"]` (a new query reads it)."""
    from workbench.measure.resources import ResourceMonitor

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
    with telemetry_topic(stack, records=records, partitions=partitions, value_bytes=None,
                         devices=devices) as topic:  # fmt: skip
        frame = _readings_frame(spark, stack, topic)
        for count in shuffle_partitions:
            params = {"shuffle_partitions": count, "records": records, "devices": devices,
                      "topic_partitions": partitions}  # fmt: skip
            rows.append(_aggregate_point(spark, stack, work_dir, frame, params))
    return pd.DataFrame(rows)


def _latency_point(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    params: dict[str, Any],
    on_query: Any = None,
    topic_prefix: str = "spark-live",
) -> tuple[dict[str, Any], pd.DataFrame]:
    """One processing-time query reading a producer at a fixed rate (see `trigger_latency`)."""
    from pyspark.sql import functions as F

    from workbench.measure.contract import result_row

    conf = stack.kafka_config("producer")
    interval, rate = params["trigger"], params["offered_msg_s"]
    topic = f"{topic_prefix}-{uuid.uuid4().hex[:8]}"
    table = f"latency_{uuid.uuid4().hex[:8]}"
    total = int(rate * params["produce_seconds"])
    produced: list[float] = []
    with stack.temporary_topics({topic: params["topic_partitions"]}):
        try:
            frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest").select(
                "partition", "offset", F.col("timestamp").alias("kafka_ts"), F.current_timestamp().alias("batch_ts")
            )
            writer = frame.writeStream.format("memory").queryName(table)
            query = writer.option("checkpointLocation", str(work_dir / table)).trigger(processingTime=interval).start()
            with stopping(query):
                _wait_started(query)
                producer = threading.Thread(target=_produce_at_rate, args=(conf, topic, total, rate, produced),
                                            daemon=True)  # fmt: skip
                producer.start()
                if on_query is not None:
                    on_query(query, lambda thread=producer: not thread.is_alive())
                producer.join(_PATIENCE_S)
                _wait_rows(spark, query, table, total)
            progress = progress_frame(query)
            records = to_pandas(spark.table(table))
        finally:
            shutil.rmtree(work_dir / table, ignore_errors=True)
    busy = progress[progress["rows"] > 0].sort_values("timestamp")
    latency = _latencies(records, busy) / 1000
    floor = trigger_floor(spark, work_dir, trigger=interval, rate=rate)
    python_floor = trigger_floor(spark, work_dir, trigger=interval, rate=rate, source="python")
    extra = {
        **floor,
        **python_floor,
        # p50 against Spark's own floor, same session and trigger. With back-to-back batches a
        # source costing nothing would give about 1.5 (a record waits half a batch, then one);
        # a Python source reading nothing about 1.5 x python_floor_over_floor.
        "p50_over_floor": float(latency.median()) * 1000 / floor["floor_ms"] if len(latency) else _NAN,
        "python_floor_over_floor": python_floor["python_floor_ms"] / floor["floor_ms"],
        "distinct_offsets": int(records[["partition", "offset"]].drop_duplicates().shape[0]),
        "batches": len(busy), "median_batch_ms": float(busy["trigger_ms"].median()) if len(busy) else _NAN,
        **{f"median_{phase}_ms": float(busy[f"{phase}_ms"].median()) if len(busy) else _NAN for phase in DURATIONS},
    }  # fmt: skip
    # msg/s is what the producer achieved: below the offered rate, the load generator was the limit.
    row = result_row(stack, experiment="spark_trigger_latency", params=params, records=len(records),
                     seconds=produced[0] if produced else _NAN, latencies=latency.to_numpy(),
                     latency_of="Kafka timestamp → batch commit, per record", extra=extra)  # fmt: skip
    return row, busy.assign(trigger=interval)


def trigger_floor(
    spark: SparkSession, work_dir: Path, *, trigger: str, rate: int, batches: int = 4, source: str = "rate"
) -> dict[str, Any]:
    """A micro-batch floor: a source that reads nothing into the `noop` sink under `trigger`.

    `source="rate"`: Spark's own `rate` source. No Kafka, no Python, nothing kept: what one
    micro-batch of `rate` rows/s costs in this session is Spark's planning, task and commit
    work alone, the least any source's batch can take. Returns `floor_ms`.

    `source="python"`: `null_source.NullSource`, a Python data source that makes its rows in
    memory. It pays what every Python source pays per batch (its runner's offsets and
    partitions, a Python task, the Arrow hand-over) and nothing for Kafka: the least a
    Python source's batch can take. Returns `python_floor_ms`.

    Runs until `batches` batches after the first (which also starts the query) have read
    rows; the figure is their median `triggerExecution`, with the median of each of its
    phases (`floor_<phase>_ms` or `python_floor_<phase>_ms`).
    """
    if source not in ("rate", "python"):
        raise ValueError(f"trigger_floor: source must be 'rate' or 'python', not {source!r}")
    name = f"floor_{uuid.uuid4().hex[:8]}"
    if source == "python":
        from workbench.streaming.null_source import NULL_FORMAT, NullSource

        spark.dataSource.register(NullSource)
        frame = spark.readStream.format(NULL_FORMAT).option("rowsPerSecond", rate).load()
    else:
        frame = spark.readStream.format("rate").option("rowsPerSecond", rate).load()
    writer = frame.writeStream.format("noop").option("checkpointLocation", str(work_dir / name))
    query = writer.trigger(processingTime=trigger).start()
    deadline = time.monotonic() + _PATIENCE_S
    with stopping(query):
        while len([p for p in query.recentProgress if p["numInputRows"]]) <= batches:
            failure = query.exception()
            if failure is not None:
                raise RuntimeError(f"the {source} -> noop query failed: {failure}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{source} -> noop ran fewer than {batches} batches in {_PATIENCE_S:.0f} s")
            time.sleep(0.05)
        progress = progress_frame(query)
    shutil.rmtree(work_dir / name, ignore_errors=True)
    busy = progress[progress["rows"] > 0].iloc[1:]
    prefix = "python_floor" if source == "python" else "floor"
    return {f"{prefix}_ms": float(busy["trigger_ms"].median()),
            **{f"{prefix}_{phase}_ms": float(busy[f"{phase}_ms"].median()) for phase in DURATIONS}}  # fmt: skip


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

    The producer starts once the query has run its first trigger, so a query's start-up
    is not counted as latency. After each run, Spark's own floor under the same interval
    is measured in the same session (`trigger_floor`: rate source into noop).

    Returns:
        A `spark_trigger_latency` row per interval (records read, batches, median batch ms
        and of each of its phases, latency percentiles in ms, `msg_s` the producer
        reached against `offered_msg_s`, `floor_ms` and its phases, `p50_over_floor`)
        and the per-batch progress of every run.
    """
    summary, batches = [], []
    for interval in intervals:
        params = {"trigger": interval, "offered_msg_s": rate, "produce_seconds": seconds,
                  "topic_partitions": partitions}  # fmt: skip
        row, busy = _latency_point(spark, stack, work_dir, params, on_query)
        summary.append(row)
        batches.append(busy)
    return pd.DataFrame(summary), pd.concat(batches, ignore_index=True)


def _drop(_row: Any) -> None:
    """A foreach sink that keeps nothing."""


def real_time_refusal(spark: SparkSession, stack: Stack, work_dir: Path) -> str | None:
    """What Spark answers when this stack's Kafka source is asked for real-time mode (Spark 4.1+).

    Real-time mode keeps one long-running task per input partition and takes only sources
    on its allow-list (in 4.1-4.3, Spark's own Kafka table); a Python data source, whose
    reader plans finite offset ranges per micro-batch, is not on it. Returns Spark's error
    message, or None when the query was accepted (the official connector: it is stopped
    again at once).
    """
    from pyspark.errors import PySparkException

    topic = f"spark-rtm-{uuid.uuid4().hex[:8]}"
    stack.create_topics({topic: 1})
    checkpoint = work_dir / topic
    try:
        frame = kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest")
        # A sink real-time mode takes (`noop` is not on its allow-list), so only the source is in question.
        writer = frame.writeStream.foreach(_drop).outputMode("update").option("checkpointLocation", str(checkpoint))
        spark.sparkContext.setLogLevel("OFF")  # the refusal is logged with a stack trace: it is the result here
        real_time: dict[str, Any] = {"realTime": "5 seconds"}  # PySpark's typed overloads do not list it
        try:
            query = writer.trigger(**real_time).start()
        except TypeError:
            return f"Spark {spark.version} has no real-time mode (it came with 4.1)"
        except PySparkException as exc:
            return str(exc).splitlines()[0]
        with stopping(query):
            deadline = time.monotonic() + 30
            while query.isActive and not query.recentProgress and time.monotonic() < deadline:
                time.sleep(0.1)
            failure = query.exception()
        return str(failure).splitlines()[0] if failure is not None else None
    finally:
        spark.sparkContext.setLogLevel("ERROR")
        kafka.delete_topics(stack.kafka_config("admin"), [topic])
        shutil.rmtree(checkpoint, ignore_errors=True)


def _produce_at_rate(conf: dict[str, Any], topic: str, total: int, rate: int, took: list[float]) -> None:
    """Small bursts every 50 ms, so records carry timestamps spread over the run; appends its seconds to `took`."""
    client = kafka.producer(conf, {"linger.ms": 5})
    started, sent, step = time.perf_counter(), 0, max(1, rate // 20)
    while sent < total:
        due = min(total, int((time.perf_counter() - started) * rate) + step)
        enqueue(client, (Outgoing(topic, b'{"n":%d}' % i) for i in range(sent, due)), poll_every=due - sent)
        sent = due
        time.sleep(0.05)
    client.flush(60)
    took.append(time.perf_counter() - started)


def _wait_started(query: Any) -> None:
    """Until the query has run its first (empty) trigger: its start-up is not a record's latency.

    Starting a query with a Python source launches the source's Python runner and plans
    the first batch, a second or more on a busy machine; records produced meanwhile would
    measure that start-up, not the micro-batch.
    """
    deadline = time.monotonic() + _PATIENCE_S
    while not query.recentProgress:
        if query.exception() is not None:
            raise RuntimeError(f"query failed before its first trigger: {query.exception()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"query ran no trigger within {_PATIENCE_S:.0f} s")
        time.sleep(0.05)


def _wait_rows(spark: SparkSession, query: Any, table: str, total: int) -> None:
    deadline = time.monotonic() + _PATIENCE_S
    while spark.table(table).count() < total:
        if query.exception() is not None:
            raise query.exception()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{table}: {spark.table(table).count()} of {total} rows after {_PATIENCE_S:.0f} s")
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


#: The layouts `spark_topic_layout` reads the same readings from.
LAYOUTS = ("topic per device", "one topic, 4 partitions")


def _layout_point(
    spark: SparkSession, stack: Stack, work_dir: Path, params: dict[str, Any], options: dict[str, Any]
) -> dict[str, Any]:
    from workbench.measure.resources import ResourceMonitor

    frame = kafka_source(spark, stack, startingOffsets="earliest", **options)
    with ResourceMonitor(stack.services) as monitor:
        measured, _ = ingest(spark, frame, work_dir)
    tasks = kafka_source(spark, stack, streaming=False, **options).rdd.getNumPartitions()
    topics = params["devices"] if params["layout"] == LAYOUTS[0] else 1
    return spark_row(stack, "spark_topic_layout", params, measured, resources=monitor.columns(),
                     extra={"topics": topics, "spark_tasks": tasks})  # fmt: skip


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
    query = frame.writeStream.format("memory").queryName(table).option(
        "checkpointLocation", str(work_dir / table)).trigger(processingTime="500 milliseconds").start()  # fmt: skip
    before = len(readings)
    with stopping(query):
        _wait_rows(spark, query, table, before)
        newcomer = per_device.topic_for("device-new")
        created.create({newcomer: 1})
        late = generate_readings(devices=1, seconds=50, seed=12)
        produce_readings(conf, late, newcomer)
        _wait_rows(spark, query, table, before + len(late))
        counts = to_pandas(spark.table(table).groupBy("topic").count())
    shutil.rmtree(work_dir / table, ignore_errors=True)
    return {"topics_before": len(created.names) - 2, "new_topic": newcomer, "new_topic_rows_produced": len(late),
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
    with stack.temporary_topics({topic: partitions}, timeout=30.0):
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
                    deadline = time.monotonic() + _PATIENCE_S
                    while len([p for p in query.recentProgress if p["numInputRows"]]) < 2:
                        if query.exception() is not None or time.monotonic() > deadline:
                            raise RuntimeError(f"first run did not commit two batches: {query.exception()}")
                        time.sleep(0.1)
            finally:
                spark.sparkContext.setLogLevel("ERROR")
            landed_first = spark.read.parquet(str(output)).count()
            produce_readings(conf, readings[first : first + second], topic)
            with stopping(write_parquet(columns, output, checkpoint)) as resumed:
                resumed.awaitTermination(_PATIENCE_S)
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


# The registered experiments (`workbench bench NAME`, `sweep`): one point each, one contract row.
# They take the session a notebook already holds, or start one, and warm it up once.

_warmed: set[int] = set()


def bench_session(stack: Stack) -> tuple[SparkSession, Path]:
    """The active Spark session (or a new one for the profile), warmed up once, and a work folder."""
    from pyspark.sql import SparkSession

    from workbench.streaming.session import spark_session

    spark = SparkSession.getActiveSession() or spark_session(stack.profile, app_name="workbench-bench")
    work = stack.profile.path(stack.profile.data_dir) / "lake" / "bench"
    work.mkdir(parents=True, exist_ok=True)
    if id(spark) not in _warmed:  # the first query starts Python workers: keep it out of every row
        with telemetry_topic(stack, records=2_000, partitions=1) as topic:
            ingest(spark, kafka_source(spark, stack, subscribe=topic, startingOffsets="earliest"), work)
        _warmed.add(id(spark))
    return spark, work


def spark_ingest(
    stack: Stack,
    *,
    records: int = 200_000,
    topic_partitions: int = 1,
    value_bytes: int = 200,
    sink: str = "noop",
    min_partitions: int | None = None,
    max_offsets_per_trigger: int | None = None,
    topic_prefix: str = "spark-tele",
) -> dict[str, Any]:
    """Read a fresh telemetry topic once with Spark (AvailableNow) or one plain consumer; one row.

    Args:
        records: readings in the topic, padded to `value_bytes`.
        topic_partitions: its partitions (one Spark task each, unless `min_partitions`).
        sink: `noop`, `parquet`, `memory`, or `plain consumer` / `plain consumer, GC paused`
            (no Spark: the ceiling of a reader in this process).
        min_partitions, max_offsets_per_trigger: the source options, when set.

    Raises:
        BenchError: an unknown sink.

    Usage: `sweep("spark_ingest", {"topic_partitions": [1, 2, 4]}, repeat=3)`.
    """
    if sink not in SINKS:
        from workbench.errors import BenchError

        raise BenchError(f"sink must be one of {list(SINKS)}, got {sink!r}")
    spark, work = bench_session(stack)
    params = _ingest_params(records, topic_partitions, value_bytes, sink, min_partitions, max_offsets_per_trigger)
    with telemetry_topic(stack, records=records, partitions=topic_partitions, value_bytes=value_bytes,
                         prefix=topic_prefix) as topic:  # fmt: skip
        return _read_point(spark, stack, work, topic, params)[0]


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
    params = {"shuffle_partitions": shuffle_partitions, "records": records, "devices": devices,
              "topic_partitions": topic_partitions}  # fmt: skip
    with telemetry_topic(stack, records=records, partitions=topic_partitions, value_bytes=None, devices=devices,
                         prefix=topic_prefix) as topic:  # fmt: skip
        return _aggregate_point(spark, stack, work, _readings_frame(spark, stack, topic), params)


def spark_trigger_latency(
    stack: Stack,
    *,
    trigger: str = "0 seconds",
    offered_msg_s: int = 2_000,
    produce_seconds: float = 12.0,
    topic_partitions: int = 4,
    topic_prefix: str = "spark-live",
) -> dict[str, Any]:
    """Latency of records produced at `offered_msg_s` and read by a processing-time query; one row."""
    spark, work = bench_session(stack)
    params = {"trigger": trigger, "offered_msg_s": offered_msg_s, "produce_seconds": produce_seconds,
              "topic_partitions": topic_partitions}  # fmt: skip
    return _latency_point(spark, stack, work, params, topic_prefix=topic_prefix)[0]


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
        from workbench.errors import BenchError

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


def spark_restart(
    stack: Stack, *, first: int = 40_000, second: int = 20_000, topic_partitions: int = 4, topic_prefix: str = ""
) -> dict[str, Any]:
    """`restart_check` as a row: `records` produced and the counts that show nothing lost or twice.

    A correctness check rather than a speed: its rates and latencies are NaN (not measured);
    `exact` is True when output rows, distinct offsets, log records and produced all agree.
    `topic_prefix` is unused (the check names its own topic).
    """
    from workbench.measure.contract import result_row

    spark, work = bench_session(stack)
    counts = restart_check(spark, stack, work, first=first, second=second, partitions=topic_partitions)
    exact = counts["rows"] == counts["distinct_offsets"] == counts["log_records"] == counts["produced"]
    params = {"first": first, "second": second, "topic_partitions": topic_partitions}
    return result_row(stack, experiment="spark_restart", params=params, records=counts["produced"],
                      extra={**counts, "exact": exact})  # fmt: skip
