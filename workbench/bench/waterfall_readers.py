"""The latency waterfall's readers: a native consumer, a REST consumer instance or a Spark
micro-batch query, each stamping the records it reads in the run's `Stamps` from a thread
(or a query) that starts before the schedule and stops when the run's block ends.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Message, TopicPartition

from workbench.bench._run import bench_consumer
from workbench.bench.waterfall_stamps import STAMP, Stamps, append_ns
from workbench.errors import BenchError
from workbench.proxy import ProxyClient
from workbench.stack import Stack

__all__ = ["DRAIN_S", "ReadJob", "Reader", "drain", "open_reader"]

#: Seconds the run waits for the reader to catch up after the schedule ends.
DRAIN_S = 60.0


@dataclass
class ReadJob:
    """What a reader reads and where it stamps: the topic's partitions, the consumer's settings
    (`consumer.`-prefixed run settings, prefix stripped), Spark's trigger, and `extra`, the
    row's columns a reader adds (the Spark connector and its version)."""

    stack: Stack
    topic: str
    partitions: int
    stamps: Stamps
    settings: dict[str, Any] = field(default_factory=dict)
    trigger: str = "0 seconds"
    extra: dict[str, Any] = field(default_factory=dict)


def open_reader(kind: str, job: ReadJob) -> AbstractContextManager[Reader]:
    """The reader named by the run's `reader` parameter, started and ready when the block begins."""
    return {"native": _native_reader, "proxy": _proxy_reader, "spark": _spark_reader}[kind](job)


class Reader:
    """What the writer and the drain ask a reader: has it failed, and how far it got."""

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.ready = threading.Event()

    def failed(self) -> bool:
        return self.error is not None

    def check(self) -> None:
        if self.error is not None:
            raise BenchError(f"the reader failed: {self.error}") from self.error


def drain(stamps: Stamps, done: Reader) -> None:
    """Until every record sent was read once, the reader failed, or `DRAIN_S` passed (the row counts the lost)."""
    deadline = time.monotonic() + DRAIN_S
    while stamps.read < stamps.total and time.monotonic() < deadline and not done.failed():
        time.sleep(0.01)
    done.check()


@contextmanager
def _reader_thread(name: str, loop: Callable[[threading.Event, Reader], None]) -> Iterator[Reader]:
    """Run `loop(stop, reader)` in a thread from before the schedule starts until the block ends."""
    stop, reader = threading.Event(), Reader()

    def run() -> None:
        try:
            loop(stop, reader)
        except BaseException as exc:  # the writer and the drain read it; the thread must not die silently
            reader.error = exc
        finally:
            reader.ready.set()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    if not reader.ready.wait(60):
        stop.set()
        raise BenchError("the reader did not start within 60 s")
    reader.check()
    try:
        yield reader
    finally:
        stop.set()
        thread.join(30)


@contextmanager
def _native_reader(job: ReadJob) -> Iterator[Reader]:
    """A consumer assigned every partition from offset 0, stamping each record as it is read."""
    stamps = job.stamps

    def loop(stop: threading.Event, reader: Reader) -> None:
        client = bench_consumer(job.stack, {"fetch.wait.max.ms": 10, **job.settings})
        try:
            client.assign([TopicPartition(job.topic, p, 0) for p in range(job.partitions)])
            client.poll(0.5)  # the first fetch answered (empty) before the schedule starts
            reader.ready.set()
            while not stop.is_set() and stamps.read < stamps.total:
                # What is fetched already, else the next record within 50 ms; a batch call with
                # a timeout would hold the first records until the batch filled.
                messages: list[Message | None] = [*client.consume(num_messages=10_000, timeout=0)]
                for message in messages or [client.poll(0.05)]:
                    now = time.time_ns()
                    if message is None or message.error() is not None or not message.value():
                        continue
                    seq = STAMP.unpack_from(message.value())[0]  # type: ignore[arg-type]
                    kind, stamp_ms = message.timestamp()
                    appended = append_ns(stamp_ms) if kind == TIMESTAMP_LOG_APPEND_TIME else 0
                    stamps.consumed(seq, now, message.partition() or 0, message.offset() or 0, appended)
        finally:
            client.close()

    with _reader_thread("waterfall-native-reader", loop) as reader:
        yield reader


@contextmanager
def _proxy_reader(job: ReadJob) -> Iterator[Reader]:
    """A REST consumer instance assigned every partition, stamping each record as its answer arrives."""
    stamps = job.stamps

    def loop(stop: threading.Event, reader: Reader) -> None:
        group = f"waterfall-{uuid.uuid4().hex[:8]}"
        partitions = [(job.topic, p) for p in range(job.partitions)]
        with (
            ProxyClient.for_stack(job.stack, session_reuse=True, pool_size=1) as client,
            client.consumer(group, partitions=partitions) as consumer,
        ):
            consumer.poll(timeout_ms=200)
            reader.ready.set()
            while not stop.is_set() and stamps.read < stamps.total:
                records = consumer.poll(timeout_ms=50)
                now = time.time_ns()
                for record in records:
                    seq = STAMP.unpack_from(record.value)[0]
                    appended = append_ns(record.timestamp) if record.timestamp is not None else 0
                    stamps.consumed(seq, now, record.partition, record.offset, appended)

    with _reader_thread("waterfall-proxy-reader", loop) as reader:
        yield reader


@contextmanager
def _spark_reader(job: ReadJob) -> Iterator[Reader]:
    """A micro-batch query into a foreachBatch sink that stamps each batch's start and its rows' write."""
    from workbench.streaming import connector_name, installed_spark_version, kafka_source
    from workbench.streaming.ingestion.runs import bench_session
    from workbench.streaming.pipelines import stopping

    stack, stamps = job.stack, job.stamps
    spark, work = bench_session(stack)
    job.extra["connector"] = connector_name(spark, stack.profile)
    job.extra["spark_version"] = installed_spark_version()
    started_by_batch: dict[int, int] = {}

    def sink(frame: Any, batch_id: int) -> None:
        started = time.time_ns()
        rows = frame.selectExpr(
            "substring(value, 1, 8) AS seq", "partition", "offset", "timestampType", "unix_micros(timestamp) AS ts"
        ).collect()
        written = time.time_ns()
        if rows:  # the batches whose plan time is wanted (an empty one posts no usable progress)
            started_by_batch[batch_id] = started
        for row in rows:
            seq = int.from_bytes(row.seq, "big", signed=True)
            appended = row.ts * 1_000 + 500_000 if row.timestampType == 1 else 0
            if 0 <= seq < stamps.total and not stamps.ns["consumed"][seq]:
                stamps.ns["batch_started"][seq] = started
                stamps.ns["batch_planned"][seq] = batch_id + 1  # the batch, until its plan time is known
            stamps.consumed(seq, written, row.partition, row.offset, appended)

    checkpoint = work / f"waterfall-{uuid.uuid4().hex[:8]}"
    reader = Reader()
    frame = kafka_source(spark, stack, subscribe=job.topic, startingOffsets="earliest")
    query = (
        frame.writeStream.foreachBatch(sink)
        .trigger(processingTime=job.trigger)
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    planned: dict[int, int] = {}
    try:
        with stopping(query):
            deadline = time.monotonic() + 120
            while not query.recentProgress:
                if query.exception() is not None or time.monotonic() > deadline:
                    raise BenchError(f"the Spark query did not start: {query.exception() or 'no batch in 120 s'}")
                time.sleep(0.05)
            finished = threading.Event()
            watcher = threading.Thread(
                target=_watch_query, args=(query, reader, planned, started_by_batch, finished), daemon=True
            )
            watcher.start()
            try:
                yield reader
            finally:
                finished.set()
                watcher.join(30)
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    batch_of = stamps.ns["batch_planned"]
    for seq in np.flatnonzero(batch_of):
        batch_of[seq] = planned.get(int(batch_of[seq]) - 1, 0)


def _watch_query(
    query: Any, reader: Reader, planned: dict[int, int], sunk: dict[int, int], finished: threading.Event
) -> None:
    """Collect each batch's plan time (trigger start + the time to fix its offsets) from the query's
    progress, which keeps only its last 100 batches, so it is read while the query runs; a
    failed query becomes the reader's error. Once `finished`, it waits (up to 10 s) for the
    progress of every batch the sink saw, which Spark posts after the sink returns."""
    give_up = float("inf")
    while True:
        if finished.is_set() and give_up == float("inf"):
            give_up = time.monotonic() + 10
        last = time.monotonic() > give_up or (finished.is_set() and set(sunk) <= set(planned))
        for progress in query.recentProgress:
            # An idle trigger posts progress too (no rows, every 10 s), under the id of the batch
            # that has not run yet: its time would date that batch's plan before its records.
            if progress.batchId not in planned and progress.numInputRows > 0:
                trigger_ms = datetime.fromisoformat(progress.timestamp.replace("Z", "+00:00")).timestamp() * 1000
                fixing_ms = progress.durationMs.get("latestOffset", 0)
                # Both are whole milliseconds, cut down: the moment lies up to 2 ms after their
                # sum, so the stamp is put at the middle (its resolution, ±2 ms, covers the rest).
                planned[progress.batchId] = int((trigger_ms + fixing_ms + 1) * 1_000_000)
        if query.exception() is not None and reader.error is None:
            reader.error = query.exception()
        if last or not query.isActive:
            return
        time.sleep(0.2)
