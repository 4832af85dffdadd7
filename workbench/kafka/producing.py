"""Producing many records through one librdkafka producer: the loop every producer needs, once.

confluent-kafka's `Producer.produce` only queues a record. It raises `BufferError` when
librdkafka's local queue is full (`queue.buffering.max.messages` / `.kbytes`), and
delivery reports reach their callbacks only from `poll` or `flush`. So any loop that
produces more than a queue's worth must catch `BufferError` and poll until there is room,
poll as it goes so callbacks run and the queue drains, and end with a flush that has a
bound. A loop that forgets the first dies mid-run with `BufferError` at high rates; one
that forgets the last can wait forever on a broker that went away. Every producing loop
of the workbench (benchmarks, topic experiments, telemetry) goes through `enqueue` or
`send` here; records come from an iterable, so a caller's own pacing or timing lives in
the generator that yields them.

    tally = DeliveryTally()
    outcome = send(producer, (Outgoing("t", v) for v in values), on_delivery=tally)
    outcome.unsent, tally.acknowledged, tally.failed, tally.errors
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import Message, Producer

__all__ = [
    "ANY_PARTITION",
    "DeliveryCallback",
    "DeliveryTally",
    "KEPT_ERRORS",
    "Outgoing",
    "SendOutcome",
    "enqueue",
    "send",
]

#: What librdkafka calls with each delivery report: (error or None, the message).
DeliveryCallback = Callable[[RdKafkaError | None, Message], None]
#: librdkafka's "unassigned" partition: its partitioner places the record.
ANY_PARTITION = -1
#: How many delivery errors a `DeliveryTally` keeps verbatim (it counts them all).
KEPT_ERRORS = 20


class Outgoing(NamedTuple):
    """One record to produce (a named tuple: a run makes millions of them)."""

    topic: str
    value: bytes | str | None
    key: bytes | str | None = None
    #: -1 leaves the choice to the producer's partitioner.
    partition: int = ANY_PARTITION


@dataclass
class DeliveryTally:
    """A delivery callback that counts: acknowledged (also per topic), failed, and the first errors.

    Pass it as `on_delivery`; read it after the flush, when every report has arrived.
    """

    acknowledged: int = 0
    failed: int = 0
    #: The first `KEPT_ERRORS` errors, as "topic: reason".
    errors: list[str] = field(default_factory=list)
    by_topic: Counter[str] = field(default_factory=Counter)

    def __call__(self, error: RdKafkaError | None, message: Message) -> None:
        if error is None:
            self.acknowledged += 1
            self.by_topic[str(message.topic())] += 1
        else:
            self.failed += 1
            if len(self.errors) < KEPT_ERRORS:
                self.errors.append(f"{message.topic()}: {error.str()}")

    @property
    def first_error(self) -> str | None:
        """The first error reported, or None when none failed."""
        return self.errors[0] if self.errors else None


@dataclass(frozen=True)
class SendOutcome:
    """How a `send` ended: records handed to librdkafka, those still unacknowledged after the flush, seconds."""

    sent: int
    unsent: int
    seconds: float


def enqueue(
    client: Producer,
    records: Iterable[Outgoing],
    *,
    on_delivery: DeliveryCallback | None = None,
    queue_full_wait_s: float = 0.05,
    poll_every: int = 1,
) -> int:
    """Hand every record to librdkafka, waiting for room when its queue is full; no flush.

    Args:
        on_delivery: called with each delivery report (from a later `poll` or `flush`).
        queue_full_wait_s: how long each `poll` waits for deliveries when the queue is
            full; a latency measurement wants it short, a bulk load does not care.
        poll_every: serve delivery reports after this many records (1: after each).

    Returns:
        How many records were queued.
    """
    produce, poll = client.produce, client.poll
    every = max(1, poll_every)
    queued = 0
    for topic, value, key, partition in records:
        while True:
            try:
                produce(topic, value=value, key=key, partition=partition, on_delivery=on_delivery)
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                poll(queue_full_wait_s)
        queued += 1
        if queued % every == 0:
            poll(0)
    return queued


def send(
    client: Producer,
    records: Iterable[Outgoing],
    *,
    on_delivery: DeliveryCallback | None = None,
    flush_timeout_s: float = 60.0,
    queue_full_wait_s: float = 0.05,
    poll_every: int = 1,
) -> SendOutcome:
    """`enqueue` the records, then flush for at most `flush_timeout_s` seconds.

    The caller decides what unsent or failed records mean (most raise `KafkaError`);
    `seconds` runs from the first record to the end of the flush.
    """
    started = time.perf_counter()
    queued = enqueue(
        client, records, on_delivery=on_delivery, queue_full_wait_s=queue_full_wait_s, poll_every=poll_every
    )
    unsent = client.flush(flush_timeout_s)
    return SendOutcome(queued, unsent, time.perf_counter() - started)
