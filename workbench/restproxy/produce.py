"""API v2 produce: `POST /topics/{topic}` and `POST /topics/{topic}/partitions/{partition}`.

The request is checked whole before any record is sent, so a bad request writes
nothing, in upstream's order: content type (415), JSON (400), shape (400 for a body,
`records` or record that is not what it must be; 422 for empty or unknown fields; 413
past `producer.max.records.per.request`), topic (404 / 40401, at once, from the
metadata cache: no 60 s producer block as in Confluent), schema fields (42201 / 42202,
then 42205: this proxy has no Schema Registry), partitions (404 / 40402), base64
(400), values JSON cannot carry back exactly (422), record size against the
producer's `message.max.bytes` (413). Then all records go to the shared producer and
the response lists each record's partition and offset, or its error, in request
order; a partial failure keeps 200 as Confluent does, with Confluent's per-record
codes (50002, 50003).

With `Workbench-Trace: true` (`workbench.restproxy.tracing`) the records go through
the producer one `produce()` each with two trace headers, and each element of `offsets`
gets a `trace` object. `received_ns` is taken when the handler starts: the request line
and headers are in, the body is read after it, so it includes the body's upload.
`answered_ns` is taken just before the answer's body is rendered, once for all records.

Large requests never hold the event loop: their JSON is parsed and their records are
encoded in a worker thread, and the producer yields between slices of records.

The loop over records is the proxy's hot path (the benchmark's 500-record arrays), so
it is written flat, with locals bound outside the loop.
"""

from __future__ import annotations

import asyncio
import binascii
import time
import zlib
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson
import pybase64
from starlette.requests import Request
from starlette.responses import Response

from workbench.httpserver.errors import RestError
from workbench.httpserver.routing import Route
from workbench.restproxy.context import Context, int_param, parse_json_body, read_body
from workbench.restproxy.delivery import Delivery, Traced, TracedBatchDelivery, TracedDelivery
from workbench.restproxy.errors import PARTITION_NOT_FOUND, TOPIC_NOT_FOUND
from workbench.restproxy.formats import (
    SCHEMA_FORMATS,
    V2_JSON,
    check_accept,
    check_exact_numbers,
    no_registry,
    produce_format,
)
from workbench.restproxy.schemas import encode_schema_records
from workbench.restproxy.tracing import TRACE_HEADER, trace_mode, trace_object

__all__ = ["ROUTES", "outcome_error", "produce_to_partition", "produce_to_topic"]

_TOP_LEVEL = frozenset(("records", "key_schema", "key_schema_id", "value_schema", "value_schema_id"))
_RECORD_KEYS = frozenset(("key", "value", "partition"))
#: Requests with more records than this are encoded in a worker thread.
_ENCODE_IN_THREAD = 5000


def outcome_error(error: Any) -> tuple[int, str]:
    """A librdkafka delivery error as Confluent's per-record (error_code, message)."""
    name = error.name()
    if name == "MSG_SIZE_TOO_LARGE":
        return 413, f"RecordTooLargeException: {error.str()}"
    if name in ("UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_TOPIC"):
        return TOPIC_NOT_FOUND, error.str()
    if name == "_UNKNOWN_PARTITION":
        return PARTITION_NOT_FOUND, error.str()
    return (50003 if error.retriable() else 50002), error.str()


async def produce_to_topic(ctx: Context, request: Request, topic: str) -> Response:
    return await _produce(ctx, request, topic, None)


async def produce_to_partition(ctx: Context, request: Request, topic: str, partition: str) -> Response:
    return await _produce(ctx, request, topic, int_param(partition, "partition"))


@dataclass
class _Plan:
    """How one request's records are encoded: what `_encode` needs besides the records."""

    binary: bool
    #: Keys and values are bytes already (the schema formats' wire format).
    raw: bool
    count: int
    default_partition: int
    keyless: int
    keyed_here: bool
    limit: int


@dataclass
class _Encoded:
    messages: list[dict[str, Any]]
    total: int
    unassigned: bool
    #: A record partition outside the cached count (the topic may have grown): checked.
    unknown_partition: int | None = None


async def _produce(ctx: Context, request: Request, topic: str, url_partition: int | None) -> Response:
    headers = request.headers
    tracing = trace_mode(headers.getlist(TRACE_HEADER))
    received_ns = time.time_ns() if tracing is not None else None
    fmt = produce_format(headers.get("content-type"))
    check_accept(headers.get("accept"))
    body = await read_body(request, ctx.settings)
    if not body.strip():
        raise RestError(422, 422, "Request body is empty: a JSON object with a non-empty `records` array is required")
    data = await parse_json_body(body)
    records = _records(data, ctx.settings.max_records_per_request)

    count = await ctx.metadata.partition_count(topic)
    ids: tuple[int | None, int | None] = (None, None)
    if fmt in SCHEMA_FORMATS:
        error = _schema_error(fmt, data, records)
        if error is not None or ctx.schemas is None:
            raise error or no_registry(fmt)
        records, ids = await encode_schema_records(ctx.schemas, fmt, topic, data, records)
    if fmt == "json" and not _strings_only(records):
        check_exact_numbers(body)
    if url_partition is not None and not 0 <= url_partition < count:
        await ctx.metadata.check_partition(topic, url_partition)  # refreshes once, then 40402
    # Partitions are chosen here, as librdkafka's default partitioner would (CRC32 of
    # the key; keyless records anywhere: together, on the next partition), so the
    # records can go in one produce_batch call. A custom `producer.partitioner`
    # leaves keyed records to librdkafka (partition -1), through per-record produce.
    plan = _Plan(
        binary=fmt == "binary",
        raw=fmt in SCHEMA_FORMATS,
        count=count,
        default_partition=-1 if url_partition is None else url_partition,
        keyless=ctx.producer.sticky_partition(topic, count) if url_partition is None else url_partition,
        keyed_here=ctx.settings.producer.get("partitioner", "consistent_random") in ("consistent_random", "consistent"),
        limit=ctx.settings.message_max_bytes,
    )
    encoded = await _encode_off_loop(records, plan)
    if encoded.unknown_partition is not None:
        await ctx.metadata.check_partition(topic, encoded.unknown_partition)  # 40402 unless the topic grew
        plan.count = await ctx.metadata.partition_count(topic)
        encoded = await _encode_off_loop(records, plan)
        if encoded.unknown_partition is not None:
            missing = encoded.unknown_partition
            raise RestError(404, PARTITION_NOT_FOUND, f"Partition {missing} of topic {topic} not found.")

    messages = encoded.messages
    delivery: Delivery
    if received_ns is not None and (tracing == "records" or encoded.unassigned):
        triples = [(m.get("key"), m["value"], m["partition"]) for m in messages]
        delivery = await ctx.producer.enqueue_traced(topic, triples, received_ns, stamp_records=tracing == "records")
    elif encoded.unassigned:
        delivery = await ctx.producer.enqueue(topic, [(m.get("key"), m["value"], m["partition"]) for m in messages])
    else:  # traced in the answer only, the records take the same path as untraced ones
        delivery = await ctx.producer.enqueue_batch(topic, messages, received_ns)
    if encoded.total >= ctx.settings.full_batch_bytes:
        ctx.producer.kick()  # a full batch already: do not wait out linger.ms
    await delivery.future
    return await _answer(ctx, topic, delivery, encoded.total, ids)


def _records(data: Any, ceiling: int) -> list[Any]:
    """The `records` array of a produce body, its shape checked as upstream does."""
    if not isinstance(data, dict):
        raise RestError(400, 400, "The body must be a JSON object with a `records` array")
    unknown = data.keys() - _TOP_LEVEL
    if unknown:
        raise RestError(
            422, 422, f"Unrecognized field(s) {sorted(unknown)}; expected records, key_schema(_id), value_schema(_id)"
        )
    records = data.get("records")
    if records is None:
        raise RestError(422, 422, "`records` is required: a non-empty JSON array of records")
    if not isinstance(records, list):
        raise RestError(400, 400, "`records` must be a JSON array of records")
    if not records:
        raise RestError(422, 422, "`records` may not be empty")
    if len(records) > ceiling:
        raise RestError(
            413,
            413,
            f"{len(records)} records in one request, over producer.max.records.per.request "
            f"({ceiling}); split the request",
        )
    return records


def _strings_only(records: list[Any]) -> bool:
    """Whether every key and value is a JSON string or null: then the body's digits are all
    inside strings (or a partition, checked as an integer later), and the scan for integers
    past 64 bits (`check_exact_numbers`, 0.6 ms per MB) has nothing to find."""
    try:
        return all(
            (k is None or type(k) is str) and (v is None or type(v) is str)
            for k, v in ((r.get("key"), r.get("value")) for r in records)
        )
    except AttributeError:  # a record that is not an object: refused by `_encode`
        return False


def _schema_error(fmt: str, data: dict[str, Any], records: list[Any]) -> RestError | None:
    """Upstream's answer to a schema-format request missing a schema it needs (None: none is)."""
    for index, record in enumerate(records):
        if type(record) is not dict:
            return RestError(400, 400, f"records[{index}] must be a JSON object")
    if (
        data.get("key_schema") is None
        and data.get("key_schema_id") is None
        and any(r.get("key") is not None for r in records)
    ):
        return RestError(422, 42201, "Request includes keys but does not include key schema")
    if (
        data.get("value_schema") is None
        and data.get("value_schema_id") is None
        and any(r.get("value") is not None for r in records)
    ):
        return RestError(422, 42202, "Request includes values but does not include value schema")
    return None


async def _encode_off_loop(records: list[Any], plan: _Plan) -> _Encoded:
    if len(records) > _ENCODE_IN_THREAD:
        return await asyncio.to_thread(_encode, records, plan)
    return _encode(records, plan)


def _encode(records: list[Any], plan: _Plan) -> _Encoded:
    """Records as produce_batch messages (bytes, chosen partition), checked one by one."""
    limit = plan.limit
    values = _values_only(records, plan.binary, plan.raw)
    if values is not None:  # the common shape, {"value": ...} only: no per-record branches
        sizes = [len(v) for v in values if v is not None]
        if sizes and max(sizes) > limit:
            index = next(i for i, v in enumerate(values) if v is not None and len(v) > limit)
            raise _too_large(index, len(values[index] or b""), limit)
        keyless = plan.keyless
        return _Encoded([{"value": v, "partition": keyless} for v in values], sum(sizes), False)
    if plan.keyed_here or plan.default_partition >= 0:
        pairs = _keys_and_values(records, plan.binary, plan.raw)
        if pairs is not None:  # the other common shape, {"key": ..., "value": ...}
            return _encode_pairs(*pairs, plan)

    count, keyless, keyed_here, binary, raw = plan.count, plan.keyless, plan.keyed_here, plan.binary, plan.raw
    default_partition = plan.default_partition
    crc32 = zlib.crc32
    dumps = orjson.dumps
    b64decode = pybase64.b64decode
    messages: list[dict[str, Any]] = []
    append = messages.append
    total = 0
    unassigned = False
    unknown_partition = None
    for index, record in enumerate(records):
        if type(record) is not dict:
            raise RestError(400, 400, f"records[{index}] must be a JSON object")
        if not record.keys() <= _RECORD_KEYS:
            unknown = record.keys() - _RECORD_KEYS
            raise RestError(422, 422, f"records[{index}]: unrecognized field(s) {sorted(unknown)}")
        key = record.get("key")
        value = record.get("value")
        partition = record.get("partition")
        if partition is None:
            partition = default_partition
        elif type(partition) is not int:
            raise RestError(422, 422, f"records[{index}].partition must be an integer, got {partition!r}")
        elif not 0 <= partition < count:
            unknown_partition = partition
            partition = 0
        if raw:
            pass
        elif binary:
            try:
                if key is not None:
                    key = b64decode(key, validate=True)
                if value is not None:
                    value = b64decode(value, validate=True)
            except (binascii.Error, ValueError, TypeError):
                bad = "key" if key is not None and not isinstance(key, bytes) else "value"
                shown = dumps(record.get(bad)).decode()[:64]
                raise RestError(
                    400, 400, f"Bad Request: records[{index}].{bad}={shown} is not a (valid) base64 string."
                ) from None
        else:
            try:
                if key is not None:
                    key = dumps(key)
                if value is not None:
                    value = dumps(value)
            except orjson.JSONEncodeError:
                raise RestError(
                    422,
                    422,
                    f"records[{index}] nests deeper than the 255 levels this proxy can write "
                    "(and read back); flatten it, or send it in the binary format",
                ) from None
        if partition < 0:
            if key:
                if keyed_here:
                    partition = crc32(key) % count
                else:
                    unassigned = True
            else:
                partition = keyless
        size = (len(key) if key is not None else 0) + (len(value) if value is not None else 0)
        if size > limit:
            raise _too_large(index, size, limit)
        total += size
        append(
            {"value": value, "partition": partition}
            if key is None
            else {"value": value, "key": key, "partition": partition}
        )
    return _Encoded(messages, total, unassigned, unknown_partition)


def _too_large(index: int, size: int, limit: int) -> RestError:
    return RestError(
        413,
        413,
        f"records[{index}] is {size} bytes, over the producer's message.max.bytes of {limit} "
        "(set producer.max.request.size to raise it)",
    )


def _encode_pairs(keys: list[bytes | None], values: list[bytes | None], plan: _Plan) -> _Encoded:
    """Keyed records as messages, partitioned as `_encode` does it, in comprehensions."""
    limit = plan.limit
    sizes = [
        (len(k) if k is not None else 0) + (len(v) if v is not None else 0) for k, v in zip(keys, values, strict=True)
    ]
    biggest = max(sizes)
    if biggest > limit:
        raise _too_large(sizes.index(biggest), biggest, limit)
    if plan.default_partition >= 0:
        partitions = [plan.default_partition] * len(keys)
    else:
        crc32, count, keyless = zlib.crc32, plan.count, plan.keyless
        partitions = [crc32(k) % count if k else keyless for k in keys]
    messages = [
        {"value": v, "partition": p} if k is None else {"value": v, "key": k, "partition": p}
        for k, v, p in zip(keys, values, partitions, strict=True)
    ]
    return _Encoded(messages, sum(sizes), False)


def _keys_and_values(records: list[Any], binary: bool, raw: bool) -> tuple[list[Any], list[Any]] | None:
    """(keys, values) encoded when every record is `{"key": ..., "value": ...}`, else None
    (then the general loop checks each record and names the bad one)."""
    both = {"key", "value"}
    try:
        if not all(type(r) is dict and r.keys() == both for r in records):
            return None
        if raw:
            return [r["key"] for r in records], [r["value"] for r in records]
        if binary:
            b64decode = pybase64.b64decode
            keys = [None if (k := r["key"]) is None else b64decode(k, validate=True) for r in records]
            return keys, [None if (v := r["value"]) is None else b64decode(v, validate=True) for r in records]
        dumps = orjson.dumps
        keys = [None if (k := r["key"]) is None else dumps(k) for r in records]
        return keys, [None if (v := r["value"]) is None else dumps(v) for r in records]
    except (binascii.Error, ValueError, TypeError, orjson.JSONEncodeError):
        return None


def _values_only(records: list[Any], binary: bool, raw: bool = False) -> list[bytes | None] | None:
    """Encoded values when every record is `{"value": ...}` alone, else None.

    One comprehension instead of the general loop: ~0.3 instead of ~0.75 ms per
    500 records, a tenth of the proxy's CPU per request.
    """
    value_only = {"value"}
    try:
        if not all(type(r) is dict and r.keys() == value_only for r in records):
            return None
        if raw:
            return [r["value"] for r in records]
        if binary:
            b64decode = pybase64.b64decode
            return [None if (v := r["value"]) is None else b64decode(v, validate=True) for r in records]
        dumps = orjson.dumps
        return [None if (v := r["value"]) is None else dumps(v) for r in records]
    except (binascii.Error, ValueError, TypeError):
        return None  # let the general loop name the bad record


async def _answer(
    ctx: Context, topic: str, delivery: Delivery, total: int, ids: tuple[int | None, int | None] = (None, None)
) -> Response:
    """The offsets answer (with the schema ids used); built in a worker thread for large
    requests (400,000 offsets take ~150 ms of Python, which would otherwise stop the loop)."""
    outcomes = delivery.outcomes
    render = (
        partial(_traced_body, delivery) if isinstance(delivery, TracedDelivery | TracedBatchDelivery) else _offsets_body
    )
    if len(outcomes) > _ENCODE_IN_THREAD:
        body, acknowledged = await asyncio.to_thread(render, outcomes, ids)
    else:
        body, acknowledged = render(outcomes, ids)
    if acknowledged:
        ctx.metrics.records_produced.labels("v2").inc(acknowledged)
        ctx.metrics.bytes_produced.labels("v2").inc(total if acknowledged == len(outcomes) else 0)
    if acknowledged < len(outcomes):
        ctx.metadata.forget(topic)
    return Response(body, media_type=V2_JSON)


def _offsets_body(outcomes: list[Any], ids: tuple[int | None, int | None]) -> tuple[bytes, int]:
    """Upstream's produce answer for `outcomes`, and how many records were acknowledged."""
    if all(type(outcome) is tuple for outcome in outcomes):  # every record acknowledged: one comprehension
        offsets = [{"partition": p, "offset": o, "error_code": None, "error": None} for p, o in outcomes]
        return orjson.dumps({"key_schema_id": ids[0], "value_schema_id": ids[1], "offsets": offsets}), len(offsets)
    offsets = []
    acknowledged = 0
    for outcome in outcomes:
        if type(outcome) is tuple:
            offsets.append({"partition": outcome[0], "offset": outcome[1], "error_code": None, "error": None})
            acknowledged += 1
        else:
            code, message = outcome_error(outcome)
            offsets.append({"partition": None, "offset": None, "error_code": code, "error": message})
    return orjson.dumps({"key_schema_id": ids[0], "value_schema_id": ids[1], "offsets": offsets}), acknowledged


def _traced_body(delivery: Traced, outcomes: list[Any], ids: tuple[int | None, int | None]) -> tuple[bytes, int]:
    """`_offsets_body` with each record's `trace`; `answered_ns` is now, once for all."""
    answered = time.time_ns()
    received = delivery.received_ns
    offsets = []
    acknowledged = 0
    for outcome, handed, delivered in zip(outcomes, delivery.handed_ns, delivery.delivered_ns, strict=True):
        if type(outcome) is tuple:
            entry = {"partition": outcome[0], "offset": outcome[1], "error_code": None, "error": None}
            acknowledged += 1
        else:
            code, message = outcome_error(outcome)
            entry = {"partition": None, "offset": None, "error_code": code, "error": message}
        entry["trace"] = trace_object(received, handed, delivered, answered)
        offsets.append(entry)
    return orjson.dumps({"key_schema_id": ids[0], "value_schema_id": ids[1], "offsets": offsets}), acknowledged


ROUTES = [
    Route("POST", "/topics/{topic}", produce_to_topic),
    Route("POST", "/topics/{topic}/partitions/{partition}", produce_to_partition),
]
