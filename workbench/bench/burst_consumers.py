"""The three consumers a burst is read by, each with a stated capacity and a position to measure lag by.

- `NativeConsumer`: one member of a consumer group (librdkafka). It spends `process_ms` per
  record (n x process_ms per batch, so small values stay accurate), then commits what it
  processed, synchronously, after every batch: its committed offsets are what it has
  finished. Lag: log ends - the group's committed offsets, read with the admin client.
- `RestConsumer`: a v2 consumer instance on the REST proxy (`ProxyClient`), the same
  processing and commit (`POST /offsets` after every batch). Lag: the same.
- `SparkConsumer`: a micro-batch query from the profile's Kafka connector into the `noop`
  sink, `maxOffsetsPerTrigger` records at most every `trigger_s`. Lag: log ends - the end
  offsets of the last batch the query completed (its progress).

Capacity, the most a consumer can read per second: `1000 / process_ms` for the first two
(the commit and the fetch take their share on top, so the measured catch-up rate is a little
lower), `maxOffsetsPerTrigger / trigger_s` for Spark (while a batch takes less than a
trigger). The records carry their sequence number (8 bytes, big-endian) at the start of the
value, so the first two count every record once and say which came twice; Spark's rows are
counted from its progress.
"""

from __future__ import annotations

import json
import logging
import shutil
import struct
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from confluent_kafka import Message

from workbench._types import Partition
from workbench.bench._run import bench_consumer
from workbench.errors import BenchError, KafkaError
from workbench.measure.lag import GroupOffsets
from workbench.proxy import ProxyClient
from workbench.stack import Stack

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

__all__ = [
    "Arrivals",
    "BurstConsumer",
    "CONSUMERS",
    "JOIN_S",
    "MAX_BATCHES",
    "NativeConsumer",
    "RestConsumer",
    "SEQUENCE",
    "SparkConsumer",
]

log = logging.getLogger("workbench.bench")

#: The consumers a burst can be read by.
CONSUMERS = ("native", "proxy", "spark")
#: A record's sequence number, at the start of its value.
SEQUENCE = struct.Struct(">q")
#: Seconds a consumer may take to join its group (or a query to run its first trigger).
JOIN_S = 60.0
#: Progress events a Spark consumer keeps (one per micro-batch).
MAX_BATCHES = 100_000


class Arrivals:
    """When each record finished processing, by sequence number, in a fixed-size array.

    Counts distinct records, records seen again (duplicates) and records whose number is
    outside the run (`foreign`, never expected). Thread-safe: the consumer's loop adds, the
    scenario reads.
    """

    def __init__(self, capacity: int) -> None:
        self.done_s = np.full(capacity, np.nan)
        self.read = 0
        self.duplicates = 0
        self.foreign = 0
        self._lock = threading.Lock()

    def add(self, sequences: Iterable[int], done_s: float) -> None:
        """Records `sequences` finished at `done_s` (seconds on the run's clock)."""
        with self._lock:
            for seq in sequences:
                if not 0 <= seq < self.done_s.size:
                    self.foreign += 1
                elif np.isnan(self.done_s[seq]):
                    self.done_s[seq] = done_s
                    self.read += 1
                else:
                    self.duplicates += 1


class BurstConsumer(ABC):
    """What the burst scenario needs of a consumer; a context manager that joins and leaves.

    Entering returns once the consumer is ready to read (it has its partitions, or the
    query ran its first trigger): a group join is not part of the burst.
    """

    kind = ""
    #: What the lag is measured against, for the row.
    position_of = ""

    def __init__(self, stack: Stack, topic: str, partitions: int) -> None:
        self.stack = stack
        self.topic = topic
        self.partitions = partitions
        #: The run's t = 0 (`time.perf_counter()`), set by the scenario before the first record.
        self.started = time.perf_counter()
        #: Per record, when it finished (None when the consumer cannot see records: Spark).
        self.arrivals: Arrivals | None = None

    @property
    @abstractmethod
    def capacity_msg_s(self) -> float:
        """The most records per second this consumer can take."""

    @property
    @abstractmethod
    def capacity_rule(self) -> str:
        """How the capacity follows from the settings, in words."""

    @abstractmethod
    def positions(self) -> Mapping[Partition, int]:
        """The position lag is measured against, per partition (a `LagSampler`'s `positions`)."""

    @abstractmethod
    def read(self) -> int:
        """Distinct records processed so far."""

    @abstractmethod
    def duplicates(self) -> int:
        """Records processed more than once."""

    @abstractmethod
    def failure(self) -> BaseException | None:
        """What stopped the consumer, if anything."""

    def batches(self, wall_origin: float) -> pd.DataFrame | None:
        """Spark's micro-batches on the run's clock (None for the others)."""
        return None

    @abstractmethod
    def open(self) -> None:
        """Join and wait until ready (see the class)."""

    @abstractmethod
    def close(self) -> None:
        """Stop reading and leave."""

    def __enter__(self) -> BurstConsumer:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class _LoopConsumer(BurstConsumer):
    """A consumer loop in a thread: poll, spend n x process_ms, commit, count; lag from commits."""

    def __init__(
        self, stack: Stack, topic: str, partitions: int, *, process_ms: float, record_bytes: int, records: int
    ) -> None:
        super().__init__(stack, topic, partitions)
        self.process_ms = process_ms
        self.record_bytes = record_bytes
        self.group = f"{topic}-lag"
        #: Records per poll: about 100 ms of processing, at most 500. Its commit comes after
        #: it, so the committed offsets (the lag's positions) move in steps of one batch.
        self.batch = max(1, min(500, int(100 / process_ms)))
        self.arrivals = Arrivals(records)
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._committed: GroupOffsets | None = None

    @property
    def capacity_msg_s(self) -> float:
        return 1000.0 / self.process_ms

    @property
    def capacity_rule(self) -> str:
        return f"1000 / process_ms = 1000 / {self.process_ms:g}"

    def positions(self) -> Mapping[Partition, int]:
        assert self._committed is not None, "positions() is asked while the consumer is open"
        return self._committed()

    def read(self) -> int:
        assert self.arrivals is not None
        return self.arrivals.read

    def duplicates(self) -> int:
        assert self.arrivals is not None
        return self.arrivals.duplicates

    def failure(self) -> BaseException | None:
        return self._error

    def open(self) -> None:
        partitions = [(self.topic, p) for p in range(self.partitions)]
        self._committed = GroupOffsets(self.stack.kafka_config("admin"), self.group, partitions)
        self._committed()  # connects its admin client now, not in the run's first reading
        self._thread = threading.Thread(target=self._guarded, name=f"burst-{self.kind}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + JOIN_S
        while not self._ready.wait(0.05):
            if self._error is not None or time.monotonic() > deadline:
                self.close()
                if self._error is not None:
                    raise self._error
                raise BenchError(f"the {self.kind} consumer got no partitions of {self.topic} within {JOIN_S:.0f} s")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._committed is not None:
            self._committed.close()
            self._committed = None

    def _guarded(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # reported by failure(), raised by the scenario
            self._error = exc

    @abstractmethod
    def _loop(self) -> None:
        """Read until stopped; set `_ready` once every partition is assigned."""

    def _processed(self, sequences: list[int], commit: Any) -> None:
        """Spend the processing time on a batch, commit it, then count it as read."""
        time.sleep(len(sequences) * self.process_ms / 1000)
        done = time.perf_counter() - self.started
        commit()
        assert self.arrivals is not None
        self.arrivals.add(sequences, done)


class NativeConsumer(_LoopConsumer):
    """One librdkafka member of a fresh group; commits synchronously after each processed batch."""

    kind = "native"
    position_of = "committed offsets (admin client); the member commits synchronously after each processed batch"

    def _loop(self) -> None:
        client = bench_consumer(
            self.stack,
            {"group.id": self.group, "auto.offset.reset": "earliest", "enable.auto.commit": False},
        )

        def assigned(_consumer: Any, partitions: list[Any]) -> None:
            if len(partitions) == self.partitions:
                self._ready.set()

        try:
            client.subscribe([self.topic], on_assign=assigned)
            while not self._stop.is_set():
                # What is fetched already, else wait up to 50 ms for one record: a
                # consume(n, timeout) would hold a batch until n came or the timeout passed.
                messages: list[Message | None] = [*client.consume(num_messages=self.batch, timeout=0)]
                messages = messages or [client.poll(0.05)]
                sequences = []
                for message in messages:
                    if message is None:
                        continue
                    error = message.error()
                    if error is not None:
                        if error.fatal():
                            raise KafkaError(f"the native consumer failed: {error.str()}", error.name())
                        log.info("native consumer: %s", error.str())
                        continue
                    sequences.append(SEQUENCE.unpack_from(message.value() or bytes(8))[0])
                if sequences:
                    self._processed(sequences, lambda: client.commit(asynchronous=False))
        finally:
            client.close()


class RestConsumer(_LoopConsumer):
    """A v2 consumer instance on the stack's REST proxy; commits (`POST /offsets`) after each batch."""

    kind = "proxy"
    position_of = (
        "committed offsets (admin client); the REST consumer instance commits (POST /offsets) "
        "after each processed batch"
    )

    def _loop(self) -> None:
        # max_bytes asks for about one batch of records (keys are empty, values record_bytes).
        budget = self.batch * self.record_bytes
        with (
            ProxyClient.for_stack(self.stack, session_reuse=True, pool_size=1) as client,
            client.consumer(self.group, topics=[self.topic], format="binary", auto_offset_reset="earliest") as reader,
        ):
            while not self._stop.is_set():
                records = reader.poll(timeout_ms=50 if self._ready.is_set() else 200, max_bytes=budget)
                if not self._ready.is_set() and len(reader.assignments()) == self.partitions:
                    self._ready.set()
                if records:
                    sequences = [SEQUENCE.unpack_from(r.value or bytes(8))[0] for r in records]
                    self._processed(sequences, reader.commit)


class SparkConsumer(BurstConsumer):
    """A micro-batch query into the `noop` sink, at most `max_offsets` records every `trigger_s`.

    Its position is the end offsets of the last batch it completed (`lastProgress`); its
    batches are kept from the progress events (every one: when a poll finds batch ids
    skipped, the query's recent progress fills them in).
    """

    kind = "spark"
    position_of = "end offsets of the last completed micro-batch (the query's progress)"

    def __init__(self, stack: Stack, topic: str, partitions: int, *, max_offsets: int, trigger_s: float) -> None:
        super().__init__(stack, topic, partitions)
        self.max_offsets = max_offsets
        self.trigger_s = trigger_s
        self.connector = ""
        self.query: StreamingQuery | None = None
        self._events: dict[int, dict[str, Any]] = {}
        self._checkpoint: Path | None = None
        self._lock = threading.Lock()

    @property
    def capacity_msg_s(self) -> float:
        return self.max_offsets / self.trigger_s

    @property
    def capacity_rule(self) -> str:
        return f"maxOffsetsPerTrigger / trigger = {self.max_offsets} / {self.trigger_s:g} s"

    def open(self) -> None:
        from workbench.streaming import kafka_source
        from workbench.streaming.ingestion.runs import bench_session

        spark, work = bench_session(self.stack)
        self._checkpoint = work / f"lag-{uuid.uuid4().hex[:8]}"
        frame = kafka_source(
            spark, self.stack, subscribe=self.topic, startingOffsets="earliest", maxOffsetsPerTrigger=self.max_offsets
        )
        self.connector = str(getattr(frame, "kafka_connector", ""))
        writer = frame.writeStream.format("noop").option("checkpointLocation", str(self._checkpoint))
        self.query = writer.trigger(processingTime=f"{round(self.trigger_s * 1000)} milliseconds").start()
        deadline = time.monotonic() + JOIN_S
        while not self.query.recentProgress:
            failure = self.query.exception()
            if failure is not None or time.monotonic() > deadline:
                self.close()
                raise BenchError(f"the Spark query did not run its first trigger: {failure or f'{JOIN_S:.0f} s'}")
            time.sleep(0.05)

    def close(self) -> None:
        query, self.query = self.query, None
        if query is not None:
            self._collect(query.recentProgress)
            if query.isActive:
                query.stop()
        if self._checkpoint is not None:
            shutil.rmtree(self._checkpoint, ignore_errors=True)

    def positions(self) -> Mapping[Partition, int]:
        query = self.query
        if query is None:
            return {}
        last = query.lastProgress
        if last is None:
            return {}
        event = _as_dict(last)
        batch = int(event.get("batchId", -1))
        with self._lock:
            known = max(self._events, default=-1)
        if batch > known + 1:  # batches ended between two polls: take them from the recent ones
            self._collect(query.recentProgress)
        self._collect([event])
        return _end_offsets(event, self.topic)

    def read(self) -> int:
        with self._lock:
            return sum(int(e.get("numInputRows") or 0) for e in self._events.values())

    def duplicates(self) -> int:
        """Spark's rows are counted, not identified: re-read records would show as read > sent."""
        return 0

    def missing_batches(self) -> int:
        """Batch ids between the first and the last kept whose progress was not seen."""
        with self._lock:
            if not self._events:
                return 0
            return max(self._events) - min(self._events) + 1 - len(self._events)

    def failure(self) -> BaseException | None:
        query = self.query
        return query.exception() if query is not None else None

    def batches(self, wall_origin: float) -> pd.DataFrame:
        """One row per micro-batch: `t` (its start on the run's clock), `t_end`, `rows`,
        `duration_ms` (triggerExecution), `input_msg_s`, `processed_msg_s`."""
        from workbench.streaming.progress import progress_frame

        with self._lock:
            events = [self._events[k] for k in sorted(self._events)]
        frame = progress_frame(events)
        if frame.empty:
            return pd.DataFrame(columns=["t", "t_end", "rows", "duration_ms", "input_msg_s", "processed_msg_s"])
        stamps = pd.to_datetime(frame["timestamp"], utc=True)
        t = (stamps - pd.Timestamp(wall_origin, unit="s", tz="UTC")).dt.total_seconds()
        return pd.DataFrame(
            {
                "batch_id": frame["batch_id"],
                "t": t,
                "t_end": t + frame["trigger_ms"] / 1000,
                "rows": frame["rows"],
                "duration_ms": frame["trigger_ms"],
                "input_msg_s": frame["input_msg_s"],
                "processed_msg_s": frame["processed_msg_s"],
            }
        )

    def _collect(self, events: Iterable[Any]) -> None:
        with self._lock:
            for item in events:
                event = _as_dict(item)
                batch = event.get("batchId")
                if batch is not None and len(self._events) < MAX_BATCHES:
                    self._events[int(batch)] = event


def _as_dict(event: Any) -> dict[str, Any]:
    """A progress event as a dict (PySpark's progress object carries its JSON)."""
    if hasattr(event, "json"):
        text = event.json
        return dict(json.loads(text() if callable(text) else text))
    return dict(event)


def _end_offsets(event: Mapping[str, Any], topic: str) -> dict[Partition, int]:
    """The end offsets of `topic` a progress event's sources report (JSON text or a mapping)."""
    found: dict[Partition, int] = {}
    for source in event.get("sources") or []:
        end = source.get("endOffset")
        data = json.loads(end) if isinstance(end, str) else end
        if isinstance(data, Mapping) and isinstance(data.get(topic), Mapping):
            found.update({(topic, int(p)): int(o) for p, o in data[topic].items()})
    return found
