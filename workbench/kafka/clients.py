"""Native producers and consumers built from a stack's settings, and exact read-back.

`read_records` reads a topic from its start to its true end by assignment, with no
consumer group: no join wait, no committed offsets, and the same records on every call,
which is what a test or a notebook checking "every acknowledged record is there" wants.
"""

from __future__ import annotations

import gc
import logging
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, cast

from confluent_kafka import Consumer, Message, Producer, TopicPartition
from confluent_kafka import KafkaError as RdKafkaError

from workbench.errors import KafkaError
from workbench.kafka.offsets import Partition, position, record_ranges
from workbench.kafka.producing import ANY_PARTITION, DeliveryTally, Outgoing, send

if TYPE_CHECKING:
    from workbench.config import KafkaConf

__all__ = [
    "ProduceResult",
    "READER_SETTINGS",
    "Record",
    "TIMESTAMP_TYPES",
    "TimedRead",
    "consumer",
    "gc_paused",
    "produce",
    "producer",
    "read_records",
    "timed_read",
]

log = logging.getLogger("workbench.kafka")

#: librdkafka settings for a reader that keeps up with the log: its defaults wait up to
#: 500 ms for a fetch at the tail and pause 1 s whenever the prefetch queue is full
#: (measured: `read_records` 140 k -> 450 k records/s; a Spark reader 230 k -> 840 k).
READER_SETTINGS = {"fetch.wait.max.ms": 10, "fetch.queue.backoff.ms": 10}

#: librdkafka's timestamp types, in the numbering Kafka's Java client (and Spark) uses.
TIMESTAMP_TYPES = {0: -1, 1: 0, 2: 1}


class Record(NamedTuple):
    """One record as read from the log (a named tuple: read-backs make millions of them)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_ms: int
    timestamp_type: int

    @classmethod
    def from_message(cls, message: Message) -> Record:
        kind, timestamp = message.timestamp()
        return cls(
            cast(str, message.topic()),
            cast(int, message.partition()),
            cast(int, message.offset()),
            message.key(),
            message.value(),
            timestamp,
            TIMESTAMP_TYPES.get(kind, -1),
        )


@dataclass(frozen=True)
class ProduceResult:
    """How a produce run ended: every record is either acknowledged or failed.

    `failed` counts the records librdkafka reported as failed; `errors` holds the first
    of their reasons (as "topic: reason"), for a message a user can act on.
    """

    acknowledged: int
    failed: int
    seconds: float
    errors: tuple[str, ...] = ()

    @property
    def first_error(self) -> str | None:
        """The first failure's reason, or None when nothing failed."""
        return self.errors[0] if self.errors else None


def producer(conf: KafkaConf, settings: KafkaConf | None = None) -> Producer:
    """A Producer with the stack's settings, `settings` (librdkafka names) on top."""
    return Producer({**conf, **(settings or {}), "logger": log})


def consumer(conf: KafkaConf, group_id: str | None = None, settings: KafkaConf | None = None) -> Consumer:
    """A Consumer with the stack's settings (the profile's group-join timings included)."""
    defaults = {"group.id": group_id or f"workbench-{uuid.uuid4().hex[:12]}", "enable.auto.commit": False}
    return Consumer({**conf, **defaults, **(settings or {}), "logger": log})


@contextmanager
def gc_paused(pause: bool = True) -> Iterator[None]:
    """Hold Python's cyclic garbage collector while a consumed batch is turned into data.

    Every confluent-kafka `Message` is a GC-tracked object, so `consume(50_000)` sets off
    collection after collection, each traversing all the Messages still alive: measured,
    58 % of a Spark reader's time went to the collector (300 k rows/s with it, 930 k
    without). Messages hold no reference cycles and are freed by reference counting, so
    pausing leaks nothing; drop the batch before leaving the block. The collector's state
    is restored on exit (a process-wide switch: threads pausing at once only overlap).
    `pause=False` leaves the collector alone, for measuring the difference.
    """
    enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def produce(
    conf: KafkaConf,
    topic: str,
    records: Iterable[tuple[bytes | str | None, bytes | str | None]],
    *,
    partition: int | None = None,
    flush_timeout: float = 60.0,
    settings: KafkaConf | None = None,
) -> ProduceResult:
    """Produce (key, value) pairs and wait for every acknowledgement.

    Raises:
        KafkaError: some records were not acknowledged within `flush_timeout`.
    """
    client = producer(conf, settings)
    tally = DeliveryTally()
    target = ANY_PARTITION if partition is None else partition
    sent = send(
        client,
        (Outgoing(topic, value, key, target) for key, value in records),
        on_delivery=tally,
        flush_timeout_s=flush_timeout,
    )
    if sent.unsent:
        raise KafkaError(f"{sent.unsent} records to {topic!r} not acknowledged within {flush_timeout:.0f} s")
    return ProduceResult(tally.acknowledged, tally.failed, sent.seconds, tuple(tally.errors))


def read_records(
    conf: KafkaConf,
    topics: str | Iterable[str] | Iterable[Partition],
    *,
    timeout: float = 30.0,
    ranges: Mapping[Partition, tuple[int, int]] | None = None,
) -> Iterator[Record]:
    """Every record now in the topics (or `(topic, partition)` pairs), from the earliest offset up to the true end.

    Each `consume()` asks for at most the records still missing, so the last one returns
    when the last record arrives instead of waiting out its timeout (a timed read then
    measures the read, not the wait). `ranges` (`record_ranges`) are the offsets to read,
    resolved beforehand; they replace `topics`.

    Raises:
        KafkaError: the end was not reached within `timeout` seconds, or a read failed.
    """
    plan = ranges if ranges is not None else record_ranges(conf, topics, timeout=timeout)
    starts = {p: start for p, (start, _) in plan.items()}
    remaining: dict[Partition, int] = {p: end for p, (start, end) in plan.items() if end > start}
    if not remaining:
        return
    missing = sum(end - starts[p] for p, end in remaining.items())
    client = consumer(conf, settings=READER_SETTINGS)
    try:
        client.assign([TopicPartition(t, p, starts[(t, p)]) for t, p in remaining])
        deadline = time.monotonic() + timeout
        while remaining:
            if time.monotonic() > deadline:
                raise KafkaError(f"read stopped short of the end after {timeout:.0f} s: {remaining}")
            wanted = max(1, min(10_000, missing))
            with gc_paused():  # the batch's Messages are gone before the records are handed out
                batch = _records(client.consume(num_messages=wanted, timeout=0.2), remaining)
            if not batch:
                _past_markers(client, remaining)
            missing -= len(batch)
            yield from batch
    finally:
        client.close()


class TimedRead(NamedTuple):
    """What `timed_read` read: how many records, in how many seconds."""

    records: int
    seconds: float


def timed_read(conf: KafkaConf, topic: str, *, pause_gc: bool = False, timeout: float = 180.0) -> TimedRead:
    """Read every record now in `topic` with one plain consumer, timing the read alone.

    The offsets are resolved before the clock starts (the true end takes a probe consumer
    per partition: 30-80 ms for four here); the clock runs from `assign` to the last record. Each
    `consume()` asks for at most the records still missing, and nothing is decoded or
    kept: a record costs what librdkafka and one count cost. (Keeping each record's
    position in a set, to check a read-back, halved the rate of 100 B records: check with
    `read_records` afterwards.) The topic must not grow meanwhile: the read ends after as
    many records as it held.
    `pause_gc` holds the collector during each batch, as the Spark source's readers do.

    Raises:
        KafkaError: the end was not reached within `timeout` seconds.
    """
    plan = record_ranges(conf, topic, timeout=timeout)
    missing = sum(end - start for start, end in plan.values())
    count = 0
    client = consumer(conf, settings=READER_SETTINGS)
    deadline = time.monotonic() + timeout
    try:
        started = time.perf_counter()
        client.assign([TopicPartition(t, p, start) for (t, p), (start, end) in plan.items() if end > start])
        while count < missing and time.monotonic() < deadline:
            with gc_paused(pause_gc):
                batch = client.consume(num_messages=min(10_000, missing - count), timeout=0.5)
                count += sum(1 for message in batch if message.error() is None)
        seconds = time.perf_counter() - started
    finally:
        client.close()
    if count < missing:
        raise KafkaError(f"a plain consumer read {count} of the {missing} records in {topic!r} in {timeout:.0f} s")
    return TimedRead(count, seconds)


def _past_markers(client: Consumer, remaining: dict[Partition, int]) -> None:
    """Drop the partitions whose consumer has passed their end: a transactional topic's last
    offsets can be commit or abort markers, which a consumer skips and never delivers (a
    replica written by MirrorMaker with exactly-once on ends in one after every copy)."""
    for tp in client.position([TopicPartition(t, p) for t, p in remaining]):
        end = remaining.get((tp.topic, tp.partition))
        if end is not None and tp.offset >= end:
            del remaining[(tp.topic, tp.partition)]


def _records(messages: list[Message], remaining: dict[Partition, int]) -> list[Record]:
    """The messages still wanted as Records; a partition leaves `remaining` at its end."""
    records = []
    for message in messages:
        error = message.error()
        if error is not None:
            if error.code() == RdKafkaError._PARTITION_EOF:
                continue
            raise KafkaError(f"read failed: {error.str()}", error.name())
        key, offset = position(message)
        end = remaining.get(key)
        if end is None or offset >= end:
            continue
        records.append(Record.from_message(message))
        if offset + 1 >= end:
            del remaining[key]
    return records
