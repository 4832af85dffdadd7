"""An assigned consumer instance whose committed-offset lookup failed is assigned again.

librdkafka 2.16 never repeats an OffsetFetch that failed as a whole (NOT_COORDINATOR, as a fresh
broker answers for a moment after FindCoordinator named it): the partition is never fetched and
every records request answers empty (confluentinc/librdkafka#5586). These tests hold the proxy's
way round it with a stand-in for librdkafka's consumer that behaves so: only a new assign()
starts the partition.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import orjson
from confluent_kafka import OFFSET_STORED, KafkaError, TopicPartition

from workbench.restproxy.consumer_instances import ConsumerInstance, lookup_failed, reassign_due
from workbench.restproxy.consumer_records import RecordsAnswer

TOPIC = "lb-topic"
#: What librdkafka's consumer queue carries when the lookup failed as a whole.
LOOKUP_FAILED = KafkaError(
    KafkaError.NOT_COORDINATOR,
    'Failed to fetch committed offsets for 0 partition(s) in group "g": Broker: Not coordinator',
)


class Message:
    """The parts of a confluent-kafka `Message` the records answer reads."""

    def __init__(self, offset: int | None = None, error: KafkaError | None = None) -> None:
        self._offset, self._error = offset, error

    def error(self) -> KafkaError | None:
        return self._error

    def topic(self) -> str | None:
        return None if self._error is not None else TOPIC

    def partition(self) -> int:
        return 0

    def offset(self) -> int | None:
        return self._offset

    def key(self) -> bytes | None:
        return None

    def value(self) -> bytes:
        return b"v%d" % (self._offset or 0)

    def timestamp(self) -> tuple[int, int]:
        return (1, 0)


class StuckConsumer:
    """A consumer whose first lookups fail: `failures` error events, each ending the partition's
    chances until the next assign(); after that, the log's records from the assigned offset."""

    def __init__(self, records: int, failures: int = 1) -> None:
        self.records, self.failures = records, failures
        self.assigned: list[list[TopicPartition]] = []
        self.queue: deque[Message] = deque()
        self.assign([TopicPartition(TOPIC, 0)])

    def assign(self, partitions: list[TopicPartition]) -> None:
        self.assigned.append(partitions)
        if self.failures:
            self.failures -= 1
            self.queue = deque([Message(error=LOOKUP_FAILED)])
            return
        offset = partitions[0].offset
        start = 0 if offset in (OFFSET_STORED, TopicPartition(TOPIC, 0).offset) else offset
        self.queue = deque(Message(o) for o in range(start, self.records))

    def consume(self, num_messages: int, timeout: float) -> list[Message]:
        if not self.queue:
            time.sleep(min(timeout, 0.01))
            return []
        return [self.queue.popleft() for _ in range(min(num_messages, len(self.queue)))]


def instance(consumer: Any, manual: bool = True) -> ConsumerInstance:
    return ConsumerInstance(
        group="g",
        name="c",
        format="binary",
        consumer=consumer,
        auto_commit=False,
        request_timeout_ms=None,
        fetch_min_bytes=None,
        expires=0.0,
        manual=[(TOPIC, 0)] if manual else None,
        topics=[] if manual else [TOPIC],
    )


def read(found: ConsumerInstance, wait_s: float = 2.0) -> list[int]:
    answer = RecordsAnswer(found, wait_s, 1 << 20, -1, 0.05, 500)
    return [row["offset"] for row in orjson.loads(b"[" + answer.next_piece() + b"]")]


def test_a_failed_lookup_is_made_again_and_the_same_answer_brings_the_records() -> None:
    consumer = StuckConsumer(records=3, failures=3)
    found = instance(consumer)
    started = time.monotonic()
    assert read(found) == [0, 1, 2]
    assert time.monotonic() - started < 1.5, "0.1 + 0.2 s of waits, not the whole request"
    assert len(consumer.assigned) == 4, "the first assignment and three more"
    assert all(tp.offset == OFFSET_STORED for tp in consumer.assigned[-1]), "nothing delivered: the group's offset"
    assert found.reassign_at is None and found.lookup_failures == 0


def test_the_waits_between_assignments_double_up_to_a_second() -> None:
    found = instance(StuckConsumer(records=0, failures=0))
    waits = []
    for _ in range(6):
        now = time.monotonic()
        assert lookup_failed(found, LOOKUP_FAILED)
        assert found.reassign_at is not None
        waits.append(round(found.reassign_at - now, 1))
        found.reassign_at = None
    assert waits == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]


def test_an_assignment_made_again_starts_where_the_client_is() -> None:
    consumer = StuckConsumer(records=10, failures=0)
    found = instance(consumer)
    found.delivered[(TOPIC, 0)] = 4
    found.reassign_at = time.monotonic()
    assert reassign_due(found) is None
    assert [tp.offset for tp in consumer.assigned[-1]] == [4], "after the last record it returned"

    found.delivered.clear()
    buffered: list[Any] = [Message(6), Message(7)]  # fetched, not yet returned
    found.pending.extend(buffered)
    found.reassign_at = time.monotonic()
    assert reassign_due(found) is None
    assert [tp.offset for tp in consumer.assigned[-1]] == [6], "at the first record still buffered"
    assert not found.pending, "those come again from the new assignment"
    assert read(found) == [6, 7, 8, 9]


def test_a_subscribed_instance_is_left_to_its_group() -> None:
    consumer = StuckConsumer(records=0, failures=0)
    found = instance(consumer, manual=False)
    assert not lookup_failed(found, LOOKUP_FAILED)
    assert found.reassign_at is None


def test_other_consumer_errors_assign_nothing_again() -> None:
    found = instance(StuckConsumer(records=0, failures=0))
    down = KafkaError(KafkaError._TRANSPORT, "GroupCoordinator: Disconnected")
    assert not lookup_failed(found, down)
    assert found.reassign_at is None
