"""The proxy's one shared producer, awaited from the event loop without blocking it.

librdkafka's `produce` only enqueues (microseconds), so it is called on the event loop.
Delivery reports are served by `poll(0)`, which never blocks, from a task on the same
event loop: every millisecond while deliveries are outstanding, every 100 ms when
idle. Each request's records share one `Delivery` whose last report resolves the
request's future.

Why not the usual poll thread: confluent-kafka takes the GIL back for every delivery
callback, and while the loop thread holds it (parsing the next request) the poll
thread waits up to the interpreter's 5 ms switch interval, per callback. Measured
here with 4 clients x 500-record arrays, that convoy left the proxy at 0.6 of a core
and 40 % of the native producer's MB/s; one thread, no hand-over, removes it.

Shutdown (`close`) flushes: every record a client was told is written has been
acknowledged by the broker, and requests still waiting get their answers first.

A traced request (`workbench.restproxy.tracing`) goes through `enqueue_traced`, one
`produce()` per record with two trace headers, and a `TracedDelivery` that stamps each
report's wall-clock time first thing in librdkafka's callback. librdkafka's batch call
takes no headers, so tracing costs the batch call's saving; an untraced request takes
no timestamp at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import KafkaException, Producer

from workbench.errors import ConfigError
from workbench.restproxy.delivery import (
    BatchDelivery,
    Delivery,
    Outcome,
    TracedBatchDelivery,
    TracedDelivery,
    by_partition,
)
from workbench.restproxy.tracing import HANDED_HEADER, RECEIVED_HEADER

__all__ = ["AsyncProducer"]

log = logging.getLogger("workbench.restproxy")

#: Record headers as confluent-kafka takes them.
_Headers = list[tuple[str, bytes | None]]
#: Records to produce one call each: (key, value, partition), partition -1 for the partitioner.
_Triples = list[tuple[bytes | None, bytes | None, int]]
#: One record to librdkafka, `(index, key, value, partition)`: True taken, False refused,
#: None the queue is full (see `AsyncProducer._enqueue_each`).
_ProduceOne = Callable[[int, bytes | None, bytes | None, int], bool | None]
_D = TypeVar("_D", bound=Delivery)


#: Records handed to librdkafka between two yields to the event loop.
_YIELD_EVERY = 5000
#: Marks a record that found the queue full (produce_batch raised rather than marking).
_QUEUE_FULL_MARK = object()


def _is_queue_full(error: Any) -> bool:
    return bool(getattr(error, "code", lambda: None)() == RdKafkaError._QUEUE_FULL)


def _queue_full(waited_s: float) -> RdKafkaError:
    """The error of a record that found no room within `producer.max.block.ms` (50003)."""
    return RdKafkaError(
        RdKafkaError._QUEUE_FULL,
        f"Local: Queue full: the producer's buffer stayed full for "
        f"producer.max.block.ms ({waited_s * 1000:.0f} ms); retry later",
        retriable=True,
    )


class AsyncProducer:
    """A confluent-kafka Producer with a poll thread and awaitable deliveries."""

    def __init__(self, conf: Mapping[str, Any], max_block_ms: int = 60000) -> None:
        self._max_block_s = max_block_ms / 1000
        self._queue_max = int(conf.get("queue.buffering.max.messages", 100000))
        try:
            self._producer = Producer({**conf, "logger": log})
        except KafkaException as exc:
            raise ConfigError(
                None, "producer.*", f"librdkafka refused the producer settings: {exc.args[0].str()}"
            ) from None
        self._outstanding = 0
        self._sticky: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def kick(self) -> None:
        """Send what is queued now, without waiting out `linger.ms` (and serve reports).

        For requests that bring a full batch (`batch.size`) by themselves: spread over
        partitions, their records would otherwise wait the whole linger. Only those:
        a kick sends each request's records as batches of their own, and the broker
        spends its CPU per batch (see `RestProxySettings.full_batch_bytes`). `flush(0)`
        wakes the broker threads and returns at once.
        """
        self._producer.flush(0)

    def sticky_partition(self, topic: str, count: int) -> int:
        """The partition for one request's keyless records: the next one, round-robin.

        Keyless records may go anywhere; keeping a request's records together makes
        one batch of them (Kafka's sticky partitioner, at request granularity).
        """
        turn = self._sticky.get(topic, -1) + 1
        self._sticky[topic] = turn
        return turn % count

    def start(self) -> None:
        """Start serving delivery reports (on the running event loop)."""
        self._task = asyncio.get_running_loop().create_task(self._serve_reports())

    async def _serve_reports(self) -> None:
        poll = self._producer.poll
        wake = self._wake
        while True:
            poll(0)
            if self._outstanding:
                await asyncio.sleep(0.001)
            else:
                wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), 0.1)

    def __len__(self) -> int:
        """Records waiting in librdkafka's queue (not yet acknowledged)."""
        return len(self._producer)

    @property
    def client(self) -> Producer:
        return self._producer

    async def send(self, topic: str, records: _Triples) -> list[Outcome | None]:
        """Produce (key, value, partition) triples (partition -1: the partitioner picks).

        Returns:
            One outcome per record, in order: (partition, offset) or a librdkafka error.
        """
        delivery = await self.enqueue(topic, records)
        await delivery.future
        return delivery.outcomes

    async def _room(self, deadline: float) -> bool:
        """Wait, without blocking the event loop, for librdkafka's queue to take more.

        Room comes back as delivery reports are served, so serve them (`poll(0)` never
        blocks) and yield to other requests between tries. False once `deadline` (the
        loop's clock, from `producer.max.block.ms`) has passed: the caller fails what is
        left with a retriable "queue full" (50003), as upstream does after max.block.ms.
        """
        loop = asyncio.get_running_loop()
        while loop.time() < deadline:
            if self._producer.poll(0) == 0:
                await asyncio.sleep(0.002)
            else:
                await asyncio.sleep(0)
            if len(self._producer) < self._queue_max:
                return True
        return False

    def _deadline(self) -> float:
        return asyncio.get_running_loop().time() + self._max_block_s

    async def enqueue(self, topic: str, records: _Triples) -> Delivery:
        """Hand records to librdkafka (in order); await `.future` for their reports.

        A full queue makes this request wait for room (`_room`), and only this one: the
        event loop goes on serving everything else meanwhile.
        """
        delivery = Delivery(asyncio.get_running_loop(), len(records))
        return await self._enqueue_each(delivery, records, partial(self._produce, delivery, topic))

    async def _enqueue_each(self, delivery: _D, records: _Triples, produce: _ProduceOne) -> _D:
        """Hand records to librdkafka one `produce` call each, in order, then seal `delivery`.

        `produce(index, key, value, partition)` says True taken, False refused, None the
        queue is full: then this request waits for room (`_room`) and tries again, until
        `producer.max.block.ms` has passed since its first wait (then the record fails with
        a retriable "queue full"). Yields to the loop every `_YIELD_EVERY` records.
        """
        enqueued = 0
        deadline: float | None = None
        for index, (key, value, partition) in enumerate(records):
            while (taken := produce(index, key, value, partition)) is None:
                deadline = deadline or self._deadline()
                if not await self._room(deadline):
                    delivery.fail(index, _queue_full(self._max_block_s))
                    break
            enqueued += bool(taken)
            if index % _YIELD_EVERY == _YIELD_EVERY - 1:
                await asyncio.sleep(0)
        delivery.seal(enqueued)
        self._track(delivery)
        return delivery

    def _produce(
        self,
        delivery: Delivery,
        topic: str,
        index: int,
        key: bytes | None,
        value: bytes | None,
        partition: int,
        timestamp_ms: int = 0,
        headers: _Headers | None = None,
    ) -> bool | None:
        """One record to librdkafka: True taken, False refused (failed on the delivery),
        None the queue is full (nothing taken)."""
        try:
            self._producer.produce(
                topic,
                value,
                key,
                partition,
                partial(delivery.report, index),
                timestamp=timestamp_ms,
                headers=headers,  # type: ignore[arg-type]
            )
            return True
        except BufferError:
            return None
        except KafkaException as exc:
            delivery.fail(index, exc.args[0])
            return False

    async def enqueue_batch(
        self, topic: str, messages: list[dict[str, Any]], received_ns: int | None = None
    ) -> BatchDelivery:
        """Hand records with explicit partitions to librdkafka, `produce_batch` per partition.

        `messages` are dicts with `value`, `partition` and optionally `key`. About three
        times cheaper per record than `produce` with a callback each (measured: 0.7 vs
        1.8 ms per 500 records), which is most of the proxy's CPU per request.
        (confluent-kafka's produce_batch ignores a per-message partition, hence the
        grouping: each call names its partition.) Calls take at most `_YIELD_EVERY`
        records, and a large request yields between them, so it cannot hold the loop.
        `received_ns` traces the request in its answer only (`TracedBatchDelivery`).
        """
        groups = by_partition(messages)
        loop = asyncio.get_running_loop()
        delivery = (
            BatchDelivery(loop, messages, groups)
            if received_ns is None
            else TracedBatchDelivery(loop, messages, groups, received_ns)
        )
        traced = delivery if isinstance(delivery, TracedBatchDelivery) else None
        whole = len(groups) == 1 and len(messages) <= _YIELD_EVERY  # one call takes the list as it is
        enqueued = 0
        deadline: float | None = None
        for partition, indexes in groups.items():
            for start in range(0, len(indexes), _YIELD_EVERY):
                if start:
                    await asyncio.sleep(0)
                pending = indexes[start : start + _YIELD_EVERY]
                while pending:
                    chunk = messages if whole and len(pending) == len(messages) else [messages[i] for i in pending]
                    if traced is not None:
                        traced.handed(pending)
                    try:
                        done = self._producer.produce_batch(
                            topic, chunk, partition=partition, on_delivery=delivery.report_any
                        )
                    except BufferError:
                        done = 0
                        for message in chunk:
                            message["_error"] = _QUEUE_FULL_MARK
                    enqueued += done
                    if done == len(chunk):  # all taken: no message carries an `_error` to look at
                        break
                    retry = []
                    for index, message in zip(pending, chunk, strict=True):
                        error = message.pop("_error", None)
                        if error is None:
                            continue
                        if error is _QUEUE_FULL_MARK or _is_queue_full(error):
                            retry.append(index)
                        else:
                            delivery.forget(index, partition)
                            delivery.fail(index, error)
                    if retry:
                        deadline = deadline or self._deadline()
                        if not await self._room(deadline):
                            delivery.forget_many(retry, partition)
                            error = _queue_full(self._max_block_s)
                            for index in retry:
                                delivery.fail(index, error)
                            retry = []
                    pending = retry
        delivery.seal(enqueued)
        self._track(delivery)
        return delivery

    async def enqueue_traced(
        self,
        topic: str,
        records: _Triples,
        received_ns: int,
        *,
        timestamp_ms: int = 0,
        headers: _Headers | None = None,
        stamp_records: bool = True,
    ) -> TracedDelivery:
        """`enqueue` for a traced request: each record with its trace headers, after `headers`.

        One `produce()` per record, as confluent-kafka's `produce_batch` takes no headers;
        the handed time is taken just before each call (again after a wait for room).
        `timestamp_ms` 0 lets librdkafka stamp the record (v2); v3 gives its own.
        `stamp_records=False` (`Workbench-Trace: answer`) adds no header to the records.
        """
        delivery = TracedDelivery(asyncio.get_running_loop(), len(records), received_ns)
        own: _Headers | None = [*(headers or ()), (RECEIVED_HEADER, delivery.received)] if stamp_records else headers
        produce = partial(
            self._produce_traced, delivery, topic, timestamp_ms=timestamp_ms, headers=own, stamp=stamp_records
        )
        return await self._enqueue_each(delivery, records, produce)

    def _produce_traced(
        self,
        delivery: TracedDelivery,
        topic: str,
        index: int,
        key: bytes | None,
        value: bytes | None,
        partition: int,
        timestamp_ms: int,
        headers: _Headers | None,
        stamp: bool,
    ) -> bool | None:
        """One traced record to librdkafka, `_produce` with its handed time taken first (and
        unset again when the queue was full and nothing was taken).
        `stamp` False: a record traced in the answer only, handed over with `headers` as they came."""
        handed = time.time_ns()
        delivery.handed_ns[index] = handed  # before the call: a report may come from a flush thread
        stamped = [*(headers or ()), (HANDED_HEADER, b"%d" % handed)] if stamp else headers
        taken = self._produce(delivery, topic, index, key, value, partition, timestamp_ms, stamped)
        if taken is None:
            delivery.handed_ns[index] = None
        return taken

    def _track(self, delivery: Delivery) -> None:
        if delivery.future.done():
            return
        self._outstanding += 1
        self._wake.set()
        delivery.future.add_done_callback(self._untrack)

    def _untrack(self, _future: asyncio.Future[None]) -> None:
        self._outstanding -= 1

    async def enqueue_one(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int,
        timestamp_ms: int,
        headers: _Headers | None,
        received_ns: int | None = None,
        stamp_records: bool = True,
    ) -> Delivery:
        """One record with a timestamp and headers (API v3); await `.future`.

        `received_ns` traces it (`enqueue_traced`, `stamp_records` as there): a
        `TracedDelivery` comes back.
        """
        if received_ns is not None:
            return await self.enqueue_traced(
                topic,
                [(key, value, partition)],
                received_ns,
                timestamp_ms=timestamp_ms,
                headers=headers,
                stamp_records=stamp_records,
            )
        delivery = Delivery(asyncio.get_running_loop(), 1)
        produce = partial(self._produce, delivery, topic, timestamp_ms=timestamp_ms, headers=headers)
        return await self._enqueue_each(delivery, [(key, value, partition)], produce)

    async def close(self, timeout: float = 30.0) -> int:
        """Flush every queued record (in a thread), then stop; returns records left unflushed."""
        left = int(await asyncio.to_thread(self._producer.flush, timeout))
        if self._task is not None:
            self._task.cancel()
        if left:
            log.error("producer closed with %d records not acknowledged within %.0f s", left, timeout)
        return left
