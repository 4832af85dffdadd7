"""A consumer instance's records answer: fetched, rendered in its format, sent in pieces.

Records fetch, following the reference's recommendation: wait at most
`min(timeout, consumer.request.timeout.ms)`; return early once records are buffered
and no more arrive within `consumer.iterator.backoff.ms`, or once `fetch.min.bytes`
are gathered; never more than `min(max_bytes, consumer.request.max.bytes)` of key +
value bytes, except that the first record always goes out, so a large record cannot
starve its reader. Records fetched from Kafka but not returned stay buffered on the
instance for the next call, and "commit everything" commits what was *returned*, never
what is only buffered (librdkafka's own position runs ahead of the client). A large
answer goes out in pieces (chunked) as it is gathered, so the client reads while the
proxy renders (`RecordsAnswer`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import orjson
from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import KafkaException, Message, TopicPartition
from pybase64 import b64encode_as_string

from workbench._types import Partition
from workbench.errors import WorkbenchError
from workbench.httpserver.errors import RestError
from workbench.restproxy.consumer_instances import (
    ConsumerInstance,
    lookup_failed,
    out_of_range,
    out_of_range_error,
    reassign_due,
    resumed,
)
from workbench.restproxy.schemas import SchemaFormats

__all__ = ["RecordsAnswer", "Unrenderable", "record_row", "renderer"]

log = logging.getLogger("workbench.restproxy")

#: Key + value bytes per piece of a streamed records answer (see `RecordsAnswer`). Measured
#: (1 KB records, wrk, 3 alternating rounds): 1 MiB pieces cost the proxy 3.5-4.0 ms of
#: CPU per MB, 4 MiB 4.0-5.1, 16 MiB 4.6-5.8; 256 KiB was no cheaper than 1 MiB.
_PIECE_BYTES = 1024 * 1024


class Unrenderable(WorkbenchError):
    """A record the instance's format cannot show (a json consumer, bytes that are not JSON);
    raised by a `renderer` and caught by the answer that gathers records, never sent."""


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
        raise Unrenderable from None
    return orjson.Fragment(data)


def renderer(fmt: str, schemas: SchemaFormats | None) -> Callable[[bytes | None], Any]:
    """How a consumer's format shows a key or value; `Unrenderable` when it cannot (v2
    and share consumers alike)."""
    if fmt == "binary":
        return _render_binary
    if schemas is None:
        return _render_json

    def render_schema(data: bytes | None) -> Any:
        try:
            return schemas.decode(data, fmt)
        except Exception:  # framing, an unknown id, a payload its schema cannot read
            raise Unrenderable from None

    return render_schema


def record_row(message: Message, key: Any, value: Any) -> dict[str, Any]:
    """One record of a records answer, its key and value already rendered (v2 and share
    consumers alike; a share consumer's row adds its `delivery_count`)."""
    return {
        "topic": message.topic(),
        "key": key,
        "value": value,
        "partition": message.partition(),
        "offset": message.offset(),
        "timestamp": message.timestamp()[1],
    }


class _Gathered:
    """The rows of one records answer, rendered as each record is taken.

    Rendering as records are taken, rather than after, is what keeps a record that
    cannot be shown from costing the ones before it: gathering stops there, the rows
    so far go out, and the record itself (with everything fetched after it) stays at
    the front of the instance's buffer, so the position never passes it.
    """

    def __init__(
        self, instance: ConsumerInstance, budget: int, min_bytes: int, piece: int | None = None, first: bool = True
    ) -> None:
        self.render = renderer(instance.format, instance.schemas)
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
        """Take `message` if it fits and renders (`offer_all` of one); False when gathering must stop."""
        return self.offer_all([message]) == 1

    def offer_all(self, messages: list[Message]) -> int:
        """Take records of a batch without errors, in order, while each fits and renders:
        how many were taken (the rest are left, in order, for the next call). The
        per-record loop of a records request, so its names are bound once."""
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
            except Unrenderable:
                self.poison = message
                break
            rows.append(record_row(message, key_out, value_out))
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


def _fetch_piece(
    instance: ConsumerInstance, deadline: float, gathered: _Gathered, grace_s: float, max_records: int, started: bool
) -> _Gathered:
    """Gather and render records into `gathered` until it is done or `deadline` passes;
    `started` when earlier pieces of the same answer already hold records (then a
    pause of `grace_s` ends the answer, and a poison record no longer fails it)."""
    if not started and instance.reassign_at is not None:
        reassign_due(instance)  # before the buffer is taken from: it may start there again
    pending = instance.pending
    while pending and gathered.offer(pending[0]):
        pending.popleft()
    consume = instance.consumer.consume
    while not gathered.done:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        holding = started or bool(gathered.rows)
        if not holding and _all_out_of_range(instance):
            break  # nothing can come: the 409 goes out now, not after the whole wait
        if not holding and instance.reassign_at is not None:
            # An assignment whose offset lookup failed is made again when due (see
            # `lookup_failed`); nothing is taken yet, so `delivered` is where the client is.
            left = reassign_due(instance)
            if left is not None:
                remaining = min(remaining, left)
        # librdkafka's consume returns when it has `max_records` or its timeout is up, so
        # the wait for a first record asks for one: it ends when that record comes, not
        # (at a few records a second) a whole request timeout later.
        messages = consume(max_records, min(remaining, grace_s)) if holding else consume(1, remaining)
        if not messages:
            if holding:
                break
            continue
        if instance.sought:
            resumed(instance, messages)
        if not any(message.error() is not None for message in messages):  # the usual batch: records only
            taken = gathered.offer_all(messages)
            pending.extend(messages[taken:])  # kept, in order, for the next call
            continue
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() == RdKafkaError._AUTO_OFFSET_RESET:
                    out_of_range(instance, message)
                elif error.code() != RdKafkaError._PARTITION_EOF:
                    if error.fatal():
                        raise RestError(500, 50002, f"consumer failed: {error.str()}")
                    if not lookup_failed(instance, error):
                        log.debug("consumer %s/%s: %s", instance.group, instance.name, error.str())
                continue
            if not gathered.offer(message):
                pending.append(message)  # kept, in order, for the next call
    _advance(instance, gathered.taken)
    if gathered.poison is not None and not gathered.rows and not started:
        raise _poison_error(instance, gathered.poison)
    if instance.out_of_range and not gathered.rows and not started:
        raise out_of_range_error(instance)
    return gathered


def _all_out_of_range(instance: ConsumerInstance) -> bool:
    if not instance.out_of_range:
        return False
    return all((tp.topic, tp.partition) in instance.out_of_range for tp in instance.consumer.assignment())


class RecordsAnswer:
    """A records answer gathered and rendered in pieces of about `_PIECE_BYTES`, so
    the first piece goes out while the next is gathered: the client reads while the
    proxy renders, where one whole answer of up to `consumer.request.max.bytes` kept
    the two taking turns (and held the answer twice in memory). The pieces keep every
    rule of a whole answer: one budget, one wait, `fetch.min.bytes` over the answer,
    the first record always out, a poison record ending the answer (a 422 only when
    nothing came before it). Runs in the instance's worker thread, one piece a call."""

    def __init__(
        self, instance: ConsumerInstance, wait_s: float, budget: int, min_bytes: int, grace_s: float, max_records: int
    ) -> None:
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
    instance.lookup_failures = 0
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
    return RestError(
        422,
        422,
        f"{which} deserialization error for format {instance.format}: the record at topic "
        f"{topic} partition {partition} offset {offset} is not {_expected(instance.format)}. The "
        f"position stays at it; to move on, seek past it (POST .../positions {seek}) or read it with a "
        "binary consumer.",
    )


def _expected(fmt: str) -> str:
    return "JSON" if fmt == "json" else f"{fmt} in the Schema Registry wire format with a schema id it knows"


def _cannot_render(instance: ConsumerInstance, data: bytes | None) -> bool:
    try:
        renderer(instance.format, instance.schemas)(data)
    except Unrenderable:
        return True
    return False
