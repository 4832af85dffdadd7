"""True log-end offsets, on real Kafka and on the embedded broker alike.

Tansu answers `ListOffsets(latest)` with the base offset of the last record batch + 1,
not the offset after the last record: after 5,000 records in 1,000-record batches it
says 4,001. Every lag, throughput figure and Spark offset range must use the real end,
so this module reads it from the log itself: it fetches from (reported end - 1), which
on Tansu is the start of the last batch and on Kafka the last record, and takes the
offset after the last record it sees. On Kafka this agrees with the reported value;
on Tansu it corrects it.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Mapping

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition
from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka.admin import OffsetSpec

from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.kafka.admin import admin_client, describe_topic

__all__ = ["Partition", "end_offsets", "position", "reported_offsets", "total_records"]

log = logging.getLogger("workbench.kafka")

#: A topic-partition as a plain tuple: easy to sort, hash, print and pickle.
Partition = tuple[str, int]


def position(message: Message) -> tuple[Partition, int]:
    """`((topic, partition), offset)` of a consumed record; librdkafka always sets all three."""
    topic, partition, offset = message.topic(), message.partition(), message.offset()
    if topic is None or partition is None or offset is None:
        raise KafkaError(f"a consumed message lacks its position: {topic}[{partition}]@{offset}")
    return (topic, partition), offset


def end_offsets(
    conf: KafkaConf, topics: str | Iterable[str] | Iterable[Partition], *, timeout: float = 10.0
) -> dict[Partition, int]:
    """The offset after the last record of each partition (the true log-end offset).

    Args:
        conf: librdkafka settings with `bootstrap.servers`.
        topics: a topic, several topics (all their partitions), or (topic, partition) pairs.
        timeout: seconds for the whole call.

    Returns:
        `{(topic, partition): end}`, sorted by topic and partition.

    Raises:
        KafkaError: a topic is unknown, or the broker did not answer in time.

    Usage: `sum(end_offsets(conf, "orders").values())` is the number of records ever written.
    """
    partitions = _partitions(conf, topics, timeout)
    earliest = reported_offsets(conf, partitions, "earliest", timeout=timeout)
    latest = reported_offsets(conf, partitions, "latest", timeout=timeout)
    nonempty = {p: latest[p] for p in partitions if latest[p] > earliest[p]}
    last_read = _read_last_offsets(conf, nonempty, timeout) if nonempty else {}
    return {p: max(latest[p], last_read.get(p, -1) + 1) for p in partitions}


def total_records(conf: KafkaConf, topics: str | Iterable[str], *, timeout: float = 10.0) -> int:
    """Records in the topics' logs now (end - earliest, summed over partitions)."""
    ends = end_offsets(conf, topics, timeout=timeout)
    starts = reported_offsets(conf, list(ends), "earliest", timeout=timeout)
    return sum(ends[p] - starts[p] for p in ends)


def reported_offsets(
    conf: KafkaConf, partitions: Iterable[Partition], which: str, *, timeout: float = 10.0
) -> dict[Partition, int]:
    """What the broker answers to ListOffsets `earliest` or `latest` (on Tansu, not the end)."""
    spec = {"earliest": OffsetSpec.earliest(), "latest": OffsetSpec.latest()}[which]
    request = {TopicPartition(t, p): spec for t, p in partitions}
    if not request:
        return {}
    result = {}
    with admin_client(conf) as client:  # it must outlive the futures
        futures = client.list_offsets(request, request_timeout=timeout)
        for tp, future in futures.items():
            try:
                result[(tp.topic, tp.partition)] = future.result().offset
            except KafkaException as exc:
                error = exc.args[0]
                raise KafkaError(
                    f"cannot list offsets of {tp.topic}[{tp.partition}]: {error.str()}", error.name()
                ) from None
    return result


def _partitions(conf: KafkaConf, topics: str | Iterable[str] | Iterable[Partition], timeout: float) -> list[Partition]:
    if isinstance(topics, str):
        topics = [topics]
    result: list[Partition] = []
    for item in topics:
        if isinstance(item, tuple):
            result.append((item[0], int(item[1])))
        else:
            result.extend((item, p.id) for p in describe_topic(conf, item, timeout=timeout).partitions)
    return sorted(set(result))


def _read_last_offsets(conf: KafkaConf, reported: Mapping[Partition, int], timeout: float) -> dict[Partition, int]:
    """Read from (reported end - 1) to the end of each log; returns the last offset seen."""
    consumer = Consumer(
        {
            **conf,
            "group.id": f"workbench-end-offsets-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            # The end is reached when a fetch comes back empty; do not let it wait for data.
            "fetch.wait.max.ms": 10,
            "logger": log,
        }
    )
    last: dict[Partition, int] = {}
    try:
        consumer.assign([TopicPartition(t, p, end - 1) for (t, p), end in reported.items()])
        pending = set(reported)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=10_000, timeout=0.02):
                error = message.error()
                if error is None:
                    key, offset = position(message)
                    last[key] = max(last.get(key, -1), offset)
                    continue
                key = (message.topic() or "?", message.partition() or 0)
                if error.code() == RdKafkaError._PARTITION_EOF:
                    pending.discard(key)
                else:
                    raise KafkaError(f"cannot read the end of {key[0]}[{key[1]}]: {error.str()}", error.name())
        if pending:
            raise KafkaError(f"end offsets not found within {timeout:.0f} s for {sorted(pending)}")
    finally:
        consumer.close()
    return last
