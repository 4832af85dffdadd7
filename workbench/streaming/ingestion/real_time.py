"""Spark's real-time mode (Spark 4.1+) against micro-batches: `spark_real_time`, and whether a source is taken.

Real-time mode keeps one long-running task per Kafka partition that reads, processes and
writes each record as it comes, and commits a checkpoint every `realTime` interval (at
least 5 s); a micro-batch query plans, runs and commits a batch of tasks per trigger.

The measurement follows Spark's own `RTMKafkaKafkaBenchmark`: a stateless Kafka → Kafka
query, a producer at a fixed offered rate, and per record **end-to-end latency = the
output record's Kafka timestamp - the input record's** (both CreateTime, the moments the
producer and Spark's Kafka sink were handed the record; one clock on this machine). The
input timestamp and position travel in the output value, so the output topic, read back
after the run, says what was delivered, what twice and what not at all.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from workbench import kafka
from workbench.errors import BenchError
from workbench.measure.contract import NOT_MEASURED, result_row
from workbench.measure.latency import WARM_UP_S, after_warm_up
from workbench.measure.schedule import Phase, RateSchedule, run_open_loop
from workbench.stack import Stack
from workbench.streaming import Connector, installed_spark_version, kafka_source
from workbench.streaming.ingestion.runs import PATIENCE_S, bench_session
from workbench.streaming.pipelines import stopping

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

__all__ = [
    "MODES",
    "Mode",
    "SPARK_PUBLISHED_MS",
    "real_time_latency",
    "real_time_refusal",
    "real_time_sentence",
    "spark_real_time",
    "trigger_seconds",
]

#: `mode` values: Spark's real-time mode, and the micro-batch queries it is compared with.
MODES = ("real-time", "micro-batch")
Mode = Literal["real-time", "micro-batch"]

#: Spark's published figures (`connector/kafka-0-10-sql/benchmarks/RTMKafka*Benchmark-results.txt`,
#: Kafka -> Kafka at 1,000 records/s, 5 partitions, on 3 x 5 cores), in ms: stateless real-time
#: p50 and p99, and with dropDuplicates micro-batch p50 against real-time p50 (2.66x).
SPARK_PUBLISHED_MS = {
    "real_time_p50_ms": 70.0,
    "real_time_p99_ms": 85.0,
    "dedup_micro_batch_p50_ms": 263.0,
    "dedup_real_time_p50_ms": 99.0,
}


def _drop(_row: Any) -> None:
    """A foreach sink that keeps nothing."""


def real_time_refusal(
    spark: SparkSession, stack: Stack, work_dir: Path, *, connector: Connector | None = None
) -> str | None:
    """What Spark answers when this stack's Kafka source is asked for real-time mode (Spark 4.1+).

    Real-time mode takes only sources on its allow-list (Spark's own Kafka table); a Python
    data source, whose reader plans finite offset ranges per micro-batch, is not on it.
    Returns Spark's error message, or None when the query was accepted (Spark's connector:
    it is stopped again at once). `connector` asks about that source instead of the profile's.
    """
    from pyspark.errors import PySparkException

    topic = f"spark-rtm-{uuid.uuid4().hex[:8]}"
    stack.create_topics({topic: 1})
    checkpoint = work_dir / topic
    try:
        frame = kafka_source(spark, stack, connector=connector, subscribe=topic, startingOffsets="earliest")
        # A sink real-time mode takes (`noop` is not on its allow-list), so only the source is in question.
        writer = frame.writeStream.foreach(_drop).outputMode("update").option("checkpointLocation", str(checkpoint))
        spark.sparkContext.setLogLevel("OFF")  # the refusal is logged with a stack trace: it is the result here
        try:
            query = _start(writer, "real-time", "5 seconds")
        except PySparkException as exc:
            return str(exc).splitlines()[0]
        with stopping(query):
            deadline = time.monotonic() + 30
            while query.isActive and not query.status["isTriggerActive"] and time.monotonic() < deadline:
                time.sleep(0.1)
            failure = query.exception()
        return str(failure).splitlines()[0] if failure is not None else None
    finally:
        spark.sparkContext.setLogLevel("ERROR")
        kafka.delete_topics(stack.kafka_config("admin"), [topic])
        shutil.rmtree(checkpoint, ignore_errors=True)


def _start(writer: Any, mode: Mode, trigger: str) -> StreamingQuery:
    """`writer.trigger(realTime=...)` or `processingTime=...`, started.

    PySpark's typed overloads of `trigger` do not list `realTime` (its implementation takes it).
    """
    chosen: dict[str, Any] = {"realTime": trigger} if mode == "real-time" else {"processingTime": trigger}
    query: StreamingQuery = writer.trigger(**chosen).start()
    return query


def _checked_params(
    mode: str, trigger: str, offered_msg_s: int, produce_seconds: float, topic_partitions: int
) -> dict[str, Any]:
    """A point's parameters as its row names them, once they are known to be in range."""
    if mode not in MODES:
        raise BenchError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if trigger_seconds(trigger) < 5 and mode == "real-time":
        raise BenchError(f"real-time mode checkpoints at least every 5 s: trigger {trigger!r} is shorter")
    if not 1 <= offered_msg_s <= 100_000:
        raise BenchError(f"offered_msg_s must be between 1 and 100,000, got {offered_msg_s}")
    if not WARM_UP_S < produce_seconds <= 600:
        raise BenchError(f"produce_seconds must be over the {WARM_UP_S:.0f} s warm-up and at most 600")
    if not 1 <= topic_partitions <= 16:
        raise BenchError(f"topic_partitions must be between 1 and 16, got {topic_partitions}")
    return {
        "mode": mode,
        "trigger": trigger,
        "offered_msg_s": offered_msg_s,
        "produce_seconds": produce_seconds,
        "topic_partitions": topic_partitions,
    }


_UNIT_S = {"millisecond": 0.001, "second": 1.0, "minute": 60.0}


def trigger_seconds(trigger: str) -> float:
    """A Spark interval string (`5 seconds`, `100 milliseconds`) in seconds.

    Raises:
        BenchError: not an interval Spark's trigger takes, or over an hour; before Spark is asked.
    """
    amount, _, unit = trigger.strip().partition(" ")
    try:
        seconds = float(amount) * _UNIT_S[unit.strip().removesuffix("s")]
    except (ValueError, KeyError):
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise BenchError(f"not a trigger interval: {trigger!r} (e.g. '5 seconds', '100 milliseconds')")
    return seconds


def _point(
    spark: SparkSession, stack: Stack, work_dir: Path, params: dict[str, Any], topic_prefix: str
) -> dict[str, Any]:
    """One query at one offered rate (see `real_time_latency`): its contract row."""
    mode, trigger, rate = params["mode"], params["trigger"], params["offered_msg_s"]
    name = f"{topic_prefix}-{uuid.uuid4().hex[:8]}"
    source, sink = f"{name}-in", f"{name}-out"
    partitions = params["topic_partitions"]
    slots = spark.sparkContext.defaultParallelism
    if mode == "real-time" and partitions > slots:
        raise BenchError(
            f"real-time mode holds one task slot per input partition for as long as it runs: "
            f"{partitions} partitions need {partitions} slots, and this session has {slots}"
        )
    checkpoint = work_dir / f"{name}-checkpoint"
    with stack.temporary_topics({source: partitions, sink: partitions}):
        try:
            query = _copy_query(spark, stack, source, sink, checkpoint, mode, trigger)
            with _stopped_quietly(spark, query):
                _wait_running(query, mode)
                load = _OpenLoop(stack.kafka_config("producer"), source, rate, params["produce_seconds"])
                load.run(lambda: query.exception() is not None)
                _wait_delivered(stack, query, sink, load.sent)
            delivered = _delivered(stack, sink)
        finally:
            shutil.rmtree(checkpoint, ignore_errors=True)
    return _row(stack, params, load, delivered)


@contextmanager
def _stopped_quietly(spark: SparkSession, query: StreamingQuery) -> Iterator[None]:
    """Stop the query when the block ends. Stopping interrupts the tasks a real-time query
    keeps running, which Spark logs as aborted commits with stack traces: expected here."""
    try:
        yield
    finally:
        spark.sparkContext.setLogLevel("OFF")
        try:
            if query.isActive:
                query.stop()
        finally:
            spark.sparkContext.setLogLevel("ERROR")


def _copy_query(
    spark: SparkSession, stack: Stack, source: str, sink: str, checkpoint: Path, mode: Mode, trigger: str
) -> StreamingQuery:
    """Kafka → Kafka, stateless: each output value is `partition:offset:input timestamp (ms)`.

    The client settings are Spark's benchmark's: fetches answered within 10 ms.
    """
    options: dict[str, Any] = {"subscribe": source, "startingOffsets": "earliest", "kafka.fetch.max.wait.ms": "10"}
    frame = kafka_source(spark, stack, connector="kafka", **options)
    copied = frame.selectExpr(
        "key", "CAST(concat_ws(':', partition, offset, unix_millis(timestamp)) AS BINARY) AS value"
    )
    writer = (
        copied.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", stack.bootstrap_servers)
        .option("topic", sink)
        .option("checkpointLocation", str(checkpoint))
        .outputMode("update")
    )
    return _start(writer, mode, trigger)


def _wait_running(query: StreamingQuery, mode: Mode) -> None:
    """Until the query reads: a micro-batch query has run its first trigger; a real-time one
    has its long-running tasks up (its first progress comes only at its first checkpoint)."""
    deadline = time.monotonic() + PATIENCE_S
    while not (query.recentProgress if mode == "micro-batch" else query.status["isTriggerActive"]):
        if query.exception() is not None:
            raise BenchError(f"the {mode} query failed before reading: {query.exception()}")
        if time.monotonic() > deadline:
            raise BenchError(f"the {mode} query did not start within {PATIENCE_S:.0f} s")
        time.sleep(0.05)


class _OpenLoop:
    """A producer on a fixed schedule: record i is due at `i / rate` seconds, whatever came before.

    Sends what is due every tick (`measure.schedule.run_open_loop`); a record sent more than
    50 ms after it was due is a slip (the load generator, not the system under test, fell behind).
    """

    def __init__(self, conf: dict[str, Any], topic: str, rate: int, seconds: float) -> None:
        self.conf, self.topic, self.rate, self.seconds = conf, topic, rate, seconds
        self.sent = 0
        self.slips = 0
        self.started_ms = 0
        self.took_s = NOT_MEASURED

    def run(self, failed: Callable[[], bool]) -> None:
        client = kafka.producer(self.conf, {"linger.ms": 1})

        def send(first: int, upto: int) -> None:
            for i in range(first, upto):
                client.produce(self.topic, value=b"%d" % i)
            client.poll(0)

        schedule = RateSchedule([Phase("steady", self.seconds, self.rate)])
        self.started_ms = int(time.time() * 1000)
        run = run_open_loop(schedule, send, started=time.perf_counter(), stop=lambda _t: failed())
        self.sent, self.slips, self.took_s = run.sent, run.slips, run.seconds
        if client.flush(60) != 0:
            raise BenchError(f"{len(client)} records were not acknowledged within 60 s")


def _wait_delivered(stack: Stack, query: StreamingQuery, sink: str, sent: int) -> None:
    """Until the sink holds a record for every one sent (or the query fails, or patience ends)."""
    conf = stack.kafka_config("admin")
    deadline = time.monotonic() + PATIENCE_S
    while sum(kafka.end_offsets(conf, sink).values()) < sent:
        if query.exception() is not None:
            raise BenchError(f"the query failed: {query.exception()}")
        if time.monotonic() > deadline:
            return  # the row says how many were missing
        time.sleep(0.2)


def _delivered(stack: Stack, sink: str) -> pd.DataFrame:
    """The output records: input partition and offset, input and output timestamps (ms)."""
    rows = []
    for record in kafka.read_records(stack.kafka_config("consumer"), sink, timeout=PATIENCE_S):
        partition, offset, stamp = (record.value or b"").split(b":")
        rows.append((int(partition), int(offset), int(stamp), record.timestamp_ms))
    return pd.DataFrame(rows, columns=["partition", "offset", "in_ms", "out_ms"])


def _row(stack: Stack, params: dict[str, Any], load: _OpenLoop, delivered: pd.DataFrame) -> dict[str, Any]:
    unique = delivered.drop_duplicates(["partition", "offset"])
    counted = after_warm_up(unique["in_ms"].to_numpy() / 1000, load.started_ms / 1000)
    latencies = (unique["out_ms"] - unique["in_ms"]).to_numpy()[counted] / 1000
    return result_row(
        stack,
        experiment="spark_real_time",
        params={**params, "connector": "kafka"},
        records=load.sent,
        seconds=load.took_s,
        latencies=np.clip(latencies, 0, None),
        latency_of="input record's Kafka timestamp → output record's, per record after the warm-up",
        extra={
            "spark_version": installed_spark_version(),
            "delivered": len(unique),
            "missing": load.sent - len(unique),
            "duplicates": len(delivered) - len(unique),
            "measured_records": int(counted.sum()),
            "warm_up_s": WARM_UP_S,
            "schedule_slips": load.slips,
            "offered_reached": load.sent / load.took_s / params["offered_msg_s"] if load.took_s else NOT_MEASURED,
        },
    )


def real_time_latency(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    rates: Sequence[int],
    triggers: Sequence[tuple[Mode, str]] = (("real-time", "5 seconds"), ("micro-batch", "0 seconds")),
    seconds: float = 15.0,
    partitions: int = 1,
) -> pd.DataFrame:
    """End-to-end latency of a stateless Kafka → Kafka query at each offered rate, by trigger.

    Args:
        rates: offered records/s, each run open-loop for `seconds` (the first `WARM_UP_S`
            of them left out of the percentiles).
        triggers: `(mode, interval)` pairs: `("real-time", "5 seconds")` checkpoints every
            5 s; `("micro-batch", "0 seconds")` runs batches back to back.
        partitions: of the input and output topics. Real-time mode holds one task slot per
            input partition for as long as it runs: on `local[2]`, 1 or 2.

    Returns:
        One `spark_real_time` row per (trigger, rate): latency percentiles, records sent,
        delivered, missing and duplicated, schedule slips, and the offered rate reached.
    """
    rows = []
    for mode, trigger in triggers:
        for rate in rates:
            params = _checked_params(mode, trigger, rate, seconds, partitions)
            rows.append(_point(spark, stack, work_dir, params, "spark-rtm"))
    return pd.DataFrame(rows)


def spark_real_time(
    stack: Stack,
    *,
    mode: str = "real-time",
    trigger: str = "5 seconds",
    offered_msg_s: int = 1_000,
    produce_seconds: float = 15.0,
    topic_partitions: int = 1,
    topic_prefix: str = "spark-rtm",
) -> dict[str, Any]:
    """End-to-end latency of a Kafka → Kafka query in real-time mode or micro-batches; one row.

    Raises:
        BenchError: an unknown mode, a real-time interval under 5 s, sizes out of range.

    Usage: `sweep("spark_real_time", {"mode": ["real-time", "micro-batch"], "trigger": ...})`.
    """
    params = _checked_params(mode, trigger, offered_msg_s, produce_seconds, topic_partitions)
    spark, work = bench_session(stack)
    return _point(spark, stack, work, params, topic_prefix)


def real_time_sentence(rows: pd.DataFrame, *, slots: int) -> str:
    """Markdown bullets from `real_time_latency` rows: the measured ratio next to Spark's, the
    checkpoint interval's cost, delivery, and what the cores allowed (`slots`: the session's
    task slots)."""
    rate = int(min(rows["offered_msg_s"].unique(), key=lambda r: abs(np.log(r / 1_000))))
    at_rate = rows[rows["offered_msg_s"] == rate]
    real_time = at_rate[at_rate["mode"] == "real-time"].sort_values("latency_p50_ms").iloc[0]
    micro = at_rate[at_rate["mode"] == "micro-batch"].sort_values("latency_p50_ms").iloc[0]
    ratio = micro["latency_p50_ms"] / real_time["latency_p50_ms"]
    published = SPARK_PUBLISHED_MS
    lines = [
        f"- At {rate:,} records/s, real-time mode (`{real_time.trigger}` checkpoints) delivered a record in "
        f"**{real_time.latency_p50_ms:,.0f} ms** at p50 and {real_time.latency_p99_ms:,.0f} ms at p99; the fastest "
        f"micro-batch trigger (`{micro.trigger}`) in {micro.latency_p50_ms:,.0f} ms and {micro.latency_p99_ms:,.0f} "
        f"ms: **{ratio:.1f}x** at p50. Spark publishes {published['real_time_p50_ms']:.0f} ms at p50 and "
        f"{published['real_time_p99_ms']:.0f} ms at p99 for the stateless query in real-time mode, and a "
        f"{published['dedup_micro_batch_p50_ms'] / published['dedup_real_time_p50_ms']:.2f}x p50 ratio with "
        "dropDuplicates, on 3 x 5 cores and 5 partitions.",
    ]
    checkpoints = at_rate[at_rate["mode"] == "real-time"].set_index("trigger")
    if len(checkpoints) > 1:
        lines.append(
            "- The real-time checkpoint interval moved the tail: p99 "
            + ", ".join(f"{ms:,.0f} ms with `{t}`" for t, ms in checkpoints["latency_p99_ms"].items())
            + ". At each checkpoint the long-running tasks end and new ones start; the records that arrive "
            "meanwhile wait. Spark's benchmark checkpoints every 5 minutes."
        )
    clean = bool((rows["missing"] == 0).all() and (rows["duplicates"] == 0).all())
    lines.append(
        f"- Every record arrived exactly once in every run: **{clean}** "
        f"({int(rows['missing'].sum())} missing, {int(rows['duplicates'].sum())} twice, over "
        f"{int(rows['records'].sum()):,} sent); the load generator slipped behind its schedule for "
        f"{int(rows['schedule_slips'].sum()):,} records and reached {rows['offered_reached'].min():.0%} or more "
        "of each offered rate."
    )
    partitions = int(rows["topic_partitions"].max())
    lines.append(
        f"- Cores: real-time mode held {partitions} of this session's {slots} task slot(s) for the whole run, "
        "one per input partition; a topic with more partitions than free slots cannot run in real-time mode "
        "here, while micro-batches share the slots batch after batch."
    )
    return "\n".join(lines)
