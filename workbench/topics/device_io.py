"""Writing every device's records through a topic strategy and reading them back, exactly.

The building blocks of the topic experiments (`read_cost`, `count_cost`), notebook 07 and
the tests that check every record of a device is where its strategy says:
`write_devices` produces a fleet's records routed by a strategy and checks each
acknowledgement against the route's predicted partition; `read_device` reads one
device's history the way its strategy says (or by scanning everything); `read_group`
reads through a consumer group and times its join.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import Message, TopicPartition

from workbench import kafka
from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.kafka import Record
from workbench.kafka.producing import ANY_PARTITION, Outgoing, send
from workbench.topics.strategies import Subscription, TopicStrategy

__all__ = [
    "DeviceRead",
    "DeviceWrite",
    "GroupRead",
    "device_value",
    "read_device",
    "read_group",
    "read_partitions",
    "write_devices",
]


@dataclass(frozen=True)
class DeviceWrite:
    """The outcome of writing every device's records through a strategy."""

    records: int
    acknowledged: int
    seconds: float
    #: Records whose acknowledged partition differs from the route's prediction.
    misplaced: int
    #: (topic, partition) -> records acknowledged there.
    landed: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass(frozen=True)
class DeviceRead:
    """One device's records as read back, and how many records had to be read for them."""

    device: str
    records: list[Record]
    scanned: int
    seconds: float


@dataclass(frozen=True)
class GroupRead:
    """What a group consumer read through a subscription, and how long its join took."""

    records: list[Record]
    join_seconds: float
    seconds: float
    assigned_partitions: int


def device_value(device: str, sequence: int, value_bytes: int) -> bytes:
    """A record value that names its device and sequence number, padded to `value_bytes`."""
    head = f"{device}:{sequence:09d}:".encode()
    return head + b"x" * max(0, value_bytes - len(head))


def write_devices(
    conf: KafkaConf,
    strategy: TopicStrategy,
    devices: Sequence[str],
    records_per_device: int,
    *,
    value_bytes: int = 100,
    settings: KafkaConf | None = None,
    flush_timeout: float = 120.0,
) -> DeviceWrite:
    """Produce `records_per_device` records for each device, routed by `strategy`.

    Records are interleaved across devices (sequence 0 of every device, then 1...), as
    a fleet sends them. The producer uses the strategy's partitioner, and every
    acknowledgement's partition is compared with the route's prediction. It is idempotent:
    a device's history must read back in the order it was sent, and without it a request
    retried (a partition's leader still settling after the topic's creation, a timeout on
    a busy machine) lands after the ones sent behind it (seen once in the suite: a device's
    record 24 before its 0-23).

    Raises:
        KafkaError: records were not acknowledged within `flush_timeout`, or failed.

    Usage: `write_devices(stack.kafka_config("producer"), KeyedTopic("t", 4), ["d1", "d2"], 100)`.
    """
    routes = {device: strategy.route(device) for device in devices}
    ordered = {"linger.ms": 5, "enable.idempotence": True}
    client = kafka.producer(conf, {**ordered, **(settings or {}), **strategy.producer_settings()})
    landed: Counter[tuple[str, int]] = Counter()
    expected: dict[tuple[str, bytes], int] = {(r.topic, r.key): r.expected_partition for r in routes.values()}
    outcome = {"misplaced": 0, "failed": 0}
    first_error: list[str] = []

    def delivered(error: RdKafkaError | None, message: Message) -> None:
        if error is not None:
            outcome["failed"] += 1
            first_error[:1] = first_error[:1] or [error.str()]
            return
        topic, partition = str(message.topic()), int(message.partition() or 0)
        landed[(topic, partition)] += 1
        if expected[(topic, bytes(message.key() or b""))] != partition:
            outcome["misplaced"] += 1

    records = (
        Outgoing(route.topic, device_value(device, sequence, value_bytes), route.key, _partition(route.partition))
        for sequence in range(records_per_device)
        for device, route in routes.items()
    )
    sent = send(client, records, on_delivery=delivered, flush_timeout_s=flush_timeout)
    total = records_per_device * len(routes)
    if sent.unsent or outcome["failed"]:
        raise KafkaError(
            f"{sent.unsent} records unsent and {outcome['failed']} failed of {total} written through {strategy!r}"
            f" (first error: {first_error[0] if first_error else 'none'}); are the topics created?"
        )
    return DeviceWrite(total, sum(landed.values()), sent.seconds, outcome["misplaced"], dict(landed))


def read_partitions(
    conf: KafkaConf,
    partitions: Iterable[tuple[str, int]],
    *,
    key: bytes | None = None,
    timeout: float = 60.0,
    ranges: Mapping[tuple[str, int], tuple[int, int]] | None = None,
) -> tuple[list[Record], int]:
    """Every record of the partitions, from their start to their true end, without a group
    (`ranges`: those offsets, resolved beforehand with `kafka.record_ranges`).

    Returns:
        (records with `key`, or all when `key` is None; number of records read).

    Raises:
        KafkaError: the end was not reached within `timeout` seconds.
    """
    kept: list[Record] = []
    scanned = 0
    for record in kafka.read_records(conf, sorted(set(partitions)), timeout=timeout, ranges=ranges):
        scanned += 1
        if key is None or record.key == key:
            kept.append(record)
    return kept, scanned


def read_device(
    conf: KafkaConf, strategy: TopicStrategy, device: str, *, full_scan: bool = False, timeout: float = 60.0
) -> DeviceRead:
    """One device's whole history, read the way its strategy says (no consumer group).

    Args:
        full_scan: read every topic and partition of the strategy and filter by key,
            instead of only what `subscription(device)` names: the naive way to find a
            device in a keyed topic.

    Usage: `read_device(conf, KeyedTopic("t", 4), "d1").scanned`.
    """
    one = strategy.subscription(device)
    key = strategy.route(device).key
    if full_scan:
        wanted = _partitions_of(conf, strategy.subscription(), [strategy.route(device).topic])
        filter_key: bytes | None = key
    elif one.assignment:
        wanted, filter_key = list(one.assignment), one.key
    else:
        wanted, filter_key = _partitions_of(conf, one, []), None
    # The offsets are resolved before the clock: the true end's probe (30-80 ms for four
    # partitions here) would weigh on the layouts that read more partitions.
    ranges = kafka.record_ranges(conf, sorted(set(wanted)), timeout=timeout)
    started = time.perf_counter()
    records, scanned = read_partitions(conf, wanted, key=filter_key, timeout=timeout, ranges=ranges)
    return DeviceRead(device, records, scanned, time.perf_counter() - started)


def read_group(
    conf: KafkaConf,
    subscription: Subscription,
    expected: int,
    *,
    timeout: float = 60.0,
    settings: KafkaConf | None = None,
) -> GroupRead:
    """Join a fresh consumer group on `subscription` and read until `expected` records came.

    `join_seconds` runs from `subscribe` to the first non-empty assignment: for a regex
    it includes resolving the pattern against the cluster's metadata.

    Raises:
        KafkaError: fewer than `expected` records within `timeout` seconds.
    """
    topics = subscription.for_subscribe()
    client = kafka.consumer(conf, settings={"auto.offset.reset": "earliest", **(settings or {})})
    joined: list[float] = []
    assigned: list[int] = []

    def on_assign(_consumer: Any, partitions: list[TopicPartition]) -> None:
        if partitions and not joined:
            joined.append(time.perf_counter())
            assigned.append(len(partitions))

    records: list[Record] = []
    try:
        started = time.perf_counter()
        client.subscribe(topics, on_assign=on_assign)
        deadline = time.monotonic() + timeout
        while len(records) < expected:
            if time.monotonic() > deadline:
                raise KafkaError(
                    f"group read of {topics} got {len(records)} of {expected} records in {timeout:.0f} s "
                    f"({'joined' if joined else 'never joined'}); raise the timeout or check the subscription"
                )
            # Never more than are missing: consume waits until it has all it asks for.
            for message in client.consume(num_messages=max(1, min(10_000, expected - len(records))), timeout=0.2):
                error = message.error()
                if error is None:
                    records.append(Record.from_message(message))
                elif error.code() != RdKafkaError._PARTITION_EOF:
                    raise KafkaError(f"group read failed: {error.str()}", error.name())
        seconds = time.perf_counter() - started
    finally:
        client.close()
    return GroupRead(records, joined[0] - started if joined else float("nan"), seconds, assigned[0] if assigned else 0)


def _partition(partition: int | None) -> int:
    return ANY_PARTITION if partition is None else partition


def _partitions_of(conf: KafkaConf, subscription: Subscription, fallback: list[str]) -> list[tuple[str, int]]:
    """Every (topic, partition) a topics-or-pattern subscription covers, from the cluster's metadata."""
    if subscription.assignment:
        return list(subscription.assignment)
    if subscription.pattern:
        regex = re.compile(subscription.pattern)
        topics = [t for t in kafka.list_topics(conf) if regex.match(t)] or fallback
    else:
        topics = list(subscription.topics)
    return [(t, p.id) for t in topics for p in kafka.describe_topic(conf, t).partitions]
