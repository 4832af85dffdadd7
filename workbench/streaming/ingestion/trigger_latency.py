"""Record latency of a processing-time query at a fixed offered rate, by trigger interval:
`spark_trigger_latency`, and the micro-batch floors it is read against.

A producer thread writes at the offered rate once the query has run its first trigger (a
query's start-up is not a record's latency); each record's latency is from its Kafka
timestamp to the commit of the batch that read it. Records produced in the first
`warm_up_s` seconds (`WARM_UP_S`, 5 s, unless a run says otherwise) are left out of the
percentiles (`measure.latency.after_warm_up`, the workbench's one warm-up rule), so a run
produces for longer than that; the quick and smoke settings shorten both.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench import kafka
from workbench.errors import BenchError
from workbench.kafka.producing import Outgoing, enqueue
from workbench.measure.contract import NOT_MEASURED, result_row
from workbench.measure.latency import WARM_UP_S, after_warm_up
from workbench.stack import Stack
from workbench.streaming import connector_name, installed_spark_version, kafka_source, to_pandas
from workbench.streaming.ingestion.runs import PATIENCE_S, bench_session, wait_rows
from workbench.streaming.pipelines import stopping
from workbench.streaming.progress import DURATIONS, progress_frame

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["spark_trigger_latency", "trigger_floor", "trigger_latency", "trigger_sentence"]


def _latency_params(
    trigger: str, offered_msg_s: int, produce_seconds: float, topic_partitions: int, warm_up_s: float
) -> dict[str, Any]:
    """A point's parameters as its row names them, once the run's length and warm-up are in range."""
    if not 0 <= warm_up_s <= 60:
        raise BenchError(f"warm_up_s must be from 0 to 60 seconds, got {warm_up_s}")
    if not warm_up_s < produce_seconds <= 600:
        raise BenchError(f"produce_seconds must be over the {warm_up_s:g} s warm-up and at most 600")
    return {
        "trigger": trigger,
        "offered_msg_s": offered_msg_s,
        "produce_seconds": produce_seconds,
        "topic_partitions": topic_partitions,
        "warm_up_s": warm_up_s,
    }


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
                producer = threading.Thread(
                    target=_produce_at_rate, args=(conf, topic, total, rate, produced), daemon=True
                )
                producer.start()
                if on_query is not None:
                    on_query(query, lambda thread=producer: not thread.is_alive())
                producer.join(PATIENCE_S)
                wait_rows(spark, query, table, total)
            progress = progress_frame(query)
            records = to_pandas(spark.table(table))
        finally:
            shutil.rmtree(work_dir / table, ignore_errors=True)
    busy = progress[progress["rows"] > 0].sort_values("timestamp")
    latency, measured = _latencies(records, busy, params["warm_up_s"])
    latency = latency / 1000
    floor = trigger_floor(spark, work_dir, trigger=interval, rate=rate)
    python_floor = trigger_floor(spark, work_dir, trigger=interval, rate=rate, source="python")
    extra = {
        **floor,
        **python_floor,
        # p50 against Spark's own floor, same session and trigger. With back-to-back batches a
        # source costing nothing would give about 1.5 (a record waits half a batch, then one);
        # a Python source reading nothing about 1.5 x python_floor_over_floor.
        "p50_over_floor": float(latency.median()) * 1000 / floor["floor_ms"] if len(latency) else NOT_MEASURED,
        "python_floor_over_floor": python_floor["python_floor_ms"] / floor["floor_ms"],
        "spark_version": installed_spark_version(),
        "measured_records": measured,
        "distinct_offsets": int(records[["partition", "offset"]].drop_duplicates().shape[0]),
        "batches": len(busy),
        "median_batch_ms": float(busy["trigger_ms"].median()) if len(busy) else NOT_MEASURED,
        **{
            f"median_{phase}_ms": float(busy[f"{phase}_ms"].median()) if len(busy) else NOT_MEASURED
            for phase in DURATIONS
        },
    }
    # msg/s is what the producer achieved: below the offered rate, the load generator was the limit.
    row = result_row(
        stack,
        experiment="spark_trigger_latency",
        params={**params, "connector": connector_name(spark, stack.profile)},
        records=len(records),
        seconds=produced[0] if produced else NOT_MEASURED,
        latencies=latency.to_numpy(),
        latency_of="Kafka timestamp → batch commit, per record after the warm-up",
        extra=extra,
    )
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
    deadline = time.monotonic() + PATIENCE_S
    with stopping(query):
        while len([p for p in query.recentProgress if p["numInputRows"]]) <= batches:
            failure = query.exception()
            if failure is not None:
                raise RuntimeError(f"the {source} -> noop query failed: {failure}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{source} -> noop ran fewer than {batches} batches in {PATIENCE_S:.0f} s")
            time.sleep(0.05)
        progress = progress_frame(query)
    shutil.rmtree(work_dir / name, ignore_errors=True)
    busy = progress[progress["rows"] > 0].iloc[1:]
    prefix = "python_floor" if source == "python" else "floor"
    return {
        f"{prefix}_ms": float(busy["trigger_ms"].median()),
        **{f"{prefix}_{phase}_ms": float(busy[f"{phase}_ms"].median()) for phase in DURATIONS},
    }


def trigger_latency(
    spark: SparkSession,
    stack: Stack,
    work_dir: Path,
    *,
    intervals: Sequence[str],
    rate: int,
    seconds: float,
    partitions: int = 4,
    warm_up_s: float = WARM_UP_S,
    on_query: Any = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Produce at `rate` records/s for `seconds` while a processing-time query reads; per interval.

    Each record's latency is measured as: the time from its Kafka timestamp to the start of
    the batch that read it (Spark's `current_timestamp()` in that batch), plus that batch's
    duration (rows become visible when the batch commits).

    Args:
        warm_up_s: the first seconds of each run, whose records no percentile counts.
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
        row, busy = _latency_point(
            spark, stack, work_dir, _latency_params(interval, rate, seconds, partitions, warm_up_s), on_query
        )
        summary.append(row)
        batches.append(busy)
    return pd.DataFrame(summary), pd.concat(batches, ignore_index=True)


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
    deadline = time.monotonic() + PATIENCE_S
    while not query.recentProgress:
        if query.exception() is not None:
            raise RuntimeError(f"query failed before its first trigger: {query.exception()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"query ran no trigger within {PATIENCE_S:.0f} s")
        time.sleep(0.05)


def _latencies(records: pd.DataFrame, batches: pd.DataFrame, warm_up_s: float) -> tuple[pd.Series, int]:
    """Per record after the warm-up: batch start - Kafka timestamp + the duration of the batch
    that read it; and how many records that is. The producer's first record starts the
    warm-up: its Kafka timestamp is the run's start on the timestamps' own clock."""
    if records.empty or batches.empty:
        return pd.Series(dtype=float), 0
    frame = records.assign(
        batch_ts=pd.to_datetime(records["batch_ts"]).dt.tz_localize(None),
        kafka_ts=pd.to_datetime(records["kafka_ts"]).dt.tz_localize(None),
    )
    starts = batches[["timestamp", "trigger_ms"]].assign(timestamp=batches["timestamp"].dt.tz_localize(None))
    merged = pd.merge_asof(
        frame.sort_values("batch_ts"),
        starts.sort_values("timestamp"),
        left_on="batch_ts",
        right_on="timestamp",
        direction="nearest",
    )
    waited = (merged["batch_ts"] - merged["kafka_ts"]).dt.total_seconds() * 1000
    sent_s = (merged["kafka_ts"] - merged["kafka_ts"].min()).dt.total_seconds().to_numpy()
    counted = after_warm_up(sent_s, 0.0, warm_up_s)
    latency = (waited.clip(lower=0) + merged["trigger_ms"])[counted]
    return latency, int(counted.sum())


def spark_trigger_latency(
    stack: Stack,
    *,
    trigger: str = "0 seconds",
    offered_msg_s: int = 2_000,
    produce_seconds: float = 12.0,
    topic_partitions: int = 4,
    warm_up_s: float = WARM_UP_S,
    topic_prefix: str = "spark-live",
) -> dict[str, Any]:
    """Latency of records produced at `offered_msg_s` and read by a processing-time query; one row."""
    params = _latency_params(trigger, offered_msg_s, produce_seconds, topic_partitions, warm_up_s)
    spark, work = bench_session(stack)
    return _latency_point(spark, stack, work, params, topic_prefix=topic_prefix)[0]


def trigger_sentence(latency: pd.DataFrame, *, produced: int) -> str:
    """Notebook 09's reading of its trigger runs (`trigger_latency`'s rows): the lowest
    latency and its trigger, the micro-batch floor and where it went, the same against
    Spark's own floor and a Python source's, and whether each of the `produced` records
    was read exactly once."""
    low, high = latency.loc[latency.latency_p50_ms.idxmin()], latency.loc[latency.latency_p50_ms.idxmax()]
    fastest = latency.loc[latency.median_batch_ms.idxmin()]
    phases = {phase: fastest[f"median_{phase}_ms"] for phase in DURATIONS}
    where = ", ".join(f"{name} {ms:,.0f} ms" for name, ms in sorted(phases.items(), key=lambda kv: -kv[1]) if ms)
    lead, others = ("The lowest median latency came with", f"; `{high.trigger}` gave p50 {high.latency_p50_ms:,.0f} ms")
    if len(latency) == 1:
        lead, others = "The one trigger measured,", ""
    exact = bool((latency.records == latency.distinct_offsets).all() and (latency.records == produced).all())
    return (
        f"- {lead} `{low.trigger}`: p50 {low.latency_p50_ms:,.0f} ms, p95 {low.latency_p95_ms:,.0f} ms{others}.\n"
        f"- A micro-batch of a few thousand rows took at least {fastest.median_batch_ms:,.0f} ms (median): that is "
        f"the latency floor of a micro-batch here, whatever the interval; it went to {where} (medians of "
        f"`{fastest.trigger}`).\n"
        f"- Spark's own floor in this session, its `rate` source into the `noop` sink under the same trigger, was "
        f"{low.floor_ms:,.0f} ms per batch: the p50 of `{low.trigger}` is **{low.p50_over_floor:.1f}x** that floor "
        f"(about 1.5x is what back-to-back batches cost a source that takes no time; where our batch's extra time "
        f"goes: latestOffset {low.median_latestOffset_ms:,.0f} ms against {low.floor_latestOffset_ms:,.0f}, addBatch "
        f"{low.median_addBatch_ms:,.0f} ms against {low.floor_addBatch_ms:,.0f}).\n"
        f"- A Python source that reads nothing (`workbench_null`: its rows are made in memory) took "
        f"{low.python_floor_ms:,.0f} ms per batch under the same trigger, {low.python_floor_over_floor:.1f}x Spark's "
        f"floor: what the Python Data Source API costs a batch before any Kafka is read. Its records would "
        f"wait about {1.5 * low.python_floor_over_floor:.1f}x the floor, the least any Python source reaches here; "
        f"ours reached {low.p50_over_floor:.1f}x.\n"
        f"- Every run read each produced record exactly once: {exact}."
    )
