"""API v2 consumer instances: stateful Kafka consumers living in this one process.

Each instance wraps a confluent-kafka Consumer. Every Kafka call blocks (poll, commit,
seek, close), so it runs on a worker pool of `consumer.threads` threads, never on the
event loop, and each instance's calls are serialised by its own lock (a Consumer is
not meant to be used by two threads at once).

Records fetch, following the reference's recommendation: wait at most
`min(timeout, consumer.request.timeout.ms)`; return early once records are buffered
and no more arrive within `consumer.iterator.backoff.ms`, or once `fetch.min.bytes`
are gathered; never more than `min(max_bytes, consumer.request.max.bytes)` of key +
value bytes, except that the first record always goes out, so a large record cannot
starve its reader. Records fetched from Kafka but not returned stay buffered here for
the next call, and "commit everything" commits what was *returned*, never what is
only buffered (librdkafka's own position runs ahead of the client). A large answer goes
out in pieces (chunked) as it is gathered, so the client reads while the proxy renders.

An instance not used for `consumer.instance.timeout.ms` is closed by a background
task; later calls to it get 404 / 40403, as upstream.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

import orjson
from confluent_kafka import OFFSET_BEGINNING, OFFSET_STORED, Consumer, KafkaException, Message, TopicPartition
from confluent_kafka import KafkaError as RdKafkaError
from pybase64 import b64encode_as_string
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.restproxy.context import (
    Context,
    empty_response,
    int_param,
    json_response,
    object_body,
    read_json,
)
from workbench.restproxy.errors import CONSUMER_NOT_FOUND
from workbench.restproxy.formats import (
    FORMATS,
    SCHEMA_FORMATS,
    embedded_format,
    media_type,
    no_registry,
    require_json_body_type,
)
from workbench.restproxy.metadata import kafka_error
from workbench.restproxy.schemas import SchemaFormats
from workbench.restproxy.settings import RestProxySettings
from workbench.restproxy.validation import (
    INT32_MAX,
    INT64_MAX,
    check_group,
    check_instance_name,
    check_offset,
    check_topic,
)

__all__ = ["ConsumerInstance", "ConsumerManager", "Partition", "ROUTES"]

log = logging.getLogger("workbench.restproxy")

_T = TypeVar("_T")
Partition = tuple[str, int]

_ILLEGAL_STATE = 40903
#: Key + value bytes per piece of a streamed records answer (see `_Answer`). Measured
#: (1 KB records, wrk, 3 alternating rounds): 1 MiB pieces cost the proxy 3.5-4.0 ms of
#: CPU per MB, 4 MiB 4.0-5.1, 16 MiB 4.6-5.8; 256 KiB was no cheaper than 1 MiB.
_PIECE_BYTES = 1024 * 1024
#: librdkafka settings of every instance's consumer that the properties may override
#: (`consumer.<name>`). librdkafka pauses a partition's fetches for `fetch.queue.backoff.ms`
#: (1 s by default) whenever its prefetch queue is full, which a records answer of up to
#: 64 MiB fills and drains within that second. Measured (400,000 x 1 KB records, wrk, 3
#: runs each): 113-132 MB/s with the default, 164-204 MB/s with 10 ms, the value the
#: native consumer it is compared with uses. It only acts when the queue is full, so an
#: idle instance fetches no more often.
_CONSUMER_DEFAULTS = {"fetch.queue.backoff.ms": 10}
_RESETS = {"earliest": "earliest", "smallest": "earliest", "latest": "latest", "largest": "latest", "none": "error"}


@dataclass
class ConsumerInstance:
    """One consumer instance: the Kafka consumer and what the REST layer tracks for it."""

    group: str
    name: str
    format: str
    consumer: Consumer
    auto_commit: bool
    request_timeout_ms: int | None
    fetch_min_bytes: int | None
    expires: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    topics: list[str] = field(default_factory=list)
    pattern: str | None = None
    manual: list[Partition] | None = None
    pending: deque[Message] = field(default_factory=deque)
    delivered: dict[Partition, int] = field(default_factory=dict)
    closed: bool = False
    #: The librdkafka settings it was built with, to build it again (see `releasing`).
    conf: dict[str, Any] = field(default_factory=dict)
    #: Every topic its librdkafka consumer has known (librdkafka never forgets one).
    known_topics: set[str] = field(default_factory=set)
    #: The registry client of a schema-format instance (None for binary and json).
    schemas: SchemaFormats | None = None


class ConsumerManager:
    """All consumer instances of this process, their worker pool and their expiry."""

    def __init__(self, settings: RestProxySettings, schemas: SchemaFormats | None = None) -> None:
        self.settings = settings
        #: The Schema Registry client the avro/jsonschema/protobuf formats decode with.
        self.schemas = schemas
        threads = settings.consumer_threads if settings.consumer_threads > 0 else 256
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="consumer")
        self.instances: dict[tuple[str, str], ConsumerInstance] = {}
        self.timeout_s = settings.consumer_instance_timeout_ms / 1000

    def __len__(self) -> int:
        return len(self.instances)

    async def run(self, instance: ConsumerInstance, function: Callable[..., _T], *args: Any) -> _T:
        """Run a blocking call for one instance on the pool, one call at a time."""
        async with instance.lock:
            if instance.closed:
                raise _not_found(instance.group, instance.name)
            self.touch(instance)
            result = await asyncio.get_running_loop().run_in_executor(self.pool, function, *args)
            self.touch(instance)
            return result

    async def stream(self, instance: ConsumerInstance, piece: Callable[[], _T],
                     more: Callable[[], bool]) -> AsyncGenerator[_T, None]:  # fmt: skip
        """Run `piece` on the pool while `more()`, yielding each result, holding the
        instance's lock throughout (a streamed records answer). A piece still running
        when the stream is closed (a client gone) keeps the lock until it ends."""
        await instance.lock.acquire()
        running: asyncio.Future[_T] | None = None
        try:
            if instance.closed:
                raise _not_found(instance.group, instance.name)
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

    def touch(self, instance: ConsumerInstance) -> None:
        instance.expires = time.monotonic() + self.timeout_s

    def get(self, group: str, name: str) -> ConsumerInstance:
        instance = self.instances.get((group, name))
        if instance is None:
            raise _not_found(group, name)
        self.touch(instance)
        return instance

    def create(self, group: str, body: dict[str, Any]) -> ConsumerInstance:
        """Validate the create body and build the instance (the Kafka consumer too)."""
        check_group(group)
        name = body.get("id") or body.get("name")
        if name is None:
            prefix = f"rest-consumer-{self.settings.id}-" if self.settings.id else "rest-consumer-"
            name = f"{prefix}{uuid.uuid4()}"
        check_instance_name(name)
        if (group, name) in self.instances:
            raise RestError(409, 40902, f"Consumer with specified consumer ID {name} already exists in group {group}.")
        fmt = str(body.get("format") or "binary").lower()
        if fmt in SCHEMA_FORMATS and self.schemas is None:
            raise no_registry(fmt)
        if fmt not in FORMATS and fmt not in SCHEMA_FORMATS:
            raise RestError(422, 422, f"Invalid format type {body.get('format')!r}: binary, json, avro, jsonschema "
                            "or protobuf")  # fmt: skip
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
                raise RestError(422, 42204, f"Invalid value {reset!r} for auto.offset.reset: earliest, latest "
                                "(or smallest, largest) or none")  # fmt: skip
            conf["auto.offset.reset"] = _RESETS[str(reset).lower()]
        auto_commit = _boolean(body.get("auto.commit.enable"), conf.get("enable.auto.commit", True))
        conf["enable.auto.commit"] = auto_commit
        fetch_min = _optional_int(body, ("fetch.min.bytes", "responseMinBytes"), 40001)
        if fetch_min is not None and not -1 <= fetch_min <= 10_000_000:
            raise RestError(422, 40001, f"fetch.min.bytes must be between -1 and 10000000, got {fetch_min}")
        request_timeout = _optional_int(body, ("consumer.request.timeout.ms", "requestWaitMs"), 42204)
        ceiling = self.settings.consumer_request_timeout_max_ms
        if request_timeout is not None and not 0 <= request_timeout <= ceiling:
            raise RestError(422, 42204, f"consumer.request.timeout.ms must be from 0 to {ceiling} "
                            f"(consumer.request.timeout.max.ms), got {request_timeout}")  # fmt: skip
        if len(self.instances) >= self.settings.consumer_instances_max:
            raise RestError(429, 429, f"Too many consumer instances in this proxy process (consumer.instances.max = "
                            f"{self.settings.consumer_instances_max}); delete instances no longer used",
                            headers={"Retry-After": "5"})  # fmt: skip
        try:
            consumer = Consumer(conf)
        except KafkaException as exc:
            raise RestError(422, 42204, f"Invalid consumer configuration: {exc.args[0].str()}") from None
        instance = ConsumerInstance(group=group, name=name, format=fmt, consumer=consumer, auto_commit=auto_commit,
                                    request_timeout_ms=request_timeout, fetch_min_bytes=fetch_min,
                                    expires=time.monotonic() + self.timeout_s, conf=conf,
                                    schemas=self.schemas if fmt in SCHEMA_FORMATS else None)  # fmt: skip
        self.instances[(group, name)] = instance
        return instance

    async def delete(self, instance: ConsumerInstance) -> None:
        self.instances.pop((instance.group, instance.name), None)
        async with instance.lock:
            if not instance.closed:
                instance.closed = True
                await asyncio.get_running_loop().run_in_executor(self.pool, _close, instance)

    async def expire_forever(self) -> None:
        """Close instances idle for longer than `consumer.instance.timeout.ms`."""
        period = min(1.0, max(0.05, self.timeout_s / 4))
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for instance in [i for i in self.instances.values() if i.expires < now and not i.lock.locked()]:
                log.info("consumer %s/%s expired after %.0f s idle", instance.group, instance.name, self.timeout_s)
                await self.delete(instance)

    @asynccontextmanager
    async def releasing(self, topic: str) -> AsyncIterator[None]:
        """Hold the instances whose consumers know `topic` closed while it is deleted.

        librdkafka (2.16) crashes the whole process (SIGSEGV in its metadata cache) when
        a topic its consumer has ever known is deleted on the embedded broker, even after
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

    async def close_all(self) -> None:
        """Close every instance (they leave their groups), then the pool."""
        await asyncio.gather(*(self.delete(i) for i in list(self.instances.values())), return_exceptions=True)
        await asyncio.to_thread(self.pool.shutdown, wait=True)  # a fetch in flight ends within its timeout


def _close(instance: ConsumerInstance) -> None:
    try:
        instance.consumer.close()
    except (KafkaException, RuntimeError) as exc:
        log.warning("closing consumer %s/%s: %s", instance.group, instance.name, exc)


def _rebuild(instance: ConsumerInstance, gone: str) -> None:
    """A new librdkafka consumer for `instance`, without topic `gone` (see `releasing`)."""
    instance.consumer = Consumer(instance.conf)
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


def _not_found(group: str, name: str) -> RestError:
    return RestError(404, CONSUMER_NOT_FOUND, f"Consumer instance not found: group {group}, instance {name}.")


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


# ---------------------------------------------------------------- blocking operations


def _subscribe(instance: ConsumerInstance, topics: list[str], pattern: str | None) -> None:
    if instance.manual is not None:
        raise RestError(409, _ILLEGAL_STATE, "Subscription to topics, partitions and pattern are mutually exclusive.")
    instance.consumer.subscribe([f"^{pattern}"] if pattern else topics)
    instance.topics, instance.pattern = list(topics), pattern
    instance.known_topics.update(topics)
    instance.pending.clear()


def _unsubscribe(instance: ConsumerInstance) -> None:
    instance.consumer.unsubscribe()
    instance.topics, instance.pattern = [], None
    instance.pending.clear()


def _subscription(instance: ConsumerInstance) -> list[str]:
    if instance.pattern is None:
        return list(instance.topics)
    return sorted({tp.topic for tp in instance.consumer.assignment()})


def _assign(instance: ConsumerInstance, partitions: list[Partition]) -> None:
    if instance.topics or instance.pattern:
        raise RestError(409, _ILLEGAL_STATE, "Subscription to topics, partitions and pattern are mutually exclusive.")
    instance.consumer.assign([TopicPartition(t, p) for t, p in partitions])
    instance.manual = list(partitions)
    instance.known_topics.update(t for t, _ in partitions)
    instance.pending.clear()


def _assignment(instance: ConsumerInstance) -> list[Partition]:
    return [(tp.topic, tp.partition) for tp in instance.consumer.assignment()]


def _require_assigned(instance: ConsumerInstance, partitions: list[Partition], action: str) -> None:
    assigned = set(_assignment(instance))
    missing = [p for p in partitions if p not in assigned]
    if missing:
        shown = ", ".join(f"{t}-{p}" for t, p in missing)
        raise RestError(409, _ILLEGAL_STATE, f"No current assignment for partition {shown}: cannot {action} a "
                        "partition this consumer instance does not own")  # fmt: skip


def _seek(instance: ConsumerInstance, targets: list[tuple[str, int, int]]) -> None:
    _require_assigned(instance, [(t, p) for t, p, _ in targets], "seek")
    seeking = {(t, p) for t, p, _ in targets}
    instance.pending = deque(m for m in instance.pending if (m.topic(), m.partition()) not in seeking)
    for topic, partition, offset in targets:
        try:
            instance.consumer.seek(TopicPartition(topic, partition, offset))
        except KafkaException as exc:
            raise RestError(409, _ILLEGAL_STATE, f"cannot seek {topic}-{partition}: {exc.args[0].str()}") from None
        if offset >= 0:
            instance.delivered[(topic, partition)] = offset
        else:
            instance.delivered.pop((topic, partition), None)


def _seek_to_end(instance: ConsumerInstance, settings: RestProxySettings, partitions: list[Partition]) -> None:
    from workbench.errors import KafkaError
    from workbench.kafka.offsets import end_offsets

    _require_assigned(instance, partitions, "seek")
    try:
        ends = end_offsets({"bootstrap.servers": settings.bootstrap_servers, **settings.admin}, partitions)
    except KafkaError as exc:
        raise RestError(500, 50002, f"cannot find the end offsets: {exc}") from None
    _seek(instance, [(t, p, ends[(t, p)]) for t, p in partitions])


def _seek_to_times(instance: ConsumerInstance, targets: list[tuple[str, int, int]]) -> None:
    if not targets:
        return  # librdkafka refuses an empty list (_INVALID_ARG); nothing to seek is no error
    _require_assigned(instance, [(t, p) for t, p, _ in targets], "seek")
    found = instance.consumer.offsets_for_times([TopicPartition(t, p, ms) for t, p, ms in targets], timeout=10)
    _seek(instance, [(tp.topic, tp.partition, tp.offset) for tp in found])


class _Unrenderable(Exception):
    """A record the instance's format cannot show (a json consumer, bytes that are not JSON)."""


def _render_binary(data: bytes | None) -> str | None:
    return None if data is None else b64encode_as_string(data)


def _render_json(data: bytes | None) -> Any:
    """Stored JSON bytes, spliced into the answer as they are (`orjson.Fragment`) once
    they parse: nothing is re-encoded, so any depth orjson can read goes back out."""
    if data is None:
        return None
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        raise _Unrenderable from None
    return orjson.Fragment(data)


def _renderer(instance: ConsumerInstance) -> Callable[[bytes | None], Any]:
    """How the instance's format shows a key or value; `_Unrenderable` when it cannot."""
    if instance.format == "binary":
        return _render_binary
    schemas = instance.schemas
    if schemas is None:
        return _render_json
    fmt = instance.format

    def render_schema(data: bytes | None) -> Any:
        try:
            return schemas.decode(data, fmt)
        except Exception:  # framing, an unknown id, a payload its schema cannot read
            raise _Unrenderable from None

    return render_schema


class _Gathered:
    """The rows of one records answer, rendered as each record is taken.

    Rendering as records are taken, rather than after, is what keeps a record that
    cannot be shown from costing the ones before it: gathering stops there, the rows
    so far go out, and the record itself (with everything fetched after it) stays at
    the front of the instance's buffer, so the position never passes it.
    """

    def __init__(self, instance: ConsumerInstance, budget: int, min_bytes: int, piece: int | None = None,
                 first: bool = True) -> None:  # fmt: skip
        self.render = _renderer(instance)
        self.budget = budget
        self.min_bytes = min_bytes
        #: Bytes after which this piece of a streamed answer ends (the answer goes on).
        self.piece = budget if piece is None else piece
        #: The answer's first piece: its first record goes out whatever its size.
        self.first = first
        self.rows: list[dict[str, Any]] = []
        self.taken: list[Message] = []
        self.size = 0
        self.full = False
        self.piece_full = False
        self.poison: Message | None = None

    def offer(self, message: Message) -> bool:
        """Take `message` if it fits and renders; False when gathering must stop."""
        if self.done:
            return False
        key, value = message.key(), message.value()
        length = len(key or b"") + len(value or b"")
        if self.size + length > self.budget and (self.rows or not self.first):
            self.full = True
            return False
        if self.rows and self.size + length > self.piece:
            self.piece_full = True
            return False
        try:
            key_out, value_out = self.render(key), self.render(value)
        except _Unrenderable:
            self.poison = message
            return False
        self.rows.append({"topic": message.topic(), "key": key_out, "value": value_out,
                          "partition": message.partition(), "offset": message.offset(),
                          "timestamp": message.timestamp()[1]})  # fmt: skip
        self.taken.append(message)
        self.size += length
        if 0 < self.min_bytes <= self.size:
            self.full = True
        return True

    def offer_all(self, messages: list[Message]) -> int:
        """`offer` over a batch without errors, in one loop: how many were taken (the
        rest are left, in order, for the next call). The per-record loop of a records
        request, so its names are bound once."""
        if self.done:
            return 0
        render, rows, taken, budget, min_bytes = self.render, self.rows, self.taken, self.budget, self.min_bytes
        piece, first = self.piece, self.first
        size = self.size
        count = 0
        for message in messages:
            key, value = message.key(), message.value()
            length = (len(key) if key is not None else 0) + (len(value) if value is not None else 0)
            if size + length > budget and (rows or not first):
                self.full = True
                break
            if rows and size + length > piece:
                self.piece_full = True
                break
            try:
                key_out, value_out = render(key), render(value)
            except _Unrenderable:
                self.poison = message
                break
            rows.append({"topic": message.topic(), "key": key_out, "value": value_out,
                         "partition": message.partition(), "offset": message.offset(),
                         "timestamp": message.timestamp()[1]})  # fmt: skip
            taken.append(message)
            size += length
            count += 1
            if 0 < min_bytes <= size:
                self.full = True
                break
        self.size = size
        return count

    @property
    def done(self) -> bool:
        return self.full or self.piece_full or self.poison is not None


def _fetch_piece(instance: ConsumerInstance, deadline: float, gathered: _Gathered, grace_s: float, max_records: int,
                 started: bool) -> _Gathered:  # fmt: skip
    """Gather and render records into `gathered` until it is done or `deadline` passes;
    `started` when earlier pieces of the same answer already hold records (then a
    pause of `grace_s` ends the answer, and a poison record no longer fails it)."""
    pending = instance.pending
    while pending and gathered.offer(pending[0]):
        pending.popleft()
    consume = instance.consumer.consume
    while not gathered.done:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        holding = started or bool(gathered.rows)
        # librdkafka's consume returns when it has `max_records` or its timeout is up, so
        # the wait for a first record asks for one: it ends when that record comes, not
        # (at a few records a second) a whole request timeout later.
        messages = consume(max_records, min(remaining, grace_s)) if holding else consume(1, remaining)
        if not messages:
            if holding:
                break
            continue
        if not any(message.error() is not None for message in messages):  # the usual batch: records only
            taken = gathered.offer_all(messages)
            pending.extend(messages[taken:])  # kept, in order, for the next call
            continue
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() != RdKafkaError._PARTITION_EOF:
                    if error.fatal():
                        raise RestError(500, 50002, f"consumer failed: {error.str()}")
                    log.debug("consumer %s/%s: %s", instance.group, instance.name, error.str())
                continue
            if not gathered.offer(message):
                pending.append(message)  # kept, in order, for the next call
    _advance(instance, gathered.taken)
    if gathered.poison is not None and not gathered.rows and not started:
        raise _poison_error(instance, gathered.poison)
    return gathered


class _Answer:
    """A records answer gathered and rendered in pieces of about `_PIECE_BYTES`, so
    the first piece goes out while the next is gathered: the client reads while the
    proxy renders, where one whole answer of up to `consumer.request.max.bytes` kept
    the two taking turns (and held the answer twice in memory). The pieces keep every
    rule of a whole answer: one budget, one wait, `fetch.min.bytes` over the answer,
    the first record always out, a poison record ending the answer (a 422 only when
    nothing came before it). Runs in the instance's worker thread, one piece a call."""

    def __init__(self, instance: ConsumerInstance, wait_s: float, budget: int, min_bytes: int, grace_s: float,
                 max_records: int) -> None:  # fmt: skip
        self.instance = instance
        self.deadline = time.monotonic() + wait_s
        self.budget = budget
        self.min_bytes = min_bytes
        self.grace_s = grace_s
        self.max_records = max_records
        self.count = 0
        self.size = 0
        self.more = True

    def next_piece(self) -> bytes:
        """The next piece's rows as JSON array elements (no brackets; b"" for none)."""
        min_bytes = self.min_bytes - self.size if self.min_bytes > 0 else self.min_bytes
        gathered = _Gathered(self.instance, self.budget - self.size, min_bytes, _PIECE_BYTES, first=not self.count)
        _fetch_piece(self.instance, self.deadline, gathered, self.grace_s, self.max_records, started=self.count > 0)
        self.more = gathered.piece_full
        self.count += len(gathered.rows)
        self.size += gathered.size
        return orjson.dumps(gathered.rows)[1:-1]


def _advance(instance: ConsumerInstance, taken: list[Message]) -> None:
    """Move the delivered positions (and auto-commit's stored offsets) past what is
    returned, and no further."""
    if not taken:
        return
    positions: dict[Partition, int] = {}
    for message in taken:
        positions[(message.topic(), message.partition())] = message.offset() + 1  # type: ignore[index,operator]
    instance.delivered.update(positions)
    if instance.auto_commit:
        try:
            instance.consumer.store_offsets(offsets=[TopicPartition(t, p, o) for (t, p), o in positions.items()])
        except KafkaException as exc:  # a partition revoked meanwhile: its offset is not ours to store
            log.debug("store_offsets: %s", exc)


def _poison_error(instance: ConsumerInstance, message: Message) -> RestError:
    """422 naming the record a json or schema-format consumer cannot show, and the ways past it."""
    topic, partition, offset = message.topic(), message.partition(), message.offset() or 0
    which = "key" if _cannot_render(instance, message.key()) else "value"
    seek = f'{{"offsets": [{{"topic": "{topic}", "partition": {partition}, "offset": {offset + 1}}}]}}'
    return RestError(422, 422, f"{which} deserialization error for format {instance.format}: the record at topic "
                     f"{topic} partition {partition} offset {offset} is not {_expected(instance.format)}. The "
                     f"position stays at it; to move on, seek past it (POST .../positions {seek}) or read it with a "
                     "binary consumer.")  # fmt: skip


def _expected(fmt: str) -> str:
    return "JSON" if fmt == "json" else f"{fmt} in the Schema Registry wire format with a schema id it knows"


def _cannot_render(instance: ConsumerInstance, data: bytes | None) -> bool:
    try:
        _renderer(instance)(data)
    except _Unrenderable:
        return True
    return False


def _commit(instance: ConsumerInstance, offsets: list[tuple[str, int, int, str | None]] | None) -> None:
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


def _committed(instance: ConsumerInstance, partitions: list[Partition] | None) -> list[dict[str, Any]]:
    wanted = [TopicPartition(t, p) for t, p in (partitions if partitions is not None else _assignment(instance))]
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


# ---------------------------------------------------------------- body parsing


def _partitions(body: dict[str, Any], key: str = "partitions") -> list[Partition]:
    items = body.get(key)
    if not isinstance(items, list):
        raise RestError(422, 422, f"`{key}` must be a JSON array of {{topic, partition}} objects")
    result = []
    for item in items:
        if (not isinstance(item, dict) or not isinstance(item.get("topic"), str)
                or type(item.get("partition")) is not int):  # fmt: skip
            raise RestError(422, 422, f"each of `{key}` needs a string topic and an integer partition, got "
                            f"{_short(item)}")  # fmt: skip
        result.append((_body_topic(item["topic"]), _body_partition(item["partition"])))
    return result


def _short(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 120 else text[:100] + "..."


def _body_topic(name: str) -> str:
    """A topic named in a body: 422 when Kafka could never have it."""
    return check_topic(name, 422, 422)


def _body_partition(number: int) -> int:
    if not 0 <= number <= INT32_MAX:
        raise RestError(422, 422, f"partition must be from 0 to {INT32_MAX}, got {number}")
    return number


def _offsets(body: dict[str, Any]) -> list[tuple[str, int, int, str | None]]:
    items = body.get("offsets")
    if not isinstance(items, list):
        raise RestError(422, 422, "`offsets` must be a JSON array of {topic, partition, offset} objects")
    result = []
    for item in items:
        if (not isinstance(item, dict) or not isinstance(item.get("topic"), str)
                or type(item.get("partition")) is not int):  # fmt: skip
            raise RestError(422, 422, f"each offset needs a topic, a partition and an offset, got {_short(item)}")
        metadata = item.get("metadata")
        if metadata is not None and (not isinstance(metadata, str) or len(metadata) > 4096):
            raise RestError(422, 422, "metadata must be a string of at most 4096 characters")
        result.append((_body_topic(item["topic"]), _body_partition(item["partition"]), check_offset(item.get("offset")),
                       metadata))  # fmt: skip
    return result


def _timestamp_ms(value: Any) -> int:
    if type(value) is int:
        if not 0 <= value <= INT64_MAX:
            raise RestError(422, 422, f"timestamp must be epoch milliseconds from 0 to {INT64_MAX}, got {value}")
        return value
    try:
        return int(datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, OverflowError):
        raise RestError(422, 422, f"timestamp must be ISO 8601 or epoch milliseconds, got {_short(value)}") from None


async def _body(ctx: Context, request: Request) -> dict[str, Any]:
    require_json_body_type(request.headers.get("content-type"))
    return object_body(await read_json(request, ctx.settings), "consumer request")


# ---------------------------------------------------------------- handlers


async def _handle_create(ctx: Context, request: Request, group: str) -> Response:
    body = await _body(ctx, request)
    instance = ctx.consumers.create(group, body)
    base = ctx.settings.base_url(request.headers.get("host"))
    uri = f"{base}/consumers/{quote(group, safe='')}/instances/{quote(instance.name, safe='')}"
    return json_response({"instance_id": instance.name, "base_uri": uri})


async def _handle_delete(ctx: Context, request: Request, group: str, instance: str) -> Response:
    await ctx.consumers.delete(ctx.consumers.get(group, instance))
    return empty_response()


async def _handle_subscribe(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await _body(ctx, request)
    topics, pattern = body.get("topics"), body.get("topic_pattern")
    if (topics is None) == (pattern is None):
        raise RestError(409, _ILLEGAL_STATE, "Subscribe with either `topics` or `topic_pattern` (exactly one).")
    if topics is not None and (not isinstance(topics, list) or not all(isinstance(t, str) for t in topics)):
        raise RestError(422, 422, "`topics` must be a JSON array of topic names")
    if topics is not None:
        if not topics or len(topics) > 10_000:
            raise RestError(422, 422, f"`topics` must name 1 to 10000 topics, got {len(topics)}")
        topics = [_body_topic(t) for t in topics]
    if pattern is not None:
        _check_pattern(pattern)
    await ctx.consumers.run(found, _subscribe, found, topics or [], pattern)
    return empty_response()


def _check_pattern(pattern: Any) -> None:
    """A subscription pattern librdkafka can take: a short regular expression, no control characters."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > 1024 or any(ord(c) < 32 for c in pattern):
        raise RestError(422, 422, "`topic_pattern` must be a regular expression of 1 to 1024 printable characters")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise RestError(422, 422, f"`topic_pattern` is not a valid regular expression: {exc}") from None


async def _handle_get_subscription(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    return json_response({"topics": await ctx.consumers.run(found, _subscription, found)})


async def _handle_unsubscribe(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    await ctx.consumers.run(found, _unsubscribe, found)
    return empty_response()


async def _handle_assign(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    partitions = _partitions(await _body(ctx, request))
    await ctx.consumers.run(found, _assign, found, partitions)
    return empty_response()


async def _handle_get_assignments(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    assigned = await ctx.consumers.run(found, _assignment, found)
    return json_response({"partitions": [{"topic": t, "partition": p} for t, p in assigned]})


async def _handle_seek(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await _body(ctx, request)
    if "timestamps" in body and "offsets" not in body:
        items = body["timestamps"]
        if not isinstance(items, list):
            raise RestError(422, 422, "`timestamps` must be a JSON array")
        targets = [(t, p, _timestamp_ms(i.get("timestamp")))
                   for (t, p), i in zip(_partitions(body, "timestamps"), items, strict=True)]  # fmt: skip
        await ctx.consumers.run(found, _seek_to_times, found, targets)
    else:
        offsets = [(t, p, o) for t, p, o, _ in _offsets(body)]
        await ctx.consumers.run(found, _seek, found, offsets)
    return empty_response()


async def _handle_seek_beginning(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    partitions = _partitions(await _body(ctx, request))
    await ctx.consumers.run(found, _seek, found, [(t, p, OFFSET_BEGINNING) for t, p in partitions])
    return empty_response()


async def _handle_seek_end(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    partitions = _partitions(await _body(ctx, request))
    await ctx.consumers.run(found, _seek_to_end, found, ctx.settings, partitions)
    return empty_response()


async def _handle_records(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    _check_records_accept(found, request.headers.get("accept"))
    settings = ctx.settings
    wait_ms = found.request_timeout_ms if found.request_timeout_ms is not None else settings.consumer_request_timeout_ms
    timeout = request.query_params.get("timeout")
    if timeout is not None:
        asked = int_param(timeout, "timeout")
        if asked >= 0:
            wait_ms = min(asked, wait_ms)
    budget = settings.consumer_request_max_bytes
    max_bytes = request.query_params.get("max_bytes")
    if max_bytes is not None:
        asked = int_param(max_bytes, "max_bytes")
        if asked > 0:
            budget = min(asked, budget)
    min_bytes = found.fetch_min_bytes if found.fetch_min_bytes is not None else settings.fetch_min_bytes

    answer = _Answer(found, wait_ms / 1000, budget, min_bytes, settings.consumer_iterator_backoff_ms / 1000,
                     settings.consumer_max_poll_records)  # fmt: skip
    pieces = ctx.consumers.stream(found, answer.next_piece, lambda: answer.more)
    first = await anext(pieces)  # errors (404, a poison record's 422) before any status is sent
    if not answer.more:
        await pieces.aclose()
        _count_consumed(ctx, answer)
        return Response(b"[" + first + b"]", media_type=media_type(found.format))

    async def body() -> AsyncIterator[bytes]:
        try:
            yield b"[" + first
            try:
                async for piece in pieces:
                    if piece:
                        yield b"," + piece
            except Exception as exc:  # the status is sent: end the array with what was delivered
                log.warning("consumer %s/%s: records answer cut short: %s", group, instance, exc)
            yield b"]"
        finally:
            await pieces.aclose()
            _count_consumed(ctx, answer)

    return StreamingResponse(body(), media_type=media_type(found.format))


def _count_consumed(ctx: Context, answer: _Answer) -> None:
    ctx.metrics.records_consumed.inc(answer.count)
    ctx.metrics.bytes_consumed.inc(answer.size)


def _check_records_accept(instance: ConsumerInstance, accept: str | None) -> None:
    """406 / 40601 when the Accept names only embedded formats other than the consumer's."""
    if not accept:
        return
    formats = []
    for item in accept.split(","):
        ours, fmt = embedded_format(item)
        if not ours or fmt is None:
            essence = item.split(";", 1)[0].strip()
            if ours or essence in ("*/*", "application/*"):
                return  # no embedded format named: the consumer's own is sent
            continue
        if fmt == instance.format:
            return
        formats.append(fmt)
    raise RestError(406, 40601, f"The requested embedded data format ({', '.join(formats) or accept}) does not "
                    f"match the deserializer for this consumer instance ({instance.format}).")  # fmt: skip


async def _handle_commit(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await _body(ctx, request)
    offsets = _offsets(body) if body.get("offsets") else None
    for topic, partition in sorted({(t, p) for t, p, _, _ in offsets or []}):
        await ctx.metadata.check_partition(topic, partition)  # 404 / 40401 or 40402, as Karapace pre-checks
    await ctx.consumers.run(found, _commit, found, offsets)
    return json_response({"offsets": []})


async def _handle_committed(ctx: Context, request: Request, group: str, instance: str) -> Response:
    found = ctx.consumers.get(group, instance)
    body = await _body(ctx, request)
    if "partitions" not in body:  # Confluent's answer, odd as it is (see the reference, section 2.6)
        raise RestError(404, 40402, "GET .../offsets needs a body naming the partitions: "
                        '{"partitions": [{"topic": ..., "partition": ...}]}')  # fmt: skip
    partitions = _partitions(body)
    return json_response({"offsets": await ctx.consumers.run(found, _committed, found, partitions)})


_I = "/consumers/{group}/instances/{instance}"

ROUTES = [
    Route("POST", "/consumers/{group}", _handle_create),
    Route("DELETE", _I, _handle_delete),
    Route("POST", f"{_I}/subscription", _handle_subscribe),
    Route("GET", f"{_I}/subscription", _handle_get_subscription),
    Route("DELETE", f"{_I}/subscription", _handle_unsubscribe),
    Route("POST", f"{_I}/assignments", _handle_assign),
    Route("GET", f"{_I}/assignments", _handle_get_assignments),
    Route("POST", f"{_I}/positions", _handle_seek),
    Route("POST", f"{_I}/positions/beginning", _handle_seek_beginning),
    Route("POST", f"{_I}/positions/end", _handle_seek_end),
    Route("GET", f"{_I}/records", _handle_records),
    Route("POST", f"{_I}/offsets", _handle_commit),
    Route("GET", f"{_I}/offsets", _handle_committed),
]
