"""API v2 consumer instances: their state, and the blocking Kafka work done for them.

Each instance wraps a confluent-kafka Consumer. Every Kafka call blocks (poll, commit,
seek, close), so it runs on a worker pool of `consumer.threads` threads, never on the
event loop, and each instance's calls are serialised by its own lock (a Consumer is
not meant to be used by two threads at once): `ConsumerManager.run` takes one of the
blocking functions here (`subscribe`, `seek`, `commit`, ...) and the instance.

An instance not used for `consumer.instance.timeout.ms` is closed by a background
task; later calls to it get 404 / 40403, as upstream.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from confluent_kafka import OFFSET_STORED, Consumer, KafkaError, KafkaException, Message, TopicPartition

from workbench._types import Partition
from workbench.backoff import Backoff
from workbench.httpserver.errors import RestError
from workbench.restproxy.errors import ILLEGAL_STATE
from workbench.restproxy.instances import Instance, InstanceManager, close_within
from workbench.restproxy.metadata import kafka_error
from workbench.restproxy.settings import RestProxySettings
from workbench.restproxy.validation import INT32_MAX

__all__ = [
    "ConsumerInstance",
    "ConsumerManager",
    "assign",
    "assignment",
    "commit",
    "committed",
    "lookup_failed",
    "out_of_range",
    "out_of_range_error",
    "reassign_due",
    "resumed",
    "seek",
    "seek_to_beginning",
    "seek_to_end",
    "seek_to_times",
    "subscribe",
    "subscription",
    "unsubscribe",
]

log = logging.getLogger("workbench.restproxy")

_T = TypeVar("_T")

#: librdkafka settings of every instance's consumer that the properties may override
#: (`consumer.<name>`). librdkafka pauses a partition's fetches for `fetch.queue.backoff.ms`
#: (1 s by default) whenever its prefetch queue is full, which a records answer of up to
#: 64 MiB fills and drains within that second. Measured (400,000 x 1 KB records, wrk, 3
#: runs each): 113-132 MB/s with the default, 164-204 MB/s with 10 ms, the value the
#: native consumer it is compared with uses. It only acts when the queue is full, so an
#: idle instance fetches no more often.
_CONSUMER_DEFAULTS = {"fetch.queue.backoff.ms": 10}
_RESETS = {"earliest": "earliest", "smallest": "earliest", "latest": "latest", "largest": "latest", "none": "error"}

#: How librdkafka's consumer error event begins when the committed-offset lookup (OffsetFetch)
#: of its assignment failed, for the whole request ("...offsets for 0 partition(s) in group")
#: or for one partition ("...offset for group"): rd_kafka_assignment_handle_OffsetFetch and
#: rd_kafka_assignment_apply_offsets in librdkafka's src/rdkafka_assignment.c.
_LOOKUP_FAILED = "Failed to fetch committed offset"
#: The first wait before an assignment whose lookup failed is made again, and the longest
#: (doubling in between; librdkafka's own retry.backoff.ms and retry.backoff.max.ms).
_REASSIGN = Backoff(0.1, 1.0)


@dataclass(kw_only=True)
class ConsumerInstance(Instance):
    """One consumer instance: the Kafka consumer and what the REST layer tracks for it."""

    consumer: Consumer
    auto_commit: bool
    request_timeout_ms: int | None
    fetch_min_bytes: int | None
    pattern: str | None = None
    manual: list[Partition] | None = None
    pending: deque[Message] = field(default_factory=deque)
    delivered: dict[Partition, int] = field(default_factory=dict)
    #: Every topic its librdkafka consumer has known (librdkafka never forgets one).
    known_topics: set[str] = field(default_factory=set)
    #: When its assignment is to be made again, after a failed committed-offset lookup
    #: (`lookup_failed`); None when it is not.
    reassign_at: float | None = None
    #: Lookups failed in a row since records last came (the wait before the next grows).
    lookup_failures: int = 0
    #: Partitions whose position fell outside the log with `auto.offset.reset=none`, and
    #: what the client is told: librdkafka says it once and stops fetching them, so every
    #: records request that has nothing else answers 409 until the client seeks.
    out_of_range: dict[Partition, str] = field(default_factory=dict)
    #: Where the client last sought each partition, until a record of it comes. librdkafka
    #: queues its out-of-range errors with no seek barrier, so one about the position
    #: before a seek (or the "no committed offset" of the assignment a seek replaced) can
    #: come after it: only an error at the sought offset is about where the client is.
    sought: dict[Partition, int] = field(default_factory=dict)


class ConsumerManager(InstanceManager[ConsumerInstance]):
    """All consumer instances of this process, their worker pool and their expiry."""

    kind = "Consumer"
    limit_property = "consumer.instances.max"
    name_prefix = "rest-consumer"
    thread_prefix = "consumer"

    def close_client(self, instance: ConsumerInstance) -> None:
        _close(instance)

    async def stream(
        self, instance: ConsumerInstance, piece: Callable[[], _T], more: Callable[[], bool]
    ) -> AsyncGenerator[_T, None]:
        """Run `piece` on the pool while `more()`, yielding each result, holding the
        instance's lock throughout (a streamed records answer). A piece still running
        when the stream is closed (a client gone) keeps the lock until it ends."""
        await instance.lock.acquire()
        running: asyncio.Future[_T] | None = None
        try:
            if instance.closed:
                raise self.not_found(instance.group, instance.name)
            loop = asyncio.get_running_loop()
            while True:
                self.touch(instance)
                running = loop.run_in_executor(self.pool, piece)
                result = await running
                running = None
                yield result
                if not more():
                    return
        finally:
            self.touch(instance)
            if running is not None and not running.done():
                running.add_done_callback(lambda _: instance.lock.release())
            else:
                instance.lock.release()

    def create(self, group: str, body: dict[str, Any]) -> ConsumerInstance:
        """Validate the create body and build the instance (the Kafka consumer too)."""
        name = self.checked_name(group, body)
        fmt = self.checked_format(body)
        conf: dict[str, Any] = {
            "bootstrap.servers": self.settings.bootstrap_servers,
            "auto.offset.reset": "latest",
            **_CONSUMER_DEFAULTS,
            **self.settings.consumer,
            "group.id": group,
            "enable.auto.offset.store": False,
            "logger": log,
        }
        if self.settings.id:
            conf.setdefault("client.id", f"{self.settings.id}-{name}")
        reset = body.get("auto.offset.reset")
        if reset is not None:
            if str(reset).lower() not in _RESETS:
                raise RestError(
                    422,
                    42204,
                    f"Invalid value {reset!r} for auto.offset.reset: earliest, latest (or smallest, largest) or none",
                )
            conf["auto.offset.reset"] = _RESETS[str(reset).lower()]
        auto_commit = _boolean(body.get("auto.commit.enable"), conf.get("enable.auto.commit", True))
        conf["enable.auto.commit"] = auto_commit
        fetch_min = _optional_int(body, ("fetch.min.bytes", "responseMinBytes"), 40001)
        if fetch_min is not None and not -1 <= fetch_min <= 10_000_000:
            raise RestError(422, 40001, f"fetch.min.bytes must be between -1 and 10000000, got {fetch_min}")
        request_timeout = _optional_int(body, ("consumer.request.timeout.ms", "requestWaitMs"), 42204)
        ceiling = self.settings.consumer_request_timeout_max_ms
        if request_timeout is not None and not 0 <= request_timeout <= ceiling:
            raise RestError(
                422,
                42204,
                f"consumer.request.timeout.ms must be from 0 to {ceiling} "
                f"(consumer.request.timeout.max.ms), got {request_timeout}",
            )
        consumer = self.client(Consumer, conf)
        instance = ConsumerInstance(
            group=group,
            name=name,
            format=fmt,
            consumer=consumer,
            auto_commit=auto_commit,
            request_timeout_ms=request_timeout,
            fetch_min_bytes=fetch_min,
            expires=time.monotonic() + self.timeout_s,
            conf=conf,
            schemas=self.schemas_for(fmt),
        )
        return self.add(instance)

    @asynccontextmanager
    async def releasing(self, topic: str) -> AsyncIterator[None]:
        """Hold the instances whose consumers know `topic` closed while it is deleted.

        librdkafka (2.16) crashes the whole process (SIGSEGV in its metadata cache) when
        a topic its consumer has ever known is deleted on Tansu, even after
        an unassign. So a delete through this proxy first closes those consumers, then
        builds each again with its settings, its other partitions or topics and its
        positions (what was delivered; the group's commits for the rest): the instance
        lives on, minus the topic. Deletes by other clients are not seen here; a proxy
        that dies of one is restarted by the stack's supervisor.
        """
        affected = [i for i in self.instances.values() if topic in i.known_topics or i.pattern is not None]
        loop = asyncio.get_running_loop()
        async with AsyncExitStack() as held:
            for instance in affected:
                await held.enter_async_context(instance.lock)
            for instance in affected:
                if not instance.closed:
                    await loop.run_in_executor(self.pool, _close, instance)
            try:
                yield
            finally:
                for instance in affected:
                    if not instance.closed:
                        await loop.run_in_executor(self.pool, _rebuild, instance, topic)


def _close(instance: ConsumerInstance) -> None:
    close_within(f"consumer {instance.group}/{instance.name}", instance.consumer.close)


def _rebuild(instance: ConsumerInstance, gone: str) -> None:
    """A new librdkafka consumer for `instance`, without topic `gone` (see `releasing`)."""
    instance.consumer = Consumer(instance.conf)
    instance.reassign_at, instance.lookup_failures = None, 0
    instance.known_topics.discard(gone)
    instance.pending.clear()
    instance.delivered = {tp: o for tp, o in instance.delivered.items() if tp[0] != gone}
    try:
        if instance.manual is not None:
            instance.manual = [(t, p) for t, p in instance.manual if t != gone]
            positions = [
                TopicPartition(t, p, instance.delivered.get((t, p), OFFSET_STORED)) for t, p in instance.manual
            ]
            instance.consumer.assign(positions)
        elif instance.topics:
            instance.topics = [t for t in instance.topics if t != gone]
            if instance.topics:
                instance.consumer.subscribe(instance.topics)
        elif instance.pattern is not None:
            instance.consumer.subscribe([f"^{instance.pattern}"])
    except KafkaException as exc:
        log.warning("consumer %s/%s rebuilt without its assignment: %s", instance.group, instance.name, exc)


def _boolean(value: Any, default: Any) -> bool:
    if value is None:
        return str(default).lower() == "true" if not isinstance(default, bool) else default
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise RestError(422, 42204, f"auto.commit.enable must be true or false, got {value!r}")


def _optional_int(body: dict[str, Any], names: tuple[str, ...], code: int) -> int | None:
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        try:
            if isinstance(value, bool | float) or (isinstance(value, str) and not value.strip().lstrip("-").isdigit()):
                raise ValueError
            number = int(value)
        except (TypeError, ValueError):
            raise RestError(422, code, f"{name} must be an integer, got {value!r}") from None
        if not -(2**31) <= number <= INT32_MAX:
            raise RestError(422, code, f"{name} must be a 32-bit integer, got {number}")
        return number
    return None


def subscribe(instance: ConsumerInstance, topics: list[str], pattern: str | None) -> None:
    if instance.manual is not None:
        raise RestError(409, ILLEGAL_STATE, "Subscription to topics, partitions and pattern are mutually exclusive.")
    instance.consumer.subscribe([f"^{pattern}"] if pattern else topics)
    instance.topics, instance.pattern = list(topics), pattern
    instance.known_topics.update(topics)
    instance.pending.clear()


def unsubscribe(instance: ConsumerInstance) -> None:
    instance.consumer.unsubscribe()
    instance.topics, instance.pattern = [], None
    instance.pending.clear()


def subscription(instance: ConsumerInstance) -> list[str]:
    if instance.pattern is None:
        return list(instance.topics)
    return sorted({tp.topic for tp in instance.consumer.assignment()})


def assign(instance: ConsumerInstance, partitions: list[Partition]) -> None:
    if instance.topics or instance.pattern:
        raise RestError(409, ILLEGAL_STATE, "Subscription to topics, partitions and pattern are mutually exclusive.")
    instance.consumer.assign([TopicPartition(t, p) for t, p in partitions])
    instance.manual = list(partitions)
    instance.known_topics.update(t for t, _ in partitions)
    instance.pending.clear()
    instance.out_of_range.clear()
    instance.sought.clear()
    instance.reassign_at, instance.lookup_failures = None, 0


def lookup_failed(instance: ConsumerInstance, error: KafkaError) -> bool:
    """True when consumer error `error` says the committed-offset lookup of
    the instance's assignment failed; then its assignment is made again soon (`reassign_due`).

    An assigned partition without a position starts fetching only once OffsetFetch has told
    librdkafka the group's committed offset (or that there is none). When that request fails
    as a whole (NOT_COORDINATOR: on a fresh broker the group's coordinator answers so for a
    moment after FindCoordinator already named it; or a coordinator that moved), librdkafka
    2.16 asks again for the coordinator but never for the offsets: the partition stays "being
    queried" and is never fetched, and every records request answers empty, for as long as
    the instance lives (confluentinc/librdkafka#5586; a failed lookup of one partition is left
    the same way). Only a new assign() starts the lookup again. A subscribed instance's
    assignment belongs to its group's rebalances, which an assign() of ours would fight, so
    it is left to librdkafka: it joined through the same coordinator, so only a coordinator
    that moves between its join and its lookup leaves it so.
    """
    if instance.manual is None or not error.str().startswith(_LOOKUP_FAILED):
        return False
    instance.lookup_failures += 1
    now = time.monotonic()
    if instance.reassign_at is None:  # else one is due already
        instance.reassign_at = now + _REASSIGN.delay(instance.lookup_failures)
    log.info(
        "consumer %s/%s: %s; assigning its %d partition(s) again in %.0f ms",
        instance.group,
        instance.name,
        error.str(),
        len(instance.manual),
        (instance.reassign_at - now) * 1000,
    )
    return True


def reassign_due(instance: ConsumerInstance) -> float | None:
    """Make the instance's assignment again if `lookup_failed` asked for it and its time has
    come: None when nothing is (any longer) waiting, else the seconds left until it is due.

    Call it only while no record is taken but not yet delivered (`delivered` is then where
    the client is): each partition starts again where the client is, at its last delivered
    position, else at its first record still buffered, else at the group's committed offset
    (looked up again), so the new assignment neither skips nor repeats a record.
    """
    if instance.reassign_at is None:
        return None
    left = instance.reassign_at - time.monotonic()
    if left > 0:
        return left
    instance.reassign_at = None
    first_buffered: dict[Partition, int] = {}
    for message in instance.pending:
        first_buffered.setdefault((message.topic(), message.partition()), message.offset())  # type: ignore[arg-type]
    positions = [
        TopicPartition(t, p, instance.delivered.get((t, p), first_buffered.get((t, p), OFFSET_STORED)))
        for t, p in instance.manual or []
    ]
    instance.pending.clear()
    try:
        instance.consumer.assign(positions)
    except KafkaException as exc:  # tried again after the next wait
        instance.lookup_failures += 1
        instance.reassign_at = time.monotonic() + _REASSIGN.ceiling
        log.warning("consumer %s/%s: assigning again failed: %s", instance.group, instance.name, exc)
        return _REASSIGN.ceiling
    return None


def assignment(instance: ConsumerInstance) -> list[Partition]:
    return [(tp.topic, tp.partition) for tp in instance.consumer.assignment()]


def _require_assigned(instance: ConsumerInstance, partitions: list[Partition], action: str) -> None:
    assigned = set(assignment(instance))
    missing = [p for p in partitions if p not in assigned]
    if missing:
        shown = ", ".join(f"{t}-{p}" for t, p in missing)
        raise RestError(
            409,
            ILLEGAL_STATE,
            f"No current assignment for partition {shown}: cannot {action} a "
            "partition this consumer instance does not own",
        )


def seek(instance: ConsumerInstance, targets: list[tuple[str, int, int]]) -> None:
    _require_assigned(instance, [(t, p) for t, p, _ in targets], "seek")
    seeking = {(t, p) for t, p, _ in targets}
    instance.pending = deque(m for m in instance.pending if (m.topic(), m.partition()) not in seeking)
    for topic, partition, offset in targets:
        try:
            instance.consumer.seek(TopicPartition(topic, partition, offset))
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError._STATE or instance.manual is None:
                raise RestError(409, ILLEGAL_STATE, f"cannot seek {topic}-{partition}: {exc.args[0].str()}") from None
            _assign_at(instance, TopicPartition(topic, partition, offset))
        instance.out_of_range.pop((topic, partition), None)
        instance.sought[(topic, partition)] = offset
        instance.delivered[(topic, partition)] = offset


def resumed(instance: ConsumerInstance, messages: list[Message]) -> None:
    """Forget the seeks of the partitions `messages` came from: records after a seek mean
    every error queued before it was taken already (see `ConsumerInstance.sought`)."""
    for message in messages:
        if message.error() is None:
            instance.sought.pop((message.topic(), message.partition()), None)  # type: ignore[arg-type]


def _assign_at(instance: ConsumerInstance, target: TopicPartition) -> None:
    """Start an assigned partition at `target.offset` by assigning it again there.

    librdkafka refuses to seek a partition it has not started fetching (`_STATE`, "Erroneous
    state"): one assigned by the client and sought before its first records request, the
    usual order of a REST client. Java's consumer takes that seek; a new assignment of the
    partition at the offset does the same here, the instance's other partitions untouched.
    """
    try:
        instance.consumer.incremental_unassign([TopicPartition(target.topic, target.partition)])
        instance.consumer.incremental_assign([target])
    except KafkaException as exc:
        raise RestError(
            409, ILLEGAL_STATE, f"cannot seek {target.topic}-{target.partition}: {exc.args[0].str()}"
        ) from None


def out_of_range(instance: ConsumerInstance, message: Message) -> None:
    """Remember that a partition's position left the log (`auto.offset.reset=none`), with
    the log's bounds where the broker tells them, for the 409 every records request then
    answers until the client seeks (see `out_of_range_error`)."""
    topic, partition = message.topic(), message.partition()
    if topic is None or partition is None:
        return
    sought = instance.sought.get((topic, partition))
    if sought is not None and message.offset() != sought:
        log.debug("consumer %s/%s: %s, queued before the last seek", instance.group, instance.name, message.error())
        return
    position = instance.delivered.get((topic, partition))
    at = f"position {position}" if position is not None else "its committed offset"
    try:
        low, high = instance.consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=5)
        bounds = f" (the log holds offsets {low} to {high - 1})" if high > low else f" (the log is empty from {low})"
    except KafkaException:
        bounds = ""
    instance.out_of_range[(topic, partition)] = f"partition {topic}-{partition}: {at} is outside the log{bounds}"


def out_of_range_error(instance: ConsumerInstance) -> RestError:
    """409 / 40903 naming the partitions whose position left the log, and the ways on.

    Confluent's proxy lets Kafka's OffsetOutOfRangeException end as 500 / 50002, which REST
    clients retry as a transient failure, for ever; a 409 tells them the instance's state
    needs their action, as the error of Java's consumer does.
    """
    shown = "; ".join(instance.out_of_range[key] for key in sorted(instance.out_of_range))
    return RestError(
        409,
        ILLEGAL_STATE,
        f"Offset out of range and auto.offset.reset is none: {shown}. Records before the log start "
        "were deleted (retention or a delete-records call) or the position was never written. "
        "Seek to go on: POST .../positions/beginning, .../positions/end or .../positions.",
    )


def seek_to_beginning(instance: ConsumerInstance, settings: RestProxySettings, partitions: list[Partition]) -> None:
    """Seek each partition to its log start, found by ListOffsets: an offset, so an error
    about the position before the seek is told from one about the new (`sought`)."""
    _seek_to_listed(instance, settings, partitions, "earliest")


def seek_to_end(instance: ConsumerInstance, settings: RestProxySettings, partitions: list[Partition]) -> None:
    """Seek each partition to its log end (the true end on Tansu too: `end_offsets`)."""
    _seek_to_listed(instance, settings, partitions, "end")


def _seek_to_listed(
    instance: ConsumerInstance, settings: RestProxySettings, partitions: list[Partition], which: str
) -> None:
    from workbench.errors import KafkaError
    from workbench.kafka.offsets import OffsetReader

    _require_assigned(instance, partitions, "seek")
    try:
        with OffsetReader({"bootstrap.servers": settings.bootstrap_servers, **settings.admin}) as offsets:
            found = offsets.ends(partitions) if which == "end" else offsets.reported(partitions, which)
    except KafkaError as exc:
        raise RestError(500, 50002, f"cannot find the {which} offsets: {exc}") from None
    seek(instance, [(t, p, found[(t, p)]) for t, p in partitions])


def seek_to_times(instance: ConsumerInstance, settings: RestProxySettings, targets: list[tuple[str, int, int]]) -> None:
    """Seek each partition to its first record stamped at or after the target (the end where
    none is that late), found by ListOffsets on an admin connection of its own.

    The instance's consumer could ask (`offsets_for_times`), but its request waits on the
    broker connection behind the consumer's own fetch, which the broker holds up to
    `fetch.wait.max.ms` when there is nothing new: measured, 375-504 ms per seek through the
    consumer against a few ms this way.
    """
    from workbench.errors import KafkaError
    from workbench.kafka.offsets import OffsetReader

    if not targets:
        return  # nothing to seek is no error
    partitions = [(t, p) for t, p, _ in targets]
    _require_assigned(instance, partitions, "seek")
    try:
        with OffsetReader({"bootstrap.servers": settings.bootstrap_servers, **settings.admin}) as offsets:
            found = offsets.by_timestamp({(t, p): ms for t, p, ms in targets})
            late = [key for key, offset in found.items() if offset is None]
            ends = offsets.ends(late) if late else {}
    except KafkaError as exc:
        raise RestError(500, 50002, f"cannot find the offsets for the timestamps: {exc}") from None
    seek(instance, [(t, p, _found_or_end(found[(t, p)], ends, (t, p))) for t, p in partitions])


def _found_or_end(found: int | None, ends: dict[Partition, int], partition: Partition) -> int:
    return found if found is not None else ends[partition]


def commit(instance: ConsumerInstance, offsets: list[tuple[str, int, int, str | None]] | None) -> None:
    if offsets is None:  # everything returned so far
        targets = [TopicPartition(t, p, o) for (t, p), o in instance.delivered.items()]
    else:  # Kafka takes commits for partitions the member does not own (they belong to the group)
        targets = []
        for topic, partition, offset, metadata in offsets:
            if metadata is None:
                targets.append(TopicPartition(topic, partition, offset + 1))
            else:
                targets.append(TopicPartition(topic, partition, offset + 1, metadata=metadata))
    if not targets:
        return
    try:
        instance.consumer.commit(offsets=targets, asynchronous=False)
    except KafkaException as exc:
        raise kafka_error(exc, "commit failed") from None


def committed(instance: ConsumerInstance, partitions: list[Partition] | None) -> list[dict[str, Any]]:
    wanted = [TopicPartition(t, p) for t, p in (partitions if partitions is not None else assignment(instance))]
    if not wanted:
        return []
    try:
        found = instance.consumer.committed(wanted, timeout=10)
    except KafkaException as exc:
        raise kafka_error(exc, "cannot read committed offsets") from None
    return [
        {"topic": tp.topic, "partition": tp.partition, "offset": tp.offset, "metadata": tp.metadata or ""}
        for tp in found
        if tp.offset >= 0
    ]
