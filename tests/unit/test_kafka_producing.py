"""The produce loop's own logic: waiting for room when the queue is full, polling, counting reports.

A stand-in producer plays librdkafka's queue here (a bounded list that `poll` drains);
the loop against the real broker is covered by the integration tests of every caller.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import Message

from workbench.kafka.producing import KEPT_ERRORS, DeliveryTally, Outgoing, enqueue, send


class BoundedQueue:
    """Refuses a record with BufferError when `room` records wait; `poll` delivers them all."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.waiting: list[tuple[str, dict[str, Any]]] = []
        self.delivered: list[tuple[str, dict[str, Any]]] = []
        self.refusals = 0
        self.polls: list[float] = []

    def produce(self, topic: str, **fields: Any) -> None:
        if len(self.waiting) >= self.room:
            self.refusals += 1
            raise BufferError("Local: Queue full")
        self.waiting.append((topic, fields))

    def poll(self, timeout: float = -1) -> int:
        self.polls.append(timeout)
        served = len(self.waiting)
        self.delivered.extend(self.waiting)
        self.waiting.clear()
        return served

    def flush(self, timeout: float = -1) -> int:
        self.poll(timeout)
        return 0


def test_a_full_queue_is_drained_by_polling_and_no_record_is_lost_or_sent_twice() -> None:
    queue = BoundedQueue(room=3)
    records = [Outgoing("t", b"%d" % i) for i in range(10)]
    assert enqueue(queue, records, queue_full_wait_s=0.01, poll_every=1_000) == 10  # type: ignore[arg-type]
    queue.flush()
    assert [fields["value"] for _, fields in queue.delivered] == [b"%d" % i for i in range(10)]
    assert queue.refusals == 3 and queue.polls.count(0.01) == 3


def test_records_keep_their_key_and_partition_and_unset_partitions_go_to_the_partitioner() -> None:
    queue = BoundedQueue(room=100)
    outcome = send(queue, [Outgoing("a", b"v", b"k", 2), Outgoing("b", None)])  # type: ignore[arg-type]
    assert (outcome.sent, outcome.unsent) == (2, 0)
    assert [(topic, fields["key"], fields["partition"]) for topic, fields in queue.delivered] == [
        ("a", b"k", 2),
        ("b", None, -1),
    ]


def test_poll_every_serves_reports_after_that_many_records() -> None:
    queue = BoundedQueue(room=100)
    enqueue(queue, [Outgoing("t", b"v")] * 10, poll_every=4)  # type: ignore[arg-type]
    assert queue.polls == [0, 0]


def test_a_tally_counts_acknowledgements_per_topic_and_keeps_the_first_errors() -> None:
    tally = DeliveryTally()
    for topic in ("a", "a", "b"):
        tally(None, Message(topic=topic, value=b"v"))
    error = RdKafkaError(RdKafkaError._MSG_TIMED_OUT)
    for _ in range(KEPT_ERRORS + 5):
        tally(error, Message(topic="c", value=b"v"))
    assert (tally.acknowledged, tally.failed) == (3, KEPT_ERRORS + 5)
    assert dict(tally.by_topic) == {"a": 2, "b": 1}
    assert len(tally.errors) == KEPT_ERRORS and tally.first_error is not None
    assert tally.first_error.startswith("c: ")
